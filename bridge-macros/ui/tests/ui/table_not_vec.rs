use bridge_runtime::prelude::*;

#[derive(BridgeRow)]
struct Line {
    product: String,
}

#[bridge_window(title = "Order")]
struct Order {
    #[bridge(table)]
    lines: Option<Line>,
}

fn main() {}
