use bridge_runtime::prelude::*;

#[bridge_window(title = "Form", undo)]
struct Form {
    #[bridge(text)]
    text: String,
}

#[bridge_actions]
impl Form {}

fn main() {}
