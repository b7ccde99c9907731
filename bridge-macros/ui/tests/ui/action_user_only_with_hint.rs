use bridge_runtime::prelude::*;

#[bridge_window(title = "Order")]
struct Order {
    #[bridge(text)]
    status: String,
}

#[bridge_actions]
impl Order {
    /// Confirm the order.
    #[bridge_action(user_only, destructive)]
    fn confirm(&mut self) {
        self.status = "confirmed".into();
    }
}

fn main() {}
