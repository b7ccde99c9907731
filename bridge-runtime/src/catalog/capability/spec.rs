//! One registered capability ([`CapabilitySpec`]): its contract, the validation of a request's
//! params and result against it, and the descriptor `capabilities.describe` returns.

use super::kind::{CancelBehavior, CapabilityKind, Completion, InteractionType, Scope};
use super::policy::{CapabilityLimits, Fallback, QueuePolicy};
use super::problem::schema_problems;
use crate::catalog::decode::FieldProblem;
use crate::catalog::schema;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};
use std::fmt;
use std::sync::Arc;

/// Semantic check of a request's params, for rules JSON Schema cannot express (option ids
/// unique, references, CP-2-23, CP-2-25). Runs after schema validation succeeded.
pub(crate) type ParamsCheck = Arc<dyn Fn(&Value) -> Result<(), Vec<FieldProblem>> + Send + Sync>;

/// Semantic check of a business result against the request's params (a returned `selectedId`
/// belongs to the request's options, CP-2-23). Arguments: `(params, result)`.
pub(crate) type ResultCheck = Arc<dyn Fn(&Value, &Value) -> Result<(), Vec<FieldProblem>> + Send + Sync>;

/// One registered capability: its full contract (CP-2-15, CP-2-21, OQ-CP-5). Built with
/// [`CapabilitySpec::new`]; immutable afterwards. [`CapabilitySpec::descriptor`] gives the JSON
/// that `capabilities.describe` returns.
pub struct CapabilitySpec {
    pub(super) id: String,
    pub(super) version: String,
    pub(super) description: String,
    pub(super) kind: CapabilityKind,
    pub(super) interaction: InteractionType,
    pub(super) completion: Completion,
    pub(super) required_scopes: Vec<Scope>,
    pub(super) updatable_fields: Vec<String>,
    pub(super) cancelable: bool,
    pub(super) cancel_behavior: CancelBehavior,
    pub(super) queue_policy: QueuePolicy,
    pub(super) limits: CapabilityLimits,
    pub(super) fallback: Option<Fallback>,
    pub(super) input_schema: Arc<Map<String, Value>>,
    pub(super) output_schema: Arc<Map<String, Value>>,
    pub(super) check_params: Option<ParamsCheck>,
    pub(super) check_result: Option<ResultCheck>,
    /// `input_schema` as a document, for resolving its references when dropping `null`s.
    pub(super) input_document: Value,
    pub(super) input_validator: jsonschema::Validator,
    pub(super) output_validator: jsonschema::Validator,
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
