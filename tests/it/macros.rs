//! The macros' contract, seen from an app author's side: what `#[bridge_window]` renders, what
//! the derives produce, what `#[bridge_actions]` puts in the catalog and how calls reach the
//! methods. Outputs are compared as whole JSON values.
//!
//! The file also is the lint test for generated code: it uses every macro feature and compiles
//! under the lints below (`clippy::all` and `clippy::pedantic` apply under `cargo clippy --tests`).
#![deny(warnings, unused_qualifications, unused_results, missing_debug_implementations)]
#![deny(clippy::all, clippy::pedantic)]
#![allow(dead_code)]

use bridge_runtime::prelude::*;
use bridge_runtime::{Catalog, ToolError};
use serde_json::{Map, Value, json};
use std::borrow::Cow;

const PASSWORD: &str = "hunter2-plaintext";

/// The form: a sensitive password, a renamed label, a skipped field.
#[derive(BridgeFields, Default, Debug)]
struct Login {
    user: String,
    #[bridge(sensitive)]
    password: String,
    #[bridge(label = "Remember me")]
    remember: bool,
    #[bridge(skip)]
    attempts: u32,
}

#[derive(BridgeRow, Clone, Debug, Serialize, Deserialize, JsonSchema)]
struct Line {
    #[bridge(label = "Product")]
    name: String,
    quantity: u32,
    #[bridge(skip)]
    #[serde(default)]
    sku: String,
}

#[derive(Serialize, Debug)]
struct Chart {
    points: Vec<u32>,
    token: Secret<String>,
}

/// A window with one block of every kind.
#[bridge_window(
    title = "Everything",
    summary = "Order {order_no}: {form.user}, {count:>2} lines, total {total:.2} {{USD}}"
)]
#[derive(Debug)]
struct Everything {
    #[bridge(text)]
    intro: String,
    #[bridge(fields, id = "login", label = "Sign in")]
    form: Login,
    #[bridge(fields, sensitive)]
    vault: Login,
    #[bridge(table, max_rows = 2)]
    lines: Vec<Line>,
    #[bridge(list, ordered)]
    steps: Vec<String>,
    #[bridge(list, max_rows = 1, label = "Tags")]
    report_tags: Vec<u32>,
    #[bridge(notice)]
    status: Vec<Notice>,
    #[bridge(notice, severity = "warn")]
    warning: Option<String>,
    #[bridge(media)]
    shot: Option<Media>,
    #[bridge(custom)]
    chart: Chart,
    #[bridge(skip)]
    order_no: u32,
    #[bridge(skip)]
    count: usize,
    #[bridge(skip)]
    total: f64,
}

impl Everything {
    fn sample() -> Self {
        let login = || Login { user: "ann".into(), password: PASSWORD.into(), remember: true, attempts: 3 };
        let line = |name: &str, quantity| Line { name: name.into(), quantity, sku: "x".into() };
        Everything {
            intro: "Hello".into(),
            form: login(),
            vault: login(),
            lines: vec![line("Lamp", 2), line("Desk", 1), line("Pen", 9)],
            steps: vec!["one".into(), "two".into()],
            report_tags: vec![7, 8],
            status: vec![Notice::error("Recipient cannot be empty"), Notice::info("Draft")],
            warning: Some("Low stock".into()),
            shot: Some(Media { mime_type: "image/png".into(), url: "https://x.test/a.png".into(), alt: None }),
            chart: Chart { points: vec![1, 2], token: Secret::new(PASSWORD.into()) },
            order_no: 42,
            count: 3,
            total: 12.5,
        }
    }

    fn can_add(&self) -> bool {
        self.lines.len() < 5
    }
}

/// New line arguments (`#[bridge(args)]`).
#[derive(Deserialize, JsonSchema, BridgeArgs, Debug)]
#[serde(deny_unknown_fields)]
struct NewLine {
    /// Product name.
    name: String,
    /// How many.
    quantity: u32,
}

#[derive(Serialize, JsonSchema, Debug)]
struct Totals {
    lines: usize,
}

#[bridge_actions]
impl Everything {
    /// Replace the intro text.
    #[bridge_action(title = "Set intro", idempotent)]
    fn set_intro(
        &mut self,
        #[bridge(description = "The new text")] text: String,
        cx: &mut ActionContext,
        /// Whether to shout.
        loud: Option<bool>,
    ) {
        self.intro = if loud == Some(true) { text.to_uppercase() } else { text };
        cx.set_message("Intro replaced");
    }

