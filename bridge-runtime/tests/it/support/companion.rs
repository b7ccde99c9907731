//! Shared fixture for the companion tests: the standard capabilities (defined here, in the test,
//! as CP-0-2 asks: supported capabilities come from discovery, not from the spec's examples),
//! two characters with different support, two styles, and engine/presenter helpers.

#![allow(dead_code)]

use bridge_runtime::catalog::checks;
use bridge_runtime::catalog::{
    CancelBehavior, CapabilityKind, CapabilitySpec, Catalog, CharacterSpec, FallbackReason, InteractionType, Scope,
    StyleSpec,
};
use bridge_runtime::companion::{
    ClientIdentity, CompanionError, Engine, EngineConfig, PresenterEvent, ScriptedPresenter, SqliteStore, Store,
};
use serde_json::{Value, json};
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::sync::mpsc::UnboundedReceiver;

/// `interaction.choose` input schema exactly as CP-2-22 gives it.
pub fn choose_input_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "title": {"type": "string", "minLength": 1, "maxLength": 160},
            "options": {
                "type": "array", "minItems": 2, "maxItems": 5,
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string", "minLength": 1, "maxLength": 64},
                        "label": {"type": "string", "minLength": 1, "maxLength": 24}
                    },
                    "required": ["id", "label"],
                    "additionalProperties": false
                }
            }
        },
        "required": ["title", "options"],
        "additionalProperties": false
    })
}

/// `interaction.choose` output schema exactly as CP-2-22 gives it.
pub fn choose_output_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"selectedId": {"type": "string"}},
        "required": ["selectedId"],
        "additionalProperties": false
    })
}

pub fn notice_show() -> CapabilitySpec {
    CapabilitySpec::new("notice.show", CapabilityKind::Notice)
        .version("0.1.0")
        .description("Shows a short text bubble.")
        .input_schema(json!({
            "type": "object",
            "properties": {
                "text": {"type": "string", "minLength": 1, "maxLength": 200},
                "tone": {"enum": ["information", "success", "warning", "error"]}
            },
            "required": ["text"],
            "additionalProperties": false
        }))
        .display_ms(4_000)
        .timeout_bounds_ms(1_000, 60_000)
        .build()
        .expect("notice.show")
}

pub fn progress_show() -> CapabilitySpec {
    CapabilitySpec::new("progress.show", CapabilityKind::Progress)
        .version("0.1.0")
        .description("Shows a progress bar the caller keeps updating.")
        .input_schema(json!({
            "type": "object",
            "properties": {
                "label": {"type": "string", "minLength": 1, "maxLength": 80},
                "value": {"type": "number", "minimum": 0, "maximum": 1}
            },
            "required": ["label", "value"],
            "additionalProperties": false
        }))
        .updatable_fields(["label", "value"])
        .timeout_bounds_ms(1_000, 3_600_000)
        .build()
        .expect("progress.show")
}

pub fn interaction_choose() -> CapabilitySpec {
    CapabilitySpec::new("interaction.choose", CapabilityKind::Interaction)
        .version("0.1.0")
        .description("Asks the user to pick one option.")
        .interaction(InteractionType::Choice)
        .input_schema(choose_input_schema())
        .output_schema(choose_output_schema())
        .check_params(checks::unique_ids("/options", "id"))
        .check_result(checks::result_id_in("/options", "id", "selectedId"))
        .build()
        .expect("interaction.choose")
}

pub fn interaction_text() -> CapabilitySpec {
    CapabilitySpec::new("interaction.text", CapabilityKind::Interaction)
        .version("0.1.0")
        .description("Asks the user to type a short text.")
        .interaction(InteractionType::Text)
        .input_schema(json!({
            "type": "object",
            "properties": {"prompt": {"type": "string", "minLength": 1, "maxLength": 160}},
            "required": ["prompt"],
            "additionalProperties": false
        }))
        .output_schema(json!({
            "type": "object",
            "properties": {"text": {"type": "string", "maxLength": 1000}},
            "required": ["text"],
            "additionalProperties": false
        }))
        .updatable_fields(["prompt"])
        .build()
        .expect("interaction.text")
}

pub fn animation_celebrate() -> CapabilitySpec {
    CapabilitySpec::new("animation.celebrate", CapabilityKind::Animation)
        .version("0.1.0")
        .description("The character celebrates.")
        .input_schema(json!({
            "type": "object",
            "properties": {"message": {"type": "string", "minLength": 1, "maxLength": 100}},
            "additionalProperties": false
        }))
        .cancel_behavior(CancelBehavior::FinishCycle)
        .fallback_mapped(
            "notice.show",
            [FallbackReason::CharacterUnsupported, FallbackReason::ReducedMotion],
            |p: &Value| json!({"text": p.get("message").and_then(Value::as_str).unwrap_or("Well done!"), "tone": "success"}),
        )
        .build()
        .expect("animation.celebrate")
}

