use bridge_runtime::prelude::*;

struct App;

#[bridge_actions]
impl App {
    /// Rename the profile.
    #[bridge_action]
    fn rename(&mut self, name: String, #[serde(rename = "name")] display_name: String) {
        let _ = (name, display_name);
    }
}

fn main() {}
