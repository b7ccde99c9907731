use bridge_runtime::prelude::*;

#[bridge_window(title = "Chart", view = "/dev/null")]
struct Chart {
    #[bridge(text)]
    caption: String,
}

#[bridge_actions]
impl Chart {}

fn main() {}
