use bridge_runtime::prelude::*;

#[bridge_window(title = "Order")]
struct Order {
    #[bridge(text, list)]
    recipient: String,
}

fn main() {}
