//! `#[bridge_actions(companion)]`, seen from an app author's side: the six capabilities the
//! companion tests build by hand (`bridge-runtime/tests/it/support/companion.rs`), declared
//! with the macro, give exactly the same descriptors, and the methods' bodies are the semantic
//! checks the engine runs (CP-2-15, CP-2-22, CP-2-23, CP-2-25).
//!
//! Also a lint test for the generated code: it compiles under the lints below.
#![deny(warnings, unused_qualifications, unused_results, missing_debug_implementations)]
#![deny(clippy::all, clippy::pedantic)]
#![allow(dead_code)]

use crate::companion_support as support;

use bridge_runtime::catalog::{
    CapabilityKind, CapabilitySpec, CharacterSpec, FallbackReason, FieldProblem, QueueMode, Scope,
};
use bridge_runtime::prelude::*;
use bridge_runtime::{Catalog, FieldError};
use schemars::{Schema, SchemaGenerator, json_schema};
use serde_json::{Value, json};
use std::borrow::Cow;
use std::collections::HashSet;

/// The companion's capabilities, declared once.
#[derive(Debug)]
struct Desk;

/// Tone of a notice (CP-2-20). Its schema is written by hand, as the fixture has it: a bare
/// `enum`.
#[derive(Deserialize, Debug, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum Tone {
    Information,
    Success,
    Warning,
    Error,
}

impl JsonSchema for Tone {
    fn schema_name() -> Cow<'static, str> {
        "Tone".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"enum": ["information", "success", "warning", "error"]})
    }
}

/// `interaction.choose` params (CP-2-22).
#[derive(Deserialize, JsonSchema, BridgeArgs, Debug)]
#[serde(deny_unknown_fields)]
struct ChooseParams {
    #[schemars(length(min = 1, max = 160))]
    title: String,
    #[schemars(length(min = 2, max = 5))]
    options: Vec<ChooseOption>,
}

#[derive(Deserialize, JsonSchema, Debug)]
#[serde(deny_unknown_fields)]
struct ChooseOption {
    #[schemars(length(min = 1, max = 64))]
    id: String,
    #[schemars(length(min = 1, max = 24))]
    label: String,
}

/// `interaction.choose` result (CP-2-22).
#[derive(Deserialize, JsonSchema, Debug)]
#[serde(deny_unknown_fields)]
struct ChooseResult {
    #[serde(rename = "selectedId")]
    selected_id: String,
}

/// `interaction.text` result (OQ-CP-18).
#[derive(Deserialize, JsonSchema, Debug)]
#[serde(deny_unknown_fields)]
struct TextResult {
    #[schemars(length(max = 1000))]
    text: String,
}

