use bridge_runtime::prelude::*;

struct App;

#[bridge_actions]
impl App {
    /// Rename the document.
    #[bridge_action]
    fn rename(&mut self, name: &str) {
        let _ = name;
    }
}

fn main() {}
