//! The companion API's OpenRPC document (CP-8-2): valid against the official OpenRPC 1.3
//! meta-schema (vendored in `openrpc-meta/`, checked with the jsonschema crate at Draft 7), every
//! `$ref` resolves, it describes every CP-2-1 method, and it is generated from the registry and
//! the engine's own types: the real engine's answers fit the documented result schemas
//! (CP-2-12, CP-2-13, OQ-CP-13).

use crate::support::companion as companion_support;
use crate::support::openrpc as openrpc_support;

use bridge_runtime::__internals::openrpc::{EXTRA_METHODS, input_schema_key, output_schema_key};
use bridge_runtime::catalog::{CapabilityKind, CapabilitySpec, Catalog, Scope};
use bridge_runtime::companion::openrpc::{self, MethodDoc};
use bridge_runtime::companion::protocol::params::{self, METHODS, PROTOCOL_VERSION};
use bridge_runtime::companion::{ClientIdentity, ErrorCode};
use companion_support::*;
use openrpc_support::*;
use serde_json::{Value, json};

fn fixture_catalog() -> Catalog {
    let mut c = Catalog::new();
    for spec in
        [notice_show(), progress_show(), interaction_choose(), interaction_text(), animation_celebrate(), vendor_wave()]
    {
        c.register_capability(spec).expect("register");
    }
    c
}

// CP-8-2: the vendored meta-schema really validates (a broken document is rejected), and the ref
// walker really finds dangling references, so the passing tests below mean something.
#[test]
fn the_checks_reject_broken_documents() {
    let doc = openrpc::document(&Catalog::new());
    let mut no_info = doc.clone();
    no_info.as_object_mut().unwrap().remove("info");
    assert!(!meta_errors(&no_info).is_empty());
    let mut bad_param = doc.clone();
    bad_param["methods"][0]["params"] = json!([{"name": "x"}]); // no schema
    assert!(!meta_errors(&bad_param).is_empty());
    let mut dangling = doc.clone();
    dangling["methods"][0]["result"]["schema"] = json!({"$ref": "#/components/schemas/Nope"});
    assert_eq!(dangling_refs(&dangling), ["#/components/schemas/Nope"]);
}

// CP-8-2, CP-2-1: a catalog without capabilities still yields a complete, valid API document.
#[test]
fn empty_catalog_document_is_valid_and_complete() {
    let doc = openrpc::document(&Catalog::new());
    assert_valid(&doc);
    assert_eq!(doc["openrpc"], "1.3.2");
    assert_eq!(doc["info"]["title"], openrpc::TITLE);
    assert_eq!(doc["info"]["version"], env!("CARGO_PKG_VERSION"));
    // CP-7-1: protocol, implementation and catalog revision are kept distinct.
    assert_eq!(doc["info"]["x-protocolVersion"], PROTOCOL_VERSION);
    assert_eq!(doc["info"]["x-catalogRevision"], 0);
    let names: Vec<&str> = doc["methods"].as_array().unwrap().iter().map(|m| m["name"].as_str().unwrap()).collect();
    // Exactly what the socket server answers: the ten CP-2-1 methods, then its own.
    let mut expected: Vec<&str> = METHODS.to_vec();
    expected.extend(EXTRA_METHODS);
    assert_eq!(names, expected);
    let schemas = doc["components"]["schemas"].as_object().unwrap();
    assert!(!schemas.keys().any(|k| k.ends_with(".input") || k.ends_with(".output")));
    // Without capabilities, `params` stays the generic object schema (no empty anyOf).
    let create = method(&doc, "requests.create");
    let p = create["params"].as_array().unwrap().iter().find(|p| p["name"] == "params").unwrap();
    assert!(p["schema"].get("anyOf").is_none());
    assert!(ref_count(&doc) > 20);
}