    /// How many lines the order has.
    #[bridge_action(read_only)]
    fn count_lines(&self) -> usize {
        self.lines.len()
    }

    /// Add a product line.
    #[bridge_action(name = "add-line", destructive, available = can_add)]
    fn add_line(&mut self, #[bridge(args)] line: NewLine) -> Result<Totals, ActionError> {
        if line.quantity == 0 {
            return Err(ActionError::field("quantity", "Quantity must be at least 1"));
        }
        self.lines.push(Line { name: line.name, quantity: line.quantity, sku: String::new() });
        Ok(Totals { lines: self.lines.len() })
    }

    #[bridge_action(open_world, description = "  Set or clear the warning.  ")]
    fn warn(&mut self, text: Option<String>, r#type: u8) -> Result<(), ActionError> {
        if r#type > 3 {
            return Err(ActionError::not_available("type must be at most 3"));
        }
        self.warning = text;
        Ok(())
    }

    /// A helper that is not an action.
    fn helper(&self) -> usize {
        self.count
    }
}

/// App-level state.
#[derive(Debug, Default)]
struct App {
    opened: u32,
}

#[bridge_actions]
impl App {
    /// Open a new Everything window.
    ///
    /// Returns its id.
    #[bridge_action]
    fn new_window(&mut self, cx: &mut ActionContext<'_>) -> String {
        self.opened += 1;
        cx.open(Everything::sample())
    }
}

/// An action set with no actions.
#[derive(Debug)]
struct Quiet;

#[bridge_actions]
impl Quiet {}

/// A window whose title and summary are methods.
#[bridge_window(title = title, summary = summary)]
#[derive(Debug)]
struct MethodTitled {
    #[bridge(text, id = "body")]
    text: String,
}

impl MethodTitled {
    fn title(&self) -> String {
        format!("Note: {}", self.text)
    }
    fn summary(&self) -> Option<&str> {
        (!self.text.is_empty()).then_some("A note")
    }
}

#[bridge_actions]
impl MethodTitled {}

fn render_json(w: &impl BridgeWindow) -> Value {
    let r = w.render();
    json!({"title": r.title, "summary": r.summary, "blocks": r.blocks})
}

