use bridge_runtime::prelude::*;

struct App;

fn three() -> u32 {
    3
}

#[bridge_actions]
impl App {
    /// Retry the upload.
    #[bridge_action]
    fn retry(&mut self, #[serde(default = "three")] attempts: u32) {
        let _ = attempts;
    }
}

fn main() {}
