use bridge_runtime::prelude::*;

struct App;

#[derive(Debug)]
struct SaveError;

#[bridge_actions]
impl App {
    /// Save the document.
    #[bridge_action]
    fn save(&mut self) -> Result<(), SaveError> {
        Err(SaveError)
    }
}

fn main() {}
