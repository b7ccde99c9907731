//! Desktop-companion capabilities, characters and styles (spec CP §2): the registry entries that
//! `capabilities.list`/`capabilities.describe`, `characters.list` and `styles.list` publish and
//! that the request engine (`companion`) enforces. One declaration drives both, so the
//! description cannot drift from the behaviour (CP-2-12, CP-2-13, CP-7-10).

use super::schema;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::fmt;
use std::sync::Arc;

/// Upper bound for any capability's `limits.maxTimeoutMs`: 24 h. Keeps every deadline shorter
/// than the result retention period (CP-4-16), so no source can hold the display slot for
/// longer than that (CP-4-12).
pub const MAX_TIMEOUT_CAP_MS: u64 = 24 * 60 * 60 * 1000;

/// Longest accepted capability id, in bytes.
pub const MAX_CAPABILITY_ID_LEN: usize = 128;

/// Capability category, descriptor key `kind` (CP-2-17).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CapabilityKind {
    /// A motion of the character; no business output (CP-2-19).
    Animation,
    /// A bubble shown for a while; no business output.
    Notice,
    /// A progress display the caller keeps updating under one `requestId` (CP-3-26).
    Progress,
    /// A question the user answers; the answer is the business `result` (CP-3-16).
    Interaction,
}

impl CapabilityKind {
    /// The wire string, e.g. `"notice"`.
    pub fn as_str(self) -> &'static str {
        match self {
            CapabilityKind::Animation => "animation",
            CapabilityKind::Notice => "notice",
            CapabilityKind::Progress => "progress",
            CapabilityKind::Interaction => "interaction",
        }
    }
}

/// Interaction type, descriptor key `interaction` (CP-2-18). `none` for every kind except
/// `interaction`, which must be `choice` or `text`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InteractionType {
    /// No user input.
    None,
    /// The user picks one of the request's options; result `{"selectedId": …}` (CP-2-22, CP-3-13).
    Choice,
    /// The user types text; the result shape is the capability's `outputSchema` (OQ-CP-18).
    Text,
}

/// What makes a request `completed`, descriptor key `completion` (CP-2-15, CP-3-15). Closed list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Completion {
    /// Completed once the content has been on screen for `limits.displayMs`, timed from the
    /// host's report that it appeared (`displayedAt`, CP-3-14, CP-3-19). Means "shown as the
    /// contract requires", not "read by the user" (CP-3-15). Result `{}`. A host that manages
    /// the display time itself (pause on hover, CP-3-19) may end it early with
    /// `companion::Engine::finished`; one that never reports the display lets the request
    /// expire at its deadline.
    Displayed,
    /// Completed when the host reports that the animation's execution ended
    /// (`companion::Engine::finished`); not a promise that every frame was seen
    /// (CP-3-15). Result `{}`.
    AnimationEnd,
    /// Completed only by an actual user answer (`companion::Engine::user_responded`);
    /// the answer is the `result` (CP-3-13, CP-3-16). Closing the view cancels (CP-3-12).
    UserResponse,
    /// Stays `running` until the caller ends it with `requests.update` `{"complete": true}`
    /// (progress). Result `{}`.
    CallerCompletes,
}

/// An authorisation scope (CP-5-6). The capability's `requiredScopes` is authoritative;
/// defaults per OQ-CP-14: animation → `animate`, notice/progress → `notify`,
/// interaction → `interact`; the five discovery methods need `discover`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// The discovery methods (`runtime.describe`, `characters.list`, `capabilities.*`, `styles.list`).
    Discover,
    /// Animations.
    Animate,
    /// Notices and progress.
    Notify,
    /// User interactions.
    Interact,
}

impl Scope {
    /// Every scope, in wire order.
    pub const ALL: [Scope; 4] = [Scope::Discover, Scope::Animate, Scope::Notify, Scope::Interact];

    /// The wire string, e.g. `"interact"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Discover => "discover",
            Scope::Animate => "animate",
            Scope::Notify => "notify",
            Scope::Interact => "interact",
        }
    }

    /// The default scope for requests of `kind` (OQ-CP-14).
    pub fn default_for(kind: CapabilityKind) -> Scope {
        match kind {
            CapabilityKind::Animation => Scope::Animate,
            CapabilityKind::Notice | CapabilityKind::Progress => Scope::Notify,
            CapabilityKind::Interaction => Scope::Interact,
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How the presentation reacts to cancellation, descriptor key `cancelBehavior` (CP-2-15).
/// Either way the request's state becomes `cancelled` at once (CP-3-24); this only tells the
/// presenter how to take the view down.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CancelBehavior {
    /// The view is removed immediately.
    Remove,
    /// An animation may finish its current cycle before the view is removed.
    FinishCycle,
}

/// Queue mode of a capability's requests (CP-4-10, CP-4-11).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum QueueMode {
    /// Waits for the display slot in order; never evicted.
    Queue,
    /// Like `queue`, but while still queued (never once shown) it may be evicted by a newer
    /// request of the same client when that client's or the total capacity is full; the evicted
    /// request ends `cancelled` with terminal reason `queue_evicted` (CP-4-10). Not allowed for
    /// interactions (CP-4-11).
    Evictable,
}

