use bridge_runtime::prelude::*;

#[bridge_window(title = "Order")]
struct Order {
    #[bridge(text, id = "status")]
    headline: String,
    #[bridge(notice)]
    status: Vec<Notice>,
}

fn main() {}
