use bridge_runtime::prelude::*;

struct Desk;

#[bridge_actions(companion)]
impl Desk {
    /// Asks the user to type a short text.
    #[bridge_action(
        id = "interaction.text",
        version = "0.1.0",
        kind = "interaction",
        interaction = "text",
        output = String
    )]
    fn interaction_text(prompt: String) {}
}

fn main() {}