/// Queueing/interruption policy, descriptor key `queuePolicy` (CP-2-15, CP-4-8 … CP-4-12).
///
/// Shape: `{"mode": "queue"|"evictable", "interrupts": bool}`. There is one display slot; queued
/// requests get it round-robin across clients, FIFO within a client, and a request holds it
/// until it ends (at the latest at its deadline, itself capped by [`MAX_TIMEOUT_CAP_MS`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct QueuePolicy {
    /// Queue mode.
    pub mode: QueueMode,
    /// Whether a request of this capability takes the display slot from the request holding it.
    /// Always `false` in protocol 0.1 (declared so that the policy is explicit, CP-2-16);
    /// [`CapabilityBuilder::build`] rejects `true`.
    pub interrupts: bool,
}

/// Resource limits, descriptor key `limits` (CP-2-15, CP-3-17 … CP-3-19, OQ-CP-3).
///
/// Shape: `{"minTimeoutMs": int, "maxTimeoutMs": int, "displayMs": int|null}`, milliseconds.
/// `timeoutMs` of `requests.create` is required and must lie in `[minTimeoutMs, maxTimeoutMs]`
/// (else `INVALID_PARAMS`); it runs from acceptance, includes queueing and cannot be extended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CapabilityLimits {
    /// Shortest accepted `timeoutMs`, ms, ≥ 1.
    pub min_timeout_ms: u64,
    /// Longest accepted `timeoutMs`, ms, ≤ [`MAX_TIMEOUT_CAP_MS`].
    pub max_timeout_ms: u64,
    /// How long a `completion: "displayed"` request stays on screen, ms, timed from
    /// `displayedAt`; `null` for every other completion.
    pub display_ms: Option<u64>,
}

impl Default for CapabilityLimits {
    fn default() -> Self {
        Self { min_timeout_ms: 1_000, max_timeout_ms: 10 * 60 * 1000, display_ms: None }
    }
}

/// Why a declared alternative was used, snapshot key `fallbackReason` and descriptor
/// `fallback.when` (CP-2-29, OQ-CP-4). Closed list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FallbackReason {
    /// The chosen character does not support the requested capability.
    CharacterUnsupported,
    /// The user asked for reduced motion and the requested capability is an animation.
    ReducedMotion,
    /// The requested style does not apply to the (resolved) capability; the style's declared
    /// fallback style was used.
    StyleUnsupported,
}

/// Maps the caller's params (valid for the requested capability) to params of the fallback.
pub type ParamsMap = Arc<dyn Fn(&Value) -> Value + Send + Sync>;

/// A declared alternative presentation, descriptor key `fallback` (CP-2-29).
///
/// Shape: `{"capability": id, "when": ["character_unsupported"|"reduced_motion", …]}`. Used only
/// when the caller set `allowFallback: true`; the snapshot then records `resolvedCapability` and
/// `fallbackReason`. The target must have the same `interaction` type, so a question never turns
/// into a notice (CP-2-30).
#[derive(Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Fallback {
    /// The alternative capability's id.
    pub capability: String,
    /// The situations in which it applies.
    pub when: Vec<FallbackReason>,
    /// Params mapping; `None` passes the caller's params unchanged. The result must validate
    /// against the target's `inputSchema`.
    #[serde(skip)]
    pub map: Option<ParamsMap>,
}

impl fmt::Debug for Fallback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Fallback")
            .field("capability", &self.capability)
            .field("when", &self.when)
            .field("map", &self.map.as_ref().map(|_| "fn"))
            .finish()
    }
}

/// One problem with a parameter or result: `{"path": JSON pointer, "message": text}`. `path` is
/// relative to the value checked (e.g. `/options/1/id`); the engine prefixes it with the method
/// parameter it came from (e.g. `/params/options/1/id`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FieldProblem {
    /// JSON pointer to the offending value (`""` = the whole value).
    pub path: String,
    /// What is wrong; never echoes the value itself (CP-4-18).
    pub message: String,
}

impl FieldProblem {
    /// Builds `{"path": path, "message": message}`.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self { path: path.into(), message: message.into() }
    }
}

/// Semantic check of a request's params, for rules JSON Schema cannot express (option ids
/// unique, references, CP-2-23, CP-2-25). Runs after schema validation succeeded.
pub type ParamsCheck = Arc<dyn Fn(&Value) -> Result<(), Vec<FieldProblem>> + Send + Sync>;

/// Semantic check of a business result against the request's params (a returned `selectedId`
/// belongs to the request's options, CP-2-23). Arguments: `(params, result)`.
pub type ResultCheck = Arc<dyn Fn(&Value, &Value) -> Result<(), Vec<FieldProblem>> + Send + Sync>;

