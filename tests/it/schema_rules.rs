//! Issue #6: every schema the examples emit, as they are served — `tools/list` over MCP in both
//! eras (2025-11-25 sessions and 2026-07-28), the exported MCP tool templates, `capabilities.list`
//! and the OpenRPC document — obeys the schema pipeline's rules, checked here by a walker that
//! shares no code with the pipeline. A breach names the source, the tool or capability, and the
//! JSON pointer. Also: the Order Editor's registry content (GB-5.5-1, GB-5.6-1, GB-9-3).

// The examples' own code (included by `main.rs`).
use crate::desk_companion as caps;
use crate::order_editor as app;
use crate::zoo_app;

use bridge_runtime::Bridge;
use bridge_runtime::companion::{ClientIdentity, Engine, ScriptedPresenter, SqliteStore};
use bridge_runtime::export;
use bridge_runtime::mcp::{CompanionTools, GuiBridgeServer};
use rmcp::model::ProtocolVersion;
use rmcp::service::ClientLifecycleMode;
use rmcp::{ClientServiceExt, ServiceExt};
use serde_json::Value;

/// `format` values of JSON Schema 2020-12 (the list is the rule's definition, so it is shared).
use bridge_runtime::__internals::schema::STANDARD_FORMATS;

const MAX_SAFE: f64 = 9_007_199_254_740_991.0;

/// Keywords holding one subschema, a map of them, an array of them (2020-12).
const ONE: &[&str] = &[
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
];
const MAP: &[&str] = &["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];
const LIST: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];

/// Collects rule breaches as `source: subject: /pointer: rule`.
#[derive(Default)]
struct Rules {
    breaches: Vec<String>,
    checked: usize,
}

impl Rules {
    fn breach(&mut self, at: &str, pointer: &str, rule: &str) {
        self.breaches.push(format!("{at}: {pointer}: {rule}"));
    }

    /// A tool `inputSchema`/`outputSchema` or a capability schema: an object root, then every
    /// rule inside; references resolve in the schema itself.
    fn object_schema(&mut self, at: &str, schema: &Value) {
        self.checked += 1;
        self.object_root(at, schema);
        self.walk(at, schema, schema, "");
    }

    /// The root rules: `{"type":"object","properties":{…}}`, no combinator at the root.
    fn object_root(&mut self, at: &str, schema: &Value) {
        if schema.get("type") != Some(&Value::from("object")) {
            self.breach(at, "", "root is not \"type\": \"object\"");
        }
        if !schema.get("properties").is_some_and(Value::is_object) {
            self.breach(at, "", "root has no \"properties\" object");
        }
        for combinator in ["oneOf", "anyOf", "allOf"] {
            if schema.get(combinator).is_some() {
                self.breach(at, "", &format!("root has {combinator}"));
            }
        }
    }

