//! MCP Apps (spec MA, extension `io.modelcontextprotocol/ui`): every window as a live,
//! sandboxed view in hosts that render Apps.
//!
//! | What | Where |
//! | --- | --- |
//! | the extension is advertised | `capabilities.extensions["io.modelcontextprotocol/ui"] = {}` in `initialize` and `server/discover` (MA-3-1) |
//! | a client has it | its capabilities for *this request*: the 2026-07-28 `_meta` or the legacy session's `initialize` (MA-2-3); never `clientInfo` (MA-2-5) |
//! | with it | every window tool carries `_meta.ui.resourceUri` and `_meta["bridge/windowId"]` (MA-4-1, MA-4-4); `app://windows` reads carry `_meta["bridge/windowTools"]`, window tool results `_meta["bridge/window"]` and `_meta["bridge/windowTools"]` (what a view needs and cannot ask the host for) |
//! | without it | the same tools without `_meta.ui`, the same results; reading a `ui://` URI is `-32021` (MA-12) |
//! | the view | a `ui://` resource, `text/html;profile=mcp-app`, not in `resources/list` (GB-12.1-1), readable with `resources/read` (MA-6) |
//!
//! The URI of a view carries a digest of its HTML and of the catalog, so it (and the content)
//! changes whenever either does, and hosts may cache it as long as its `ttlMs` says (MA-7).
//!
//! The built-in view ([`DEFAULT_VIEW_HTML`]) renders any window from its blocks; a window type
//! may bring its own with `#[bridge_window(view = "…")]` ([`WindowView`]).