// CP-8-2, CP-2-12, CP-2-13: with the fixture capabilities the document is valid, every `$ref`
// resolves, and each capability's schemas are the registry's, byte for byte.
#[test]
fn fixture_catalog_document_is_valid_and_carries_the_registry_schemas() {
    let catalog = fixture_catalog();
    let doc = openrpc::document(&catalog);
    assert_valid(&doc);
    assert_eq!(doc["info"]["x-catalogRevision"], catalog.catalog_revision());
    let schemas = &doc["components"]["schemas"];
    for cap in catalog.capabilities() {
        let input = &schemas[input_schema_key(cap.id())];
        let output = &schemas[output_schema_key(cap.id())];
        assert_eq!(input, &Value::Object(cap.input_schema().clone()), "{}", cap.id());
        assert_eq!(output, &Value::Object(cap.output_schema().clone()), "{}", cap.id());
    }
    assert!(schemas.get("vendor.com.example.wave.input").is_some());
    // `requests.create` params.params: one of the registered input schemas.
    let create = method(&doc, "requests.create");
    let p = create["params"].as_array().unwrap().iter().find(|p| p["name"] == "params").unwrap();
    let any: Vec<&str> = p["schema"]["anyOf"].as_array().unwrap().iter().map(|r| r["$ref"].as_str().unwrap()).collect();
    assert_eq!(any.len(), catalog.capabilities().len());
    assert_eq!(any[0], "#/components/schemas/notice.show.input");
    // The snapshot's `result`: null or one of the registered output schemas.
    let result = &schemas["RequestSnapshot"]["properties"]["result"]["anyOf"];
    assert_eq!(result[0], json!({"type": "null"}));
    assert_eq!(result.as_array().unwrap().len(), catalog.capabilities().len() + 1);
    // Deterministic for one catalog.
    assert_eq!(doc, openrpc::document(&catalog));
}

// CP-2-1, CP-8-2: every method takes its params by name, as content descriptors made from the
// schema the engine validates with; each declares a result and its errors.
#[test]
fn params_are_by_name_content_descriptors_of_the_engine_schemas() {
    let doc = openrpc::document(&fixture_catalog());
    for name in METHODS {
        let m = method(&doc, name);
        assert_eq!(m["paramStructure"], "by-name", "{name}");
        assert!(m["summary"].as_str().is_some_and(|s| !s.is_empty()), "{name}");
        let schema = params::params_schema(name).unwrap();
        let no_props = serde_json::Map::new();
        let props = schema.get("properties").and_then(Value::as_object).unwrap_or(&no_props);
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().map(|v| v.as_str().unwrap()).collect())
            .unwrap_or_default();
        let descriptors = m["params"].as_array().unwrap();
        assert_eq!(descriptors.len(), props.len(), "{name}");
        for d in descriptors {
            let pname = d["name"].as_str().unwrap();
            assert_eq!(d["required"], required.contains(&pname), "{name}.{pname}");
            if !(name == "requests.create" && pname == "params") {
                assert_eq!(&d["schema"], &props[pname], "{name}.{pname}");
            }
        }
        // Required params first.
        let flags: Vec<bool> = descriptors.iter().map(|d| d["required"].as_bool().unwrap()).collect();
        assert!(flags.windows(2).all(|w| w[0] || !w[1]), "{name}: {flags:?}");
        assert!(m["result"]["schema"]["$ref"].as_str().is_some(), "{name}");
        assert!(!m["errors"].as_array().unwrap().is_empty(), "{name}");
    }
    assert_eq!(method(&doc, "requests.create")["params"][0]["name"], "capability");
    // CP-2-14: discovery needs `discover`.
    assert_eq!(method(&doc, "capabilities.list")["x-requiredScopes"], json!(["discover"]));
    assert_eq!(method(&doc, "rpc.discover")["x-requiredScopes"], json!(["discover"]));
    assert!(method(&doc, "requests.get").get("x-requiredScopes").is_none());
    assert!(method(&doc, "runtime.describe").get("x-requiredScopes").is_none(), "open over the socket (CP-7-2)");
    // The transport's methods: by name, with the auth layer's shapes.
    let auth = method(&doc, "session.authenticate");
    let names: Vec<&str> = auth["params"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["clientId", "key"]);
    let pairing = method(&doc, "pairing.request");
    assert_eq!(pairing["params"][1]["schema"]["items"]["$ref"], "#/components/schemas/Scope");
    assert_eq!(pairing["result"]["schema"]["required"], json!(["clientId", "key", "scopes", "label"]));
    assert!(method(&doc, "rpc.discover")["params"].as_array().unwrap().is_empty());
}

