use bridge_runtime::prelude::*;

struct Desk;

#[bridge_actions(companion)]
impl Desk {
    /// Shows a short text bubble.
    #[bridge_action(id = "notice.show", version = "0.1.0", kind = "notice")]
    fn notice_show(text: String) {}

    /// Shows a short text bubble, louder.
    #[bridge_action(id = "notice.show", version = "0.2.0", kind = "notice")]
    fn notice_shout(text: String) {}
}

fn main() {}
