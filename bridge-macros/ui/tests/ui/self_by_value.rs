use bridge_runtime::prelude::*;

struct App;

#[bridge_actions]
impl App {
    /// Close the app.
    #[bridge_action]
    fn close(self) {}
}

fn main() {}