// CP-6-16, CP-6-17, OQ-CP-12: every error code is an OpenRPC error object with its JSON-RPC
// integer, a message and `data` = {code, retryable}, exactly what a failed call carries.
#[test]
fn every_error_code_is_documented_with_its_jsonrpc_integer() {
    let doc = openrpc::document(&Catalog::new());
    let errors = doc["components"]["errors"].as_object().unwrap();
    assert_eq!(errors.len(), ErrorCode::ALL.len());
    for code in ErrorCode::ALL {
        let e = &errors[code.as_str()];
        assert_eq!(e["code"], code.jsonrpc_code(), "{code}");
        assert_eq!(e["data"], json!({"code": code.as_str(), "retryable": code.retryable()}), "{code}");
        let message = e["message"].as_str().unwrap();
        assert!(message.starts_with(&format!("{code}: ")) && message.len() > code.as_str().len() + 5, "{message}");
    }
    for name in [
        "INVALID_PARAMS",
        "UNSUPPORTED_CAPABILITY",
        "UNSUPPORTED_STYLE",
        "UNAUTHENTICATED",
        "FORBIDDEN",
        "NOT_FOUND",
        "RESULT_EXPIRED",
        "QUEUE_FULL",
        "RATE_LIMITED",
        "RUNTIME_UNAVAILABLE",
        "REVISION_CONFLICT",
        "IDEMPOTENCY_CONFLICT",
        "INTERNAL_ERROR",
    ] {
        assert!(errors.contains_key(name), "CP-6-17: {name}");
    }
    let errs = |m: &str| -> Vec<String> {
        method(&doc, m)["errors"].as_array().unwrap().iter().map(|e| e["$ref"].as_str().unwrap().to_owned()).collect()
    };
    let create = errs("requests.create");
    for code in ["QUEUE_FULL", "RATE_LIMITED", "IDEMPOTENCY_CONFLICT", "UNSUPPORTED_STYLE", "RUNTIME_UNAVAILABLE"] {
        assert!(create.contains(&format!("#/components/errors/{code}")), "{code}");
    }
    assert!(errs("requests.update").contains(&"#/components/errors/REVISION_CONFLICT".to_owned()));
    assert!(errs("requests.get").contains(&"#/components/errors/NOT_FOUND".to_owned()));
}

