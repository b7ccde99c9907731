use bridge_runtime::prelude::*;

#[bridge_window(title = "Order")]
struct Order {
    #[bridge(text)]
    recipient: String,
    order_no: u32,
}

fn main() {}
