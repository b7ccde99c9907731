use bridge_runtime::prelude::*;

#[bridge_window(title = "Order")]
struct Order {
    #[bridge(notice, severity = "warning")]
    problem: Option<String>,
}

fn main() {}
