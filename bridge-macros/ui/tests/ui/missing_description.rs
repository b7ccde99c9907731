use bridge_runtime::prelude::*;

struct App;

#[bridge_actions]
impl App {
    #[bridge_action(idempotent)]
    fn refresh(&mut self) {}
}

fn main() {}
