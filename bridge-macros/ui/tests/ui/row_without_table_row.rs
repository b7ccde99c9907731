use bridge_runtime::prelude::*;

struct Line {
    product: String,
}

#[bridge_window(title = "Order")]
struct Order {
    #[bridge(table)]
    lines: Vec<Line>,
}

fn main() {}