use crate::catalog::{ViewCsp, WindowSpec, WindowView};
use crate::gui::{Bridge, Published, ServerIdentity, ToolEntry};
use bridge_rules::humanize;
use rmcp::model::{
    CacheScope, ClientCapabilities, ExtensionCapabilities, JsonObject, MetaObject, ReadResourceResult,
    ResourceContents, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The MCP Apps extension id, exactly (MA-2-2).
pub const UI_EXTENSION_ID: &str = "io.modelcontextprotocol/ui";

/// MIME type of a view resource, exactly (MA-6-6).
pub const UI_MIME: &str = "text/html;profile=mcp-app";

/// URI scheme of view resources (MA-6-6).
pub const UI_SCHEME: &str = "ui://";

/// `_meta` key on window tools and on their call results: the id of the window the tool acts
/// on, so a view learns which window to show from data the host hands it, never by splitting
/// tool names (OQ-GB-13).
pub const WINDOW_ID_META_KEY: &str = "bridge/windowId";

/// `_meta` key on `app://windows` read results for clients with the extension: which tools
/// each window has right now, `{"<winId>": {"type": "<window type>", "tools": {"<action>":
/// "<tool name>"}, "userOnly"?: ["<action>"]}}`, for the windows that have any (GB-5.1-4), and
/// the actions only the user takes, in the app (never tools; the view says so, MA-11-4). A
/// view cannot list the server's tools through the Apps bridge, so it learns the shown
/// window's available actions here, and their schemas from the catalog it carries.
pub const WINDOW_TOOLS_META_KEY: &str = "bridge/windowTools";

/// `_meta` key on window tool results for clients with the extension: the acted-on window as
/// `app://windows` shows it right after the call (a `Window` object, GB-4.2; absent once the
/// call closed it), so a view can render it even where the host does not proxy
/// `resources/read`.
pub const WINDOW_STATE_META_KEY: &str = "bridge/window";

/// How often the built-in view re-reads `app://windows` through the host while it is visible,
/// ms, so that the user's own edits in the app show up.
pub const VIEW_REFRESH_MS: u64 = 2_000;

/// `_meta` key of the server identity on results (MA-13-4, OQ-MA-6).
pub const SERVER_INFO_META_KEY: &str = "io.modelcontextprotocol/serverInfo";

/// How long a host may treat a view's `resources/read` result as fresh, ms. The URI changes
/// with the content, so the entry never goes stale under the same URI.
pub const VIEW_TTL_MS: u64 = 3_600_000;

/// The built-in view: one self-contained HTML document (inline script and styles, no external
/// URL) that renders any window from `app://windows` and offers its actions (MA-6, MA-9).
/// The server replaces the token `__BRIDGE_VIEW_CONFIG__` in it with a JSON object
/// `{"windowsUri", "windowIdMetaKey", "windowToolsMetaKey", "windowStateMetaKey", "refreshMs",
/// "catalogDigest", "server": {"name", "version"}, "types": {"<window type>": {"title",
/// "blocks": [{"id", "label"}], "actions": [{"action", "title", "description"?,
/// "inputSchema", "hints": {"readOnly", "destructive", "idempotent", "openWorld"}}]}}}`: the
/// catalog's window types and their actions in declaration order.
pub const DEFAULT_VIEW_HTML: &str = include_str!("view.html");

const CONFIG_TOKEN: &str = "__BRIDGE_VIEW_CONFIG__";

/// Whether the client of this request declared the UI extension (MA-2-3, MA-12): in the
/// request's own `_meta` capabilities (2026-07-28) or, for a legacy session, at `initialize`.
/// A declaration whose `mimeTypes` leaves out [`UI_MIME`], or is not a list, does not count.
/// `clientInfo` plays no part (MA-2-5).
pub(crate) fn client_supports_ui(context: &RequestContext<RoleServer>) -> bool {
    capabilities_support_ui(context.client_capabilities().as_ref())
}

/// Whether client capabilities `caps` declare the extension with a MIME type this server
/// serves.
pub(crate) fn capabilities_support_ui(caps: Option<&ClientCapabilities>) -> bool {
    let Some(settings) = caps.and_then(|c| c.extensions.as_ref()).and_then(|e| e.get(UI_EXTENSION_ID)) else {
        return false;
    };
    match settings.get("mimeTypes") {
        None => true,
        Some(Value::Array(types)) => types.iter().any(|t| t.as_str() == Some(UI_MIME)),
        Some(_) => false,
    }
}

/// The server's `extensions` capability: `{"io.modelcontextprotocol/ui": {}}` (MA-3-1).
pub(crate) fn server_extensions() -> ExtensionCapabilities {
    let mut extensions = ExtensionCapabilities::new();
    extensions.insert(UI_EXTENSION_ID.to_owned(), JsonObject::new());
    extensions
}

/// What a client without the extension gets for a `ui://` read: `-32021` with
/// `data.requiredCapabilities.extensions["io.modelcontextprotocol/ui"] = {"mimeTypes":
/// ["text/html;profile=mcp-app"]}` (MA-12-4, OQ-MA-4): exactly what to declare to get it.
pub(crate) fn missing_ui_capability() -> rmcp::ErrorData {
    let mut settings = JsonObject::new();
    settings.insert("mimeTypes".to_owned(), json!([UI_MIME]));
    let mut extensions = ExtensionCapabilities::new();
    extensions.insert(UI_EXTENSION_ID.to_owned(), settings);
    let mut required = ClientCapabilities::default();
    required.extensions = Some(extensions);
    rmcp::ErrorData::missing_required_client_capability(required)
}

/// `_meta` with the server identity, `{"io.modelcontextprotocol/serverInfo": {name, version}}`
/// (MA-13-4).
pub(crate) fn server_info_meta(identity: &ServerIdentity) -> MetaObject {
    let mut meta = MetaObject::default();
    meta.insert(SERVER_INFO_META_KEY.to_owned(), json!({"name": identity.name, "version": identity.version}));
    meta
}

/// `_meta["bridge/windowTools"]` for an `app://windows` read by a client with the extension
/// ([`WINDOW_TOOLS_META_KEY`]): the listed tools of `published`, grouped by window, in listed
/// order within a window (`serde_json` keeps object keys sorted, so windows come by id).
pub(crate) fn window_tools(published: &Published) -> Value {
    tools_by_window(published, None)
}

/// [`window_tools`] of every window, or of window `only`.
fn tools_by_window(published: &Published, only: Option<&str>) -> Value {
    let mut windows = serde_json::Map::new();
    for entry in published.tools.iter() {
        let (Some(id), Some(spec)) = (&entry.window_id, &entry.window_type) else { continue };
        if only.is_some_and(|only| only != id) {
            continue;
        }
        let window = windows.entry(id.clone()).or_insert_with(|| json!({ "type": spec.meta.type_name, "tools": {} }));
        if let Some(tools) = window.get_mut("tools").and_then(Value::as_object_mut) {
            tools.insert(entry.action.name.clone(), Value::String(entry.name.clone()));
        }
    }
    // The actions only the user takes: the view says to do them in the app (MA-11-4).
    for (id, type_name, actions) in published.user_only_windows() {
        if only.is_some_and(|only| only != id) {
            continue;
        }
        let window = windows.entry(id.to_owned()).or_insert_with(|| json!({ "type": type_name, "tools": {} }));
        window["userOnly"] = json!(actions);
    }
    Value::Object(windows)
}

/// Adds `_meta["bridge/window"]` (the window's state in `published`) and
/// `_meta["bridge/windowTools"]` (its tools alone) for window `id` to a call result's `_meta`;
/// nothing if the window is gone.
pub(crate) fn insert_window_state(meta: &mut MetaObject, published: &Published, id: &str) {
    let Some(window) = published.window(id) else { return };
    meta.insert(WINDOW_STATE_META_KEY.to_owned(), crate::render::to_value(window));
    meta.insert(WINDOW_TOOLS_META_KEY.to_owned(), tools_by_window(published, Some(id)));
}

/// The window types and their actions as the built-in view needs them to build forms (see
/// [`DEFAULT_VIEW_HTML`]).
fn view_types(windows: &[Arc<WindowSpec>]) -> Value {
    let types = windows
        .iter()
        .map(|w| {
            let actions: Vec<Value> = w
                .actions
                .iter()
                .map(|a| {
                    let mut action = json!({
                        "action": a.name,
                        "title": a.title.clone().unwrap_or_else(|| humanize(&a.name)),
                        "inputSchema": a.input_schema.as_ref(),
                        "hints": {
                            "readOnly": a.hints.read_only,
                            "destructive": a.hints.destructive,
                            "idempotent": a.hints.idempotent,
                            "openWorld": a.hints.open_world,
                        },
                    });
                    if !a.description.is_empty() {
                        action["description"] = Value::String(a.description.clone());
                    }
                    action
                })
                .collect();
            let blocks: Vec<Value> = w.meta.blocks.iter().map(|b| json!({ "id": b.id, "label": b.label })).collect();
            (w.meta.type_name.clone(), json!({ "title": w.meta.title, "blocks": blocks, "actions": actions }))
        })
        .collect::<serde_json::Map<_, _>>();
    Value::Object(types)
}

/// One servable view: its versioned URI, its HTML and CSP.
#[derive(Debug)]
struct ViewEntry {
    uri: String,
    html: String,
    csp: ViewCsp,
}

/// The views of the catalog as it is now: the built-in one and one per window type that
/// declares its own. Rebuilt when a window type is registered (the only way the catalog's
/// window part changes).
#[derive(Debug)]
struct ViewTable {
    window_types: usize,
    default: Arc<ViewEntry>,
    by_type: HashMap<String, Arc<ViewEntry>>,
}

/// The view table cache of one composed server ([`GuiBridgeServer`](super::GuiBridgeServer)),
/// shared by every connection made from it (every 2026-07-28 `POST` gets a fresh handler).
#[derive(Debug, Default)]
pub(crate) struct AppViews(Mutex<Option<Arc<ViewTable>>>);

impl AppViews {
    /// The view table of `bridge` as its catalog is now: built on first use and after a window
    /// type was registered.
    pub(crate) fn current(&self, bridge: &Bridge) -> Views {
        let catalog = bridge.catalog();
        let mut slot = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(table) = slot.as_ref().filter(|t| t.window_types == catalog.windows().len()) {
            return Views(table.clone());
        }
        let table = Arc::new(build_table(bridge.identity(), &catalog.to_json(), catalog.windows()));
        *slot = Some(table.clone());
        Views(table)
    }
}

/// The MCP Apps view of one bridge.
pub(crate) struct Views(Arc<ViewTable>);

impl Views {
    /// The `ui://` URI that shows the window of `entry`: its type's own view, else the
    /// built-in one. `None` for app-level tools.
    fn uri_for(&self, entry: &ToolEntry) -> Option<&str> {
        let spec = entry.window_type.as_ref()?;
        let view = self.0.by_type.get(&spec.meta.type_name).unwrap_or(&self.0.default);
        Some(&view.uri)
    }

    /// Adds `_meta.ui = {"resourceUri"}` to a listed window tool, for a client with the
    /// extension (MA-4-1, MA-4-4); app-level tools get none.
    pub(crate) fn bind(&self, tool: &mut Tool, entry: &ToolEntry) {
        if let Some(uri) = self.uri_for(entry) {
            tool.meta.get_or_insert_with(MetaObject::default).insert("ui".to_owned(), json!({ "resourceUri": uri }));
        }
    }

    /// `resources/read` of a `ui://` URI: one `text/html;profile=mcp-app` content with
    /// `_meta.ui.csp` (the four lists) and `_meta.ui.permissions = {}`, `ttlMs`
    /// [`VIEW_TTL_MS`], `cacheScope: "public"` (MA-6-5, MA-6-7, MA-13-10). `None` if no view
    /// has that URI (an older build's URI, or a typo).
    pub(crate) fn read(&self, uri: &str) -> Option<ReadResourceResult> {
        let view = std::iter::once(&self.0.default).chain(self.0.by_type.values()).find(|v| v.uri == uri)?;
        let mut csp = serde_json::Map::new();
        for (name, domains) in view.csp.lists() {
            csp.insert(name.to_owned(), json!(domains));
        }
        let mut meta = MetaObject::default();
        meta.insert("ui".to_owned(), json!({ "csp": csp, "permissions": {} }));
        let contents =
            ResourceContents::text(view.html.clone(), view.uri.clone()).with_mime_type(UI_MIME).with_meta(meta);
        Some(ReadResourceResult::new(vec![contents]).with_ttl_ms(VIEW_TTL_MS).with_cache_scope(CacheScope::Public))
    }

    /// The URI of the built-in view.
    #[cfg(test)]
    fn default_uri(&self) -> &str {
        &self.0.default.uri
    }
}

fn build_table(identity: &ServerIdentity, catalog_json: &str, windows: &[Arc<WindowSpec>]) -> ViewTable {
    let authority = slug(&identity.name);
    let catalog_digest = hex(fnv1a(catalog_json.as_bytes()));
    let config = json!({
        "windowsUri": super::WINDOWS_URI,
        "windowIdMetaKey": WINDOW_ID_META_KEY,
        "windowToolsMetaKey": WINDOW_TOOLS_META_KEY,
        "windowStateMetaKey": WINDOW_STATE_META_KEY,
        "refreshMs": VIEW_REFRESH_MS,
        "catalogDigest": catalog_digest,
        "server": {"name": identity.name, "version": identity.version},
        "types": view_types(windows),
    });
    // `<` escaped so no value can close the <script> element it sits in (or open a comment).
    let config = config.to_string().replace('<', "\\u003c");
    let html = DEFAULT_VIEW_HTML.replacen(CONFIG_TOKEN, &config, 1);
    let default = entry(&authority, "window", catalog_json, html, ViewCsp::default());
    let by_type = windows
        .iter()
        .filter_map(|w| {
            let view: &WindowView = w.view.as_deref()?;
            let name = slug(&w.meta.type_name);
            Some((
                w.meta.type_name.clone(),
                entry(&authority, &name, catalog_json, view.html.to_string(), view.csp.clone()),
            ))
        })
        .collect();
    ViewTable { window_types: windows.len(), default, by_type }
}

fn entry(authority: &str, name: &str, catalog_json: &str, html: String, csp: ViewCsp) -> Arc<ViewEntry> {
    let mut h = fnv1a(catalog_json.as_bytes());
    h = fnv1a_more(h, html.as_bytes());
    h = fnv1a_more(h, serde_json::to_string(&csp).unwrap_or_default().as_bytes());
    Arc::new(ViewEntry { uri: format!("{UI_SCHEME}{authority}/{name}-{}.html", hex(h)), html, csp })
}

/// `Order Editor` → `order-editor`: lowercase ASCII letters and digits, runs of anything else
/// as one `-`; `app` if nothing is left.
fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    let out = out.trim_end_matches('-');
    if out.is_empty() { "app".to_owned() } else { out.to_owned() }
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a, 64 bits: a content digest for cache-busting URIs (not a security hash: the content
/// is public and hosts key their caches by their own digest, MA-7-2).
fn fnv1a(bytes: &[u8]) -> u64 {
    fnv1a_more(FNV_OFFSET, bytes)
}

fn fnv1a_more(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

fn hex(h: u64) -> String {
    format!("{h:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity() -> ServerIdentity {
        ServerIdentity { name: "Order Editor".into(), version: "1.0.0".into(), instructions: String::new() }
    }

    #[test]
    fn slugs() {
        assert_eq!(slug("Order Editor"), "order-editor");
        assert_eq!(slug("Editor<Doc>"), "editor-doc");
        assert_eq!(slug("  "), "app");
    }

    #[test]
    fn view_uri_follows_the_catalog() {
        // "the URI and content change when the catalog changes" (MA-7-4).
        let a = build_table(&identity(), "{\"windows\":[]}", &[]);
        let b = build_table(&identity(), "{\"windows\":[1]}", &[]);
        let a2 = build_table(&identity(), "{\"windows\":[]}", &[]);
        assert_ne!(a.default.uri, b.default.uri);
        assert_ne!(a.default.html, b.default.html);
        assert_eq!(a.default.uri, a2.default.uri);
        assert!(a.default.uri.starts_with("ui://order-editor/window-"), "{}", a.default.uri);
        assert!(!a.default.html.contains(CONFIG_TOKEN));
    }

    #[test]
    fn config_cannot_close_its_script_element() {
        let mut id = identity();
        id.name = "</script><script>alert(1)</script>".into();
        let t = build_table(&id, "{}", &[]);
        assert!(!t.default.html.contains("</script><script>alert"));
    }

    #[test]
    fn read_unknown_ui_uri_is_none() {
        let views = Views(Arc::new(build_table(&identity(), "{}", &[])));
        assert!(views.read("ui://order-editor/window-0000000000000000.html").is_none());
        let read = views.read(views.default_uri()).map(|r| serde_json::to_value(r).unwrap_or_default());
        let read = read.unwrap_or_default();
        assert_eq!(read["contents"][0]["mimeType"], UI_MIME);
    }

    #[test]
    fn mime_types_must_include_ours() {
        let caps = |v: Value| serde_json::from_value::<ClientCapabilities>(v).ok();
        assert!(capabilities_support_ui(caps(json!({"extensions": {UI_EXTENSION_ID: {}}})).as_ref()));
        assert!(capabilities_support_ui(
            caps(json!({"extensions": {UI_EXTENSION_ID: {"mimeTypes": [UI_MIME]}}})).as_ref()
        ));
        assert!(!capabilities_support_ui(
            caps(json!({"extensions": {UI_EXTENSION_ID: {"mimeTypes": ["text/x"]}}})).as_ref()
        ));
        assert!(!capabilities_support_ui(caps(json!({"extensions": {}})).as_ref()));
        assert!(!capabilities_support_ui(
            caps(json!({"extensions": {UI_EXTENSION_ID: {"mimeTypes": UI_MIME}}})).as_ref()
        ));
        assert!(!capabilities_support_ui(caps(json!({"extensions": {UI_EXTENSION_ID: {"mimeTypes": 5}}})).as_ref()));
        assert!(!capabilities_support_ui(caps(json!({})).as_ref()));
        assert!(!capabilities_support_ui(None));
    }
}