/// A mistake in a capability, character or style declaration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// The id breaks `[a-z][a-z0-9_]*(\.[a-z0-9_]+)+` or the vendor rule (CP-2-27).
    #[error("invalid id `{id}`: {reason}")]
    InvalidId { id: String, reason: String },
    /// `version` is not a semantic version.
    #[error("capability `{id}`: version `{version}` is not a semantic version (e.g. 0.1.0)")]
    InvalidVersion { id: String, version: String },
    /// The declaration omits something every capability must state (CP-2-15).
    #[error("capability `{id}`: missing {what}")]
    Missing { id: String, what: &'static str },
    /// Two declared properties contradict each other.
    #[error("capability `{id}`: {reason}")]
    Inconsistent { id: String, reason: String },
    /// A schema is not a valid JSON Schema object schema.
    #[error("capability `{id}`: {which} is not a valid object schema: {reason}")]
    BadSchema { id: String, which: &'static str, reason: String },
    /// The registry already holds an entry with this id.
    #[error("duplicate {what} id `{id}`")]
    Duplicate { what: &'static str, id: String },
}

/// One registered capability: its full contract (CP-2-15, CP-2-21, OQ-CP-5). Built with
/// [`CapabilitySpec::new`]; immutable afterwards. [`CapabilitySpec::descriptor`] gives the JSON
/// that `capabilities.describe` returns.
pub struct CapabilitySpec {
    id: String,
    version: String,
    description: String,
    kind: CapabilityKind,
    interaction: InteractionType,
    completion: Completion,
    required_scopes: Vec<Scope>,
    updatable_fields: Vec<String>,
    cancelable: bool,
    cancel_behavior: CancelBehavior,
    queue_policy: QueuePolicy,
    limits: CapabilityLimits,
    fallback: Option<Fallback>,
    input_schema: Arc<Map<String, Value>>,
    output_schema: Arc<Map<String, Value>>,
    check_params: Option<ParamsCheck>,
    check_result: Option<ResultCheck>,
    /// `input_schema` as a document, for resolving its references when dropping `null`s.
    input_document: Value,
    input_validator: jsonschema::Validator,
    output_validator: jsonschema::Validator,
}

impl fmt::Debug for CapabilitySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CapabilitySpec")
            .field("id", &self.id)
            .field("version", &self.version)
            .field("kind", &self.kind)
            .field("interaction", &self.interaction)
            .field("completion", &self.completion)
            .finish_non_exhaustive()
    }
}

impl CapabilitySpec {
    /// Starts a declaration of capability `id` of category `kind`. Defaults (all overridable):
    /// `interaction: none` (an `interaction` kind must set `choice`/`text`), completion per kind
    /// (animation → `animation_end`, notice → `displayed` with `displayMs` 5000, progress →
    /// `caller_completes`, interaction → `user_response`), scopes per OQ-CP-14, `cancelable: true`,
    /// `cancelBehavior: remove`, `queuePolicy.mode` `evictable` for notices and `queue`
    /// otherwise, timeouts 1 s … 10 min, explicit empty input and output schemas (CP-2-16).
    /// No default `version`: it must be declared.
    // Returns the builder: `CapabilitySpec::new(..)...build()` is the shape a macro emits.
    #[allow(clippy::new_ret_no_self)]
    pub fn new(id: impl Into<String>, kind: CapabilityKind) -> CapabilityBuilder {
        CapabilityBuilder {
            id: id.into(),
            kind,
            version: None,
            description: String::new(),
            interaction: None,
            completion: None,
            required_scopes: None,
            updatable_fields: Vec::new(),
            cancelable: true,
            cancel_behavior: CancelBehavior::Remove,
            queue_policy: None,
            min_timeout_ms: None,
            max_timeout_ms: None,
            display_ms: None,
            fallback: None,
            input_schema: Value::Object(empty_strict_object()),
            output_schema: Value::Object(empty_strict_object()),
            check_params: None,
            check_result: None,
        }
    }

    /// Stable id, e.g. `interaction.choose` or `vendor.com.example.wave` (CP-2-27).
    pub fn id(&self) -> &str {
        &self.id
    }
    /// Capability version, a semantic version string (CP-7-1).
    pub fn version(&self) -> &str {
        &self.version
    }
    /// Human-readable description.
    pub fn description(&self) -> &str {
        &self.description
    }
    /// Category (CP-2-17).
    pub fn kind(&self) -> CapabilityKind {
        self.kind
    }
    /// Interaction type (CP-2-18).
    pub fn interaction(&self) -> InteractionType {
        self.interaction
    }
    /// Completion condition.
    pub fn completion(&self) -> Completion {
        self.completion
    }
    /// Scopes a client needs to create requests of this capability (CP-5-6).
    pub fn required_scopes(&self) -> &[Scope] {
        &self.required_scopes
    }
    /// Top-level input properties `requests.update` may change (CP-2-11).
    pub fn updatable_fields(&self) -> &[String] {
        &self.updatable_fields
    }
    /// Whether the owning client may cancel (`requests.cancel`).
    pub fn cancelable(&self) -> bool {
        self.cancelable
    }
    /// How the view goes away on cancellation.
    pub fn cancel_behavior(&self) -> CancelBehavior {
        self.cancel_behavior
    }
    /// Queueing policy.
    pub fn queue_policy(&self) -> QueuePolicy {
        self.queue_policy
    }
    /// Limits.
    pub fn limits(&self) -> CapabilityLimits {
        self.limits
    }
    /// The declared alternative, if any (CP-2-29).
    pub fn fallback(&self) -> Option<&Fallback> {
        self.fallback.as_ref()
    }
    /// `inputSchema`: the params' JSON Schema (an explicit empty object schema for no params).
    pub fn input_schema(&self) -> &Map<String, Value> {
        &self.input_schema
    }
    /// `outputSchema`: the business result's JSON Schema (explicit empty object schema when
    /// there is no business output, CP-2-16).
    pub fn output_schema(&self) -> &Map<String, Value> {
        &self.output_schema
    }

    /// Validates request params: drops the `null`s sent for optional properties (they count as
    /// absent, [`schema::normalize_arguments`]; `params` keeps that form), then `inputSchema`
    /// (jsonschema crate), then the semantic check (CP-2-25). Paths are relative to the params
    /// object.
    pub fn validate_params(&self, params: &mut Value) -> Result<(), Vec<FieldProblem>> {
        schema::normalize_arguments(&self.input_document, params);
        let problems = schema_problems(&self.input_validator, params);
        if !problems.is_empty() {
            return Err(problems);
        }
        match &self.check_params {
            Some(check) => check(params),
            None => Ok(()),
        }
    }

