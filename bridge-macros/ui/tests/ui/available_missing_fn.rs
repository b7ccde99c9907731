use bridge_runtime::prelude::*;

struct App {
    dirty: bool,
}

#[bridge_actions]
impl App {
    /// Save the document.
    #[bridge_action(available = is_dirty)]
    fn save(&mut self) {
        self.dirty = false;
    }
}

fn main() {}
