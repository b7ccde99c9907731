//! The pipeline's rules on the kinds of types app authors write.

use super::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

#[derive(Serialize, Deserialize, JsonSchema)]
struct TreeNode {
    name: String,
    children: Vec<TreeNode>,
}
#[derive(Serialize, Deserialize, JsonSchema)]
struct Forest {
    trees: Vec<TreeNode>,
    note: Option<String>,
}
/// A color.
#[derive(Serialize, Deserialize, JsonSchema)]
enum Color {
    /// Red one
    Red,
    /// Green one
    Green,
}
#[derive(Serialize, Deserialize, JsonSchema)]
enum Plain {
    A,
    B,
}
#[derive(Serialize, Deserialize, JsonSchema)]
enum Ext {
    Circle { r: f64 },
    Square(f32),
    Nothing,
}
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind")]
enum Internal {
    Circle { r: f64 },
    Nothing,
}
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
enum Untagged {
    N(u32),
    S(String),
    O { x: i64 },
}
#[derive(Serialize, Deserialize, JsonSchema)]
struct Tuple(u8, String);
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Flat {
    first_name: String,
    #[serde(flatten)]
    extra: Inner,
    #[serde(default)]
    count: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    maybe: Option<i64>,
}
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Inner {
    inner_x: usize,
    #[serde(default)]
    v: Vec<Option<u32>>,
}
#[derive(Serialize, Deserialize, JsonSchema)]
struct Misc {
    value: serde_json::Value,
    map: HashMap<String, Plain>,
    f: f32,
    i: i64,
    c: Color,
    e: Ext,
    o: Option<Color>,
    t: Tuple,
    u: Untagged,
    n: Internal,
}
#[derive(Serialize, Deserialize, JsonSchema)]
struct FlatEnum {
    a: u8,
    #[serde(flatten)]
    e: Internal,
}
#[derive(Serialize, Deserialize, JsonSchema)]
struct WithTree {
    root: TreeNode,
    parent: Option<Box<WithTree>>,
}

fn refs(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    visit_refs(v, &mut |r| out.push(r.to_owned()));
    out
}

fn resolves(doc: &Value) {
    for r in refs(doc) {
        let pointer = r.strip_prefix('#').expect("local reference");
        assert!(!pointer.is_empty(), "a reference to the whole document in {doc}");
        assert!(doc.pointer(pointer).is_some(), "{r} dangles in {doc}");
    }
}

fn valid(schema: &Value, instance: Value) -> bool {
    let mut instance = instance;
    normalize_arguments(schema, &mut instance);
    validator(schema).expect("compiles").is_valid(&instance)
}

#[test]
fn a_recursive_root_refers_to_its_own_definition_not_to_the_document() {
    for doc in [input_schema_for::<TreeNode>(), output_schema_for::<TreeNode>()] {
        assert_eq!(doc["type"], "object");
        assert_eq!(doc["properties"]["children"]["items"], json!({"$ref": "#/$defs/TreeNode"}));
        resolves(&doc);
    }
    // Nested in the envelope, the reference still means TreeNode, not the envelope.
    let env = Value::Object(tool_result_envelope(Some(output_schema_for::<TreeNode>())));
    resolves(&env);
    assert_eq!(env["properties"]["result"]["properties"]["children"]["items"]["$ref"], "#/$defs/TreeNode");
    assert_eq!(env["$defs"]["TreeNode"]["required"], json!(["name", "children"]));
    let tree = json!({"result": {"name": "a", "children": [{"name": "b", "children": []}]}});
    assert!(valid(&env, tree));
    let wrong = json!({"result": {"name": "a", "children": [{"result": {}}]}});
    assert!(!valid(&env, wrong), "the wrapper's shape must not validate as a tree node");
}

#[test]
fn definitions_of_a_nested_result_are_hoisted_to_the_envelope_root() {
    let env = Value::Object(tool_result_envelope(Some(output_schema_for::<Forest>())));
    assert!(env["properties"]["result"].get("$defs").is_none());
    assert_eq!(env["properties"]["result"]["properties"]["trees"]["items"]["$ref"], "#/$defs/TreeNode");
    resolves(&env);
    assert!(valid(&env, json!({"result": {"trees": [{"name": "x", "children": []}], "note": null}})));
}

