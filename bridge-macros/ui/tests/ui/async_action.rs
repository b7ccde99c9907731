use bridge_runtime::prelude::*;

struct App;

#[bridge_actions]
impl App {
    /// Download the report.
    #[bridge_action(open_world)]
    async fn download(&mut self) {}
}

fn main() {}
