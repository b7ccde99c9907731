use bridge_runtime::prelude::*;

struct App;

#[bridge_actions]
impl App {
    /// Recalculate everything.
    #[bridge_action]
    fn recalculate_every_total_subtotal_and_tax_in_the_order(&mut self) {}
}

fn main() {}