#[test]
fn non_recursive_definitions_are_inlined() {
    let doc = input_schema_for::<Misc>();
    assert!(doc.get("$defs").is_none(), "{doc}");
    assert!(refs(&doc).is_empty());
}

#[test]
fn value_is_an_empty_schema_not_true() {
    let doc = input_schema_for::<Misc>();
    assert_eq!(doc["properties"]["value"], json!({}));
}

#[test]
fn option_is_not_required_on_input_and_a_nested_any_of_on_output() {
    let input = input_schema_for::<Forest>();
    assert_eq!(input["properties"]["note"], json!({"type": "string"}));
    assert_eq!(input["required"], json!(["trees"]));
    let output = output_schema_for::<Forest>();
    assert_eq!(output["properties"]["note"], json!({"anyOf": [{"type": "string"}, {"type": "null"}]}));
    // Inside arrays null stays admitted, as an alternative.
    let flat = input_schema_for::<Flat>();
    assert_eq!(flat["properties"]["v"]["items"]["anyOf"][1], json!({"type": "null"}));
}

#[test]
fn documented_unit_enums_become_a_string_enum_with_the_docs_in_the_description() {
    let doc = input_schema_for::<Color>();
    assert_eq!(doc["type"], "string");
    assert_eq!(doc["enum"], json!(["Red", "Green"]));
    assert_eq!(doc["description"], "A color.\n- `Red`: Red one\n- `Green`: Green one");
    assert!(doc.get("anyOf").is_none() && doc.get("oneOf").is_none());
    assert_eq!(input_schema_for::<Plain>(), json!({"type": "string", "enum": ["A", "B"]}));
}

#[test]
fn one_of_becomes_any_of_and_const_a_one_element_enum() {
    let doc = input_schema_for::<Internal>();
    let branches = doc["anyOf"].as_array().expect("anyOf");
    assert_eq!(branches[0]["properties"]["kind"], json!({"type": "string", "enum": ["Circle"]}));
    let text = doc.to_string();
    assert!(!text.contains("\"oneOf\"") && !text.contains("\"const\""), "{text}");
    // An untagged value serde accepts under two variants is accepted (anyOf, not oneOf).
    let doc = input_schema_for::<Misc>();
    let u = &doc["properties"]["u"];
    assert!(jsonschema::is_valid(u, &json!(5)));
}

#[test]
fn integer_bounds_beyond_2_53_are_clamped_on_input_and_dropped_on_output() {
    let input = input_schema_for::<Misc>();
    assert_eq!(input["properties"]["i"]["minimum"], -MAX_SAFE_INTEGER);
    assert_eq!(input["properties"]["i"]["maximum"], MAX_SAFE_INTEGER);
    let output = output_schema_for::<Misc>();
    assert_eq!(output["properties"]["i"], json!({"type": "integer"}));
    // A float may be written as null (serde_json's NaN and ±inf); an input float may not be sent so.
    assert_eq!(output["properties"]["f"], json!({"anyOf": [{"type": "number"}, {"type": "null"}]}));
    assert_eq!(input["properties"]["t"]["prefixItems"][0], json!({"type": "integer", "minimum": 0, "maximum": 255}));
    assert_eq!(input["properties"]["f"], json!({"type": "number"}));
    let doc = normalize(json!({"type": "integer", "exclusiveMaximum": 1e20, "minimum": 3}), Contract::Input);
    assert_eq!(doc, json!({"type": "integer", "minimum": 3, "maximum": MAX_SAFE_INTEGER}));
}

#[test]
fn a_flattened_enum_is_merged_into_an_object_root() {
    let root = Value::Object(object_schema_for::<FlatEnum>());
    assert_eq!(root["type"], "object");
    assert!(root.get("anyOf").is_none() && root.get("oneOf").is_none() && root.get("allOf").is_none());
    assert_eq!(root["properties"]["kind"], json!({"type": "string", "enum": ["Circle", "Nothing"]}));
    assert_eq!(root["required"], json!(["a", "kind"]));
}

#[test]
fn a_non_object_root_never_survives_as_a_parameter_object() {
    let root = object_root(input_schema_for::<u32>());
    assert_eq!(root, empty_object());
}

