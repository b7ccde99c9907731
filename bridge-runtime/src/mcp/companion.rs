//! The companion's capabilities as MCP tools: the optional MCP surface of spec CP (CP-1-4).
//!
//! Each capability the configured identity may use becomes a tool `companion__{id}` (dots become
//! `_`, e.g. `companion__interaction_choose`). A call is `requests.create` followed by
//! `requests.wait` until the request is terminal or the tool's own deadline passes, all through
//! the same [`Engine`] as socket clients: same validation, scopes, queue and lifecycle (CP-1-6).
//! Before any of it, the arguments are checked against the same caps as the GUI tools'
//! ([`ArgumentLimits`]: bytes, keys, depth, problems listed; the bridge's own when composed with
//! [`GuiBridgeServer::with_companion`](super::GuiBridgeServer::with_companion)): a call over a
//! cap is answered like a GUI tool's, `validation_failed` naming the parameters at fault and the
//! cap, and creates nothing.

use super::mapping::{structured_result, to_call_tool_result};
use crate::catalog::rule_ids::strip_schema;
use crate::catalog::schema::{Definitions, lean_output, output_schema_for};
use crate::catalog::{ActionHints, ArgumentLimits, CapabilitySpec, Catalog, ToolName};
use crate::companion::protocol::method;
use crate::companion::protocol::results::WaitResult;
use crate::companion::{ClientIdentity, CompanionError, Engine, ErrorCode, RequestSnapshot, RequestState};
use rmcp::model::{CallToolResult, Tool};
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// The companion tools of one app: the engine and the identity MCP clients act as. Served by
/// the MCP server they are composed into: `GuiBridgeServer::new(bridge).with_companion(tools)`.
#[derive(Clone)]
pub struct CompanionTools {
    engine: Engine,
    identity: ClientIdentity,
    /// Caps on a call's arguments, checked before anything else.
    limits: ArgumentLimits,
}

impl std::fmt::Debug for CompanionTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompanionTools").field("identity", &self.identity.id).finish_non_exhaustive()
    }
}

/// `notice.show` → `companion__notice_show`; `None` when the name would exceed MCP's 64 chars
/// (the spelling is [`ToolName::Companion`]'s, CP-1-4).
pub(crate) fn tool_name(capability_id: &str) -> Option<String> {
    ToolName::companion(capability_id).listed()
}

impl CompanionTools {
    /// Tools for `engine`, used as `identity`, with the default caps on a call's arguments
    /// ([`ArgumentLimits::default`]; a [`GuiBridgeServer`](super::GuiBridgeServer) applies its
    /// bridge's).
    pub fn new(engine: Engine, identity: ClientIdentity) -> Self {
        Self { engine, identity, limits: ArgumentLimits::default() }
    }

