//! Mapping between the GUI model and rmcp's model types: tools, call results, the resource.

use crate::catalog::ActionHints;
use crate::gui::{Published, ToolEntry};
use crate::model::{ToolError, ToolResult};
use rmcp::model::{
    CacheScope, CallToolResult, ContentBlock, ListResourcesResult, MetaObject, ReadResourceResult, Resource,
    ResourceContents, Tool, ToolAnnotations,
};
use serde_json::Value;

/// The one resource of the protocol: `app://windows` (GB-4.1-1, GB-12.1-1).
pub const WINDOWS_URI: &str = "app://windows";

/// MIME type of the `app://windows` content (GB-12.2-1).
pub(crate) const JSON_MIME: &str = "application/json";

/// The `resources/list` entry for `app://windows`: name `windows`, a title, a description and
/// `mimeType: application/json` (GB-12.1-1).
pub(crate) fn windows_resource() -> Resource {
    Resource::new(WINDOWS_URI, "windows")
        .with_title("Application windows")
        .with_description(
            "Every open window with its content (summary + blocks), topology (modal, ownerId) and \
             operableWindowIds, the sole authority on which windows can be operated. One read is a \
             complete, self-consistent snapshot; subscribe to be told when it changes.",
        )
        .with_mime_type(JSON_MIME)
}

/// `resources/list`: exactly one resource, never cached by the client (its list never changes,
/// but a zero TTL keeps 2026-07-28 clients honest).
pub(crate) fn list_resources() -> ListResourcesResult {
    ListResourcesResult::with_all_items(vec![windows_resource()]).with_ttl_ms(0).with_cache_scope(CacheScope::Private)
}

/// `resources/read app://windows`: one `application/json` text content holding the snapshot
/// serialized once per change (GB-4.1-2, GB-12.2-1). The TTL is zero: the content changes
/// whenever the UI does.
pub(crate) fn read_windows(published: &Published) -> ReadResourceResult {
    let contents = ResourceContents::text(published.snapshot_json().as_ref(), WINDOWS_URI).with_mime_type(JSON_MIME);
    let mut result = ReadResourceResult::new(vec![contents]);
    result.ttl_ms = Some(0);
    result.cache_scope = Some(CacheScope::Private);
    result
}

/// One listed tool as an MCP `Tool`: `name` `{winId}__{action}`, a human-readable `title` and
/// `description` (GB-5.2-3), the action's `inputSchema` (with the optional `expectedVersion`,
/// GB-5.5-1) and the ToolResult-envelope `outputSchema` (GB-12.3-4, OQ-GB-19), and the
/// annotation hints of [`annotations`] (GB-5.6-1). A window tool carries
/// `_meta: {"bridge/windowId": id}` ([`WINDOW_ID_META_KEY`](super::apps::WINDOW_ID_META_KEY)).
pub(crate) fn to_mcp_tool(entry: &ToolEntry) -> Tool {
    let tool =
        Tool::new_with_raw(entry.name.clone(), Some(entry.description().into()), entry.action.input_schema.clone())
            .with_title(entry.title())
            .with_raw_output_schema(entry.action.output_schema.clone())
            .with_annotations(annotations(entry.action.hints));
    match &entry.window_id {
        Some(id) => {
            let mut meta = MetaObject::default();
            meta.insert(super::apps::WINDOW_ID_META_KEY.to_owned(), id.clone().into());
            tool.with_meta(meta)
        }
        None => tool,
    }
}

/// A tool's `annotations` (GB-5.6-1, GB-5.6-2). A tool that is not read-only states all four
/// hints, never leaving one to MCP's defaults (`destructiveHint: true`, `openWorldHint: true`)
/// nor to hosts, which read a missing `destructiveHint` as `false` and would then skip the
/// consent a destructive tool needs. A read-only tool states `readOnlyHint: true` and
/// `openWorldHint`: MCP defines `destructiveHint` and `idempotentHint` only when `readOnlyHint`
/// is false. No `title`: the tool's own `title` says it.
pub(crate) fn annotations(hints: ActionHints) -> ToolAnnotations {
    let a = ToolAnnotations::new().read_only(hints.read_only);
    let a = if hints.read_only { a } else { a.destructive(hints.destructive).idempotent(hints.idempotent) };
    a.open_world(hints.open_world)
}

/// A `tools/call` outcome as an MCP result (GB-5.4, GB-7.4-1, GB-12.3):
/// - success: `structuredContent` = the ToolResult object, `isError: false`;
/// - failure: `structuredContent` = the ToolError object `{code, message, currentVersion?,
///   fields?}`, `isError: true`;
///
/// either way with the text mirror of [`structured_result`]. Failures are never JSON-RPC
/// errors.
pub(crate) fn to_call_tool_result(result: &Result<ToolResult, ToolError>) -> CallToolResult {
    match result {
        Ok(ok) => structured_result(&ok.text_mirror(), crate::render::to_value(ok), false),
        Err(err) => structured_result(&err.message, crate::render::to_value(err), true),
    }
}

/// A structured `tools/call` result, for every tool this server lists (GUI and companion):
/// `structuredContent` = `value`, `isError` = `is_error`, and one text content, the *text
/// mirror*: `line` (the message, GB-12.3-3), then, on a new line, every other key of `value` as
/// compact JSON; just `line` when `value` holds nothing else.
///
/// Why this shape: hosts that hand the model only `content` (MCP's mirror rule exists for
/// them, and several desktop hosts still do it) must lose nothing a call returned — the rows
/// `load_rows` fetched, `openedWindowIds`, an error's `code`, `currentVersion` and `fields` —
/// so the mirror carries every key; a host that forwards `structuredContent` as well pays for
/// the message once, not twice, and a call that only reports a message (most writes) costs
/// that line alone. `value`'s `message` is left out of the JSON only when it equals `line`.
pub(crate) fn structured_result(line: &str, value: Value, is_error: bool) -> CallToolResult {
    let text = match &value {
        Value::Object(m) => {
            let skip = m.get("message").and_then(Value::as_str).filter(|msg| *msg == line).map(|_| "message");
            if m.keys().all(|k| Some(k.as_str()) == skip) {
                line.to_owned()
            } else {
                let rest = serde_json::to_string(&Without { map: m, skip }).unwrap_or_default();
                format!("{line}\n{rest}")
            }
        }
        other => format!("{line}\n{other}"),
    };
    let content = vec![ContentBlock::text(text)];
    let mut out = if is_error { CallToolResult::error(content) } else { CallToolResult::success(content) };
    out.structured_content = Some(value);
    out
}

/// A JSON object serialized without one of its keys (no copy of the rest, which may be large).
struct Without<'a> {
    map: &'a serde_json::Map<String, Value>,
    skip: Option<&'a str>,
}

impl serde::Serialize for Without<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.map.iter().filter(|(k, _)| Some(k.as_str()) != self.skip))
    }
}