#[bridge_actions(companion)]
impl Desk {
    /// Shows a short text bubble.
    #[bridge_action(
        id = "notice.show",
        version = "0.1.0",
        kind = "notice",
        display_ms = 4000,
        timeout_ms(min = 1000, max = 60_000)
    )]
    fn notice_show(#[schemars(length(min = 1, max = 200))] text: String, tone: Option<Tone>) {}

    /// Shows a progress bar the caller keeps updating.
    #[bridge_action(
        id = "progress.show",
        version = "0.1.0",
        kind = "progress",
        updatable = ["label", "value"],
        timeout_ms(min = 1000, max = 3_600_000)
    )]
    fn progress_show(
        #[schemars(length(min = 1, max = 80))] label: String,
        #[schemars(range(min = 0, max = 1))] value: f64,
    ) {
    }

    /// Asks the user to pick one option.
    #[bridge_action(
        id = "interaction.choose",
        version = "0.1.0",
        kind = "interaction",
        interaction = "choice",
        output = ChooseResult,
        check_result = selected_in_options
    )]
    fn interaction_choose(#[bridge(args)] p: ChooseParams) -> Result<(), ActionError> {
        // Option ids are unique within one request (CP-2-23).
        let mut seen = HashSet::new();
        let duplicates: Vec<FieldError> = p
            .options
            .iter()
            .enumerate()
            .filter(|(_, o)| !seen.insert(o.id.as_str()))
            .map(|(i, _)| FieldError::new(format!("/options/{i}/id"), "duplicate id"))
            .collect();
        if duplicates.is_empty() { Ok(()) } else { Err(ActionError::fields(duplicates)) }
    }

    /// The returned id is one of the request's options (CP-2-23).
    fn selected_in_options(p: &ChooseParams, r: &ChooseResult) -> Result<(), ActionError> {
        if p.options.iter().any(|o| o.id == r.selected_id) {
            Ok(())
        } else {
            Err(ActionError::field("selectedId", "not one of the request's /options ids"))
        }
    }

    /// Asks the user to type a short text.
    #[bridge_action(
        id = "interaction.text",
        version = "0.1.0",
        kind = "interaction",
        interaction = "text",
        output = TextResult,
        updatable = ["prompt"]
    )]
    fn interaction_text(#[schemars(length(min = 1, max = 160))] prompt: String) {}

    /// The character celebrates.
    #[bridge_action(
        id = "animation.celebrate",
        version = "0.1.0",
        kind = "animation",
        cancel_behavior = "finish_cycle",
        fallback(capability = "notice.show", when = ["character_unsupported", "reduced_motion"], map = celebrate_as_notice)
    )]
    fn animation_celebrate(#[schemars(length(min = 1, max = 100))] message: Option<String>) {}

    /// `animation.celebrate` params → `notice.show` params.
    fn celebrate_as_notice(p: &Value) -> Value {
        json!({"text": p.get("message").and_then(Value::as_str).unwrap_or("Well done!"), "tone": "success"})
    }

    /// The cat waves its tail.
    #[bridge_action(id = "vendor.com.example.wave", version = "1.2.0", kind = "animation")]
    fn vendor_wave() {}
}

/// The fixture's catalog, with the capabilities from `Desk` instead of the hand-built ones.
fn macro_catalog() -> Catalog {
    let mut c = Catalog::new();
    let _ = c.register_capabilities::<Desk>().expect("Desk registers");
    let fixture = support::catalog();
    let fixture = fixture.read().expect("fixture catalog");
    for character in fixture.characters() {
        let _ = c.register_character(CharacterSpec::clone(character)).expect("character");
    }
    c
}

const IDS: [&str; 6] = [
    "notice.show",
    "progress.show",
    "interaction.choose",
    "interaction.text",
    "animation.celebrate",
    "vendor.com.example.wave",
];

// CP-2-15, CP-2-21, CP-2-22: the declared capabilities describe themselves exactly as the
// hand-built fixtures, key by key, schemas included.
#[test]
fn descriptors_equal_the_hand_built_fixtures() {
    let ours = macro_catalog();
    let fixture = support::catalog();
    let fixture = fixture.read().expect("fixture catalog");
    let ids: Vec<&str> = ours.capabilities().iter().map(|c| c.id()).collect();
    assert_eq!(ids, IDS, "declaration order");
    for id in IDS {
        assert_eq!(ours.capability_descriptor(id), fixture.capability_descriptor(id), "descriptor of {id}");
    }
}

// CP-2-22: interaction.choose's input and output schemas are exactly the draft's.
#[test]
fn choose_schemas_are_exactly_cp_2_22() {
    let ours = macro_catalog();
    let d = ours.capability_descriptor("interaction.choose").expect("interaction.choose");
    assert_eq!(d["inputSchema"], support::choose_input_schema());
    assert_eq!(d["outputSchema"], support::choose_output_schema());
    assert_eq!(d["kind"], "interaction");
    assert_eq!(d["interaction"], "choice");
    assert_eq!(d["completion"], "user_response");
    assert_eq!(d["requiredScopes"], json!(["interact"]));
}

fn choose() -> Value {
    support::choose_params()
}

fn with_options(options: &Value) -> Value {
    json!({"title": "Deploy now?", "options": options})
}