// CP-2-12, CP-2-13: the description matches the behaviour: every result and error the real
// engine returns fits the schema the document gives for it.
#[tokio::test(start_paused = true)]
async fn the_engine_answers_fit_the_documented_schemas() {
    let Fixture { engine, mut events, catalog } = start();
    let published = openrpc::document(&catalog.read().unwrap());
    assert_valid(&published);
    let doc = strict(&published);
    assert_valid(&doc);
    let me = agent("a1");
    let call = |m: &'static str, p: Value| {
        let engine = engine.clone();
        let me = me.clone();
        async move { engine.call(&me, m, p).await }
    };

    for (m, p) in [
        ("runtime.describe", json!({})),
        ("characters.list", json!({})),
        ("capabilities.list", json!({})),
        ("capabilities.list", json!({"limit": 2})),
        ("capabilities.describe", json!({"capability": "interaction.choose"})),
        ("styles.list", json!({})),
    ] {
        let r = call(m, p).await.unwrap_or_else(|e| panic!("{m}: {e:?}"));
        assert_fits(&result_validator(&doc, m), &r, m);
    }
    // Every capability descriptor fits CapabilityDescriptor.
    let descriptor = validator_in(&doc, &json!({"$ref": "#/components/schemas/CapabilityDescriptor"}));
    {
        let cat = catalog.read().unwrap();
        for cap in cat.capabilities() {
            assert_fits(&descriptor, &cat.capability_descriptor(cap.id()).unwrap(), cap.id());
        }
    }

    // Request lifecycle: create, get, wait, update, user answer, cancel.
    let snapshot = result_validator(&doc, "requests.create");
    let created = call("requests.create", create_body("interaction.choose", choose_params(), 60_000)).await.unwrap();
    assert_fits(&snapshot, &created, "requests.create");
    let id = id_of(&created);
    let got = call("requests.get", json!({"requestId": id})).await.unwrap();
    assert_fits(&result_validator(&doc, "requests.get"), &got, "requests.get");
    let progress =
        call("requests.create", create_body("progress.show", json!({"label": "Build", "value": 0.1}), 60_000))
            .await
            .unwrap();
    let pid = id_of(&progress);
    let updated = call(
        "requests.update",
        json!({"requestId": pid, "expectedRevision": progress["revision"],
                                                 "params": {"value": 0.5}}),
    )
    .await
    .unwrap();
    assert_fits(&result_validator(&doc, "requests.update"), &updated, "requests.update");
    expect_show(&mut events, &id).await;
    engine.displayed(&id).unwrap();
    engine.user_responded(&id, json!({"selectedId": "yes"})).unwrap();
    let waited = call("requests.wait", json!({"requestId": id, "afterRevision": 1, "waitMs": 10})).await.unwrap();
    assert_eq!(waited["state"], "completed");
    assert_eq!(waited["result"], json!({"selectedId": "yes"}));
    assert_fits(&result_validator(&doc, "requests.wait"), &waited, "requests.wait");
    let cancelled = call("requests.cancel", json!({"requestId": pid})).await.unwrap();
    assert_eq!(cancelled["state"], "cancelled");
    assert_fits(&result_validator(&doc, "requests.cancel"), &cancelled, "requests.cancel");

    // Errors: `data` fits ErrorData, and the code is one the method documents.
    let error_data = validator_in(&doc, &json!({"$ref": "#/components/schemas/ErrorData"}));
    let failures = [
        ("requests.get", json!({"requestId": "req_nope"})),
        ("requests.create", json!({"capability": "nope.nope", "params": {}, "timeoutMs": 5_000})),
        ("requests.create", create_body("interaction.choose", json!({"title": ""}), 60_000)),
        ("capabilities.describe", json!({"capability": "nope.nope"})),
        ("requests.update", json!({"requestId": pid, "expectedRevision": 1, "complete": true})),
        ("runtime.describe", json!({"protocolVersions": ["9.9"]})),
    ];
    for (m, p) in failures {
        let e = call(m, p).await.expect_err(m);
        let wire = e.to_jsonrpc();
        assert_fits(&error_data, &wire["data"], m);
        let documented = &doc["components"]["errors"][e.code.as_str()];
        assert_eq!(wire["code"], documented["code"]);
        let refs: Vec<&str> =
            method(&doc, m)["errors"].as_array().unwrap().iter().map(|r| r["$ref"].as_str().unwrap()).collect();
        assert!(refs.contains(&format!("#/components/errors/{}", e.code.as_str()).as_str()), "{m}: {}", e.code);
    }
    let no_discover = ClientIdentity::external("a2", "a2", [Scope::Notify]);
    let e = engine.call(&no_discover, "styles.list", json!({})).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::Forbidden);
    assert_fits(&error_data, &e.data(), "FORBIDDEN");
}

// CP-2-13: `rpc.discover`'s documented result fits the document itself.
#[test]
fn rpc_discover_result_fits_the_document() {
    let doc = openrpc::document(&fixture_catalog());
    assert_fits(&result_validator(&doc, "rpc.discover"), &doc, "rpc.discover");
}