    /// Validates a business result for a request with `params`: `outputSchema`, then the result
    /// check (e.g. `selectedId` is one of the options, CP-2-23).
    pub fn validate_result(&self, params: &Value, result: &Value) -> Result<(), Vec<FieldProblem>> {
        let problems = schema_problems(&self.output_validator, result);
        if !problems.is_empty() {
            return Err(problems);
        }
        match &self.check_result {
            Some(check) => check(params, result),
            None => Ok(()),
        }
    }

    /// The descriptor exactly as `capabilities.describe` returns it (CP-2-5, CP-2-15, CP-2-21):
    /// `{"id","version","description","characters","kind","interaction","completion",
    /// "requiredScopes","updatableFields","cancelable","cancelBehavior","queuePolicy","limits",
    /// "fallback","inputSchema","outputSchema"}`. Every key is always present (`fallback` is
    /// `null` when none is declared). `characters` are the ids of the characters that support
    /// the capability, from the registry.
    pub fn descriptor(&self, characters: &[String]) -> Value {
        let d = Descriptor {
            id: &self.id,
            version: &self.version,
            description: &self.description,
            characters,
            kind: self.kind,
            interaction: self.interaction,
            completion: self.completion,
            required_scopes: &self.required_scopes,
            updatable_fields: &self.updatable_fields,
            cancelable: self.cancelable,
            cancel_behavior: self.cancel_behavior,
            queue_policy: self.queue_policy,
            limits: self.limits,
            fallback: self.fallback.as_ref(),
            input_schema: &self.input_schema,
            output_schema: &self.output_schema,
        };
        serde_json::to_value(d).unwrap_or(Value::Null)
    }

    /// The JSON Schema of [`descriptor`](Self::descriptor)'s output, derived from the same type
    /// that serializes it (CP-2-13): the published contract of every capability descriptor.
    pub fn descriptor_schema() -> Value {
        schema::output_schema_for::<Descriptor<'static>>()
    }
}

/// A capability's complete contract as `capabilities.describe`/`capabilities.list` publish it
/// (CP-2-5, CP-2-15, CP-2-21, OQ-CP-5). Every key is always present.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Descriptor<'a> {
    /// Stable id, e.g. `interaction.choose`; `vendor.<reverse-domain>.<name>` for extensions (CP-2-27).
    id: &'a str,
    /// Capability version, a semantic version (CP-7-1).
    version: &'a str,
    /// Human-readable description.
    description: &'a str,
    /// Ids of the characters that present this capability.
    characters: &'a [String],
    kind: CapabilityKind,
    interaction: InteractionType,
    completion: Completion,
    /// Scopes a client needs to create requests of this capability (CP-5-6).
    required_scopes: &'a [Scope],
    /// Top-level `inputSchema` properties `requests.update` may change (CP-2-11).
    updatable_fields: &'a [String],
    /// Whether the owning client may cancel (`requests.cancel`).
    cancelable: bool,
    cancel_behavior: CancelBehavior,
    queue_policy: QueuePolicy,
    limits: CapabilityLimits,
    /// The declared alternative presentation, or `null` (CP-2-29).
    fallback: Option<&'a Fallback>,
    /// JSON Schema of the request's `params` (an explicit empty object schema when there are
    /// none, CP-2-16).
    input_schema: &'a Map<String, Value>,
    /// JSON Schema of the business `result` (an explicit empty object schema when there is no
    /// business output, CP-2-16).
    output_schema: &'a Map<String, Value>,
}

/// Builder of a [`CapabilitySpec`]; the shape a future proc-macro emits: one call per declared
/// property, then [`build`](Self::build), which checks the whole declaration.
#[must_use = "call .build() to get the CapabilitySpec"]
pub struct CapabilityBuilder {
    id: String,
    kind: CapabilityKind,
    version: Option<String>,
    description: String,
    interaction: Option<InteractionType>,
    completion: Option<Completion>,
    required_scopes: Option<Vec<Scope>>,
    updatable_fields: Vec<String>,
    cancelable: bool,
    cancel_behavior: CancelBehavior,
    queue_policy: Option<QueuePolicy>,
    min_timeout_ms: Option<u64>,
    max_timeout_ms: Option<u64>,
    display_ms: Option<u64>,
    fallback: Option<Fallback>,
    input_schema: Value,
    output_schema: Value,
    check_params: Option<ParamsCheck>,
    check_result: Option<ResultCheck>,
}