fn args(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

fn spec_json<A: BridgeActions>(window_level: bool) -> Value {
    serde_json::to_value(A::action_specs_for(window_level)).unwrap_or_default()
}

// GB-4.4-5..13, GB-4.2-9: every block kind renders as the spec shapes it, in declaration order.
#[test]
fn renders_every_block_kind() {
    let rendered = render_json(&Everything::sample());
    let redacted = json!({"value": "••••••", "sensitive": true});
    assert_eq!(
        rendered,
        json!({
            "title": "Everything",
            "summary": "Order 42: ann,  3 lines, total 12.50 {USD}",
            "blocks": [
                {"type": "text", "id": "intro", "text": "Hello"},
                {"type": "fields", "id": "login", "items": [
                    {"label": "User", "value": "ann"},
                    {"label": "Password", "value": "••••••", "sensitive": true},
                    {"label": "Remember me", "value": true},
                ]},
                {"type": "fields", "id": "vault", "items": [
                    {"label": "User", "value": redacted["value"], "sensitive": true},
                    {"label": "Password", "value": redacted["value"], "sensitive": true},
                    {"label": "Remember me", "value": redacted["value"], "sensitive": true},
                ]},
                {"type": "table", "id": "lines", "columns": ["Product", "Quantity"],
                 "rows": [["Lamp", 2], ["Desk", 1]], "offset": 0, "total": 3},
                {"type": "list", "id": "steps", "items": ["one", "two"], "ordered": true},
                {"type": "list", "id": "report-tags", "items": [7], "offset": 0, "total": 2},
                {"type": "notice", "id": "status", "severity": "error", "text": "Recipient cannot be empty"},
                {"type": "notice", "id": "status-2", "severity": "info", "text": "Draft"},
                {"type": "notice", "id": "warning", "severity": "warn", "text": "Low stock"},
                {"type": "media", "id": "shot", "mimeType": "image/png", "url": "https://x.test/a.png"},
                {"type": "custom", "id": "chart", "payload": {"points": [1, 2], "token": "••••••"}},
            ]
        })
    );
}

// GB-4.4-9/10/11: absent optional values render no block; a short table has no offset/total.
#[test]
fn empty_values_render_no_blocks() {
    let mut w = Everything::sample();
    w.lines.truncate(1);
    w.status.clear();
    w.warning = None;
    w.shot = None;
    let blocks = w.render().blocks;
    let ids: Vec<_> = blocks.iter().filter_map(Block::id).collect();
    assert_eq!(ids, ["intro", "login", "vault", "lines", "steps", "report-tags", "chart"]);
    assert_eq!(
        serde_json::to_value(&blocks[3]).unwrap_or_default(),
        json!({"type": "table", "id": "lines", "columns": ["Product", "Quantity"], "rows": [["Lamp", 2]]})
    );
}

// GB-4.5-2: the plaintext of a sensitive value appears nowhere in what the window renders.
#[test]
fn sensitive_values_never_render() {
    let w = Everything::sample();
    let text = serde_json::to_string(&render_json(&w)).unwrap_or_default();
    assert!(!text.contains(PASSWORD), "plaintext leaked: {text}");
    assert!(text.contains("••••••"));
}

#[test]
fn window_meta_lists_blocks() {
    let meta = serde_json::to_value(Everything::window_meta()).unwrap_or_default();
    assert_eq!(
        meta,
        json!({
            "typeName": "Everything",
            "title": "Everything",
            "blocks": [
                {"id": "intro", "kind": "text", "label": "Intro"},
                {"id": "login", "kind": "fields", "label": "Sign in"},
                {"id": "vault", "kind": "fields", "label": "Vault", "sensitive": true},
                {"id": "lines", "kind": "table", "label": "Lines", "maxRows": 2},
                {"id": "steps", "kind": "list", "label": "Steps"},
                {"id": "report-tags", "kind": "list", "label": "Tags", "maxRows": 1},
                {"id": "status", "kind": "notice", "label": "Status"},
                {"id": "warning", "kind": "notice", "label": "Warning"},
                {"id": "shot", "kind": "media", "label": "Shot"},
                {"id": "chart", "kind": "custom", "label": "Chart"},
            ]
        })
    );
}

#[test]
fn title_and_summary_methods() {
    let w = MethodTitled { text: "hi".into() };
    assert_eq!(
        render_json(&w),
        json!({"title": "Note: hi", "summary": "A note", "blocks": [{"type": "text", "id": "body", "text": "hi"}]})
    );
    assert_eq!(MethodTitled::window_meta().title, "Method titled");
}

#[test]
fn field_set_derive() {
    let specs = serde_json::to_value(Login::field_specs()).unwrap_or_default();
    assert_eq!(
        specs,
        json!([
            {"key": "user", "label": "User", "sensitive": false},
            {"key": "password", "label": "Password", "sensitive": true},
            {"key": "remember", "label": "Remember me", "sensitive": false},
        ])
    );
    assert_eq!(Login::SENSITIVE_KEYS, ["password"]);

    let mut login = Login::default();
    assert_eq!(login.set_field("USER", json!("bob")), Ok(()));
    assert_eq!(login.set_field("remember me", json!(true)), Ok(()));
    assert_eq!(login.set_field("password", json!("s3cret")), Ok(()));
    assert_eq!((login.user.as_str(), login.remember, login.password.as_str()), ("bob", true, "s3cret"));

    let err = login.set_field("remember", json!("yes")).err().unwrap_or_default();
    assert!(err.starts_with("invalid value for 'Remember me': invalid type: string"), "{err}");
    // A sensitive field's error does not echo the value.
    let err = login.set_field("password", json!(12345)).err().unwrap_or_default();
    assert_eq!(err, "invalid value for 'Password'");
    let err = login.set_field("attempts", json!(1)).err().unwrap_or_default();
    assert_eq!(err, "unknown field 'attempts'; fields: `User`, `Password`, `Remember me`");
}

#[test]
fn table_row_derive() {
    assert_eq!(Line::columns(), ["Product", "Quantity"]);
    let line = Line { name: "Lamp".into(), quantity: 2, sku: "hidden".into() };
    assert_eq!(line.cells(), [json!("Lamp"), json!(2)]);
}

// GB-5.5-1, GB-5.6-1, OQ-GB-12: the catalog's action specs, exactly.
#[test]
fn window_action_specs() {
    let expected_version = json!({
        "type": "integer",
        "description": "The window version this call is based on"
    });
    // The ToolResult envelope itself is the schema pipeline's (its unit tests pin it down); here
    // only the `result` inside it comes from the annotated method.
    let envelope =
        |result: Option<Value>| Value::Object(bridge_runtime::__internals::schema::tool_result_envelope(result));
    let hints = |read_only, destructive, idempotent, open_world| json!({"readOnly": read_only, "destructive": destructive, "idempotent": idempotent, "openWorld": open_world});
    assert_eq!(
        spec_json::<Everything>(true),
        json!([
            {
                "name": "set_intro",
                "title": "Set intro",
                "description": "Replace the intro text.",
                "hints": hints(false, false, true, false),
                "conditional": false,
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "text": {"type": "string", "description": "The new text"},
                        "loud": {"type": "boolean", "description": "Whether to shout."},
                        "expectedVersion": expected_version,
                    },
                    "required": ["text"],
                    "additionalProperties": false,
                },
                "outputSchema": envelope(None),
            },
            {
                "name": "count_lines",
                "description": "How many lines the order has.",
                "hints": hints(true, false, false, false),
                "conditional": false,
                "inputSchema": {"type": "object", "properties": {}, "additionalProperties": false},
                "outputSchema": envelope(Some(json!({"type": "integer", "minimum": 0}))),
            },
            {
                "name": "add-line",
                "description": "Add a product line.",
                "hints": hints(false, true, false, false),
                "conditional": true,
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "description": "Product name."},
                        "quantity": {"type": "integer", "minimum": 0, "maximum": 4_294_967_295_u64,
                                     "description": "How many."},
                        "expectedVersion": expected_version,
                    },
                    "required": ["name", "quantity"],
                    "additionalProperties": false,
                },
                "outputSchema": envelope(Some(json!({
                    "type": "object",
                    "properties": {"lines": {"type": "integer", "minimum": 0}},
                    "required": ["lines"],
                }))),
            },
            {
                "name": "warn",
                "description": "Set or clear the warning.",
                "hints": hints(false, false, false, true),
                "conditional": false,
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "text": {"type": "string"},
                        "type": {"type": "integer", "minimum": 0, "maximum": 255},
                        "expectedVersion": expected_version,
                    },
                    "required": ["type"],
                    "additionalProperties": false,
                },
                "outputSchema": envelope(None),
            },
        ])
    );
}

