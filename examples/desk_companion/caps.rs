//! The desk companion's capabilities, characters and styles: declared once, here, with the same
//! macros as GUI windows. The socket API (`capabilities.list`), the MCP tools, the OpenRPC
//! document and the exported catalog all come from this registry (CP-2-12, CP-2-13).

use bridge_runtime::Catalog;
use bridge_runtime::catalog::{CharacterSpec, SpecError, StyleSpec};
use bridge_runtime::prelude::*;
use serde_json::{Value, json};
use std::collections::HashSet;

/// The companion's capability set.
#[derive(Debug)]
pub struct Desk;

/// Tone of a notice: its meaning, independent of the style's look (CP-2-20).
#[derive(Deserialize, JsonSchema, Debug, Clone, Copy)]
#[serde(rename_all = "lowercase")]
pub enum Tone {
    /// Neutral information.
    Information,
    /// Something went well.
    Success,
    /// Needs attention.
    Warning,
    /// Something failed.
    Error,
}

/// `interaction.choose` params.
#[derive(Deserialize, JsonSchema, BridgeArgs, Debug)]
#[serde(deny_unknown_fields)]
pub struct ChooseParams {
    /// The question.
    #[schemars(length(min = 1, max = 160))]
    #[allow(dead_code)] // shown by the presenter from the raw params; here for the schema
    pub title: String,
    /// 2 to 5 options; ids are stable and unique, labels are what the user sees.
    #[schemars(length(min = 2, max = 5))]
    pub options: Vec<ChooseOption>,
}

/// One option of a choice.
#[derive(Deserialize, JsonSchema, Debug)]
#[serde(deny_unknown_fields)]
pub struct ChooseOption {
    /// Stable id returned as `selectedId` (never the label, CP-2-24).
    #[schemars(length(min = 1, max = 64))]
    pub id: String,
    /// Button text.
    #[schemars(length(min = 1, max = 24))]
    pub label: String,
}

/// `interaction.choose` result.
#[derive(Deserialize, JsonSchema, Debug)]
#[serde(deny_unknown_fields)]
pub struct ChooseResult {
    /// The id of the option the user picked.
    #[serde(rename = "selectedId")]
    pub selected_id: String,
}

/// `interaction.text` result.
#[derive(Deserialize, JsonSchema, Debug)]
#[serde(deny_unknown_fields)]
pub struct TextResult {
    /// What the user typed.
    #[schemars(length(max = 1000))]
    #[allow(dead_code)] // returned to the caller as JSON; here for the schema
    pub text: String,
}

