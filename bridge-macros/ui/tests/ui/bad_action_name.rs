use bridge_runtime::prelude::*;

struct App;

#[bridge_actions]
impl App {
    /// Save the document.
    #[bridge_action(name = "save file")]
    fn save(&mut self) {}
}

fn main() {}
