use bridge_runtime::prelude::*;

#[derive(Deserialize, JsonSchema, BridgeArgs)]
struct NewLine {
    name: String,
}

struct App;

#[bridge_actions]
impl App {
    /// Add a product line.
    #[bridge_action]
    fn add_line(&mut self, #[bridge(args)] #[schemars(description = "The line")] line: NewLine) {
        let _ = line;
    }
}

fn main() {}
