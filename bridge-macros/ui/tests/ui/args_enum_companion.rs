use bridge_runtime::prelude::*;

struct Desk;

#[derive(Deserialize, JsonSchema)]
enum Mood {
    Happy { reason: String },
    Sleepy,
}

#[bridge_actions(companion)]
impl Desk {
    /// Changes the character's mood.
    #[bridge_action(id = "animation.mood", version = "0.1.0", kind = "animation")]
    fn animation_mood(#[bridge(args)] mood: Mood) {}
}

fn main() {}
