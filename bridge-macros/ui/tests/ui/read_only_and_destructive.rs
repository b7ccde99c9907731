use bridge_runtime::prelude::*;

struct App;

#[bridge_actions]
impl App {
    /// Delete the draft.
    #[bridge_action(read_only, destructive)]
    fn delete_draft(&mut self) {}
}

fn main() {}