    /// Every rule on `schema`, which sits at `pointer` inside `doc` (references resolve in `doc`).
    fn walk(&mut self, at: &str, doc: &Value, schema: &Value, pointer: &str) {
        let m = match schema {
            Value::Object(m) => m,
            Value::Bool(_) => return self.breach(at, pointer, "boolean schema"),
            _ => return self.breach(at, pointer, "not a schema"),
        };
        if m.contains_key("$schema") {
            self.breach(at, pointer, "$schema");
        }
        if m.contains_key("const") {
            self.breach(at, pointer, "const (use a one-element enum)");
        }
        if let Some(r) = m.get("$ref") {
            match r.as_str().and_then(|r| r.strip_prefix('#')) {
                Some("") => self.breach(at, pointer, "$ref to the whole document"),
                Some(p) if doc.pointer(p).is_some() => {}
                _ => self.breach(
                    at,
                    pointer,
                    &format!("$ref {} does not resolve in this document", r.as_str().unwrap_or("?")),
                ),
            }
        }
        match m.get("type") {
            Some(Value::Array(_)) => self.breach(at, pointer, "type array"),
            Some(Value::String(_)) | None => {}
            Some(_) => self.breach(at, pointer, "type is not a string"),
        }
        if let Some(f) = m.get("format").and_then(Value::as_str)
            && !STANDARD_FORMATS.contains(&f)
        {
            self.breach(at, pointer, &format!("non-standard format {f}"));
        }
        if m.get("type") == Some(&Value::from("integer")) {
            for bound in ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"] {
                if m.get(bound).and_then(Value::as_f64).is_some_and(|b| b.abs() > MAX_SAFE) {
                    self.breach(at, pointer, &format!("{bound} beyond ±(2^53-1)"));
                }
            }
        }
        for (k, v) in m {
            let here = format!("{pointer}/{}", k.replace('~', "~0").replace('/', "~1"));
            let key = k.as_str();
            if matches!(key, "additionalProperties" | "unevaluatedProperties") && v == &Value::Bool(false) {
                continue;
            }
            if ONE.contains(&key) {
                self.walk(at, doc, v, &here);
            } else if MAP.contains(&key) {
                match v.as_object() {
                    Some(children) => {
                        for (name, child) in children {
                            let p = format!("{here}/{}", name.replace('~', "~0").replace('/', "~1"));
                            self.walk(at, doc, child, &p);
                        }
                    }
                    None => self.breach(at, &here, "not a map of schemas"),
                }
            } else if LIST.contains(&key) {
                match v.as_array() {
                    Some(items) => {
                        for (i, child) in items.iter().enumerate() {
                            self.walk(at, doc, child, &format!("{here}/{i}"));
                        }
                    }
                    None => self.breach(at, &here, "not an array of schemas"),
                }
            }
        }
    }

    /// `tools/list` entries (or `mcp-tools.json` templates).
    fn tools(&mut self, source: &str, tools: &[Value]) {
        for t in tools {
            let name = t["name"].as_str().unwrap_or("?");
            self.object_schema(&format!("{source}: {name} inputSchema"), &t["inputSchema"]);
            match t.get("outputSchema") {
                Some(out) => self.object_schema(&format!("{source}: {name} outputSchema"), out),
                None => self.breach(&format!("{source}: {name}"), "", "no outputSchema (GB-12.3-4)"),
            }
        }
    }

    /// A `capabilities.list` page: each descriptor's `inputSchema`/`outputSchema`.
    fn capabilities(&mut self, source: &str, page: &Value) {
        for c in page["capabilities"].as_array().into_iter().flatten() {
            let id = c["id"].as_str().unwrap_or("?");
            self.object_schema(&format!("{source}: {id} inputSchema"), &c["inputSchema"]);
            self.object_schema(&format!("{source}: {id} outputSchema"), &c["outputSchema"]);
        }
    }

    /// An OpenRPC document: every component schema and every method's params and result
    /// schemas, references resolving in the whole document; capability schemas are object roots.
    fn openrpc(&mut self, source: &str, doc: &Value) {
        for (name, schema) in doc["components"]["schemas"].as_object().into_iter().flatten() {
            let at = format!("{source}: components/schemas/{name}");
            self.checked += 1;
            if name.ends_with(".input") || name.ends_with(".output") {
                self.object_root(&at, schema);
            }
            self.walk(&at, doc, schema, "");
        }
        for m in doc["methods"].as_array().into_iter().flatten() {
            let method = m["name"].as_str().unwrap_or("?");
            for p in m["params"].as_array().into_iter().flatten() {
                let at = format!("{source}: {method} param {}", p["name"].as_str().unwrap_or("?"));
                self.checked += 1;
                self.walk(&at, doc, &p["schema"], "");
            }
            self.checked += 1;
            self.walk(&format!("{source}: {method} result"), doc, &m["result"]["schema"], "");
        }
    }

    fn assert_clean(&self, at_least: usize) {
        assert!(
            self.breaches.is_empty(),
            "{} schema rule breaches:\n{}",
            self.breaches.len(),
            self.breaches.join("\n")
        );
        assert!(self.checked >= at_least, "only {} schemas checked", self.checked);
    }
}

/// The exported descriptions of `catalog` (what `mcp-tools.json`, `capabilities.json`,
/// `openrpc.json` hold; `capabilities.json` is exactly `capabilities.list` for every scope).
fn check_exports(rules: &mut Rules, app: &str, catalog: &bridge_runtime::Catalog) {
    let files = export::render_all(catalog).expect("render");
    let get = |name: &str| -> Value {
        serde_json::from_str(&files.iter().find(|(n, _)| *n == name).expect(name).1).expect("json")
    };
    let tools = get(export::MCP_TOOLS_JSON);
    for w in tools["windows"].as_array().into_iter().flatten() {
        rules.tools(&format!("{app} mcp-tools.json {}", w["typeName"]), w["tools"].as_array().unwrap());
    }
    if let Some(a) = tools["app"]["tools"].as_array() {
        rules.tools(&format!("{app} mcp-tools.json app"), a);
    }
    rules.capabilities(&format!("{app} capabilities.list"), &get(export::CAPABILITIES_JSON));
    rules.openrpc(&format!("{app} openrpc.json"), &get(export::OPENRPC_JSON));
}

