//! Issue #2 §3: schemas that real clients accept, checked over the whole example catalog, and the
//! example's registry content itself.

#[path = "../examples/order_editor/app.rs"]
#[allow(dead_code)]
mod app;

use serde_json::Value;

const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

fn walk(v: &Value, path: &str, problems: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            if m.contains_key("$schema") {
                problems.push(format!("{path}: has $schema"));
            }
            if let Some(f) = m.get("format").and_then(Value::as_str)
                && !STANDARD_FORMATS.contains(&f)
            {
                problems.push(format!("{path}: non-standard format {f}"));
            }
            for (k, child) in m {
                walk(child, &format!("{path}/{k}"), problems);
            }
        }
        Value::Array(a) => a.iter().enumerate().for_each(|(i, c)| walk(c, &format!("{path}/{i}"), problems)),
        _ => {}
    }
}

fn check_root(schema: &serde_json::Map<String, Value>, what: &str, problems: &mut Vec<String>) {
    if schema.get("type") != Some(&Value::from("object")) {
        problems.push(format!("{what}: root type is not object"));
    }
    if !schema.get("properties").is_some_and(Value::is_object) {
        problems.push(format!("{what}: root has no properties object"));
    }
    walk(&Value::Object(schema.clone()), what, problems);
}

fn name_ok(name: &str) -> bool {
    (1..=64).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

// GB-5.2-2, GB-12.3-4, issue #2 §3: every inputSchema/outputSchema root is
// {"type":"object","properties":{…}}, no $schema, no non-standard format; every tool name is
// name-safe and at most 64 characters, even with the longest possible window handle.
#[test]
fn every_schema_and_name_is_client_safe() {
    let (bridge, _owner) = app::build(100).build();
    let catalog = bridge.catalog();
    let mut problems = Vec::new();
    let longest_handle = "w-".to_owned() + &"9".repeat(12);
    let mut actions: Vec<(String, &bridge_runtime::ActionSpec)> = Vec::new();
    for w in catalog.windows() {
        for a in &w.actions {
            actions.push((format!("{longest_handle}__{}", a.name), a.as_ref()));
        }
    }
    for a in &catalog.app().expect("app actions").actions {
        actions.push((format!("app__{}", a.name), a.as_ref()));
    }
    assert!(actions.len() >= 12, "{}", actions.len());
    for (name, a) in actions {
        if !name_ok(&name) {
            problems.push(format!("{name}: not ^[A-Za-z0-9_-]{{1,64}}$"));
        }
        check_root(&a.input_schema, &format!("{name} inputSchema"), &mut problems);
        check_root(&a.output_schema, &format!("{name} outputSchema"), &mut problems);
        if a.description.trim().is_empty() {
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
            ("Order Editor", vec!["edit_field", "submit", "close", "focus"]),
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
