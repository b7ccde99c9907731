use bridge_runtime::prelude::*;

#[derive(Serialize)]
struct Totals {
    sum: u32,
}

struct App;

#[bridge_actions]
impl App {
    /// Compute the totals.
    #[bridge_action(read_only)]
    fn totals(&self) -> Totals {
        Totals { sum: 1 }
    }
}

fn main() {}
