use bridge_runtime::prelude::*;

struct App;

#[bridge_actions]
impl App {
    /// Set the zoom level.
    #[bridge_action]
    fn zoom(&mut self, #[bridge(args)] level: u32) {
        let _ = level;
    }
}

fn main() {}
