use bridge_runtime::prelude::*;

#[derive(Deserialize, JsonSchema)]
struct Color {
    rgb: u32,
}

struct App;

#[bridge_actions]
impl App {
    /// Paint the canvas.
    #[bridge_action]
    fn paint(&mut self, #[serde(default)] color: Color) {
        let _ = color;
    }
}

fn main() {}
