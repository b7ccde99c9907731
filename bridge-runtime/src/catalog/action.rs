use super::schema;
use serde::Serialize;
use serde_json::{Map, Value};
use std::sync::{Arc, OnceLock};

/// The four MCP tool annotation hints (GB-5.6-1). A tool that is not read-only states all four
/// explicitly, because MCP's defaults for absent hints (`destructiveHint: true`,
/// `openWorldHint: true`) would be wrong for most GUI actions and hosts read a missing
/// `destructiveHint` as `false`; a read-only tool states `readOnlyHint` and `openWorldHint`
/// (MCP defines the other two only when `readOnlyHint` is false).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ActionHints {
    /// `readOnlyHint`: changes no state.
    pub read_only: bool,
    /// `destructiveHint`: irreversible (delete, charge-and-submit).
    pub destructive: bool,
    /// `idempotentHint`: repeating equals one call.
    pub idempotent: bool,
    /// `openWorldHint`: talks to the outside world.
    pub open_world: bool,
}

/// One action of a window type or of the app: everything every surface needs to expose it.
///
/// Built by the code `#[bridge_actions]` generates; adapters only read it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ActionSpec {
    /// Action name, `[A-Za-z0-9_-]{1,48}` (checked at compile time); the tool is `{winId}__{name}`.
    pub name: String,
    /// Human-readable title, e.g. "Edit field".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// From the doc comment.
    pub description: String,
    /// Annotation hints.
    pub hints: ActionHints,
    /// Whether the action has an `available = fn` guard (availability varies at run time).
    pub conditional: bool,
    /// `#[bridge_action(user_only)]`, or an action of a `#[bridge_window(user_only)]` type: the
    /// user's alone. Never listed as a tool; an agent calling it by name gets
    /// `action_not_available` (GB-7.4-8); the app's user path runs it. Serialized as
    /// `"userOnly": true` only when set.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub user_only: bool,
    /// The MCP `inputSchema`: `{"type":"object","properties":{…}}`, plus the optional integer
    /// `expectedVersion` when the action is not read-only (GB-5.5-1).
    pub input_schema: Arc<Map<String, Value>>,
    /// The MCP `outputSchema`: the ToolResult envelope `{message?, openedWindowIds?, result?}`
    /// with the return type's schema under `result` (GB-12.3-4).
    pub output_schema: Arc<Map<String, Value>>,
    #[serde(skip)]
    /// `inputSchema` as a document and its compiled validator, built on first use.
    validator: OnceLock<(Value, Result<jsonschema::Validator, String>)>,
}

impl ActionSpec {
    /// Starts a spec for action `name` with no parameters, no result and all hints off.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            title: None,
            description: String::new(),
            hints: ActionHints::default(),
            conditional: false,
            user_only: false,
            input_schema: Arc::new(schema::empty_object()),
            output_schema: Arc::new(schema::tool_result_envelope(None)),
            validator: OnceLock::new(),
        }
    }

    /// Sets the title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }

    /// Sets the hints.
    pub fn hints(mut self, hints: ActionHints) -> Self {
        self.hints = hints;
        self
    }

    /// Marks the action as guarded by an `available` function.
    pub fn conditional(mut self, conditional: bool) -> Self {
        self.conditional = conditional;
        self
    }

    /// Makes it the user's alone (see [`ActionSpec::user_only`]).
    pub fn user_only(mut self, user_only: bool) -> Self {
        self.user_only = user_only;
        self
    }

    /// Takes the parameters' schema from `P` (a struct whose fields are the parameters), through
    /// the schema pipeline ([`schema::object_schema_for`]).
    pub fn params<P: schemars::JsonSchema>(mut self) -> Self {
        self.input_schema = Arc::new(schema::object_schema_for::<P>());
        self
    }

    /// Takes the result's schema from what `R` serializes to ([`schema::output_schema_for`]),
    /// nested in the ToolResult envelope (GB-12.3-4).
    pub fn returns<R: schemars::JsonSchema>(mut self) -> Self {
        let result = schema::output_schema_for::<R>();
        self.output_schema = Arc::new(schema::tool_result_envelope(Some(result)));
        self
    }

    /// Finishes the spec: adds `expectedVersion` to non-read-only window actions (GB-5.5-1).
    /// `window_level` is false for app-level actions, which have no window version (OQ-GB-12).
    /// Unknown argument names are rejected (`additionalProperties: false`) so a misspelt
    /// parameter gets a `validation_failed` naming it instead of being ignored; the same holds
    /// for `expectedVersion` on a tool that does not declare it.
    ///
    /// Requirement IDs cited in the parameter and result types' doc comments are left out of
    /// both schemas' descriptions: models read them.
    pub fn finish(mut self, window_level: bool) -> Self {
        let mut s = (*self.input_schema).clone();
        if window_level && !self.hints.read_only {
            schema::add_expected_version(&mut s);
        }
        s.entry("additionalProperties").or_insert(Value::Bool(false));
        super::rule_ids::strip_schema(&mut s);
        self.input_schema = Arc::new(s);
        let mut out = (*self.output_schema).clone();
        super::rule_ids::strip_schema(&mut out);
        self.output_schema = Arc::new(out);
        self
    }

    /// The parameters `inputSchema` declares (its `properties`), `expectedVersion` included
    /// where it is declared.
    pub fn declared(&self) -> Option<&Map<String, Value>> {
        self.input_schema.get("properties").and_then(Value::as_object)
    }

    /// Whether calls may carry `expectedVersion`.
    pub fn takes_expected_version(&self) -> bool {
        self.input_schema
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|p| p.contains_key(schema::EXPECTED_VERSION))
    }

    /// Checks `args` against `inputSchema` with the `jsonschema` crate, after dropping the
    /// `null`s sent for optional properties ([`schema::normalize_arguments`]); returns per-field
    /// problems keyed by parameter name (GB-7.3-1), at most `max_problems` listed and the rest
    /// counted. Empty = valid. `args` keeps the dropped form, which is what the action then
    /// reads. The caller checks the [`schema::ArgumentLimits`] first ([`ActionSpec::declared`]).
    pub(crate) fn validate(&self, args: &mut Map<String, Value>, max_problems: usize) -> schema::FieldErrors {
        let (schema, validator) = self.validator.get_or_init(|| {
            let doc = Value::Object((*self.input_schema).clone());
            let validator = schema::validator(&doc).map_err(|e| e.to_string());
            (doc, validator)
        });
        let mut instance = Value::Object(std::mem::take(args));
        schema::normalize_arguments(schema, &mut instance);
        let problems = match validator {
            Ok(v) => schema::field_errors(v, &instance, max_problems),
            Err(e) => schema::FieldErrors {
                fields: vec![crate::model::FieldError::new("", format!("schema error: {e}"))],
                omitted: 0,
            },
        };
        if let Value::Object(m) = instance {
            *args = m;
        }
        problems
    }
}
