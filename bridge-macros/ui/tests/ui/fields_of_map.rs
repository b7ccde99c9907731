use bridge_runtime::prelude::*;
use std::collections::HashMap;

#[bridge_window(title = "Settings")]
struct Settings {
    #[bridge(fields)]
    values: HashMap<String, String>,
}

fn main() {}