// GB-5.2-3: the object root is always `{"type":"object","properties":{…}}`, even for a
// hand-written schema whose `properties` is not an object (input found by the `schema` fuzz
// target; also in fuzz/corpus/schema/).
#[test]
fn a_non_object_properties_never_survives_in_a_parameter_object() {
    let doc = json!({"definitions": {"A": {"type": "string", "format": "int32"}}, "properties": "T"});
    for contract in [Contract::Input, Contract::Output] {
        let root = object_root(normalize(doc.clone(), contract));
        assert_eq!(root["type"], "object");
        assert_eq!(root["properties"], json!({}), "{contract:?}");
        assert_eq!(object_root(Value::Object(root.clone())), root, "idempotent");
    }
    assert_eq!(object_root(json!({"type": "object", "properties": [1]}))["properties"], json!({}));
}

// GB-5.2-3: "a value that is not a schema becomes `{}`", also when it is a definition the
// root or a property refers to (input found by the `schema` fuzz target; also in
// fuzz/corpus/schema/).
#[test]
fn a_definition_that_is_not_a_schema_is_inlined_as_the_empty_schema() {
    let doc = json!({"$defs": {"T": "object"}, "$ref": "#/$defs/T", "properties": {"a": {"$ref": "#/$defs/T"}}});
    for contract in [Contract::Input, Contract::Output] {
        let n = normalize(doc.clone(), contract);
        assert_eq!(n, json!({"properties": {"a": {}}}), "{contract:?}");
        assert_eq!(normalize(n.clone(), contract), n, "idempotent");
    }
    assert_eq!(normalize(json!({"$defs": {"T": 1}, "$ref": "#/$defs/T"}), Contract::Input), json!({}));
}

#[test]
fn explicit_nulls_for_optional_properties_count_as_absent_at_any_depth() {
    let doc = input_schema_for::<Forest>();
    let mut args = json!({"trees": [], "note": null});
    normalize_arguments(&doc, &mut args);
    assert_eq!(args, json!({"trees": []}));
    // Through a recursive definition and an Option<Box<…>>.
    let doc = input_schema_for::<WithTree>();
    let mut args = json!({"root": {"name": "r", "children": []}, "parent": {"root": {"name": "p", "children": []}, "parent": null}});
    normalize_arguments(&doc, &mut args);
    assert_eq!(args["parent"], json!({"root": {"name": "p", "children": []}}));
    // A required property keeps its null (and fails validation); so do nulls in arrays and a Value.
    let mut args = json!({"trees": null});
    normalize_arguments(&input_schema_for::<Forest>(), &mut args);
    assert_eq!(args, json!({"trees": null}));
    assert!(!valid(&input_schema_for::<Forest>(), json!({"trees": null})));
    assert!(valid(&input_schema_for::<Inner>(), json!({"innerX": 1, "v": [1, null]})));
    let doc = input_schema_for::<OptValue>();
    let mut args = json!({"v": null});
    normalize_arguments(&doc, &mut args);
    assert_eq!(args, json!({"v": null}));
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct OptValue {
    v: Option<serde_json::Value>,
}

#[test]
fn what_the_input_schema_accepts_serde_accepts() {
    let doc = input_schema_for::<Misc>();
    let sample = json!({"value": [1, "x"], "map": {"k": "A"}, "f": 1.5, "i": -3, "c": "Red", "e": {"Circle": {"r": 1.0}},
                        "o": null, "t": [7, "x"], "u": 5, "n": {"kind": "Nothing"}});
    assert!(valid(&doc, sample.clone()));
    let mut cleaned = sample;
    normalize_arguments(&doc, &mut cleaned);
    serde_json::from_value::<Misc>(cleaned).expect("serde accepts what validation accepted");
    assert!(!valid(
        &doc,
        json!({"value": 1, "map": {}, "f": 1, "i": 1, "c": "Blue", "e": "Nothing", "t": [1, "x"], "u": 1,
                                "n": {"kind": "Nothing"}})
    ));
}

#[test]
fn definitions_with_one_name_and_different_bodies_are_kept_apart() {
    let a = json!({"$defs": {"N": {"type": "object", "properties": {"a": {"$ref": "#/$defs/N"}}}},
                   "$ref": "#/$defs/N"});
    let b = json!({"$defs": {"N": {"type": "object", "properties": {"b": {"$ref": "#/$defs/N"}}}},
                   "$ref": "#/$defs/N"});
    let mut defs = Definitions::new("#/$defs/");
    let ea = defs.embed(a.clone());
    let eb = defs.embed(b);
    let ea2 = defs.embed(a);
    assert_eq!(ea, json!({"$ref": "#/$defs/N"}));
    assert_eq!(eb, json!({"$ref": "#/$defs/N2"}));
    assert_eq!(ea2, ea, "an identical definition is shared");
    let map = defs.into_map();
    assert_eq!(map.len(), 2);
    assert_eq!(map["N2"]["properties"]["b"]["$ref"], "#/$defs/N2");
}

#[test]
fn normalizing_twice_changes_nothing() {
    let inputs = [input_schema_for::<Misc>(), input_schema_for::<Flat>(), input_schema_for::<WithTree>()];
    for doc in inputs {
        assert_eq!(normalize(doc.clone(), Contract::Input), doc);
    }
    let outputs = [
        output_schema_for::<Misc>(),
        output_schema_for::<Flat>(),
        output_schema_for::<Forest>(),
        Value::Object(tool_result_envelope(Some(output_schema_for::<Forest>()))),
    ];
    for doc in outputs {
        assert_eq!(normalize(doc.clone(), Contract::Output), doc);
    }
}

#[test]
fn hand_written_schemas_go_through_the_same_rules() {
    let doc = normalize(
        json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
               "properties": {"a": true, "b": {"type": ["string", "null"]}, "c": {"const": 3}, "d": {"format": "uint16"}},
               "required": ["b"], "additionalProperties": false}),
        Contract::Input,
    );
    assert_eq!(
        doc,
        json!({"type": "object", "properties": {"a": {}, "b": {"anyOf": [{"type": "string"}, {"type": "null"}]},
               "c": {"enum": [3]}, "d": {"minimum": 0, "maximum": 65535}},
               "required": ["b"], "additionalProperties": false})
    );
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Counts {
    n: u64,
    small: Option<u8>,
    ratio: f64,
    list: Vec<i32>,
}