/// `tools/list` as an rmcp client sees it, in both eras.
async fn check_tools_list(rules: &mut Rules, app: &str, server: &GuiBridgeServer) {
    for modern in [false, true] {
        let (client_io, server_io) = tokio::io::duplex(1 << 22);
        let server = server.clone();
        tokio::spawn(async move {
            if let Ok(running) = server.serve(server_io).await {
                let _ = running.waiting().await;
            }
        });
        let client = if modern {
            ().serve_with_lifecycle(
                client_io,
                ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] },
            )
            .await
            .expect("discover")
        } else {
            ().serve(client_io).await.expect("initialize")
        };
        let tools = client.list_all_tools().await.expect("tools/list");
        assert!(!tools.is_empty(), "{app}: no tools listed");
        let tools: Vec<Value> = tools.iter().map(|t| serde_json::to_value(t).expect("tool")).collect();
        let era = if modern { "2026-07-28" } else { "2025-11-25" };
        rules.tools(&format!("{app} tools/list {era}"), &tools);
        let _ = client.cancel().await;
    }
}

// Issue #6 (rules), GB-12.3-4, CP-2-13, CP-8-3: the Order Editor's schemas, as served and as
// exported.
#[tokio::test]
async fn order_editor_schemas_obey_the_rules() {
    let bridge = app::build(100).spawn_headless(|ui| app::open_initial(ui, 100));
    let mut rules = Rules::default();
    check_tools_list(&mut rules, "order_editor", &GuiBridgeServer::new(bridge.clone())).await;
    check_exports(&mut rules, "order_editor", &bridge.catalog());
    rules.assert_clean(30);
}

// Issue #6 (rules): the schema zoo — the kinds of types app authors write, and a companion
// capability with recursive params and result — as served in both eras and as exported.
#[tokio::test]
async fn schema_zoo_schemas_obey_the_rules() {
    let server = zoo_app::server().expect("the zoo");
    let mut rules = Rules::default();
    check_tools_list(&mut rules, "schema_zoo", &server).await;
    check_exports(&mut rules, "schema_zoo", &server.bridge().catalog());
    rules.assert_clean(60);
}

// Issue #6 (rules), CP-1-4, CP-2-4, CP-8-2: the desk companion's capabilities, as
// `companion__…` MCP tools in both eras, in `capabilities.list` and in its OpenRPC document.
#[tokio::test]
async fn desk_companion_schemas_obey_the_rules() {
    let bridge = Bridge::builder("desk", "1.0").spawn_headless(|_| {});
    *bridge.catalog_handle().write().unwrap() = caps::catalog().expect("catalog");
    let (presenter, _events) = ScriptedPresenter::new();
    let engine = Engine::builder(bridge.catalog_handle())
        .store(SqliteStore::in_memory().unwrap())
        .presenter(presenter)
        .start()
        .unwrap();
    let server = GuiBridgeServer::new(bridge.clone())
        .with_companion(CompanionTools::new(engine, ClientIdentity::host("mcp", "MCP host")));
    let mut rules = Rules::default();
    check_tools_list(&mut rules, "desk_companion", &server).await;
    check_exports(&mut rules, "desk_companion", &bridge.catalog());
    rules.assert_clean(30);
}

/// Standard-library and serde shapes app authors put in parameters and results.
#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[allow(dead_code)]
struct StdShapes {
    map_u32: std::collections::HashMap<u32, String>,
    btree: std::collections::BTreeMap<String, Vec<Option<f64>>>,
    set: std::collections::HashSet<i16>,
    boxed: Box<str>,
    bytes: Vec<u8>,
    array: [u8; 4],
    unit: (),
    pair: (i8, Option<bool>),
    nested_option: Option<Option<u16>>,
    character: char,
    duration: std::time::Duration,
    path: std::path::PathBuf,
    non_zero: std::num::NonZeroU32,
    big: u128,
    small: i128,
    isize: isize,
    json_map: serde_json::Map<String, Value>,
    numbers: Vec<serde_json::Number>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    skipped: Option<Vec<String>>,
}

// Issue #6 (rules): the pipeline's output for std and serde shapes, as an input object, as an
// output inside the ToolResult envelope, and as a companion capability's params and result.
#[test]
fn std_shapes_obey_the_rules() {
    use bridge_runtime::__internals::schema;
    let mut rules = Rules::default();
    rules.object_schema("StdShapes input", &Value::Object(schema::object_schema_for::<StdShapes>()));
    let envelope = schema::tool_result_envelope(Some(schema::output_schema_for::<StdShapes>()));
    rules.object_schema("StdShapes output", &Value::Object(envelope));
    let envelope = schema::tool_result_envelope(Some(schema::output_schema_for::<Option<Vec<StdShapes>>>()));
    rules.object_schema("Option<Vec<StdShapes>> output", &Value::Object(envelope));
    rules.assert_clean(3);
}

