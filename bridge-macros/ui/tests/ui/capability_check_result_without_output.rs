use bridge_runtime::prelude::*;

struct Desk;

#[derive(Deserialize, JsonSchema, BridgeArgs)]
struct Params {
    prompt: String,
}

#[bridge_actions(companion)]
impl Desk {
    /// Asks the user to type a short text.
    #[bridge_action(id = "interaction.text", version = "0.1.0", kind = "interaction", interaction = "text", check_result = not_empty)]
    fn interaction_text(#[bridge(args)] p: Params) {}
}

fn main() {}
