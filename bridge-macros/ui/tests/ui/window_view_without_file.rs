use bridge_runtime::prelude::*;

#[bridge_window(title = "Chart", view(resource_domains = ["https://cdn.example.com"]))]
struct Chart {
    #[bridge(text)]
    caption: String,
}

#[bridge_actions]
impl Chart {}

fn main() {}
