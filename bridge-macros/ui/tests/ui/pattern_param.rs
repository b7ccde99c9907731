use bridge_runtime::prelude::*;

struct App;

#[bridge_actions]
impl App {
    /// Move the cursor.
    #[bridge_action]
    fn move_to(&mut self, (x, y): (u32, u32)) {
        let _ = (x, y);
    }
}

fn main() {}
