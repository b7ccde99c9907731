use bridge_runtime::prelude::*;

struct App;

#[bridge_actions]
impl App {
    /// Save the document.
    #[bridge_action]
    fn save(&mut self) {}

    /// Save a copy.
    #[bridge_action(name = "save")]
    fn save_copy(&mut self) {}
}

fn main() {}
