use bridge_runtime::prelude::*;

#[bridge_window(summary = "An order")]
struct Order {
    #[bridge(text)]
    recipient: String,
}

fn main() {}