    /// The same tools with `limits` as the caps on a call's arguments.
    pub(crate) fn with_limits(mut self, limits: ArgumentLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The capabilities this identity may create, with their tool names. Ids whose tool name
    /// would collide with an earlier one (`a.b_c` / `a_b.c`) or exceed 64 chars are skipped.
    fn visible(&self) -> Vec<(String, Arc<CapabilitySpec>)> {
        let catalog = self.engine.catalog();
        let mut out: Vec<(String, Arc<CapabilitySpec>)> = Vec::new();
        for cap in catalog.capabilities() {
            if !cap.required_scopes().iter().all(|s| self.identity.has(*s)) {
                continue;
            }
            match tool_name(cap.id()) {
                Some(name) if !out.iter().any(|(n, _)| *n == name) => out.push((name, cap.clone())),
                _ => tracing::warn!(
                    capability = cap.id(),
                    "capability not exposed over MCP: tool name collides or is too long"
                ),
            }
        }
        out
    }

    /// The MCP tools, one per visible capability.
    pub fn tools(&self) -> Vec<Tool> {
        let visible = self.visible();
        let catalog = self.engine.catalog();
        visible.into_iter().map(|(name, cap)| to_tool(&name, &cap, &catalog)).collect()
    }

    /// The tool named `name`, if it is one of ours.
    pub fn tool(&self, name: &str) -> Option<Tool> {
        let (n, cap) = self.visible().into_iter().find(|(n, _)| n == name)?;
        Some(to_tool(&n, &cap, &self.engine.catalog()))
    }

    /// The capability behind the listed tool `name`: a lookup in the listed names, which cannot
    /// be read back (`a.b_c` and `a_b.c` would both be `companion__a_b_c`).
    pub(crate) fn resolve(&self, name: &str) -> Option<Arc<CapabilitySpec>> {
        self.visible().into_iter().find_map(|(n, cap)| (n == name).then_some(cap))
    }

    /// Runs `companion__{id}` with `arguments` `{params, timeoutMs, character?, style?,
    /// allowFallback?, idempotencyKey?}`: creates the request and waits for it. Success is a
    /// `completed` snapshot; any other terminal state, a request still running at the deadline,
    /// or a CP error is an `isError` result whose `structuredContent` says which (the snapshot,
    /// or `{code, message, retryable}`). `None` when `name` is not one of the listed tools.
    pub async fn call(&self, name: &str, arguments: Map<String, Value>) -> Option<CallToolResult> {
        let cap = self.resolve(name)?;
        Some(self.call_resolved(&cap, arguments).await)
    }

    /// [`CompanionTools::call`] of the tool of `cap`, already resolved.
    pub(crate) async fn call_resolved(&self, cap: &CapabilitySpec, arguments: Map<String, Value>) -> CallToolResult {
        let capped = self.limits.check(&arguments, Some(&DECLARED));
        if !capped.is_within() {
            let error = crate::gui::capped_error(&self.limits, capped);
            // Dropping a huge argument map is linear too; the caller is answered after it.
            drop(arguments);
            return to_call_tool_result(&Err(error));
        }
        match self.run(cap.id(), arguments).await {
            Ok(snapshot) => {
                let (line, done) = match snapshot.state {
                    RequestState::Completed => (format!("{} completed", cap.id()), true),
                    RequestState::Cancelled | RequestState::Expired | RequestState::Failed => {
                        let reason = serde_json::to_value(snapshot.terminal_reason).unwrap_or(Value::Null);
                        (format!("{} ended {} ({reason})", cap.id(), snapshot.state.as_str()), false)
                    }
                    RequestState::Queued | RequestState::Running | RequestState::AwaitingUser => {
                        (format!("{} did not finish in time; it keeps running", cap.id()), false)
                    }
                };
                structured_result(&line, serde_json::to_value(&snapshot).unwrap_or(Value::Null), !done)
            }
            Err(e) => error_result(&e),
        }
    }

    /// [`CompanionTools::call`], or an `isError` result with code `UNSUPPORTED_CAPABILITY` when
    /// `name` is not one of the listed companion tools (unknown, or outside the granted scopes).
    pub async fn call_or_unsupported(&self, name: &str, arguments: Map<String, Value>) -> CallToolResult {
        match self.call(name, arguments).await {
            Some(result) => result,
            None => unsupported(name),
        }
    }

    async fn run(&self, capability: &str, mut args: Map<String, Value>) -> Result<RequestSnapshot, CompanionError> {
        args.insert("capability".into(), Value::from(capability));
        args.entry("params").or_insert_with(|| json!({}));
        let mut snapshot =
            self.engine.call_typed::<method::RequestsCreate>(&self.identity, Value::Object(args)).await?;
        let max_wait = self.engine.config().max_wait_ms;
        // The request's own deadline bounds the loop: past it the engine expires the request.
        for _ in 0..10_000 {
            if snapshot.state.is_terminal() {
                return Ok(snapshot);
            }
            let wait =
                json!({"requestId": snapshot.request_id, "afterRevision": snapshot.revision, "waitMs": max_wait});
            match self.engine.call_typed::<method::RequestsWait>(&self.identity, wait).await? {
                WaitResult::Changed(s) => snapshot = *s,
                WaitResult::Unchanged(_) => {}
            }
        }
        Ok(snapshot)
    }
}

/// The parameters every `companion__…` tool declares ([`tool_input_schema`]'s `properties`),
/// for the caps, which name undeclared ones first.
static DECLARED: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(|| {
    ["params", "timeoutMs", "character", "style", "allowFallback", "idempotencyKey"]
        .into_iter()
        .map(|k| (k.to_owned(), Value::Null))
        .collect()
});

/// The answer to a `companion__…` name no listed tool has: `UNSUPPORTED_CAPABILITY`.
pub(crate) fn unsupported(name: &str) -> CallToolResult {
    error_result(&CompanionError::new(
        ErrorCode::UnsupportedCapability,
        format!("No companion capability behind the tool '{}'; see tools/list", crate::model::quote::clip(name)),
    ))
}

/// An `isError` result carrying a CP error: `{code, message, retryable}` and the error's details
/// (`problems` of an `INVALID_PARAMS`, `limit` and `retryAfterMs` of a refusal, …).
fn error_result(e: &CompanionError) -> CallToolResult {
    let mut body = e.data();
    if let Value::Object(map) = &mut body {
        map.insert("message".into(), Value::from(e.message.clone()));
    }
    structured_result(&e.message, body, true)
}

/// The `inputSchema` of `companion__{id}`: the `requests.create` arguments with the capability's
/// own `inputSchema` under `params` (its definitions hoisted to the tool schema's root).
fn tool_input_schema(cap: &CapabilitySpec) -> Map<String, Value> {
    let mut defs = Definitions::new("#/$defs/");
    let params = defs.embed(Value::Object(cap.input_schema().clone()));
    let input = json!({
        "type": "object",
        "properties": {
            "params": params,
            "timeoutMs": {"type": "integer", "minimum": cap.limits().min_timeout_ms, "maximum": cap.limits().max_timeout_ms,
                          "description": "Absolute deadline for the request, counted from acceptance (ms)"},
            "character": {"type": "string", "description": "Character id; omitted = the user's current character"},
            "style": {"type": "string", "description": "Style id (see styles.list)"},
            "allowFallback": {"type": "boolean", "description": "Allow the capability's declared fallback presentation"},
            "idempotencyKey": {"type": "string", "description": "Retry-safe key: the same key and params return the same request"},
        },
        "required": ["params", "timeoutMs"],
        "additionalProperties": false,
    });
    let Value::Object(mut input) = input else { unreachable!("an object literal") };
    defs.attach(&mut input);
    input
}

/// The `outputSchema` of `companion__{id}`, made from the types that serialize its results: the
/// [`RequestSnapshot`] keys, with `result` = the capability's `outputSchema` (or its declared
/// fallback's, whose result a fallback presentation returns) or `null` (a request that ended
/// otherwise, CP-3-16). Nothing is `required` and unknown keys are allowed, so the one schema
/// fits a snapshot and a CP error object (`code`, `message`, `retryable`, details; none of them
/// a snapshot key) alike (OQ-GB-18). Lean like a window tool's ([`lean_output`]): the snapshot
/// keys are the instructions' and the tool description's to explain.
fn tool_output_schema(cap: &CapabilitySpec, catalog: &Catalog) -> Map<String, Value> {
    let mut defs = Definitions::new("#/$defs/");
    // Generated once: the snapshot type never changes.
    static SNAPSHOT: std::sync::LazyLock<Value> = std::sync::LazyLock::new(output_schema_for::<RequestSnapshot>);
    let snapshot = defs.embed(SNAPSHOT.clone());
    let mut props = snapshot.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
    let mut results = vec![defs.embed(Value::Object(cap.output_schema().clone()))];
    if let Some(target) = cap.fallback().and_then(|f| catalog.capability(&f.capability)) {
        let alt = defs.embed(Value::Object(target.output_schema().clone()));
        if !results.contains(&alt) {
            results.push(alt);
        }
    }
    results.push(json!({"type": "null"}));
    let described = props.get("result").and_then(|r| r.get("description")).cloned();
    let mut result = json!({"anyOf": results});
    if let Some(d) = described {
        result["description"] = d;
    }
    props.insert("result".into(), result);
    let mut output = Map::new();
    output.insert("type".into(), "object".into());
    output.insert("properties".into(), Value::Object(props));
    defs.attach(&mut output);
    lean_output(&mut output);
    output
}

fn to_tool(name: &str, cap: &CapabilitySpec, catalog: &Catalog) -> Tool {
    // Rule IDs cited by the capability's and the snapshot's doc comments stay in the companion
    // protocol's own surfaces, out of what a model reads.
    let mut input = tool_input_schema(cap);
    strip_schema(&mut input);
    let mut output = tool_output_schema(cap, catalog);
    strip_schema(&mut output);
    let title = format!("{} · desktop companion", cap.id());
    // Shows something to the user and may wait for their answer: not read-only, not
    // destructive, not idempotent without a key, and it reaches a human (open world).
    let annotations = super::mapping::annotations(ActionHints {
        read_only: false,
        destructive: false,
        idempotent: false,
        open_world: true,
    });
    let description = crate::catalog::rule_ids::strip_rule_ids(cap.description()).into_owned();
    Tool::new_with_raw(name.to_owned(), Some(description.into()), Arc::new(input))
        .with_title(title)
        .with_raw_output_schema(Arc::new(output))
        .with_annotations(annotations)
}