impl CapabilityBuilder {
    /// Sets the capability version (semantic version, e.g. `"0.1.0"`; required).
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = Some(version.into());
        self
    }
    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }
    /// Sets the interaction type (required for kind `interaction`).
    pub fn interaction(mut self, interaction: InteractionType) -> Self {
        self.interaction = Some(interaction);
        self
    }
    /// Sets the completion condition.
    pub fn completion(mut self, completion: Completion) -> Self {
        self.completion = Some(completion);
        self
    }
    /// Sets the required scopes (replacing the OQ-CP-14 default).
    pub fn required_scopes(mut self, scopes: impl IntoIterator<Item = Scope>) -> Self {
        self.required_scopes = Some(scopes.into_iter().collect());
        self
    }
    /// Sets the updatable fields: names of top-level `inputSchema` properties.
    pub fn updatable_fields<S: Into<String>>(mut self, fields: impl IntoIterator<Item = S>) -> Self {
        self.updatable_fields = fields.into_iter().map(Into::into).collect();
        self
    }
    /// Sets whether the owning client may cancel.
    pub fn cancelable(mut self, cancelable: bool) -> Self {
        self.cancelable = cancelable;
        self
    }
    /// Sets the cancel behaviour.
    pub fn cancel_behavior(mut self, behavior: CancelBehavior) -> Self {
        self.cancel_behavior = behavior;
        self
    }
    /// Sets the queue policy.
    pub fn queue_policy(mut self, policy: QueuePolicy) -> Self {
        self.queue_policy = Some(policy);
        self
    }
    /// Sets the accepted `timeoutMs` range, ms.
    pub fn timeout_bounds_ms(mut self, min: u64, max: u64) -> Self {
        self.min_timeout_ms = Some(min);
        self.max_timeout_ms = Some(max);
        self
    }
    /// Sets the display duration of a `displayed` completion, ms.
    pub fn display_ms(mut self, ms: u64) -> Self {
        self.display_ms = Some(ms);
        self
    }
    /// Declares an alternative capability for the given situations, params passed unchanged.
    pub fn fallback(mut self, capability: impl Into<String>, when: impl IntoIterator<Item = FallbackReason>) -> Self {
        self.fallback = Some(Fallback { capability: capability.into(), when: when.into_iter().collect(), map: None });
        self
    }
    /// Declares an alternative capability whose params are computed by `map`.
    pub fn fallback_mapped(
        mut self,
        capability: impl Into<String>,
        when: impl IntoIterator<Item = FallbackReason>,
        map: impl Fn(&Value) -> Value + Send + Sync + 'static,
    ) -> Self {
        self.fallback = Some(Fallback {
            capability: capability.into(),
            when: when.into_iter().collect(),
            map: Some(Arc::new(map)),
        });
        self
    }
    /// Takes `inputSchema` from `P`; unknown properties are rejected unless `P` says otherwise.
    pub fn params<P: schemars::JsonSchema>(mut self) -> Self {
        self.input_schema = Value::Object(strict(schema::object_schema_for::<P>()));
        self
    }
    /// Sets `inputSchema` by hand (an object schema).
    pub fn input_schema(mut self, schema: Value) -> Self {
        self.input_schema = schema;
        self
    }
    /// Takes `outputSchema` from what `R` serializes to; unknown properties are rejected unless
    /// `R` says otherwise.
    pub fn output<R: schemars::JsonSchema>(mut self) -> Self {
        self.output_schema = Value::Object(strict(schema::output_object_schema_for::<R>()));
        self
    }
    /// Sets `outputSchema` by hand (an object schema).
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.output_schema = schema;
        self
    }
    /// Adds a semantic params check (CP-2-25).
    pub fn check_params(
        mut self,
        check: impl Fn(&Value) -> Result<(), Vec<FieldProblem>> + Send + Sync + 'static,
    ) -> Self {
        self.check_params = Some(Arc::new(check));
        self
    }
    /// Adds a semantic result check `(params, result)` (CP-2-23).
    pub fn check_result(
        mut self,
        check: impl Fn(&Value, &Value) -> Result<(), Vec<FieldProblem>> + Send + Sync + 'static,
    ) -> Self {
        self.check_result = Some(Arc::new(check));
        self
    }

    /// Checks the declaration and builds the spec.
    ///
    /// Errors: bad id (CP-2-27) or version; `interaction` not `none` outside kind `interaction`
    /// or `none` inside it (CP-2-18); completion `user_response` ⇔ kind `interaction`;
    /// `displayed` without `displayMs` or `displayMs` on another completion; an evictable
    /// interaction (CP-4-11); `interrupts: true`; no scopes; timeout bounds outside
    /// `1 ..= MAX_TIMEOUT_CAP_MS` or min > max; an updatable field that is not an input property;
    /// a fallback to itself; schemas that are not compilable object schemas.
    pub fn build(self) -> Result<CapabilitySpec, SpecError> {
        let id = self.id;
        validate_capability_id(&id)?;
        let err = |reason: String| SpecError::Inconsistent { id: id.clone(), reason };

        let version = self.version.ok_or_else(|| SpecError::Missing { id: id.clone(), what: "version" })?;
        if semver::Version::parse(&version).is_err() {
            return Err(SpecError::InvalidVersion { id, version });
        }

        let interaction = match (self.kind, self.interaction) {
            (CapabilityKind::Interaction, None | Some(InteractionType::None)) => {
                return Err(err("kind `interaction` needs interaction type `choice` or `text`".into()));
            }
            (CapabilityKind::Interaction, Some(t)) => t,
            (_, None | Some(InteractionType::None)) => InteractionType::None,
            (kind, Some(_)) => {
                return Err(err(format!("kind `{}` must have interaction type `none`", kind.as_str())));
            }
        };

        let completion = self.completion.unwrap_or(match self.kind {
            CapabilityKind::Animation => Completion::AnimationEnd,
            CapabilityKind::Notice => Completion::Displayed,
            CapabilityKind::Progress => Completion::CallerCompletes,
            CapabilityKind::Interaction => Completion::UserResponse,
        });
        if (completion == Completion::UserResponse) != (self.kind == CapabilityKind::Interaction) {
            return Err(err("completion `user_response` is for, and required by, kind `interaction`".into()));
        }
        let display_ms = match (completion, self.display_ms) {
            (Completion::Displayed, None) => Some(5_000),
            (Completion::Displayed, Some(0)) => return Err(err("displayMs must be at least 1".into())),
            (Completion::Displayed, Some(ms)) => Some(ms),
            (_, None) => None,
            (_, Some(_)) => return Err(err("displayMs applies only to completion `displayed`".into())),
        };

        let queue_policy = self.queue_policy.unwrap_or(QueuePolicy {
            mode: if self.kind == CapabilityKind::Notice { QueueMode::Evictable } else { QueueMode::Queue },
            interrupts: false,
        });
        if self.kind == CapabilityKind::Interaction && queue_policy.mode == QueueMode::Evictable {
            return Err(err("interactions are never evicted (CP-4-11): use queue mode `queue`".into()));
        }
        if queue_policy.interrupts {
            return Err(err("`interrupts: true` is not supported in protocol 0.1".into()));
        }

        let mut required_scopes = self.required_scopes.unwrap_or_else(|| vec![Scope::default_for(self.kind)]);
        required_scopes.sort();
        required_scopes.dedup();
        if required_scopes.is_empty() {
            return Err(SpecError::Missing { id, what: "required scopes" });
        }

        let defaults = CapabilityLimits::default();
        let limits = CapabilityLimits {
            min_timeout_ms: self.min_timeout_ms.unwrap_or(defaults.min_timeout_ms),
            max_timeout_ms: self.max_timeout_ms.unwrap_or(defaults.max_timeout_ms),
            display_ms,
        };
        if limits.min_timeout_ms == 0
            || limits.min_timeout_ms > limits.max_timeout_ms
            || limits.max_timeout_ms > MAX_TIMEOUT_CAP_MS
        {
            return Err(err(format!(
                "timeout bounds must satisfy 1 <= minTimeoutMs <= maxTimeoutMs <= {MAX_TIMEOUT_CAP_MS}"
            )));
        }

        let (input_schema, input_validator) =
            compile_object_schema(&id, "inputSchema", self.input_schema, schema::Contract::Input)?;
        let (output_schema, output_validator) =
            compile_object_schema(&id, "outputSchema", self.output_schema, schema::Contract::Output)?;

        let props = input_schema.get("properties").and_then(Value::as_object);
        for field in &self.updatable_fields {
            if !props.is_some_and(|p| p.contains_key(field)) {
                return Err(err(format!("updatable field `{field}` is not a property of inputSchema")));
            }
        }
        let mut updatable_fields = self.updatable_fields;
        updatable_fields.dedup();

        if let Some(fb) = &self.fallback {
            validate_capability_id(&fb.capability)?;
            if fb.capability == id {
                return Err(err("a capability cannot fall back to itself".into()));
            }
            if fb.when.is_empty() {
                return Err(err("fallback needs at least one `when` situation".into()));
            }
            if fb.when.contains(&FallbackReason::StyleUnsupported) {
                return Err(err("style fallbacks are declared on the style, not the capability".into()));
            }
        }

        Ok(CapabilitySpec {
            id,
            version,
            description: self.description,
            kind: self.kind,
            interaction,
            completion,
            required_scopes,
            updatable_fields,
            cancelable: self.cancelable,
            cancel_behavior: self.cancel_behavior,
            queue_policy,
            limits,
            fallback: self.fallback,
            input_document: Value::Object(input_schema.clone()),
            input_schema: Arc::new(input_schema),
            output_schema: Arc::new(output_schema),
            check_params: self.check_params,
            check_result: self.check_result,
            input_validator,
            output_validator,
        })
    }
}

