use bridge_runtime::prelude::*;

#[derive(Deserialize, JsonSchema)]
struct NewLine {
    name: String,
    quantity: u32,
}

struct App;

#[bridge_actions]
impl App {
    /// Add a product line.
    #[bridge_action]
    fn add_line(&mut self, #[bridge(args)] line: NewLine) {
        let _ = line;
    }
}

fn main() {}