// CP-2-23, CP-2-25: the method body is the semantic params check, run after the schema
// check; it rejects duplicate option ids exactly like the fixture's check.
#[test]
fn semantic_check_rejects_duplicate_option_ids() {
    let ours = macro_catalog();
    let fixture = support::interaction_choose();
    let spec = ours.capability("interaction.choose").expect("interaction.choose");
    assert_eq!(spec.validate_params(&mut choose()), Ok(()));

    let dup = with_options(&json!([
        {"id": "a", "label": "A"}, {"id": "b", "label": "B"}, {"id": "a", "label": "A again"}, {"id": "b", "label": "B"}
    ]));
    let problems = spec.validate_params(&mut dup.clone()).expect_err("duplicates rejected");
    assert_eq!(
        problems,
        vec![FieldProblem::new("/options/2/id", "duplicate id"), FieldProblem::new("/options/3/id", "duplicate id")]
    );
    assert_eq!(Err(problems), fixture.validate_params(&mut dup.clone()));

    // The schema runs first: one option is a structural error, and the check never sees it.
    let one = with_options(&json!([{"id": "a", "label": "A"}]));
    let problems = spec.validate_params(&mut one.clone()).expect_err("too few options");
    assert_eq!(problems.len(), 1);
    assert_eq!(problems[0].path, "/options");
}

// CP-2-23: `check_result` rejects a selectedId that is not one of the request's options.
#[test]
fn result_check_rejects_a_foreign_selected_id() {
    let ours = macro_catalog();
    let fixture = support::interaction_choose();
    let spec = ours.capability("interaction.choose").expect("interaction.choose");
    assert_eq!(spec.validate_result(&choose(), &json!({"selectedId": "yes"})), Ok(()));
    let foreign = json!({"selectedId": "maybe"});
    let problems = spec.validate_result(&choose(), &foreign).expect_err("foreign id rejected");
    assert_eq!(problems, vec![FieldProblem::new("/selectedId", "not one of the request's /options ids")]);
    assert_eq!(Err(problems), fixture.validate_result(&choose(), &foreign));
    // outputSchema first: a missing selectedId never reaches the check.
    let problems = spec.validate_result(&choose(), &json!({})).expect_err("missing selectedId");
    assert_eq!(problems.len(), 1);
    assert_eq!(problems[0].path, "");
}

// CP-2-29: the fallback and its params mapping are declared with the capability.
#[test]
fn fallback_maps_params() {
    let ours = macro_catalog();
    let fb = ours.capability("animation.celebrate").and_then(|c| c.fallback().cloned()).expect("a fallback");
    assert_eq!(fb.capability, "notice.show");
    assert_eq!(fb.when, [FallbackReason::CharacterUnsupported, FallbackReason::ReducedMotion]);
    let map = fb.map.expect("a params map");
    assert_eq!(map(&json!({"message": "Shipped"})), json!({"text": "Shipped", "tone": "success"}));
    assert_eq!(map(&json!({})), json!({"text": "Well done!", "tone": "success"}));
    // The optional `message` may be absent, and an explicit null for it counts as absent (issue #6):
    // the schema declares no null, and validation drops it first.
    let spec = ours.capability("animation.celebrate").expect("animation.celebrate");
    assert_eq!(spec.validate_params(&mut json!({})), Ok(()));
    let mut with_null = json!({"message": null});
    assert_eq!(spec.validate_params(&mut with_null), Ok(()));
    assert_eq!(with_null, json!({}));
    assert!(spec.validate_params(&mut json!({"message": 3})).is_err());
}

/// Every other key, plain parameters with a check, and a result check over plain parameters.
#[derive(Debug)]
struct Extras;

/// A rating the user gives.
#[derive(Deserialize, JsonSchema, Debug)]
#[serde(deny_unknown_fields)]
struct Rating {
    stars: u8,
}