/// A character (sprite) and the capability ids it supports (CP-2-3, CP-2-26).
///
/// Serialized as `characters.list` lists it: `{"id", "name", "capabilities": [id, …]}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CharacterSpec {
    /// Stable id, `[a-z][a-z0-9_]*(\.[a-z0-9_]+)*`.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Ids of the capabilities this character presents.
    pub capabilities: Vec<String>,
}

impl CharacterSpec {
    /// A character supporting nothing yet.
    pub fn new(id: impl Into<String>, name: impl Into<String>) -> Self {
        Self { id: id.into(), name: name.into(), capabilities: Vec::new() }
    }
    /// Adds supported capability ids.
    pub fn supports<S: Into<String>>(mut self, ids: impl IntoIterator<Item = S>) -> Self {
        self.capabilities.extend(ids.into_iter().map(Into::into));
        self
    }
    /// Whether this character supports capability `id`.
    pub fn supports_capability(&self, id: &str) -> bool {
        self.capabilities.iter().any(|c| c == id)
    }
}

/// A presentation style and the capabilities it applies to (CP-2-6, CP-2-20). A style changes
/// appearance only; it never overrides a `tone` parameter (and vice versa).
///
/// Serialized as `styles.list` lists it: `{"id", "description", "capabilities", "fallback"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StyleSpec {
    /// Stable id.
    pub id: String,
    /// Human-readable description.
    pub description: String,
    /// Capability ids the style applies to.
    pub capabilities: Vec<String>,
    /// A style to use instead when this one does not apply and the caller allowed fallback
    /// (`fallbackReason: "style_unsupported"`, CP-2-29); `null` if none.
    pub fallback: Option<String>,
}

