use bridge_runtime::prelude::*;

struct App;

impl App {
    /// Save the document.
    #[bridge_action]
    fn save(&mut self) {}
}

fn main() {}
