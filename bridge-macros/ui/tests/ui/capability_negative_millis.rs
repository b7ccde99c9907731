use bridge_runtime::prelude::*;

struct Desk;

#[bridge_actions(companion)]
impl Desk {
    /// Shows a short notice.
    #[bridge_action(id = "notice.show", version = "0.1.0", kind = "notice", display_ms = -1)]
    fn notice_show(text: String) {}
}

fn main() {}
