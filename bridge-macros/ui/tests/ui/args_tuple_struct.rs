use bridge_runtime::prelude::*;

#[derive(Deserialize, JsonSchema, BridgeArgs)]
struct Size(u32, u32);

fn main() {}
