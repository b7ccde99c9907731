use bridge_runtime::prelude::*;

#[bridge_window(title = "Order", summary = "Editing order {order_number}")]
struct Order {
    #[bridge(text)]
    order_no: u32,
}

fn main() {}
