//! Mapping between the GUI model and rmcp's model types: tools, call results, the resource.

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
/// GB-5.5-1) and the ToolResult-envelope `outputSchema` (GB-12.3-4, OQ-GB-19), and all four
/// annotation hints set explicitly, never left to MCP's defaults (GB-5.6-1). A window tool
/// carries `_meta: {"bridge/windowId": id}` ([`WINDOW_ID_META_KEY`](super::apps::WINDOW_ID_META_KEY)).
pub(crate) fn to_mcp_tool(entry: &ToolEntry) -> Tool {
    let hints = entry.action.hints;
    let title = entry.title();
    let annotations = ToolAnnotations::with_title(title.clone())
        .read_only(hints.read_only)
        .destructive(hints.destructive)
        .idempotent(hints.idempotent)
        .open_world(hints.open_world);
    let tool =
        Tool::new_with_raw(entry.name.clone(), Some(entry.description().into()), entry.action.input_schema.clone())
            .with_title(title)
            .with_raw_output_schema(entry.action.output_schema.clone())
            .with_annotations(annotations);
    match &entry.window_id {
        Some(id) => {
            let mut meta = MetaObject::default();
            meta.insert(super::apps::WINDOW_ID_META_KEY.to_owned(), id.clone().into());
            tool.with_meta(meta)
        }
        None => tool,
    }
}

/// A `tools/call` outcome as an MCP result (GB-5.4, GB-7.4-1, GB-12.3):
/// - success: `structuredContent` = the ToolResult object, `isError: false`;
/// - failure: `structuredContent` = the ToolError object `{code, message, currentVersion?,
///   fields?}`, `isError: true`;
///
/// either way with one text item: the human-readable line ([`ToolResult::text_mirror`] or the
/// error message, GB-12.3-3), then the structured content as JSON. Failures are never JSON-RPC
/// errors.
pub(crate) fn to_call_tool_result(result: &Result<ToolResult, ToolError>) -> CallToolResult {
    match result {
        Ok(ok) => structured_result(&ok.text_mirror(), crate::render::to_value(ok), false),
        Err(err) => structured_result(&err.message, crate::render::to_value(err), true),
    }
}

/// A structured `tools/call` result, for every tool this server lists (GUI and companion):
/// `structuredContent` = `value`, `isError` = `is_error`, and one text content: `line`, a
/// newline, then `value` as JSON, because many hosts hand only `content` to the model and MCP
/// asks tools that return structured content to serialize it there too.
pub(crate) fn structured_result(line: &str, value: Value, is_error: bool) -> CallToolResult {
    // Built directly rather than with `CallToolResult::structured`, which would serialize the
    // value once more for a text content replaced here.
    let content = vec![ContentBlock::text(format!("{line}\n{value}"))];
    let mut out = if is_error { CallToolResult::error(content) } else { CallToolResult::success(content) };
    out.structured_content = Some(value);
    out
}