#[bridge_actions(companion)]
impl Extras {
    #[bridge_action(
        id = "vendor.org.example.rate",
        version = "2.0.0-beta.1",
        description = "Asks the user for a star rating.",
        kind = "interaction",
        interaction = "text",
        completion = "user_response",
        scopes = ["interact", "notify"],
        cancelable = false,
        cancel_behavior = "remove",
        queue = "queue",
        timeout_ms(min = 5000, max = 120_000),
        output = Rating,
        check_result = Self::stars_within
    )]
    fn rate(
        /// The question.
        question: String,
        /// The highest number of stars.
        #[schemars(range(min = 1, max = 10))]
        max_stars: u8,
        /// Shown under the question.
        hint: Option<String>,
    ) -> Result<(), ActionError> {
        if hint.as_deref() == Some(question.as_str()) {
            return Err(ActionError::field("hint", "repeats the question"));
        }
        if max_stars < 3 && question.is_empty() {
            return Err(ActionError::not_available("nothing to rate"));
        }
        Ok(())
    }

    /// Parameters by reference (`&str` for a `String`), then the output.
    #[allow(clippy::ref_option, clippy::trivially_copy_pass_by_ref)]
    fn stars_within(
        _question: &str,
        max_stars: &u8,
        _hint: &Option<String>,
        rating: &Rating,
    ) -> Result<(), ActionError> {
        if rating.stars <= *max_stars { Ok(()) } else { Err(ActionError::field("stars", "above max_stars")) }
    }

    /// Says hello; no params, no output.
    #[bridge_action(id = "notice.hello", version = "0.1.0", kind = "notice", queue = "evictable")]
    fn hello() {}

    /// Blinks; a check without params.
    #[bridge_action(id = "animation.blink", version = "0.1.0", kind = "animation")]
    #[allow(clippy::unnecessary_wraps)]
    fn blink() -> Result<(), ActionError> {
        Ok(())
    }

    /// Not a capability: other methods stay as they are.
    fn helper() -> u8 {
        3
    }
}

// CP-2-15, CP-2-16, OQ-CP-14: every key lands in the descriptor; no params and no output are
// explicit empty schemas; defaults come from the builder.
#[test]
fn every_key_reaches_the_descriptor() {
    let specs = Extras::capability_specs().expect("Extras builds");
    let ids: Vec<&str> = specs.iter().map(CapabilitySpec::id).collect();
    assert_eq!(ids, ["vendor.org.example.rate", "notice.hello", "animation.blink"]);
    assert_eq!(Extras::helper(), 3);

    let rate = specs[0].descriptor(&[]);
    assert_eq!(
        rate,
        json!({
            "id": "vendor.org.example.rate",
            "version": "2.0.0-beta.1",
            "description": "Asks the user for a star rating.",
            "characters": [],
            "kind": "interaction",
            "interaction": "text",
            "completion": "user_response",
            "requiredScopes": ["notify", "interact"],
            "updatableFields": [],
            "cancelable": false,
            "cancelBehavior": "remove",
            "queuePolicy": {"mode": "queue", "interrupts": false},
            "limits": {"minTimeoutMs": 5000, "maxTimeoutMs": 120_000, "displayMs": null},
            "fallback": null,
            "inputSchema": {
                "type": "object",
                "properties": {
                    "question": {"type": "string", "description": "The question."},
                    "max_stars": {
                        "type": "integer", "minimum": 1, "maximum": 10,
                        "description": "The highest number of stars."
                    },
                    "hint": {"type": "string", "description": "Shown under the question."}
                },
                "required": ["question", "max_stars"],
                "additionalProperties": false
            },
            "outputSchema": {
                "type": "object",
                "properties": {"stars": {"type": "integer", "minimum": 0, "maximum": 255}},
                "required": ["stars"],
                "additionalProperties": false
            }
        })
    );

    let hello = &specs[1];
    assert_eq!(hello.kind(), CapabilityKind::Notice);
    assert_eq!(hello.required_scopes(), [Scope::Notify]);
    assert_eq!(hello.queue_policy().mode, QueueMode::Evictable);
    assert_eq!(hello.limits().display_ms, Some(5_000));
    let empty = json!({"type": "object", "properties": {}, "additionalProperties": false});
    assert_eq!(Value::Object(hello.input_schema().clone()), empty);
    assert_eq!(Value::Object(hello.output_schema().clone()), empty);
    assert_eq!(specs[2].validate_params(&mut json!({})), Ok(()));
}

// CP-2-25: a check over plain parameters; its ActionError becomes problems at the parameter's
// pointer (or at `""` for an error about the whole params).
#[test]
fn plain_parameter_checks() {
    let specs = Extras::capability_specs().expect("Extras builds");
    let rate = &specs[0];
    assert_eq!(rate.validate_params(&mut json!({"question": "How was it?", "max_stars": 5})), Ok(()));
    assert_eq!(
        rate.validate_params(&mut json!({"question": "Rate", "max_stars": 5, "hint": "Rate"})),
        Err(vec![FieldProblem::new("/hint", "repeats the question")])
    );
    assert_eq!(
        rate.validate_params(&mut json!({"question": "", "max_stars": 2})),
        Err(vec![FieldProblem::new("", "nothing to rate")])
    );
    let params = json!({"question": "How was it?", "max_stars": 5});
    assert_eq!(rate.validate_result(&params, &json!({"stars": 5})), Ok(()));
    assert_eq!(
        rate.validate_result(&params, &json!({"stars": 6})),
        Err(vec![FieldProblem::new("/stars", "above max_stars")])
    );
}