#[test]
fn integral_floats_become_integers_where_an_integer_is_declared() {
    let doc = input_schema_for::<Counts>();
    let mut args = json!({"n": 3.0, "small": 7.0, "ratio": 2.0, "list": [1.0, -2.0]});
    normalize_arguments(&doc, &mut args);
    assert_eq!(args, json!({"n": 3, "small": 7, "ratio": 2.0, "list": [1, -2]}));
    assert!(args["ratio"].is_f64(), "a float stays a float where any number is declared");
    serde_json::from_value::<Counts>(args).expect("serde takes what validation took");
    let mut fractional = json!({"n": 3.5, "ratio": 1, "list": []});
    normalize_arguments(&doc, &mut fractional);
    assert_eq!(fractional["n"], json!(3.5), "left for validation to reject");
    assert!(!valid(&doc, fractional));
}

#[test]
fn u64_is_bounded_by_what_json_clients_hold_exactly_on_input() {
    let doc = input_schema_for::<Counts>();
    assert_eq!(doc["properties"]["n"], json!({"type": "integer", "minimum": 0, "maximum": MAX_SAFE_INTEGER}));
    assert!(!valid(&doc, json!({"n": 1_u64 << 60, "ratio": 1, "list": []})));
    assert_eq!(output_schema_for::<Counts>()["properties"]["n"], json!({"type": "integer", "minimum": 0}));
}

#[test]
fn nulls_are_dropped_as_deep_as_serde_json_parses() {
    let doc = input_schema_for::<WithTree>();
    let mut args = json!({"root": {"name": "leaf", "children": []}, "parent": null});
    for _ in 0..100 {
        args = json!({"root": {"name": "r", "children": []}, "parent": args});
    }
    normalize_arguments(&doc, &mut args);
    let mut at = &args;
    while let Some(p) = at.get("parent") {
        at = p;
    }
    assert!(at.get("parent").is_none() && at["root"]["name"] == "leaf");
    assert!(valid(&doc, args));
}

