use bridge_runtime::prelude::*;

#[bridge_window(title = "Order")]
struct Order {
    #[bridge(text, max_rows = 10)]
    recipient: String,
}

fn main() {}
