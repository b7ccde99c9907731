use bridge_runtime::prelude::*;

#[derive(Deserialize, JsonSchema, BridgeArgs)]
struct Nothing;

fn main() {}
