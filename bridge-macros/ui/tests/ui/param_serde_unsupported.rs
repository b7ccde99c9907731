use bridge_runtime::prelude::*;

struct App;

#[bridge_actions]
impl App {
    /// Rename the profile.
    #[bridge_action]
    fn rename(&mut self, #[serde(alias = "name")] display_name: String) {
        let _ = display_name;
    }
}

fn main() {}
