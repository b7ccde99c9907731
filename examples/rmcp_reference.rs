//! The hand-written reference for the dispatch benchmark (issue #10, item 1; BENCHMARKS.md
//! "Dispatch"): a minimal MCP server written directly on rmcp 3.11, without bridge, that serves
//! the same tools and the same `app://windows` snapshot as the Order Editor example and does
//! the work a careful hand-written server would do per `tools/call` of `edit_field`: parse the
//! arguments, validate them against the tool's JSON Schema with `jsonschema` (compiled once),
//! check `expectedVersion`, apply the edit, bump the window's version, and answer the same bytes
//! bridge answers (structured result, its text mirror, `_meta` with the server identity and the
//! window id).
//!
//! Its tools and initial snapshot come from a fixture that `stdio_driver --capture` takes from the
//! bridge server (`tools/list` and `resources/read app://windows`), so both serve the same data:
//!
//! ```text
//! cargo build --release --example order_editor --example rmcp_reference --example stdio_driver
//! target/release/examples/stdio_driver --capture /tmp/fixture.json \
//!   --server target/release/examples/order_editor \
//!   --server "target/release/examples/rmcp_reference --fixture /tmp/fixture.json" \
//!   --tool w-A__edit_field --arguments '{"field":"recipient","value":"Alice {n}"}' --rounds 5
//! ```
//!
//! State is kept as the snapshot's JSON (the fields block of each window holds the values), and
//! the serialized snapshot is cached until the next write, as bridge does.

use clap::Parser;
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    MetaObject, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    ResourceContents, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

#[derive(Parser, Debug)]
struct Args {
    /// `{"tools": [...], "snapshot": {...}}`, as `stdio_driver --capture` writes it.
    #[arg(long)]
    fixture: std::path::PathBuf,
}

struct State {
    snapshot: Value,
    /// The serialized snapshot, until the next write.
    json: Option<Arc<str>>,
}

struct Reference {
    tools: Vec<Tool>,
    /// Tool name → (window id, compiled input schema).
    validators: HashMap<String, (String, jsonschema::Validator)>,
    state: Mutex<State>,
    server_info: Value,
}

impl Reference {
    fn meta(&self) -> MetaObject {
        let mut meta = MetaObject::default();
        meta.insert("io.modelcontextprotocol/serverInfo".to_owned(), self.server_info.clone());
        meta
    }

    fn error(code: &str, message: String, extra: Map<String, Value>) -> CallToolResult {
        let mut v = Map::new();
        v.insert("code".to_owned(), code.into());
        v.insert("message".to_owned(), message.clone().into());
        v.extend(extra);
        let v = Value::Object(v);
        let mut out = CallToolResult::error(vec![ContentBlock::text(format!("{message}\n{v}"))]);
        out.structured_content = Some(v);
        out
    }

    /// `edit_field` on `window`: the work a hand-written server does.
    fn edit_field(
        &self,
        window: &str,
        validator: &jsonschema::Validator,
        mut args: Map<String, Value>,
    ) -> CallToolResult {
        let instance = Value::Object(std::mem::take(&mut args));
        if let Some(e) = validator.iter_errors(&instance).next() {
            let field = e.instance_path().to_string().trim_start_matches('/').to_owned();
            let fields = json!([{"field": field, "error": e.to_string()}]);
            return Self::error(
                "validation_failed",
                "Some arguments are invalid".to_owned(),
                Map::from_iter([("fields".to_owned(), fields)]),
            );
        }
        let Value::Object(args) = instance else { unreachable!("validated as an object") };
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let Some(win) =
            state.snapshot["windows"].as_array_mut().and_then(|ws| ws.iter_mut().find(|w| w["id"] == window))
        else {
            return Self::error("window_not_found", format!("Window '{window}' does not exist"), Map::new());
        };
        let version = win["version"].as_i64().unwrap_or(1);
        if let Some(expected) = args.get("expectedVersion").and_then(Value::as_i64)
            && expected != version
        {
            return Self::error(
                "stale_state",
                format!("The window changed (version {version}, not {expected}); re-read app://windows"),
                Map::from_iter([("currentVersion".to_owned(), version.into())]),
            );
        }
        let field = args["field"].as_str().unwrap_or_default();
        let value = args["value"].clone();
        let item = win["blocks"].as_array_mut().and_then(|blocks| {
            blocks
                .iter_mut()
                .filter(|b| b["type"] == "fields")
                .flat_map(|b| b["items"].as_array_mut().into_iter().flatten())
                .find(|i| i["key"] == field || i["label"].as_str().is_some_and(|l| l.eq_ignore_ascii_case(field)))
        });
        let Some(item) = item else {
            return Self::error(
                "validation_failed",
                format!("No field '{field}'"),
                Map::from_iter([("fields".to_owned(), json!([{"field": "field", "error": "No such field"}]))]),
            );
        };
        if item["value"] != value {
            item["value"] = value;
            win["version"] = (version + 1).into();
            state.json = None;
        }
        let message = format!("Set {field}");
        let v = json!({ "message": message });
        let mut out = CallToolResult::success(vec![ContentBlock::text(format!("{message}\n{v}"))]);
        out.structured_content = Some(v);
        out
    }
}

impl ServerHandler for Reference {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        ServerConfig::new(capabilities).with_server_info(Implementation::new("order-editor", "0.1.0"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut result =
            ListToolsResult::with_all_items(self.tools.clone()).with_ttl_ms(0).with_cache_scope(CacheScope::Private);
        result.meta = Some(self.meta());
        Ok(result)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if request.uri != "app://windows" {
            return Err(ErrorData::resource_not_found(format!("No resource '{}'", request.uri), None));
        }
        let json = {
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            let State { snapshot, json } = &mut *state;
            json.get_or_insert_with(|| Arc::from(snapshot.to_string())).clone()
        };
        let contents = ResourceContents::text(json.as_ref(), "app://windows").with_mime_type("application/json");
        let mut result = ReadResourceResult::new(vec![contents]);
        result.ttl_ms = Some(0);
        result.cache_scope = Some(CacheScope::Private);
        result.meta = Some(self.meta());
        Ok(result.into())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let mut meta = self.meta();
        let args = request.arguments.unwrap_or_default();
        let mut result = match self.validators.get(request.name.as_ref() as &str) {
            Some((window, validator)) if request.name.ends_with("__edit_field") => {
                meta.insert("bridge/windowId".to_owned(), window.clone().into());
                self.edit_field(window, validator, args)
            }
            _ => Self::error("action_not_available", format!("No tool '{}' here", request.name), Map::new()),
        };
        result.meta = Some(meta);
        Ok(result.into())
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let fixture: Value = serde_json::from_str(&std::fs::read_to_string(&args.fixture)?)?;
    let tools: Vec<Tool> = serde_json::from_value(fixture["tools"].clone())?;
    let mut validators = HashMap::new();
    for tool in &tools {
        let window = tool.meta.as_ref().and_then(|m| m.get("bridge/windowId")).and_then(Value::as_str);
        if let Some(window) = window {
            let schema = Value::Object((*tool.input_schema).clone());
            validators.insert(tool.name.to_string(), (window.to_owned(), jsonschema::validator_for(&schema)?));
        }
    }
    let server_info = fixture["serverInfo"].clone();
    let server = Reference {
        tools,
        validators,
        state: Mutex::new(State { snapshot: fixture["snapshot"].clone(), json: None }),
        server_info,
    };
    server.serve(rmcp::transport::stdio()).await?.waiting().await?;
    Ok(())
}
