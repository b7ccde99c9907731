use bridge_runtime::prelude::*;

struct Desk;

#[derive(Deserialize, JsonSchema)]
struct Answer {
    text: String,
}

#[bridge_actions(companion)]
impl Desk {
    /// Asks the user to type a short text.
    #[bridge_action(
        id = "interaction.text",
        version = "0.1.0",
        kind = "interaction",
        interaction = "text",
        output = Answer,
        check_result = answer_fits
    )]
    fn interaction_text(prompt: String) {}

    fn answer_fits(answer: &Answer) -> Result<(), ActionError> {
        let _ = answer;
        Ok(())
    }
}

fn main() {}
