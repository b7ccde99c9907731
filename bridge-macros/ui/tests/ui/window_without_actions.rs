use bridge_runtime::prelude::*;

#[bridge_window(title = "Note")]
struct Note {
    #[bridge(text)]
    body: String,
}

fn main() {
    let _ = bridge_runtime::Bridge::builder("app", "1").window::<Note>();
}
