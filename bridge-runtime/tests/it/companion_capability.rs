//! Capability declarations, descriptors and error codes (CP §2, CP-6-16/17, OQ-CP-5, OQ-CP-12).

use crate::support::companion as companion_support;

use bridge_runtime::__internals::validate_capability_id;
use bridge_runtime::catalog::empty_strict_object;
use bridge_runtime::catalog::{
    CapabilityKind, CapabilitySpec, Catalog, CharacterSpec, Completion, InteractionType, QueueMode, QueuePolicy, Scope,
    SpecError,
};
use bridge_runtime::companion::{CompanionError, ErrorCode};
use companion_support::*;
use serde_json::{Value, json};

// CP-2-27: ids are dotted lowercase; vendor ids are vendor.<reverse-domain>.<name>.
#[test]
fn capability_ids_follow_the_naming_rules() {
    for ok in ["notice.show", "interaction.choose", "a.b", "vendor.com.example.wave", "vendor.org.acme.x_1"] {
        assert!(validate_capability_id(ok).is_ok(), "{ok}");
    }
    for bad in [
        "notice",
        "Notice.show",
        "notice..show",
        "notice.show.",
        "1notice.show",
        "notice.sh-ow",
        "vendor.example.wave",
        "vendor.com.wave",
        "",
        &"a.".repeat(70),
    ] {
        assert!(matches!(validate_capability_id(bad), Err(SpecError::InvalidId { .. })), "{bad}");
    }
}

// CP-2-15, CP-2-21, OQ-CP-5: the descriptor carries every field under its spec name, always.
#[test]
fn descriptor_has_every_cp_2_15_field_in_spec_names() {
    let catalog = catalog();
    let cat = catalog.read().unwrap();
    let d = cat.capability_descriptor("interaction.choose").unwrap();
    let keys: Vec<&str> = d.as_object().unwrap().keys().map(String::as_str).collect();
    for key in [
        "id",
        "version",
        "description",
        "characters",
        "kind",
        "interaction",
        "completion",
        "requiredScopes",
        "updatableFields",
        "cancelable",
        "cancelBehavior",
        "queuePolicy",
        "limits",
        "fallback",
        "inputSchema",
        "outputSchema",
    ] {
        assert!(keys.contains(&key), "descriptor lacks {key}: {d:#}");
    }
    assert_eq!(d["id"], "interaction.choose");
    assert_eq!(d["version"], "0.1.0");
    assert_eq!(d["kind"], "interaction");
    assert_eq!(d["interaction"], "choice");
    assert_eq!(d["completion"], "user_response");
    assert_eq!(d["requiredScopes"], json!(["interact"]));
    assert_eq!(d["cancelable"], true);
    assert_eq!(d["characters"], json!(["robot", "cat"]));
    assert_eq!(d["queuePolicy"], json!({"mode": "queue", "interrupts": false}));
    assert_eq!(d["limits"], json!({"minTimeoutMs": 1000, "maxTimeoutMs": 600000, "displayMs": null}));
    assert_eq!(d["fallback"], Value::Null);
    assert_eq!(d["updatableFields"], json!([]));
}

// CP-2-22: interaction.choose's schemas are the draft's, byte for byte.
#[test]
fn choose_schemas_are_the_drafts() {
    let catalog = catalog();
    let cat = catalog.read().unwrap();
    let d = cat.capability_descriptor("interaction.choose").unwrap();
    assert_eq!(d["inputSchema"], choose_input_schema());
    assert_eq!(d["outputSchema"], choose_output_schema());
}

// CP-2-16: no params / no business output are explicit empty object schemas, never omitted.
#[test]
fn empty_params_and_output_are_explicit() {
    let wave = vendor_wave();
    let empty = Value::Object(empty_strict_object());
    assert_eq!(Value::Object(wave.input_schema().clone()), empty);
    assert_eq!(Value::Object(wave.output_schema().clone()), empty);
    let d = wave.descriptor(&[]);
    assert_eq!(d["inputSchema"], json!({"type": "object", "properties": {}, "additionalProperties": false}));
    assert_eq!(d["outputSchema"], json!({"type": "object", "properties": {}, "additionalProperties": false}));
    assert!(wave.validate_params(&mut json!({})).is_ok());
    assert!(wave.validate_params(&mut json!({"x": 1})).is_err());
}

