use bridge_runtime::prelude::*;

#[bridge_window(title = "Viewer")]
struct Viewer<'a> {
    #[bridge(text)]
    text: &'a str,
}

fn main() {}