#[test]
fn app_action_specs_have_no_expected_version() {
    assert_eq!(
        spec_json::<App>(false),
        json!([{
            "name": "new_window",
            "description": "Open a new Everything window.\n\nReturns its id.",
            "hints": {"readOnly": false, "destructive": false, "idempotent": false, "openWorld": false},
            "conditional": false,
            "inputSchema": {"type": "object", "properties": {}, "additionalProperties": false},
            "outputSchema": Value::Object(bridge_runtime::__internals::schema::tool_result_envelope(Some(
                json!({"type": "string"})
            ))),
        }])
    );
    assert_eq!(spec_json::<Quiet>(true), json!([]));
}

/// Every schema in the catalog: object roots with `properties`, no `$schema`, no
/// non-standard `format` such as `uint32` (issue #2 §3).
#[test]
fn catalog_schemas_are_client_friendly() {
    let mut catalog = Catalog::new();
    let _ = catalog.set_app::<App>();
    let _ = catalog.register::<Everything>();
    let _ = catalog.register::<MethodTitled>();
    let doc: Value = serde_json::from_str(&catalog.to_json()).unwrap_or_default();
    let text = doc.to_string();
    assert!(!text.contains("$schema"), "{text}");
    assert!(!text.contains("\"format\":\"uint"), "{text}");
    assert!(!text.contains("\"format\":\"int"), "{text}");
    assert!(!text.contains("\"format\":\"double\""), "{text}");
    let windows = doc["windows"].as_array().cloned().unwrap_or_default();
    assert_eq!(windows.len(), 2);
    let actions =
        windows.iter().chain([&doc["app"]]).flat_map(|w| w["actions"].as_array().cloned().unwrap_or_default());
    for a in actions {
        assert_eq!(a["inputSchema"]["type"], "object", "{a}");
        assert!(a["inputSchema"]["properties"].is_object(), "{a}");
        assert_eq!(a["outputSchema"]["type"], "object", "{a}");
    }
}

fn ui_with_window() -> (bridge_runtime::UiOwner, String) {
    let (_bridge, mut owner) = Bridge::builder("t", "0").app(App::default()).window::<Everything>().build();
    let id = owner.ui().open(Everything::sample(), OpenOptions::window());
    (owner, id)
}

fn window_state(owner: &mut bridge_runtime::UiOwner, id: &str) -> Value {
    let snapshot = owner.ui().snapshot();
    let w = snapshot.windows.iter().find(|w| w.id == id);
    serde_json::to_value(w).unwrap_or_default()
}

fn tool_error(e: ToolError) -> Value {
    serde_json::to_value(e).unwrap_or_default()
}

