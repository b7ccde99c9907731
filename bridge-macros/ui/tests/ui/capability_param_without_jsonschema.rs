use bridge_runtime::prelude::*;

struct Desk;

#[derive(Deserialize)]
enum Tone {
    Info,
    Warning,
}

#[bridge_actions(companion)]
impl Desk {
    /// Shows a short text bubble.
    #[bridge_action(id = "notice.show", version = "0.1.0", kind = "notice")]
    fn notice_show(
        text: String,
        /// How it sounds.
        tone: Option<Tone>,
    ) {
    }
}

fn main() {}
