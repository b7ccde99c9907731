use bridge_runtime::prelude::*;

#[derive(Deserialize)]
struct Color {
    name: String,
}

struct App;

#[bridge_actions]
impl App {
    /// Paint with a color.
    #[bridge_action]
    fn paint(&mut self, color: Color) {
        let _ = color.name;
    }
}

fn main() {}