// CP-2-13: registration is all or none; a clash leaves the catalog unchanged.
#[test]
fn registration_is_all_or_none() {
    let mut c = Catalog::new();
    let _ = c.register_capability(support::progress_show()).expect("progress.show");
    let revision = c.catalog_revision();
    let err = c.register_capabilities::<Desk>().expect_err("progress.show is taken");
    assert_eq!(err.to_string(), "duplicate capability id `progress.show`");
    assert_eq!(c.capabilities().len(), 1);
    assert_eq!(c.catalog_revision(), revision);
    let added = c.register_capabilities::<Extras>().expect("Extras registers");
    assert_eq!(added.len(), 3);
    assert_eq!(c.catalog_revision(), revision + 3);
}

/// Parameter attributes, as in window mode: `#[serde(rename = "…")]` names the property (in the
/// schema, where the params are read, and in `updatable`), `#[serde(default)]` makes it optional,
/// `#[schemars(…)]` constrains it.
#[derive(Debug)]
struct Badges;

#[bridge_actions(companion)]
impl Badges {
    /// Shows a badge.
    #[bridge_action(id = "notice.badge", version = "0.1.0", kind = "notice", updatable = ["badgeText"])]
    fn badge(
        /// The badge's text.
        #[serde(rename = "badgeText")]
        #[schemars(length(min = 1, max = 20))]
        badge_text: String,
        #[serde(default)] count: u8,
    ) -> Result<(), ActionError> {
        if count > 99 {
            return Err(ActionError::field("count", "at most 99"));
        }
        if badge_text.trim().is_empty() { Err(ActionError::field("badgeText", "blank")) } else { Ok(()) }
    }
}

#[test]
fn companion_parameter_attributes_reach_the_schema_and_the_reader() {
    let specs = Badges::capability_specs().expect("Badges builds");
    let badge = &specs[0];
    let schema = Value::Object(badge.input_schema().clone());
    assert_eq!(
        schema["properties"]["badgeText"],
        json!({"type": "string", "minLength": 1, "maxLength": 20, "description": "The badge's text."})
    );
    assert_eq!(schema["properties"]["count"]["type"], "integer");
    assert_eq!(schema["required"], json!(["badgeText"]));
    assert_eq!(badge.descriptor(&[])["updatableFields"], json!(["badgeText"]));

    assert_eq!(badge.validate_params(&mut json!({"badgeText": "New"})), Ok(()));
    assert_eq!(
        badge.validate_params(&mut json!({"badgeText": "New", "count": 100})),
        Err(vec![FieldProblem::new("/count", "at most 99")])
    );
    assert_eq!(
        badge.validate_params(&mut json!({"badgeText": " "})),
        Err(vec![FieldProblem::new("/badgeText", "blank")])
    );
    assert!(badge.validate_params(&mut json!({"badge_text": "New"})).is_err());
    assert!(badge.validate_params(&mut json!({"badgeText": ""})).is_err());
}

/// An empty companion impl declares nothing (and `crate = path` names the runtime).
#[derive(Debug)]
struct Nothing;

#[bridge_actions(companion, crate = ::bridge_runtime)]
impl Nothing {}

#[test]
fn empty_impl_declares_nothing() {
    assert!(Nothing::capability_specs().expect("builds").is_empty());
}

/// Types whose schema admits values their `Deserialize` refuses (`#[schemars(with = "String")]`
/// on a `char`, which decodes from one-character strings only): the params pass the
/// `inputSchema`, then fail to decode for the check.
#[derive(Debug)]
struct Loose;

/// Params of `notice.loose_args`.
#[derive(Deserialize, JsonSchema, BridgeArgs, Debug)]
struct LooseArgs {
    #[schemars(with = "String")]
    letter: char,
}