pub fn vendor_wave() -> CapabilitySpec {
    CapabilitySpec::new("vendor.com.example.wave", CapabilityKind::Animation)
        .version("1.2.0")
        .description("The cat waves its tail.")
        .build()
        .expect("vendor wave")
}

/// The test catalog: `robot` supports every core capability; `cat` lacks `animation.celebrate`
/// but has the vendor wave.
pub fn catalog() -> Arc<RwLock<Catalog>> {
    let mut c = Catalog::new();
    for spec in
        [notice_show(), progress_show(), interaction_choose(), interaction_text(), animation_celebrate(), vendor_wave()]
    {
        c.register_capability(spec).expect("register");
    }
    c.register_character(CharacterSpec::new("robot", "Robot").supports([
        "notice.show",
        "progress.show",
        "interaction.choose",
        "interaction.text",
        "animation.celebrate",
    ]))
    .expect("robot");
    c.register_character(CharacterSpec::new("cat", "Cat").supports([
        "notice.show",
        "progress.show",
        "interaction.choose",
        "interaction.text",
        "vendor.com.example.wave",
    ]))
    .expect("cat");
    c.register_style(StyleSpec::new("bubble", "Rounded speech bubble").applies_to([
        "notice.show",
        "progress.show",
        "interaction.choose",
        "interaction.text",
    ]))
    .expect("bubble");
    c.register_style(StyleSpec::new("comic", "Comic-book burst").applies_to(["notice.show"]).fallback("bubble"))
        .expect("comic");
    Arc::new(RwLock::new(c))
}

/// An external client with every scope.
pub fn agent(id: &str) -> ClientIdentity {
    ClientIdentity::external(id, format!("{id} (paired)"), Scope::ALL)
}

pub struct Fixture {
    pub engine: Engine,
    pub events: UnboundedReceiver<PresenterEvent>,
    pub catalog: Arc<RwLock<Catalog>>,
}

pub fn start_with(config: EngineConfig, store: impl Store) -> Fixture {
    let catalog = catalog();
    let (presenter, events) = ScriptedPresenter::new();
    let engine =
        Engine::builder(catalog.clone()).config(config).store(store).presenter(presenter).start().expect("start");
    Fixture { engine, events, catalog }
}

pub fn start() -> Fixture {
    start_with(EngineConfig::default(), SqliteStore::in_memory().expect("store"))
}

/// A two-option choice.
pub fn choose_params() -> Value {
    json!({"title": "Deploy now?", "options": [{"id": "yes", "label": "Yes"}, {"id": "no", "label": "No"}]})
}

pub fn create_body(capability: &str, params: Value, timeout_ms: u64) -> Value {
    json!({"capability": capability, "params": params, "timeoutMs": timeout_ms})
}

pub async fn create(engine: &Engine, client: &ClientIdentity, body: Value) -> Value {
    engine.call(client, "requests.create", body).await.unwrap_or_else(|e| panic!("create failed: {e:?}"))
}

pub async fn create_err(engine: &Engine, client: &ClientIdentity, body: Value) -> CompanionError {
    match engine.call(client, "requests.create", body).await {
        Ok(v) => panic!("create unexpectedly succeeded: {v}"),
        Err(e) => e,
    }
}

pub async fn get(engine: &Engine, client: &ClientIdentity, id: &str) -> Result<Value, CompanionError> {
    engine.call(client, "requests.get", json!({"requestId": id})).await
}

pub fn id_of(snapshot: &Value) -> String {
    snapshot["requestId"].as_str().expect("requestId").to_owned()
}

/// The next presenter call (virtual time in paused tests, so no real waiting).
pub async fn next_event(events: &mut UnboundedReceiver<PresenterEvent>) -> PresenterEvent {
    tokio::time::timeout(Duration::from_secs(24 * 3600), events.recv())
        .await
        .expect("a presenter event")
        .expect("presenter channel open")
}

/// Lets the presenter task drain its queue (single-threaded runtime).
pub async fn settle() {
    for _ in 0..20 {
        tokio::task::yield_now().await;
    }
}

/// Every presenter call so far.
pub async fn drain(events: &mut UnboundedReceiver<PresenterEvent>) -> Vec<PresenterEvent> {
    settle().await;
    let mut out = Vec::new();
    while let Ok(e) = events.try_recv() {
        out.push(e);
    }
    out
}

/// Shows the request `id` was given the slot: consumes events up to its `Show`.
pub async fn expect_show(events: &mut UnboundedReceiver<PresenterEvent>, id: &str) {
    loop {
        match next_event(events).await {
            PresenterEvent::Show(p) if p.request_id == id => return,
            PresenterEvent::Show(p) => panic!("expected {id} to be shown, got {}", p.request_id),
            _ => {}
        }
    }
}
