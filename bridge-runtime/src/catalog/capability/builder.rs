//! Declaring a capability by hand: [`CapabilityBuilder`] takes one call per declared property,
//! and [`build`](CapabilityBuilder::build) checks the whole declaration (what
//! `#[bridge_actions(companion)]` generates, too).

use super::ids::validate_capability_id;
use super::kind::{CancelBehavior, CapabilityKind, Completion, FallbackReason, InteractionType, QueueMode, Scope};
use super::policy::{CapabilityLimits, Fallback, MAX_TIMEOUT_CAP_MS, QueuePolicy};
use super::problem::SpecError;
use super::spec::{CapabilitySpec, ParamsCheck, ResultCheck};
use crate::catalog::decode::FieldProblem;
use crate::catalog::schema;
use serde_json::{Map, Value, json};
use std::sync::Arc;

impl CapabilitySpec {
    /// Starts a declaration of capability `id` of category `kind`. Defaults (all overridable):
    /// `interaction: none` (an `interaction` kind must set `choice`/`text`), completion per kind
    /// (animation → `animation_end`, notice → `displayed` with `displayMs` 5000, progress →
    /// `caller_completes`, interaction → `user_response`), scopes per OQ-CP-14, `cancelable: true`,
    /// `cancelBehavior: remove`, `queuePolicy.mode` `evictable` for notices and `queue`
    /// otherwise, timeouts 1 s … 10 min, explicit empty input and output schemas (CP-2-16).
    /// No default `version`: it must be declared.
    // Returns the builder: `CapabilitySpec::new(..)...build()`, the shape the macro emits too.
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
}

/// Builder of a [`CapabilitySpec`]: one call per declared property, then
/// [`build`](Self::build), which checks the whole declaration. `#[bridge_actions(companion)]`
/// emits the same calls.
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
        if !bridge_rules::is_semver(&version) {
            return Err(SpecError::InvalidVersion { id, version });
        }

        let kind = self.kind.as_str();
        bridge_rules::check_interaction(kind, self.interaction.map(InteractionType::as_str))
            .map_err(|problem| err(problem.reason()))?;
        let interaction = self.interaction.unwrap_or(InteractionType::None);

        let completion = match self.completion {
            Some(completion) => completion,
            None => {
                let default = bridge_rules::default_completion(kind);
                // Unreachable: every default is a `Completion` (kind.rs's tests).
                Completion::from_wire(default).ok_or_else(|| err(format!("unknown default completion `{default}`")))?
            }
        };
        bridge_rules::check_completion(kind, completion.as_str()).map_err(|problem| err(problem.reason().into()))?;
        let display_ms = bridge_rules::check_display_ms(completion.as_str(), self.display_ms)
            .map_err(|problem| err(problem.reason().into()))?;

        let queue_policy = self.queue_policy.unwrap_or(QueuePolicy {
            mode: if self.kind == CapabilityKind::Notice { QueueMode::Evictable } else { QueueMode::Queue },
            interrupts: false,
        });
        bridge_rules::check_queue_mode(kind, queue_policy.mode.as_str())
            .map_err(|problem| err(problem.reason().into()))?;
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
        if bridge_rules::check_timeout_bounds(limits.min_timeout_ms, limits.max_timeout_ms).is_err() {
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
            bridge_rules::check_fallback_target(&id, &fb.capability)
                .and_then(|()| bridge_rules::check_fallback_situation_count(fb.when.len()))
                .and_then(|()| {
                    fb.when.iter().try_for_each(|when| bridge_rules::check_fallback_situation(when.as_str()))
                })
                .map_err(|problem| err(problem.reason().into()))?;
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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    /// `bridge_rules::is_semver` (what the macros and `build` accept) agrees with the reference
    /// parser, the `semver` crate.
    fn agrees(v: &str) {
        assert_eq!(bridge_rules::is_semver(v), semver::Version::parse(v).is_ok(), "{v:?}");
    }

    #[test]
    fn versions_agree_with_the_semver_crate() {
        for v in [
            "0.1.0",
            "1.2.3",
            "1.0.0-alpha.1",
            "1.0.0-0.3.7",
            "1.0.0+build.5",
            "1.0.0-rc-1+x",
            "1.0.0+001",
            "0.1",
            "01.0.0",
            "1.0.0-",
            "1.0.0-01",
            "1.0.0+",
            "v1.0.0",
            "1.0.0-a..b",
            "1.0.x",
            "",
            " 1.0.0",
            "1.0.0 ",
            "18446744073709551615.0.0",
            "18446744073709551616.0.0",
            "1.0.0-é",
            "1.0.0+a+b",
            "1.0.0--",
            "1.0.0-x-",
        ] {
            agrees(v);
        }
    }

    proptest! {
        #[test]
        fn versions_agree_on_anything(v in "[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}([-+][0-9a-zA-Z.+-]{0,8})?|[0-9a-z.+-]{0,12}") {
            agrees(&v);
        }
    }
}
