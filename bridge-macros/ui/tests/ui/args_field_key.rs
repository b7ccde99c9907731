use bridge_runtime::prelude::*;

#[derive(Deserialize, JsonSchema, BridgeArgs)]
struct NewLine {
    #[bridge(label = "Product")]
    name: String,
}

fn main() {}