// CP-7-7 and the auth hook: extra methods are appended, may not redefine a core method, and
// their internal references are rebased so they resolve in the document.
#[test]
fn extra_methods_are_added_without_redefining_core_ones() {
    let recursive = json!({
        "type": "object",
        "properties": {"tree": {"$ref": "#/$defs/Node"}},
        "required": ["tree"],
        "$defs": {"Node": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}}
    });
    let extra = [
        MethodDoc {
            name: "tree.describe".into(),
            summary: "Describes a tree.".into(),
            description: "An extension method with a recursive params type.".into(),
            params_schema: recursive.clone(),
            result_name: "tree".into(),
            result_schema: json!({"type": "object", "properties": {"size": {"type": "integer"}}}),
            errors: vec![ErrorCode::Unauthenticated],
        },
        MethodDoc {
            name: "requests.create".into(),
            summary: "evil twin".into(),
            description: String::new(),
            params_schema: json!({"type": "object", "properties": {}}),
            result_name: "x".into(),
            result_schema: json!({}),
            errors: vec![],
        },
    ];
    let doc = openrpc::document_with(&fixture_catalog(), &extra);
    assert_valid(&doc);
    let names: Vec<&str> = doc["methods"].as_array().unwrap().iter().map(|m| m["name"].as_str().unwrap()).collect();
    assert_eq!(names.last(), Some(&"tree.describe"));
    assert_eq!(names.iter().filter(|n| **n == "requests.create").count(), 1);
    assert_ne!(method(&doc, "requests.create")["summary"], "evil twin");
    let tree = &method(&doc, "tree.describe")["params"][0]["schema"];
    // The recursive definition is hoisted into components/schemas (issue #6).
    assert_eq!(tree["$ref"], "#/components/schemas/Node");
    assert!(deref(&doc, tree)["properties"]["kids"].is_object());
}

// CP-2-13, issue #6: a capability schema with internal references (a recursive type) is embedded
// with its definitions hoisted into components/schemas, so the references still resolve, and the
// embedded schema still validates what the capability accepts.
#[test]
fn capability_schemas_with_internal_refs_are_rebased() {
    let mut c = Catalog::new();
    let spec = CapabilitySpec::new("notice.tree", CapabilityKind::Notice)
        .version("0.1.0")
        .input_schema(json!({
            "type": "object",
            "properties": {"root": {"$ref": "#/$defs/Item"}},
            "$defs": {"Item": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Item"}}},
                               "additionalProperties": false}},
            "additionalProperties": false
        }))
        .build()
        .unwrap();
    c.register_capability(spec).unwrap();
    let doc = openrpc::document(&c);
    assert_valid(&doc);
    let input = &doc["components"]["schemas"]["notice.tree.input"];
    assert_eq!(input["properties"]["root"]["$ref"], "#/components/schemas/Item");
    let v = validator_in(&doc, &json!({"$ref": "#/components/schemas/notice.tree.input"}));
    assert!(v.is_valid(&json!({"root": {"children": [{"children": []}]}})));
    assert!(!v.is_valid(&json!({"root": {"children": [{"bad": 1}]}})));
}

// CP-8-2: hands the generated documents (empty catalog, fixture capabilities, an extra method with
// recursive schemas) to the OpenRPC reference tooling: `./test.sh` runs
// `tests/openrpc/validate.mjs` (@open-rpc/schema-utils-js) on `<target>/tmp/openrpc/*.json`.
#[test]
fn writes_documents_for_the_node_validator() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("openrpc");
    std::fs::create_dir_all(&dir).unwrap();
    let mut recursive = fixture_catalog();
    recursive
        .register_capability(
            CapabilitySpec::new("notice.tree", CapabilityKind::Notice)
                .version("0.1.0")
                .input_schema(json!({
                    "type": "object",
                    "properties": {"root": {"$ref": "#/$defs/Item"}},
                    "$defs": {"Item": {"type": "object",
                                       "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Item"}}}}}
                }))
                .build()
                .unwrap(),
        )
        .unwrap();
    let extra = MethodDoc {
        name: "tree.count".into(),
        summary: "Counts.".into(),
        description: "Example of an extra method.".into(),
        params_schema: json!({"type": "object", "properties": {"clientId": {"type": "string"}}, "required": ["clientId"]}),
        result_name: "count".into(),
        result_schema: json!({"type": "object"}),
        errors: vec![ErrorCode::Unauthenticated],
    };
    for (name, doc) in [
        ("empty", openrpc::document(&Catalog::new())),
        ("fixture", openrpc::document(&fixture_catalog())),
        ("recursive-with-extra", openrpc::document_with(&recursive, &[extra])),
    ] {
        assert_valid(&doc);
        std::fs::write(dir.join(format!("{name}.json")), serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    }
}
