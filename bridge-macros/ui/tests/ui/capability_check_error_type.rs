use bridge_runtime::prelude::*;

struct Desk;

#[bridge_actions(companion)]
impl Desk {
    /// Shows a short text bubble.
    #[bridge_action(id = "notice.show", version = "0.1.0", kind = "notice")]
    fn notice_show(text: String) -> Result<(), String> {
        if text.is_empty() { Err("empty".to_owned()) } else { Ok(()) }
    }
}

fn main() {}
