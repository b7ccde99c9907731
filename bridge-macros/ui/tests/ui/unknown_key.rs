use bridge_runtime::prelude::*;

struct App;

#[bridge_actions]
impl App {
    /// Refresh the list.
    #[bridge_action(readonly)]
    fn refresh(&mut self) {}
}

fn main() {}