/// Result of `notice.loose`, as loose as its params.
#[derive(Deserialize, JsonSchema, Debug)]
struct LooseResult {
    #[schemars(with = "String")]
    letter: char,
}

#[bridge_actions(companion)]
impl Loose {
    /// Plain parameters that decode from one-character strings only.
    #[bridge_action(
        id = "notice.loose",
        version = "0.1.0",
        kind = "notice",
        output = LooseResult,
        check_result = Self::result_ok
    )]
    fn loose(
        #[schemars(with = "String")] first: char,
        #[schemars(with = "String")] second: char,
        #[serde(default)]
        #[schemars(with = "String")]
        third: char,
    ) -> Result<(), ActionError> {
        if first == second && second == third { Err(ActionError::not_available("all the same")) } else { Ok(()) }
    }

    #[allow(clippy::trivially_copy_pass_by_ref)]
    fn result_ok(first: &char, second: &char, third: &char, r: &LooseResult) -> Result<(), ActionError> {
        if [first, second, third].contains(&&r.letter) {
            Ok(())
        } else {
            Err(ActionError::field("letter", "not given"))
        }
    }

    /// A `#[bridge(args)]` struct that decodes from one-character strings only.
    #[bridge_action(id = "notice.loose_args", version = "0.1.0", kind = "notice")]
    fn loose_args(#[bridge(args)] p: LooseArgs) -> Result<(), ActionError> {
        if p.letter == 'x' { Err(ActionError::field("letter", "not x")) } else { Ok(()) }
    }
}

// CP-2-25, CP-4-18: params that pass the schema but not the parameter's type are one problem at
// the first such parameter (never echoing its value); a `#[bridge(args)]` struct or a result
// that does not decode is one problem about the whole value; an author's `ActionError` becomes
// problems at the parameter's pointer, `not_available` one about the whole params.
#[test]
fn values_the_types_refuse_are_problems_without_values() {
    let specs = Loose::capability_specs().expect("Loose builds");
    let (loose, args) = (&specs[0], &specs[1]);
    let declared = "does not match the parameter's declared type";
    assert_eq!(loose.validate_params(&mut json!({"first": "a", "second": "b"})), Ok(()));
    assert_eq!(
        loose.validate_params(&mut json!({"first": "one", "second": "two", "third": "three"})),
        Err(vec![FieldProblem::new("/first", declared)])
    );
    assert_eq!(
        loose.validate_params(&mut json!({"first": "a", "second": "two"})),
        Err(vec![FieldProblem::new("/second", declared)])
    );
    assert_eq!(
        loose.validate_params(&mut json!({"first": "a", "second": "b", "third": "three"})),
        Err(vec![FieldProblem::new("/third", declared)])
    );
    assert_eq!(
        loose.validate_params(&mut json!({"first": "a", "second": "a", "third": "a"})),
        Err(vec![FieldProblem::new("", "all the same")])
    );
    let params = json!({"first": "a", "second": "b"});
    assert_eq!(loose.validate_result(&params, &json!({"letter": "b"})), Ok(()));
    assert_eq!(
        loose.validate_result(&params, &json!({"letter": "c"})),
        Err(vec![FieldProblem::new("/letter", "not given")])
    );
    assert_eq!(
        loose.validate_result(&params, &json!({"letter": "bee"})),
        Err(vec![FieldProblem::new("", "does not match the result's declared type")])
    );
    assert_eq!(
        loose.validate_result(&json!({"first": "one", "second": "b"}), &json!({"letter": "b"})),
        Err(vec![FieldProblem::new("/first", declared)])
    );
    // The result check reads the stored params as they are; keys it does not know stay unreported.
    assert_eq!(loose.validate_result(&json!({"first": "a", "second": "b", "x": 1}), &json!({"letter": "a"})), Ok(()));

    assert_eq!(args.validate_params(&mut json!({"letter": "a"})), Ok(()));
    assert_eq!(
        args.validate_params(&mut json!({"letter": "ay"})),
        Err(vec![FieldProblem::new("", "does not match the params' declared type")])
    );
    assert_eq!(args.validate_params(&mut json!({"letter": "x"})), Err(vec![FieldProblem::new("/letter", "not x")]));
}
