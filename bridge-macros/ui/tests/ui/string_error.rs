use bridge_runtime::prelude::*;

struct App;

#[bridge_actions]
impl App {
    /// Count something.
    #[bridge_action(read_only)]
    fn count(&self) -> Result<u32, String> {
        Err("nothing to count".into())
    }
}

fn main() {}
