use bridge_runtime::prelude::*;

struct App;

#[bridge_actions]
impl App {
    /// Save the document.
    #[bridge_action(idempotent, title = "Save", idempotent)]
    fn save(&mut self) {}
}

fn main() {}
