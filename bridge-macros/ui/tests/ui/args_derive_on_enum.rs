use bridge_runtime::prelude::*;

#[derive(Deserialize, JsonSchema, BridgeArgs)]
enum Shape {
    Circle { radius: f64 },
    Square { side: f64 },
}

fn main() {}
