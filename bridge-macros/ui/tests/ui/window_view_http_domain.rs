use bridge_runtime::prelude::*;

// Cargo.toml stands in for an HTML file: it exists at the crate root of every case.
#[bridge_window(title = "Chart", view(file = "Cargo.toml", connect_domains = ["http://api.example.com"]))]
struct Chart {
    #[bridge(text)]
    caption: String,
}

#[bridge_actions]
impl Chart {}

fn main() {}