// CP-2-17, CP-2-18, CP-4-11, OQ-CP-14: defaults per kind and the combinations build() rejects.
#[test]
fn builder_defaults_and_rejected_combinations() {
    let n = notice_show();
    assert_eq!(n.completion(), Completion::Displayed);
    assert_eq!(n.required_scopes(), &[Scope::Notify]);
    assert_eq!(n.queue_policy().mode, QueueMode::Evictable);
    assert_eq!(animation_celebrate().required_scopes(), &[Scope::Animate]);
    assert_eq!(progress_show().completion(), Completion::CallerCompletes);

    let base = || CapabilitySpec::new("x.y", CapabilityKind::Interaction).version("0.1.0");
    let inconsistent = |r: Result<CapabilitySpec, SpecError>| matches!(r, Err(SpecError::Inconsistent { .. }));
    // CP-2-18: an interaction needs choice/text; other kinds must be none.
    assert!(inconsistent(base().build()));
    assert!(inconsistent(
        CapabilitySpec::new("x.y", CapabilityKind::Notice)
            .version("0.1.0")
            .interaction(InteractionType::Choice)
            .build()
    ));
    // CP-4-11: interactions are never evictable.
    assert!(inconsistent(
        base()
            .interaction(InteractionType::Choice)
            .queue_policy(QueuePolicy { mode: QueueMode::Evictable, interrupts: false })
            .build()
    ));
    // user_response only for interactions.
    assert!(inconsistent(
        CapabilitySpec::new("x.y", CapabilityKind::Notice)
            .version("0.1.0")
            .completion(Completion::UserResponse)
            .build()
    ));
    // Updatable fields must be input properties.
    assert!(inconsistent(
        CapabilitySpec::new("x.y", CapabilityKind::Progress).version("0.1.0").updatable_fields(["nope"]).build()
    ));
    // Timeouts bounded by the 24 h cap.
    assert!(inconsistent(
        CapabilitySpec::new("x.y", CapabilityKind::Notice)
            .version("0.1.0")
            .timeout_bounds_ms(1, 25 * 3_600_000)
            .build()
    ));
    // Version must be declared and semantic.
    assert!(matches!(
        CapabilitySpec::new("x.y", CapabilityKind::Notice).build(),
        Err(SpecError::Missing { what: "version", .. })
    ));
    assert!(matches!(
        CapabilitySpec::new("x.y", CapabilityKind::Notice).version("1.0").build(),
        Err(SpecError::InvalidVersion { .. })
    ));
    // Schemas must be object schemas.
    assert!(matches!(
        CapabilitySpec::new("x.y", CapabilityKind::Notice)
            .version("0.1.0")
            .input_schema(json!({"type": "string"}))
            .build(),
        Err(SpecError::BadSchema { .. })
    ));
}

// CP-2-23, CP-2-25: semantic checks beyond JSON Schema.
#[test]
fn semantic_checks_catch_what_schema_cannot() {
    let c = interaction_choose();
    let mut dup = json!({"title": "t", "options": [{"id": "a", "label": "A"}, {"id": "a", "label": "B"}]});
    let problems = c.validate_params(&mut dup).unwrap_err();
    assert_eq!(problems[0].path, "/options/1/id");
    let params = choose_params();
    assert!(c.validate_result(&params, &json!({"selectedId": "yes"})).is_ok());
    assert!(c.validate_result(&params, &json!({"selectedId": "maybe"})).is_err());
    assert!(c.validate_result(&params, &json!({"selectedId": "yes", "extra": 1})).is_err());
}

#[derive(schemars::JsonSchema, serde::Deserialize)]
#[allow(dead_code)]
struct WaveParams {
    /// How many times.
    times: u8,
}

// The builder takes schemas from Rust types (the shape a proc-macro will emit).
#[test]
fn params_from_a_rust_type_are_strict() {
    let spec = CapabilitySpec::new("vendor.com.example.wave2", CapabilityKind::Animation)
        .version("0.1.0")
        .params::<WaveParams>()
        .build()
        .unwrap();
    assert_eq!(spec.input_schema()["additionalProperties"], false);
    assert!(spec.validate_params(&mut json!({"times": 3})).is_ok());
    assert!(spec.validate_params(&mut json!({"times": 300})).is_err());
    assert!(spec.validate_params(&mut json!({"times": 3, "x": 1})).is_err());
}

// CP-2-13, CP-7-1: one registry; duplicates rejected and the catalog left unchanged;
// catalogRevision moves on each registration.
#[test]
fn catalog_registration_is_checked_and_revisioned() {
    let mut c = Catalog::new();
    assert_eq!(c.catalog_revision(), 0);
    c.register_capability(notice_show()).unwrap();
    assert_eq!(c.catalog_revision(), 1);
    assert!(matches!(c.register_capability(notice_show()), Err(SpecError::Duplicate { .. })));
    assert_eq!(c.catalog_revision(), 1);
    assert_eq!(c.capabilities().len(), 1);
    assert!(c.register_character(CharacterSpec::new("Bad Id", "x")).is_err());
    c.register_character(CharacterSpec::new("robot", "Robot").supports(["notice.show"])).unwrap();
    assert_eq!(c.characters_supporting("notice.show"), vec!["robot".to_owned()]);
}

// CP-6-16, CP-6-17, OQ-CP-12: 13 stable codes (plus METHOD_NOT_FOUND), distinct JSON-RPC
// integers, and error.data = {code, retryable, ...}.
#[test]
fn error_codes_and_jsonrpc_mapping() {
    let required = [
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
    ];
    let strings: Vec<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
    for r in required {
        assert!(strings.contains(&r), "{r}");
    }
    let mut ints: Vec<i64> = ErrorCode::ALL.iter().map(|c| c.jsonrpc_code()).collect();
    ints.sort();
    ints.dedup();
    assert_eq!(ints.len(), ErrorCode::ALL.len(), "JSON-RPC codes are distinct");
    for c in ErrorCode::ALL {
        assert_eq!(serde_json::to_value(c).unwrap(), c.as_str());
        assert!((-32603..=-32000).contains(&c.jsonrpc_code()));
    }
    let e = CompanionError::new(ErrorCode::QueueFull, "full").with("limit", "maxActivePerClient");
    assert_eq!(
        e.to_jsonrpc(),
        json!({"code": -32020, "message": "full",
               "data": {"code": "QUEUE_FULL", "retryable": true, "limit": "maxActivePerClient"}})
    );
    // OQ-CP-8, OQ-CP-10, OQ-CP-17: retryable flags.
    assert!(ErrorCode::RateLimited.retryable());
    assert!(!ErrorCode::ResultExpired.retryable());
    assert!(!ErrorCode::InvalidParams.retryable());
}
