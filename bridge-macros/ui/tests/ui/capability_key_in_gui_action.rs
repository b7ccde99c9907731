use bridge_runtime::prelude::*;

struct App;

#[bridge_actions]
impl App {
    /// Save the document.
    #[bridge_action(idempotent, kind = "notice")]
    fn save(&mut self) {}
}

fn main() {}