// The walker itself: each rule is caught, with its pointer.
#[test]
fn the_walker_catches_every_rule() {
    let bad = serde_json::json!({
        "type": "object",
        "$schema": "x",
        "anyOf": [{}],
        "properties": {
            "a": true,
            "b": {"type": ["string", "null"]},
            "c": {"const": 1},
            "d": {"type": "integer", "format": "uint64", "maximum": 18_446_744_073_709_551_615_u64},
            "e": {"$ref": "#/$defs/Missing"},
            "f": {"$ref": "#"},
            "g": {"type": "object", "additionalProperties": false, "properties": {}},
        }
    });
    let mut rules = Rules::default();
    rules.object_schema("t", &bad);
    let got = rules.breaches.join("\n");
    for expected in [
        "t: : root has anyOf",
        "t: : $schema",
        "t: /properties/a: boolean schema",
        "t: /properties/b: type array",
        "t: /properties/c: const",
        "t: /properties/d: non-standard format uint64",
        "t: /properties/d: maximum beyond",
        "t: /properties/e: $ref #/$defs/Missing does not resolve",
        "t: /properties/f: $ref to the whole document",
    ] {
        assert!(got.contains(expected), "missing {expected:?} in\n{got}");
    }
    assert!(!got.contains("/properties/g"), "{got}");
}

/// Not an action's own name check: names are `^[A-Za-z0-9_-]{1,64}$` even with the longest
/// possible window handle (GB-5.2-2).
fn name_ok(name: &str) -> bool {
    (1..=64).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

// GB-5.2-2, GB-5.2-3: every tool name is name-safe and at most 64 characters, even with the
// longest possible window handle, and every action has a description.
#[test]
fn every_name_is_client_safe() {
    let (bridge, _owner) = app::build(100).build();
    let catalog = bridge.catalog();
    let longest_handle = "w-".to_owned() + &"9".repeat(12);
    let mut problems = Vec::new();
    let mut names = Vec::new();
    for w in catalog.windows() {
        for a in &w.actions {
            names.push((format!("{longest_handle}__{}", a.name), a.description.clone()));
        }
    }
    for a in &catalog.app().expect("app actions").actions {
        names.push((format!("app__{}", a.name), a.description.clone()));
    }
    assert!(names.len() >= 12, "{}", names.len());
    for (name, description) in names {
        if !name_ok(&name) {
            problems.push(format!("{name}: not ^[A-Za-z0-9_-]{{1,64}}$"));
        }
        if description.trim().is_empty() {
            problems.push(format!("{name}: empty description"));
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

// GB-5.5-1, GB-5.6-1, GB-9-3: the registry holds what the annotations say.
#[test]
fn example_registry_content() {
    let (bridge, _owner) = app::build(100).build();
    let catalog = bridge.catalog();
    let names: Vec<(&str, Vec<&str>)> = catalog
        .windows()
        .iter()
        .map(|w| (w.meta.title.as_str(), w.actions.iter().map(|a| a.name.as_str()).collect()))
        .collect();
    assert_eq!(
        names,
        vec![
            ("Order Editor", vec!["edit_field", "set_payment_password", "submit", "close", "focus"]),
            ("Confirm order", vec!["confirm", "cancel"]),
            ("Report Details", vec!["load_rows", "close", "focus"]),
            ("Session locked", vec!["unlock"]),
        ]
    );
    let app: Vec<&str> = catalog.app().unwrap().actions.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(app, ["new_report", "lock"]);
    let editor = &catalog.windows()[0];
    let submit = editor.action("submit").unwrap();
    assert!(submit.hints.destructive && !submit.hints.read_only);
    assert!(submit.takes_expected_version());
    let edit = editor.action("edit_field").unwrap();
    let props = edit.input_schema["properties"].as_object().unwrap();
    assert_eq!(props["field"]["type"], "string");
    assert!(props["field"]["description"].as_str().unwrap().contains("label or key"));
    assert_eq!(edit.input_schema["required"], serde_json::json!(["field", "value"]));
    assert!(edit.description.starts_with("Edit one field of the order form"));
    let load = catalog.windows()[2].action("load_rows").unwrap();
    assert!(load.hints.read_only && !load.takes_expected_version());
    let result = &load.output_schema["properties"]["result"];
    assert_eq!(result["properties"]["total"]["type"], "integer");
    assert!(catalog.app().unwrap().actions.iter().all(|a| !a.takes_expected_version()), "OQ-GB-12");
    let doc: Value = serde_json::from_str(&catalog.to_json()).unwrap();
    assert_eq!(doc["windows"][0]["blocks"][0], serde_json::json!({"id": "order", "kind": "fields", "label": "Order"}));
    let yaml = catalog.to_yaml().unwrap();
    assert!(yaml.contains("edit_field"));
}