#[test]
fn invoke_through_the_ui() {
    let (mut owner, id) = ui_with_window();
    let ui = owner.ui();

    let r = ui.call_tool(&format!("{id}__set_intro"), args(json!({"text": "hey", "loud": true})), false);
    assert_eq!(r.map(|r| serde_json::to_value(r).unwrap_or_default()), Ok(json!({"message": "Intro replaced"})));
    let state = window_state(&mut owner, &id);
    assert_eq!(state["blocks"][0], json!({"type": "text", "id": "intro", "text": "HEY"}));
    assert_eq!(state["version"], 2);

    let ui = owner.ui();
    let r = ui.call_tool(&format!("{id}__count_lines"), Map::new(), false);
    assert_eq!(r.map(|r| serde_json::to_value(r).unwrap_or_default()), Ok(json!({"result": 3})));

    let r = ui.call_tool(&format!("{id}__add-line"), args(json!({"name": "Cup", "quantity": 1})), false);
    assert_eq!(r.map(|r| serde_json::to_value(r).unwrap_or_default()), Ok(json!({"result": {"lines": 4}})));

    // The method's own ActionError becomes a validation_failed tool error.
    let r = ui.call_tool(&format!("{id}__add-line"), args(json!({"name": "Cup", "quantity": 0})), false);
    let e = tool_error(
        r.err().unwrap_or_else(|| ToolError::new(bridge_runtime::ErrorCode::ActionTimeout, "unexpected Ok")),
    );
    assert_eq!(e["code"], "validation_failed");
    assert_eq!(e["fields"], json!([{"field": "quantity", "error": "Quantity must be at least 1"}]));

    // `available = can_add` hides the action once there are 5 lines.
    let r = ui.call_tool(&format!("{id}__add-line"), args(json!({"name": "Mug", "quantity": 1})), false);
    assert!(r.is_ok());
    let r = ui.call_tool(&format!("{id}__add-line"), args(json!({"name": "Mug", "quantity": 1})), false);
    let e = tool_error(
        r.err().unwrap_or_else(|| ToolError::new(bridge_runtime::ErrorCode::ActionTimeout, "unexpected Ok")),
    );
    assert_eq!(e["code"], "action_not_available");

    let r = ui.call_tool(&format!("{id}__warn"), args(json!({"type": 1})), false);
    assert!(r.is_ok());
    assert!(!window_state(&mut owner, &id)["blocks"].to_string().contains("Low stock"));
}

#[test]
fn app_action_opens_a_window() {
    let (mut owner, _) = ui_with_window();
    let r = owner.ui().call_tool("app__new_window", Map::new(), false);
    let r = r.map(|r| serde_json::to_value(r).unwrap_or_default()).unwrap_or_default();
    assert_eq!(r["openedWindowIds"], json!([r["result"]]));
    assert_eq!(owner.ui().snapshot().windows.len(), 2);
}

/// `invoke_action` itself (the schema check of `call_tool` bypassed): every bad parameter is
/// reported by name, unknown ones too, and an unknown action is `not_available`.
#[test]
fn invoke_reports_each_bad_parameter() {
    let (mut owner, id) = ui_with_window();
    let out = owner
        .ui()
        .edit(&id, |w: &mut Everything, cx| w.invoke_action("warn", args(json!({"text": 5, "extra": true})), cx));
    assert_eq!(
        out,
        Some(Err(ActionError::fields(vec![
            FieldError::new("text", "invalid type: integer `5`, expected a string"),
            FieldError::new("type", "Required"),
            FieldError::new("extra", "Unknown parameter"),
        ])))
    );
    let out = owner.ui().edit(&id, |w: &mut Everything, cx| w.invoke_action("nope", Map::new(), cx));
    assert_eq!(out, Some(Err(ActionError::not_available("No action named 'nope'"))));
    let out =
        owner.ui().edit(&id, |w: &mut Everything, cx| w.invoke_action("add-line", args(json!({"name": "Cup"})), cx));
    assert_eq!(out, Some(Err(ActionError::fields(vec![FieldError::new("quantity", "missing field `quantity`")]))));
    let out = owner.ui().edit(&id, |w: &mut Everything, cx| w.invoke_action("count_lines", Map::new(), cx));
    assert_eq!(out, Some(Ok(Some(json!(3)))));
    assert!(owner.ui().edit(&id, |w: &mut Everything, _| w.action_available("count_lines")).unwrap_or(false));
}

