use bridge_runtime::prelude::*;

#[derive(Clone)]
#[bridge_window(title = "Board", shared_state, undo)]
struct Board {
    #[bridge(text)]
    text: String,
}

#[bridge_actions]
impl Board {}

fn main() {}
