use bridge_runtime::prelude::*;

struct App;

#[bridge_actions]
impl App {
    /// Add up the balances.
    #[bridge_action(read_only)]
    fn total(&self) -> Result<Vec<u128>, ActionError> {
        Ok(vec![u128::MAX])
    }
}

fn main() {}