/// Parameter attributes, as in companion mode: `#[schemars(…)]` constrains the property,
/// `#[serde(rename = "…")]` names it (schema and reading), `#[serde(default)]` makes it optional.
#[bridge_window(title = "Profile")]
#[derive(Debug, Default)]
struct Profile {
    #[bridge(text)]
    name: String,
    #[bridge(skip)]
    retries: u32,
}

#[bridge_actions]
impl Profile {
    /// Rename the profile.
    #[bridge_action(idempotent)]
    fn rename(
        &mut self,
        /// The new name.
        #[schemars(length(min = 1, max = 20))]
        #[serde(rename = "displayName")]
        display_name: String,
        /// How often to retry.
        #[serde(default)]
        #[schemars(range(max = 5))]
        retries: u32,
    ) {
        self.name = display_name;
        self.retries = retries;
    }
}

#[test]
fn window_parameter_attributes_reach_the_schema_and_the_reader() {
    let specs = spec_json::<Profile>(true);
    let schema = &specs[0]["inputSchema"];
    assert_eq!(
        schema["properties"]["displayName"],
        json!({"type": "string", "minLength": 1, "maxLength": 20, "description": "The new name."})
    );
    assert_eq!(schema["properties"]["retries"]["type"], "integer", "{schema}");
    assert_eq!(schema["properties"]["retries"]["maximum"], 5);
    assert_eq!(schema["properties"]["retries"]["description"], "How often to retry.");
    assert!(schema["properties"].get("display_name").is_none(), "{schema}");
    assert_eq!(schema["required"], json!(["displayName"]));

    let (_bridge, mut owner) = Bridge::builder("t", "0").window::<Profile>().build();
    let id = owner.ui().open(Profile::default(), OpenOptions::window());
    let call = |owner: &mut bridge_runtime::UiOwner, a: Value| {
        owner.ui().call_tool(&format!("{id}__rename"), args(a), false).map_err(tool_error)
    };
    // `retries` may be left out (`#[serde(default)]`): it reads as 0.
    assert!(call(&mut owner, json!({"displayName": "Ann"})).is_ok());
    assert_eq!(owner.ui().edit(&id, |w: &mut Profile, _| (w.name.clone(), w.retries)), Some(("Ann".into(), 0)));
    assert!(call(&mut owner, json!({"displayName": "Bo", "retries": 2})).is_ok());
    assert_eq!(owner.ui().edit(&id, |w: &mut Profile, _| (w.name.clone(), w.retries)), Some(("Bo".into(), 2)));
    // The Rust name is not a property, and the schema's bounds are enforced.
    for bad in [json!({"display_name": "Cy"}), json!({"displayName": ""}), json!({"displayName": "x", "retries": 6})] {
        let e = call(&mut owner, bad.clone()).err().unwrap_or_default();
        assert_eq!(e["code"], "validation_failed", "{bad}: {e}");
    }
    // `invoke_action` reads the same JSON name.
    let out =
        owner.ui().edit(&id, |w: &mut Profile, cx| w.invoke_action("rename", args(json!({"displayName": "Di"})), cx));
    assert_eq!(out, Some(Ok(None)));
}

/// A generic window type: each instantiation is its own window type in the catalog. No bounds
/// are written: the macros infer what the blocks and actions need of `T` (`Serialize` for the
/// `custom` block, `DeserializeOwned + JsonSchema` for the parameters, `Send + 'static`).
mod editors {
    use bridge_runtime::prelude::*;

    #[bridge_window(title = "Editor")]
    #[derive(Debug, Default)]
    pub struct Editor<T> {
        #[bridge(custom)]
        pub doc: T,
        #[bridge(skip)]
        pub edits: u32,
    }

    /// The whole document, as the argument object (a generic `BridgeArgs`).
    #[derive(Deserialize, JsonSchema, BridgeArgs, Debug)]
    pub struct Replace<T> {
        pub doc: T,
    }

    #[bridge_actions]
    impl<T> Editor<T> {
        /// Replace the document.
        #[bridge_action(destructive)]
        pub fn replace(&mut self, #[bridge(args)] r: Replace<T>) {
            self.doc = r.doc;
            self.edits += 1;
        }

        /// Set the document (a plain parameter of the impl's type).
        #[bridge_action(idempotent)]
        pub fn set_doc(&mut self, doc: T, #[serde(default)] edits: u32) {
            self.doc = doc;
            self.edits = edits;
        }
    }

    #[derive(Serialize, Deserialize, JsonSchema, Debug, Default, PartialEq)]
    pub struct Note {
        pub text: String,
    }

    #[derive(Serialize, Deserialize, JsonSchema, Debug, Default, PartialEq)]
    pub struct Sketch {
        pub strokes: Vec<u32>,
    }
}