impl StyleSpec {
    /// A style applying to nothing yet.
    pub fn new(id: impl Into<String>, description: impl Into<String>) -> Self {
        Self { id: id.into(), description: description.into(), capabilities: Vec::new(), fallback: None }
    }
    /// Adds capability ids the style applies to.
    pub fn applies_to<S: Into<String>>(mut self, ids: impl IntoIterator<Item = S>) -> Self {
        self.capabilities.extend(ids.into_iter().map(Into::into));
        self
    }
    /// Declares the fallback style.
    pub fn fallback(mut self, style: impl Into<String>) -> Self {
        self.fallback = Some(style.into());
        self
    }
    /// Whether the style applies to capability `id`.
    pub fn applies(&self, id: &str) -> bool {
        self.capabilities.iter().any(|c| c == id)
    }
}

/// Checks a capability id: `[a-z][a-z0-9_]*(\.[a-z0-9_]+)+`, at most
/// [`MAX_CAPABILITY_ID_LEN`] bytes; ids starting with `vendor.` must read
/// `vendor.<reverse-domain>.<name>` with at least two domain labels (CP-2-27).
pub fn validate_capability_id(id: &str) -> Result<(), SpecError> {
    let bad = |reason: &str| Err(SpecError::InvalidId { id: id.to_owned(), reason: reason.to_owned() });
    if id.len() > MAX_CAPABILITY_ID_LEN {
        return bad("longer than 128 bytes");
    }
    let segments: Vec<&str> = id.split('.').collect();
    if segments.len() < 2 {
        return bad("needs at least two dot-separated segments, e.g. `notice.show`");
    }
    if !is_dotted_id(id) {
        return bad("must match [a-z][a-z0-9_]*(\\.[a-z0-9_]+)+");
    }
    if segments[0] == "vendor" && segments.len() < 4 {
        return bad("vendor ids read vendor.<reverse-domain>.<name> with at least two domain labels");
    }
    Ok(())
}

/// Checks a character or style id: `[a-z][a-z0-9_]*(\.[a-z0-9_]+)*`, 1..=64 bytes.
pub fn validate_simple_id(what: &'static str, id: &str) -> Result<(), SpecError> {
    if id.is_empty() || id.len() > 64 || !is_dotted_id(id) {
        return Err(SpecError::InvalidId {
            id: id.to_owned(),
            reason: format!("{what} ids must match [a-z][a-z0-9_]*(\\.[a-z0-9_]+)* and be at most 64 bytes"),
        });
    }
    Ok(())
}

fn is_dotted_id(id: &str) -> bool {
    let mut segments = id.split('.');
    let first = segments.next().unwrap_or_default();
    let lower_digit_us = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_';
    first.starts_with(|c: char| c.is_ascii_lowercase())
        && first.chars().all(lower_digit_us)
        && segments.all(|s| !s.is_empty() && s.chars().all(lower_digit_us))
}

/// `{"type":"object","properties":{},"additionalProperties":false}`: the explicit "no params" /
/// "no business output" schema (CP-2-16).
pub fn empty_strict_object() -> Map<String, Value> {
    let Value::Object(m) = json!({"type": "object", "properties": {}, "additionalProperties": false}) else {
        unreachable!()
    };
    m
}

fn strict(mut schema: Map<String, Value>) -> Map<String, Value> {
    schema.entry("additionalProperties").or_insert(Value::Bool(false));
    schema
}

/// Puts a declared schema (derived or written by hand) through the schema pipeline and compiles
/// it. Errors: not an object schema at the root, or not compilable.
fn compile_object_schema(
    id: &str,
    which: &'static str,
    schema: Value,
    contract: schema::Contract,
) -> Result<(Map<String, Value>, jsonschema::Validator), SpecError> {
    let bad = |reason: String| SpecError::BadSchema { id: id.to_owned(), which, reason };
    let Value::Object(map) = schema else {
        return Err(bad("not a JSON object".into()));
    };
    if map.get("type") != Some(&Value::from("object")) {
        return Err(bad("root must have \"type\": \"object\"".into()));
    }
    let map = schema::object_root(schema::normalize(Value::Object(map), contract));
    let value = Value::Object(map);
    let validator = schema::validator(&value).map_err(|e| bad(e.to_string()))?;
    let Value::Object(map) = value else { unreachable!() };
    Ok((map, validator))
}

/// Runs `validator` on `value`; one problem per error, paths as JSON pointers, messages with the
/// value masked so content is never echoed (CP-4-18).
pub fn schema_problems(validator: &jsonschema::Validator, value: &Value) -> Vec<FieldProblem> {
    validator
        .iter_errors(value)
        .map(|e| FieldProblem::new(e.instance_path().as_str(), e.masked().to_string()))
        .collect()
}

/// Ready-made semantic checks for common rules.
pub mod checks {
    use super::FieldProblem;
    use serde_json::Value;