#[bridge_actions(companion)]
impl Desk {
    /// Shows a short text bubble for a few seconds.
    #[bridge_action(
        id = "notice.show",
        version = "0.1.0",
        kind = "notice",
        display_ms = 4000,
        queue = "evictable",
        timeout_ms(min = 1000, max = 120_000)
    )]
    fn notice_show(
        /// The text, shown as plain text.
        #[schemars(length(min = 1, max = 200))]
        text: String,
        /// Its meaning; default information.
        tone: Option<Tone>,
    ) {
    }

    /// Shows a progress bar that the caller updates (`value` 0..1, `label`) and completes with
    /// `requests.update {"complete": true}`.
    #[bridge_action(id = "progress.show", version = "0.1.0", kind = "progress", updatable = ["label", "value"], timeout_ms(min = 1000, max = 3_600_000))]
    fn progress_show(
        /// What is in progress.
        #[schemars(length(min = 1, max = 80))]
        label: String,
        /// Fraction done, 0 to 1.
        #[schemars(range(min = 0, max = 1))]
        value: f64,
    ) {
    }

    /// Asks the user to pick one of 2 to 5 options. Completes only with the user's pick;
    /// closing the question cancels it.
    #[bridge_action(id = "interaction.choose", version = "0.1.0", kind = "interaction", interaction = "choice", output = ChooseResult, check_result = selected_in_options, timeout_ms(min = 5000, max = 600_000))]
    fn interaction_choose(#[bridge(args)] p: ChooseParams) -> Result<(), ActionError> {
        // Ids must be unique (CP-2-23); so must labels, or the user could not tell options apart.
        let (mut ids, mut labels) = (HashSet::new(), HashSet::new());
        let mut duplicates = Vec::new();
        for (i, o) in p.options.iter().enumerate() {
            if !ids.insert(o.id.as_str()) {
                duplicates.push(FieldError::new(format!("/options/{i}/id"), "duplicate id"));
            }
            if !labels.insert(o.label.trim().to_lowercase()) {
                duplicates.push(FieldError::new(format!("/options/{i}/label"), "duplicate label"));
            }
        }
        if duplicates.is_empty() { Ok(()) } else { Err(ActionError::fields(duplicates)) }
    }

    /// The returned id must be one of the request's options (CP-2-23).
    fn selected_in_options(p: &ChooseParams, r: &ChooseResult) -> Result<(), ActionError> {
        if p.options.iter().any(|o| o.id == r.selected_id) {
            Ok(())
        } else {
            Err(ActionError::field("selectedId", "not one of the request's option ids"))
        }
    }

    /// Asks the user to type a short answer.
    #[bridge_action(id = "interaction.text", version = "0.1.0", kind = "interaction", interaction = "text", output = TextResult, timeout_ms(min = 5000, max = 600_000))]
    fn interaction_text(
        /// The question.
        #[schemars(length(min = 1, max = 160))]
        prompt: String,
    ) {
    }

    /// The character celebrates. Characters without the animation, or a user who asked for
    /// reduced motion, get a success notice instead — only if the caller allowed the fallback.
    #[bridge_action(
        id = "animation.celebrate",
        version = "0.1.0",
        kind = "animation",
        cancel_behavior = "finish_cycle",
        fallback(capability = "notice.show", when = ["character_unsupported", "reduced_motion"], map = celebrate_as_notice)
    )]
    fn animation_celebrate(
        /// Optional caption.
        #[schemars(length(min = 1, max = 100))]
        message: Option<String>,
    ) {
    }

    /// `animation.celebrate` params → `notice.show` params.
    fn celebrate_as_notice(p: &Value) -> Value {
        json!({"text": p.get("message").and_then(Value::as_str).unwrap_or("Well done!"), "tone": "success"})
    }

    /// The cat swishes its tail (a vendor capability only the cat has).
    #[bridge_action(id = "vendor.com.example.desk.tail_swish", version = "0.1.0", kind = "animation")]
    fn tail_swish() {}
}

/// The registry of the desk companion: capabilities, two characters (the cat lacks
/// `animation.celebrate`, only the cat has the tail swish) and three styles.
pub fn catalog() -> Result<Catalog, SpecError> {
    let mut c = Catalog::new();
    c.register_capabilities::<Desk>()?;
    c.register_character(CharacterSpec::new("robot", "Robo").supports([
        "notice.show",
        "progress.show",
        "interaction.choose",
        "interaction.text",
        "animation.celebrate",
    ]))?;
    c.register_character(CharacterSpec::new("cat", "Mochi the cat").supports([
        "notice.show",
        "progress.show",
        "interaction.choose",
        "interaction.text",
        "vendor.com.example.desk.tail_swish",
    ]))?;
    c.register_style(StyleSpec::new("bubble", "Rounded speech bubble").applies_to([
        "notice.show",
        "progress.show",
        "interaction.choose",
        "interaction.text",
    ]))?;
    c.register_style(StyleSpec::new("whisper", "Small, quiet text").applies_to(["notice.show", "interaction.text"]))?;
    c.register_style(StyleSpec::new("comic", "Comic-book burst").applies_to(["notice.show"]).fallback("bubble"))?;
    Ok(c)
}
