use bridge_runtime::prelude::*;

struct Desk;

#[derive(Deserialize)]
struct Answer {
    text: String,
}

#[bridge_actions(companion)]
impl Desk {
    /// Asks the user to type a short text.
    #[bridge_action(id = "interaction.text", version = "0.1.0", kind = "interaction", interaction = "text", output = Answer)]
    fn interaction_text(prompt: String) {}
}

fn main() {}