#[test]
fn a_value_that_fits_no_variant_is_explained_by_the_closest_one() {
    let doc = input_schema_for::<Misc>();
    let v = validator(&doc).expect("compiles");
    let base =
        json!({"value": 1, "map": {}, "f": 1, "i": 1, "c": "Red", "t": [1, "x"], "u": 1, "n": {"kind": "Nothing"}});
    let problems = |e: Value| {
        let mut args = base.clone();
        args["e"] = e;
        field_errors(&v, &args, usize::MAX)
            .fields
            .into_iter()
            .map(|f| format!("{}: {}", f.field, f.error))
            .collect::<Vec<_>>()
    };
    assert_eq!(problems(json!({"Circle": {"r": "x"}})), ["e: Must be of type number (at /Circle/r)"]);
    assert_eq!(problems(json!("Blue")), [r#"e: Must be one of ["Nothing"]"#]);
    assert_eq!(problems(json!(null)), ["e: Must be of type string or object"]);
    assert_eq!(problems(json!({"Circle": {}})), ["e: Missing required property `r` (at /Circle)"]);
}

/// A documented result, for the envelope's descriptions.
#[derive(Serialize, Deserialize, JsonSchema)]
struct Page {
    /// Index of the first row (GB-9-3).
    offset: u32,
    /// The rows.
    rows: Vec<TreeNode>,
}

// GB-12.3-4, OQ-GB-18, OQ-GB-19: the envelope is the base fields plus `result`, permissive (no
// `required`, unknown keys allowed), so every error object validates against it; no
// description but `result`'s own, and no rule ID in it.
#[test]
fn the_envelope_is_the_base_fields_plus_result_and_every_error_object_fits_it() {
    let base =
        json!({"message": {"type": "string"}, "openedWindowIds": {"type": "array", "items": {"type": "string"}}});
    assert_eq!(Value::Object(tool_result_envelope(None)), json!({"type": "object", "properties": base}));

    let env = Value::Object(tool_result_envelope(Some(output_schema_for::<Page>())));
    assert_eq!(env["properties"]["message"], base["message"]);
    assert_eq!(env["properties"]["openedWindowIds"], base["openedWindowIds"]);
    assert!(env.get("required").is_none() && env.get("additionalProperties").is_none());
    assert_eq!(env["properties"]["result"]["description"], "A documented result, for the envelope's descriptions.");
    let text = env.to_string();
    assert_eq!(text.matches("\"description\"").count(), 1, "{text}");
    resolves(&env);
    assert!(valid(&env, json!({"message": "Loaded", "result": {"offset": 0, "rows": []}})));
    for e in [
        crate::model::ToolError::stale_state(3, 4),
        crate::model::ToolError::validation_failed(
            "Submission rejected: 1 field is invalid",
            vec![crate::model::FieldError::new("amount", "Must be greater than 0")],
        ),
        crate::model::ToolError::new(crate::model::ErrorCode::WindowNotFound, "No window w-9"),
    ] {
        let e = serde_json::to_value(e).expect("serializes");
        assert!(valid(&env, e.clone()), "{e}");
    }
}

// GB-5.5-1: `expectedVersion` is an integer with a one-line description and no bounds.
#[test]
fn expected_version_is_one_line_and_unbounded() {
    let mut s = empty_object();
    add_expected_version(&mut s);
    assert_eq!(
        s["properties"]["expectedVersion"],
        json!({"type": "integer", "description": "The window version this call is based on"})
    );
}

// Of an inclusive and an exclusive bound on the same side, only the tighter is published.
#[test]
fn a_bound_implied_by_the_other_one_is_dropped() {
    let doc = normalize(
        json!({"type": "object", "properties": {
            "a": {"type": "integer", "minimum": 0, "exclusiveMinimum": 0, "maximum": 10, "exclusiveMaximum": 100},
            "b": {"type": "integer", "minimum": 5, "exclusiveMinimum": 1, "maximum": 10, "exclusiveMaximum": 10},
        }}),
        Contract::Input,
    );
    assert_eq!(doc["properties"]["a"], json!({"type": "integer", "exclusiveMinimum": 0, "maximum": 10}));
    assert_eq!(doc["properties"]["b"], json!({"type": "integer", "minimum": 5, "exclusiveMaximum": 10}));
}

// Rule IDs cited by a type's doc comments stay in the Rust docs, not in an action's schemas.
#[test]
fn action_schemas_cite_no_rule_ids() {
    let spec = crate::catalog::ActionSpec::new("page").params::<Page>().returns::<Page>().finish(true);
    assert_eq!(spec.input_schema["properties"]["offset"]["description"], "Index of the first row.");
    let text = Value::Object((*spec.output_schema).clone()).to_string();
    assert!(!text.contains("GB-"), "{text}");
}
