use bridge_runtime::prelude::*;

#[derive(BridgeRow)]
struct Card {
    holder: String,
    #[bridge(sensitive)]
    number: String,
}

fn main() {}
