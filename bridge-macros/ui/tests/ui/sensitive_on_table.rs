use bridge_runtime::prelude::*;

#[derive(BridgeRow)]
struct Card {
    number: String,
}

#[bridge_window(title = "Wallet")]
struct Wallet {
    #[bridge(table, sensitive)]
    cards: Vec<Card>,
}

fn main() {}
