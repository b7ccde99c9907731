use bridge_runtime::prelude::*;

struct App;

#[bridge_actions]
impl App {
    /// Save the document.
    #[bridge_action]
    fn save(&mut self, expected_version: i64) {
        let _ = expected_version;
    }
}

fn main() {}