#[test]
fn generic_window_instantiations_are_distinct_window_types() {
    use editors::{Editor, Note, Sketch};
    let mut catalog = Catalog::new();
    let note = catalog.register::<Editor<Note>>();
    let sketch = catalog.register::<Editor<Sketch>>();
    assert_eq!(note.meta.type_name, "Editor<Note>");
    assert_eq!(sketch.meta.type_name, "Editor<Sketch>");
    let names: Vec<&str> = catalog.windows().iter().map(|w| w.meta.type_name.as_str()).collect();
    assert_eq!(names, ["Editor<Note>", "Editor<Sketch>"]);
    // Each instantiation has its own argument schemas.
    let (notes, sketches) = (spec_json::<Editor<Note>>(true), spec_json::<Editor<Sketch>>(true));
    assert_ne!(notes[0]["inputSchema"], sketches[0]["inputSchema"]);
    assert_ne!(notes[1]["inputSchema"]["properties"]["doc"], sketches[1]["inputSchema"]["properties"]["doc"]);
    assert_eq!(notes[1]["inputSchema"]["required"], json!(["doc"]));

    let (_bridge, mut owner) = Bridge::builder("t", "0").window::<Editor<Note>>().window::<Editor<Sketch>>().build();
    let id = owner.ui().open(Editor::<Sketch>::default(), OpenOptions::window());
    let r = owner.ui().call_tool(&format!("{id}__replace"), args(json!({"doc": {"strokes": [1, 2]}})), false);
    assert!(r.is_ok(), "{r:?}");
    let doc = owner.ui().edit(&id, |w: &mut Editor<Sketch>, _| (w.edits, w.doc.strokes.clone()));
    assert_eq!(doc, Some((1, vec![1, 2])));
    let r = owner.ui().call_tool(&format!("{id}__set_doc"), args(json!({"doc": {"strokes": [3]}})), false);
    assert!(r.is_ok(), "{r:?}");
    let doc = owner.ui().edit(&id, |w: &mut Editor<Sketch>, _| (w.edits, w.doc.strokes.clone()));
    assert_eq!(doc, Some((0, vec![3])));
}

/// Lifetimes on the derives: a row may borrow (`'static` data in a window), a `fields` struct
/// may hold a `Cow` (its items are set from JSON, so they cannot be plain references).
#[derive(BridgeFields, Debug)]
struct Labels<'a> {
    title: Cow<'a, str>,
}

#[derive(BridgeRow, Debug)]
struct Entry<'a> {
    name: &'a str,
    size: u32,
}

#[bridge_window(title = "Shelf")]
#[derive(Debug)]
struct Shelf {
    #[bridge(fields)]
    labels: Labels<'static>,
    #[bridge(table)]
    entries: Vec<Entry<'static>>,
}

#[test]
fn derives_with_lifetimes() {
    let mut shelf =
        Shelf { labels: Labels { title: "Books".into() }, entries: vec![Entry { name: "Dune", size: 412 }] };
    assert_eq!(shelf.labels.set_field("title", json!("Novels")), Ok(()));
    assert_eq!(
        render_json(&shelf)["blocks"],
        json!([
            {"type": "fields", "id": "labels", "items": [{"label": "Title", "value": "Novels"}]},
            {"type": "table", "id": "entries", "columns": ["Name", "Size"], "rows": [["Dune", 412]]},
        ])
    );
}

/// The runtime under another path (`crate = …`), as with a renamed dependency.
mod rt {
    pub use ::bridge_runtime::*;
}

mod renamed {
    use crate::macros::rt::prelude::{
        BridgeArgs, BridgeFields, BridgeRow, Deserialize, JsonSchema, bridge_action, bridge_actions, bridge_window,
    };

    #[derive(BridgeFields, Debug)]
    #[bridge(crate = crate::macros::rt)]
    pub struct Pair {
        pub left: u8,
    }

    #[derive(BridgeRow, Debug)]
    #[bridge(crate = crate::macros::rt)]
    pub struct Cell {
        pub v: u8,
    }

