use bridge_runtime::prelude::*;

#[derive(Deserialize, JsonSchema)]
enum Shape {
    Circle { radius: f64 },
    Square { side: f64 },
}

#[derive(Default)]
struct App;

#[bridge_actions]
impl App {
    /// Draw a shape.
    #[bridge_action]
    fn draw(&mut self, #[bridge(args)] shape: Shape) {
        let _ = shape;
    }
}

fn main() {}
