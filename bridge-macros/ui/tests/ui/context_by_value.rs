use bridge_runtime::prelude::*;

struct App;

#[bridge_actions]
impl App {
    /// Open something.
    #[bridge_action]
    fn go(&mut self, cx: ActionContext) {
        let _ = cx;
    }
}

fn main() {}
