use bridge_runtime::prelude::*;

struct Desk;

#[bridge_actions(companion)]
impl Desk {
    /// The cat waves its tail.
    #[bridge_action(id = "vendor.example.wave", version = "1.2.0", kind = "animation")]
    fn wave() {}
}

fn main() {}
