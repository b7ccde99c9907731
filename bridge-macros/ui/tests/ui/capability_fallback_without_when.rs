use bridge_runtime::prelude::*;

struct Desk;

#[bridge_actions(companion)]
impl Desk {
    /// The character celebrates.
    #[bridge_action(
        id = "animation.celebrate",
        version = "0.1.0",
        kind = "animation",
        fallback(capability = "notice.show")
    )]
    fn animation_celebrate() {}
}

fn main() {}