    /// Params check: the objects of the array at JSON pointer `array` carry unique string
    /// values under `key` (option ids unique within one request, CP-2-23).
    pub fn unique_ids(
        array: &'static str,
        key: &'static str,
    ) -> impl Fn(&Value) -> Result<(), Vec<FieldProblem>> + Send + Sync + 'static {
        move |params: &Value| {
            let mut seen = std::collections::HashSet::new();
            let mut problems = Vec::new();
            for (i, item) in params.pointer(array).and_then(Value::as_array).into_iter().flatten().enumerate() {
                if let Some(id) = item.get(key).and_then(Value::as_str)
                    && !seen.insert(id)
                {
                    problems.push(FieldProblem::new(format!("{array}/{i}/{key}"), format!("duplicate {key}")));
                }
            }
            if problems.is_empty() { Ok(()) } else { Err(problems) }
        }
    }

    /// Result check: the string at `result[result_key]` equals `key` of one of the objects in the
    /// params array at JSON pointer `array` (a returned id belongs to the request, CP-2-23).
    pub fn result_id_in(
        array: &'static str,
        key: &'static str,
        result_key: &'static str,
    ) -> impl Fn(&Value, &Value) -> Result<(), Vec<FieldProblem>> + Send + Sync + 'static {
        move |params: &Value, result: &Value| {
            let chosen = result.get(result_key).and_then(Value::as_str);
            let known = params
                .pointer(array)
                .and_then(Value::as_array)
                .is_some_and(|items| items.iter().any(|it| it.get(key).and_then(Value::as_str) == chosen));
            if chosen.is_some() && known {
                Ok(())
            } else {
                Err(vec![FieldProblem::new(format!("/{result_key}"), format!("not one of the request's {array} ids"))])
            }
        }
    }
}

/// A set of capabilities declared in Rust: implemented by `#[bridge_actions(companion)]` on an
/// `impl` block, whose `#[bridge_action(…)]` methods each declare one capability. The
/// declaration is the registry entry, so the description cannot drift from the behaviour
/// (CP-2-12, CP-2-13). Register it with [`Catalog::register_capabilities`](super::Catalog::register_capabilities).
pub trait BridgeCapabilities {
    /// The declared capabilities in declaration order, each from [`CapabilityBuilder::build`].
    ///
    /// The macro rejects at compile time everything `build` would reject in what it can see
    /// (ids, versions, kinds, interaction types, completions, scopes, limits, fallbacks,
    /// updatable fields named as plain parameters). Errors: the first [`SpecError`] of what it
    /// cannot see: an `updatable` field missing from a `#[bridge(args)]` struct, a params or
    /// output type whose schema is not an object schema.
    fn capability_specs() -> Result<Vec<CapabilitySpec>, SpecError>;
}

impl super::Catalog {
    /// Registers every capability `T` declares, in declaration order, all or none: on error
    /// (a [`BridgeCapabilities::capability_specs`] error, or `SpecError::Duplicate` for an id
    /// already registered) the catalog is unchanged. Bumps `catalogRevision` once per capability.
    pub fn register_capabilities<T: BridgeCapabilities>(&mut self) -> Result<Vec<Arc<CapabilitySpec>>, SpecError> {
        let specs = T::capability_specs()?;
        let mut ids = std::collections::HashSet::new();
        for spec in &specs {
            if self.capability(spec.id()).is_some() || !ids.insert(spec.id()) {
                return Err(SpecError::Duplicate { what: "capability", id: spec.id().to_owned() });
            }
        }
        specs.into_iter().map(|spec| self.register_capability(spec)).collect()
    }
}

/// Support for the code `#[bridge_actions(companion)]` generates: the method's parameters read
/// from the request params, its `ActionError` turned into [`FieldProblem`]s. Not API.
#[doc(hidden)]
pub mod macro_support {
    use super::FieldProblem;
    use crate::model::ActionError;
    use serde::de::DeserializeOwned;
    use serde_json::Value;

    /// A JSON pointer to top-level property `name` (RFC 6901 escaping); a name that already is
    /// a pointer (`/options/1/id`, or `""` for the whole value) is kept.
    fn pointer(name: &str) -> String {
        if name.is_empty() || name.starts_with('/') {
            name.to_owned()
        } else {
            format!("/{}", name.replace('~', "~0").replace('/', "~1"))
        }
    }

    /// Parameter `name` of already schema-validated params (absent reads as `null`, so
    /// `Option<T>` is optional). The message never echoes the value (CP-4-18).
    pub fn capability_param<T: DeserializeOwned>(params: &Value, name: &str) -> Result<T, Vec<FieldProblem>> {
        let value = params.get(name).cloned().unwrap_or(Value::Null);
        serde_json::from_value(value)
            .map_err(|_| vec![FieldProblem::new(pointer(name), "does not match the parameter's declared type")])
    }

    /// The whole params object as the `#[bridge(args)]` struct.
    pub fn capability_params<T: DeserializeOwned>(params: &Value) -> Result<T, Vec<FieldProblem>> {
        serde_json::from_value(params.clone())
            .map_err(|_| vec![FieldProblem::new("", "does not match the params' declared type")])
    }

    /// The business result as the `output = Type`.
    pub fn capability_output<T: DeserializeOwned>(result: &Value) -> Result<T, Vec<FieldProblem>> {
        serde_json::from_value(result.clone())
            .map_err(|_| vec![FieldProblem::new("", "does not match the result's declared type")])
    }

    /// `ActionError` → problems: each `FieldError` `{field, error}` becomes `{path, message}`
    /// with `path` the pointer to that top-level property (a `field` starting with `/` is taken
    /// as a pointer, e.g. `/options/1/id`); an error without fields, or `not_available`, is one
    /// problem about the whole value (`path` `""`).
    pub fn problems(err: ActionError) -> Vec<FieldProblem> {
        match err {
            ActionError::Validation { fields, .. } if !fields.is_empty() => {
                fields.into_iter().map(|f| FieldProblem::new(pointer(&f.field), f.error)).collect()
            }
            ActionError::Validation { message, .. } | ActionError::NotAvailable(message) => {
                vec![FieldProblem::new("", message)]
            }
        }
    }
}
