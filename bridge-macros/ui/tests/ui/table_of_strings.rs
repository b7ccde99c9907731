use bridge_runtime::prelude::*;

#[bridge_window(title = "Tags")]
struct Tags {
    #[bridge(table)]
    names: Vec<String>,
}

fn main() {}