    /// A generic window under a renamed runtime.
    #[bridge_window(title = "Generic", summary = "Value {value}", crate = crate::macros::rt)]
    #[derive(Debug)]
    pub struct Generic<T: std::fmt::Display + Send + 'static> {
        #[bridge(text)]
        pub value: T,
        #[bridge(fields)]
        pub pair: Pair,
        #[bridge(table)]
        pub cells: Vec<Cell>,
    }

    #[derive(BridgeArgs, Deserialize, JsonSchema, Debug, Clone, Copy)]
    #[bridge(crate = crate::macros::rt)]
    pub struct Bump {
        pub by: u8,
    }

    #[bridge_actions(crate = crate::macros::rt)]
    impl<T: std::fmt::Display + Send + 'static> Generic<T> {
        /// Add a number to the pair's left value.
        #[bridge_action(read_only)]
        pub fn echo(&self, n: i64) -> i64 {
            n + i64::from(self.pair.left)
        }

        /// Raise the pair's left value.
        #[bridge_action]
        pub fn bump(&mut self, #[bridge(args)] b: Bump) {
            self.pair.left += b.by;
        }
    }
}

#[test]
fn generic_window_with_renamed_crate() {
    use renamed::{Cell, Generic, Pair};
    let w = Generic { value: 7u8, pair: Pair { left: 1 }, cells: vec![Cell { v: 2 }] };
    assert_eq!(
        render_json(&w),
        json!({"title": "Generic", "summary": "Value 7", "blocks": [
            {"type": "text", "id": "value", "text": "7"},
            {"type": "fields", "id": "pair", "items": [{"label": "Left", "value": 1}]},
            {"type": "table", "id": "cells", "columns": ["V"], "rows": [[2]]},
        ]})
    );
    let specs = spec_json::<Generic<u8>>(true);
    assert_eq!(
        specs[0]["inputSchema"]["properties"]["n"],
        // i64's bounds, clamped to what every JSON client reads exactly (issue #6).
        json!({"type": "integer", "minimum": -9_007_199_254_740_991_i64, "maximum": 9_007_199_254_740_991_i64})
    );
    assert!(specs[0]["inputSchema"]["properties"].get("expectedVersion").is_none());
    assert_eq!(specs[1]["inputSchema"]["required"], json!(["by"]));
    assert_eq!(Generic::<u8>::window_meta().type_name, "Generic<u8>");
}

/// A `Secret<…>` field is sensitive without the flag (GB-4.5-2): the item is redacted and says so.
#[derive(BridgeFields)]
struct Credentials {
    user: String,
    api_key: Secret<String>,
}

#[test]
fn secret_fields_are_sensitive_without_the_flag() {
    let specs = serde_json::to_value(Credentials::field_specs()).unwrap_or_default();
    assert_eq!(specs[1], json!({"key": "api_key", "label": "Api key", "sensitive": true}));
    assert_eq!(Credentials::SENSITIVE_KEYS, ["api_key"]);
    let c = Credentials { user: "ada".into(), api_key: Secret::new("sk-123".into()) };
    let items = serde_json::to_value(c.field_items()).unwrap_or_default();
    assert_eq!(items[1], json!({"label": "Api key", "value": "••••••", "sensitive": true}));
    assert!(!items.to_string().contains("sk-123"));
}

/// A window type with its own MCP Apps view (issue #8 item 4).
#[bridge_window(
    title = "Chart",
    view(file = "tests/it/views/chart.html", resource_domains = ["https://cdn.example.com"], connect_domains = ["https://api.example.com:8443"])
)]
struct ChartWindow {
    #[bridge(text)]
    caption: String,
}

#[bridge_actions]
impl ChartWindow {}

/// The short form: only a file, every CSP list empty.
#[bridge_window(title = "Plain chart", view = "tests/it/views/chart.html")]
struct PlainChart {
    #[bridge(text)]
    caption: String,
}

#[bridge_actions]
impl PlainChart {}

// Issue #8 item 4, MA-6-7, MA-9-2, MA-9-14: `view(…)` embeds the file and keeps the CSP lists
// apart; a window without `view` has none (the built-in view shows it).
#[test]
fn window_view_attribute() {
    let view = ChartWindow::window_view().expect("a view");
    assert_eq!(view.html, include_str!("views/chart.html"));
    assert_eq!(view.file.as_deref(), Some("tests/it/views/chart.html"));
    assert_eq!(view.csp.resource_domains, ["https://cdn.example.com"]);
    assert_eq!(view.csp.connect_domains, ["https://api.example.com:8443"]);
    assert!(view.csp.frame_domains.is_empty() && view.csp.base_uri_domains.is_empty());
    let plain = PlainChart::window_view().expect("a view");
    assert_eq!(plain.csp, bridge_runtime::catalog::ViewCsp::default());
    assert!(Everything::window_view().is_none());
    let _ = (ChartWindow { caption: String::new() }.caption, PlainChart { caption: String::new() }.caption);
}
