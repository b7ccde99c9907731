//! The request engine against the CP-7-8 conformance list: description matches behaviour,
//! invalid params, character differences, reduced motion, hidden state, duplicate create,
//! concurrent updates, ownership isolation, capacity, revocation, click races, timeouts.
//! Time is tokio's paused clock (or a manual clock): no test sleeps.

use crate::support::companion as companion_support;

use bridge_runtime::catalog::{CapabilitySpec, Scope};
use bridge_runtime::companion::protocol::params::METHODS;
use bridge_runtime::companion::{
    ClientIdentity, Engine, EngineConfig, ErrorCode, HideReason, HostError, Presentation, Presenter, PresenterEvent,
    RequestState, ScriptedPresenter, SqliteStore,
};
use companion_support::*;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

fn state(v: &Value) -> &str {
    v["state"].as_str().unwrap()
}

async fn advance_ms(ms: u64) {
    tokio::time::advance(Duration::from_millis(ms)).await;
    settle().await;
}

// ---------------------------------------------------------------------------------------------
// Discovery: the description matches the behaviour (CP-7-8, CP-2-12, CP-2-13)

// CP-2-1: all ten methods are served by the one dispatcher; anything else is METHOD_NOT_FOUND.
#[tokio::test(start_paused = true)]
async fn ten_methods_and_nothing_else() {
    let f = start();
    let a = agent("a");
    for m in &METHODS[..5] {
        let params = if *m == "capabilities.describe" { json!({"capability": "notice.show"}) } else { json!({}) };
        f.engine.call(&a, m, params).await.unwrap_or_else(|e| panic!("{m}: {e:?}"));
    }
    for m in &METHODS[5..] {
        // Reachable: they answer with a parameter error, not METHOD_NOT_FOUND.
        let e = f.engine.call(&a, m, json!({})).await.unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidParams, "{m}");
    }
    let e = f.engine.call(&a, "requests.list", json!({})).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::MethodNotFound);
    assert_eq!(e.to_jsonrpc()["code"], -32601);
    // CP-1-9, CP-5-17: no screenshot, clipboard, file or shell operation in the core protocol.
    for word in ["screen", "clipboard", "file", "shell", "exec"] {
        assert!(METHODS.iter().all(|m| !m.contains(word)), "{word}");
    }
    for m in ["screenshot.capture", "clipboard.read", "files.read", "shell.exec"] {
        assert_eq!(f.engine.call(&a, m, json!({})).await.unwrap_err().code, ErrorCode::MethodNotFound, "{m}");
    }
}

// CP-2-3, CP-2-4, CP-2-5, CP-2-6, CP-2-12, CP-7-8 "description matches real capabilities": every
// listed descriptor is the registry's, every character's capability can really be created with
// that character, and the others are refused.
#[tokio::test(start_paused = true)]
async fn discovery_is_generated_from_the_registry_and_matches_behaviour() {
    let f = start();
    let a = agent("a");
    let list = f.engine.call(&a, "capabilities.list", json!({})).await.unwrap();
    let ids: Vec<&str> = list["capabilities"].as_array().unwrap().iter().map(|d| d["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [
            "notice.show",
            "progress.show",
            "interaction.choose",
            "interaction.text",
            "animation.celebrate",
            "vendor.com.example.wave"
        ]
    );
    assert_eq!(list["catalogRevision"], f.catalog.read().unwrap().catalog_revision());
    assert_eq!(list["nextCursor"], Value::Null);
    for d in list["capabilities"].as_array().unwrap() {
        let described = f.engine.call(&a, "capabilities.describe", json!({"capability": d["id"]})).await.unwrap();
        assert_eq!(&described, d);
        assert_eq!(Some(described), f.catalog.read().unwrap().capability_descriptor(d["id"].as_str().unwrap()));
    }

    let chars = f.engine.call(&a, "characters.list", json!({})).await.unwrap();
    assert_eq!(chars["current"], "robot");
    let samples = |id: &str| match id {
        "notice.show" => json!({"text": "hi"}),
        "progress.show" => json!({"label": "Build", "value": 0.5}),
        "interaction.choose" => choose_params(),
        "interaction.text" => json!({"prompt": "Name?"}),
        _ => json!({}),
    };
    for ch in chars["characters"].as_array().unwrap() {
        let supported: Vec<&str> = ch["capabilities"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
        for id in &ids {
            let mut body = create_body(id, samples(id), 30_000);
            body["character"] = ch["id"].clone();
            let r = f.engine.call(&a, "requests.create", body).await;
            if supported.contains(id) {
                let snap = r.unwrap_or_else(|e| panic!("{} should present {id}: {e:?}", ch["id"]));
                assert_eq!(snap["resolvedCapability"], *id);
                f.engine.call(&a, "requests.cancel", json!({"requestId": snap["requestId"]})).await.unwrap();
            } else {
                assert_eq!(r.unwrap_err().code, ErrorCode::UnsupportedCapability, "{} / {id}", ch["id"]);
            }
        }
        // The descriptor's `characters` agrees with the character's own list.
        for id in &supported {
            let d = f.engine.call(&a, "capabilities.describe", json!({"capability": id})).await.unwrap();
            assert!(d["characters"].as_array().unwrap().contains(&ch["id"]));
        }
    }

    let styles = f.engine.call(&a, "styles.list", json!({})).await.unwrap();
    assert_eq!(
        styles["styles"][1],
        json!({"id": "comic", "description": "Comic-book burst",
                                           "capabilities": ["notice.show"], "fallback": "bubble"})
    );
}

// CP-2-4, CP-2-14, OQ-CP-14: discovery needs `discover`; the list shows only what the caller's
// scopes allow; pages carry a cursor tied to catalogRevision (CP-7-3).
#[tokio::test(start_paused = true)]
async fn listing_follows_authorisation_and_pages() {
    let f = start();
    let none = ClientIdentity::external("n", "n", [Scope::Notify]);
    for m in &METHODS[..5] {
        let e = f.engine.call(&none, m, json!({})).await.unwrap_err();
        assert_eq!(e.code, ErrorCode::Forbidden, "{m}");
        assert_eq!(e.data()["missingScopes"], json!(["discover"]));
    }
    let notifier = ClientIdentity::external("n", "n", [Scope::Discover, Scope::Notify]);
    let list = f.engine.call(&notifier, "capabilities.list", json!({})).await.unwrap();
    let ids: Vec<&str> = list["capabilities"].as_array().unwrap().iter().map(|d| d["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["notice.show", "progress.show"]);

    let a = agent("a");
    let page1 = f.engine.call(&a, "capabilities.list", json!({"limit": 4})).await.unwrap();
    assert_eq!(page1["capabilities"].as_array().unwrap().len(), 4);
    let cursor = page1["nextCursor"].as_str().unwrap().to_owned();
    let page2 = f.engine.call(&a, "capabilities.list", json!({"limit": 4, "cursor": cursor})).await.unwrap();
    assert_eq!(page2["capabilities"].as_array().unwrap().len(), 2);
    assert_eq!(page2["nextCursor"], Value::Null);

    f.catalog
        .write()
        .unwrap()
        .register_capability(
            CapabilitySpec::new("notice.flash", bridge_runtime::catalog::CapabilityKind::Notice)
                .version("0.1.0")
                .build()
                .unwrap(),
        )
        .unwrap();
    let e = f.engine.call(&a, "capabilities.list", json!({"cursor": cursor})).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidParams);
    // CP-7-3: create re-validates against the current registry: known now, but no character
    // presents it until one is registered.
    let body = json!({"capability": "notice.flash", "params": {}, "timeoutMs": 5000, "character": "owl"});
    assert_eq!(create_err(&f.engine, &a, body.clone()).await.code, ErrorCode::InvalidParams);
    f.catalog
        .write()
        .unwrap()
        .register_character(bridge_runtime::catalog::CharacterSpec::new("owl", "Owl").supports(["notice.flash"]))
        .unwrap();
    assert_eq!(create(&f.engine, &a, body).await["resolvedCapability"], "notice.flash");
}

// CP-2-2, CP-4-8, OQ-CP-7, CP-7-1, CP-7-2, OQ-CP-15: runtime.describe publishes versions, limits,
// authorisation and retention; a client with no common protocol version is refused.
#[tokio::test(start_paused = true)]
async fn runtime_describe_publishes_limits_and_negotiates_versions() {
    let f = start();
    let a = agent("a");
    let d = f.engine.call(&a, "runtime.describe", json!({"protocolVersions": ["0.1"]})).await.unwrap();
    assert_eq!(d["protocolVersion"], "0.1");
    assert_eq!(d["runtimeInstanceId"], f.engine.runtime_instance_id());
    assert_eq!(d["implementation"]["name"], "bridge-runtime");
    assert_eq!(d["authorization"]["clientId"], "a");
    assert_eq!(d["resultRetentionMs"], 86_400_000);
    for k in ["maxActivePerClient", "maxActiveTotal", "maxRecords", "maxCreatesPerMinute", "maxWaitMs", "defaultWaitMs"]
    {
        assert!(d["limits"][k].as_u64().unwrap() > 0, "{k}");
    }
    let e = f.engine.call(&a, "runtime.describe", json!({"protocolVersions": ["2.0"]})).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidParams);
    assert_eq!(e.data()["supportedProtocolVersions"], json!(["0.1"]));
    // CP-7-6: a 0.x version needs an exact match; another 0.x is no common version.
    let e = f.engine.call(&a, "runtime.describe", json!({"protocolVersions": ["0.2"]})).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidParams);
}

// ---------------------------------------------------------------------------------------------
// Invalid parameters (CP-7-8)

// CP-2-22, CP-2-23, CP-2-25, CP-3-5, CP-3-7, OQ-CP-3, OQ-CP-16, CP-6-20: structural and semantic
// errors are INVALID_PARAMS with paths, and a rejected create records nothing (its idempotency key
// stays free).
#[tokio::test(start_paused = true)]
async fn invalid_params_are_rejected_and_record_nothing() {
    let mut f = start();
    let a = agent("a");
    let with_key = |mut body: Value| {
        if let Some(o) = body.as_object_mut() {
            o.insert("idempotencyKey".into(), json!("k1"));
        }
        body
    };
    let cases = [
        (create_body("interaction.choose", json!({"title": "", "options": []}), 5000), "/params/title"),
        (
            create_body(
                "interaction.choose",
                json!({"title": "t", "options": [{"id": "a", "label": "A"}, {"id": "a", "label": "B"}]}),
                5000,
            ),
            "/params/options/1/id",
        ),
        (
            create_body("interaction.choose", json!({"title": "t", "options": [{"id": "a", "label": "A"}]}), 5000),
            "/params/options",
        ),
        (create_body("notice.show", json!({"text": "x", "colour": "red"}), 5000), "/params"),
        (json!({"capability": "notice.show", "params": {"text": "x"}}), ""),
        (create_body("notice.show", json!({"text": "x"}), 60_001), "/timeoutMs"),
        (create_body("notice.show", json!({"text": "x"}), 999), "/timeoutMs"),
        (json!({"capability": "notice.show", "params": {"text": "x"}, "timeoutMs": 5000, "clientId": "host"}), ""),
        (json!({"capability": "notice.show", "timeoutMs": 5000}), ""),
        (json!({"capability": "notice.show", "params": {"text": "x"}, "timeoutMs": -1}), "/timeoutMs"),
        (json!("not an object"), ""),
    ];
    for (body, path) in cases {
        let e = create_err(&f.engine, &a, with_key(body.clone())).await;
        assert_eq!(e.code, ErrorCode::InvalidParams, "{body}");
        assert!(!e.retryable());
        let problems = e.data()["problems"].clone();
        assert!(
            problems.as_array().unwrap().iter().any(|p| p["path"].as_str().unwrap().starts_with(path)),
            "{body}: {problems}"
        );
    }
    // Nothing was recorded: the key is still free and nothing was shown.
    assert!(drain(&mut f.events).await.is_empty());
    let snap = create(&f.engine, &a, with_key(create_body("notice.show", json!({"text": "ok"}), 5000))).await;
    assert_eq!(snap["capability"], "notice.show");
}

// CP-6-16, CP-4-18: what an error echoes of a peer's input (an unknown parameter's name, an
// unknown capability or method) shows its invisible and control characters escaped
// (`\u{200b}`), never raw, and is bounded. (Before: `clie\u{200b}ntId` came back raw in the
// problem's message, a 10,000-character capability id whole.)
#[tokio::test(start_paused = true)]
async fn echoed_names_are_escaped_and_bounded() {
    let f = start();
    let a = agent("a");
    let raw = |s: &str| {
        s.chars().any(|c| c.is_control() || matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{206F}' | '\u{E0000}'..))
    };
    let mut body = create_body("notice.show", json!({"text": "x"}), 5000);
    body["clie\u{200B}ntId"] = json!("host");
    body["params"]["te\u{202E}xt\u{1b}[2J"] = json!(1);
    let e = create_err(&f.engine, &a, body).await;
    assert_eq!(e.code, ErrorCode::InvalidParams);
    let data = e.data().to_string();
    let problems = e.data()["problems"].clone();
    for p in problems.as_array().unwrap() {
        for key in ["path", "message"] {
            assert!(!raw(p[key].as_str().unwrap()), "{p}");
        }
    }
    assert!(data.contains("clie\\\\u{200b}ntId"), "{data}");
    for id in ["notice.sh\u{200B}ow".to_owned(), format!("x.{}", "y".repeat(10_000))] {
        let e = create_err(&f.engine, &a, create_body(&id, json!({}), 5000)).await;
        assert!(!raw(&e.message), "{}", e.message);
        assert!(e.message.chars().count() < 200, "{}", e.message);
    }
    let e = f.engine.call(&a, "requests.l\u{200B}ist", json!({})).await.unwrap_err();
    assert!(!raw(&e.message), "{}", e.message);
    assert!(e.message.contains("\\u{200b}"), "{}", e.message);
}

// CP-2-28: unknown capabilities and styles are refused explicitly.
#[tokio::test(start_paused = true)]
async fn unknown_capability_and_style_are_refused() {
    let f = start();
    let a = agent("a");
    let e = create_err(&f.engine, &a, create_body("notice.shout", json!({}), 5000)).await;
    assert_eq!(e.code, ErrorCode::UnsupportedCapability);
    let e = f.engine.call(&a, "capabilities.describe", json!({"capability": "notice.shout"})).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::UnsupportedCapability);
    let mut body = create_body("notice.show", json!({"text": "x"}), 5000);
    body["style"] = json!("neon");
    body["allowFallback"] = json!(true);
    assert_eq!(create_err(&f.engine, &a, body).await.code, ErrorCode::UnsupportedStyle);
}

// CP-2-20, CP-2-29: a style that does not apply is refused unless fallback is allowed and the
// style declares one; the snapshot then records resolvedStyle and the reason. The tone param is
// untouched by the style.
#[tokio::test(start_paused = true)]
async fn style_fallback_only_when_allowed() {
    let mut f = start();
    let a = agent("a");
    let mut body = create_body("interaction.choose", choose_params(), 5000);
    body["style"] = json!("comic");
    assert_eq!(create_err(&f.engine, &a, body.clone()).await.code, ErrorCode::UnsupportedStyle);
    body["allowFallback"] = json!(true);
    let snap = create(&f.engine, &a, body).await;
    assert_eq!(snap["resolvedStyle"], "bubble");
    assert_eq!(snap["fallbackReason"], "style_unsupported");
    assert_eq!(snap["resolvedCapability"], "interaction.choose");

    let mut body = create_body("notice.show", json!({"text": "x", "tone": "warning"}), 5000);
    body["style"] = json!("comic");
    let snap = create(&f.engine, &a, body).await;
    assert_eq!(snap["resolvedStyle"], "comic");
    assert_eq!(snap["fallbackReason"], Value::Null);
    let first = drain_first_show(&mut f).await;
    f.engine.call(&a, "requests.cancel", json!({"requestId": first})).await.unwrap();
    expect_show(&mut f.events, snap["requestId"].as_str().unwrap()).await;
}

async fn drain_first_show(f: &mut Fixture) -> String {
    match next_event(&mut f.events).await {
        PresenterEvent::Show(p) => p.request_id,
        other => panic!("expected a show, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Character differences and reduced motion (CP-7-8)

// CP-2-26, CP-2-29, CP-2-30, CP-3-1: a character without the capability refuses it unless the
// caller allows the declared fallback; the snapshot and the presenter show what was really used.
#[tokio::test(start_paused = true)]
async fn character_differences_use_declared_fallback_only_when_allowed() {
    let mut f = start();
    let a = agent("a");
    let mut body = create_body("animation.celebrate", json!({"message": "Shipped!"}), 5000);
    body["character"] = json!("cat");
    let e = create_err(&f.engine, &a, body.clone()).await;
    assert_eq!(e.code, ErrorCode::UnsupportedCapability);
    assert_eq!(e.data()["reason"], "character_unsupported");
    assert_eq!(e.data()["fallbackCapability"], "notice.show");

    body["allowFallback"] = json!(true);
    let snap = create(&f.engine, &a, body).await;
    assert_eq!(snap["capability"], "animation.celebrate");
    assert_eq!(snap["resolvedCapability"], "notice.show");
    assert_eq!(snap["fallbackReason"], "character_unsupported");
    assert_eq!(snap["character"], "cat");
    match next_event(&mut f.events).await {
        PresenterEvent::Show(p) => {
            assert_eq!(p.capability, "notice.show");
            assert_eq!(p.params, json!({"text": "Shipped!", "tone": "success"}));
            assert_eq!(p.character, "cat");
        }
        other => panic!("{other:?}"),
    }

    // Unknown character: INVALID_PARAMS. Omitted character: the user's current one.
    let mut body = create_body("notice.show", json!({"text": "x"}), 5000);
    body["character"] = json!("dog");
    assert_eq!(create_err(&f.engine, &a, body).await.code, ErrorCode::InvalidParams);
    assert!(f.engine.set_current_character("cat"));
    assert!(!f.engine.set_current_character("dog"));
    let e = create_err(&f.engine, &a, create_body("animation.celebrate", json!({}), 5000)).await;
    assert_eq!(e.code, ErrorCode::UnsupportedCapability);
    let snap = create(&f.engine, &a, create_body("vendor.com.example.wave", json!({}), 5000)).await;
    assert_eq!(snap["character"], "cat");
}

// CP-7-8 "accessibility/reduced motion", CP-2-29: with reduced motion, animations go through the
// same fallback path: refused without allowFallback, the declared notice with it, refused when no
// fallback is declared.
#[tokio::test(start_paused = true)]
async fn reduced_motion_routes_animations_through_fallback() {
    let f = start();
    let a = agent("a");
    f.engine.set_reduced_motion(true);
    let e = create_err(&f.engine, &a, create_body("animation.celebrate", json!({}), 5000)).await;
    assert_eq!(e.code, ErrorCode::UnsupportedCapability);
    assert_eq!(e.data()["reason"], "reduced_motion");
    let mut body = create_body("animation.celebrate", json!({}), 5000);
    body["allowFallback"] = json!(true);
    let snap = create(&f.engine, &a, body).await;
    assert_eq!(snap["resolvedCapability"], "notice.show");
    assert_eq!(snap["fallbackReason"], "reduced_motion");
    let mut body = create_body("vendor.com.example.wave", json!({}), 5000);
    body["character"] = json!("cat");
    body["allowFallback"] = json!(true);
    assert_eq!(create_err(&f.engine, &a, body).await.code, ErrorCode::UnsupportedCapability);
    // Non-animations are unaffected.
    create(&f.engine, &a, create_body("notice.show", json!({"text": "x"}), 5000)).await;
    let d = f.engine.call(&a, "runtime.describe", json!({})).await.unwrap();
    assert_eq!(d["availability"]["reducedMotion"], true);
}

// CP-2-29, CP-2-30, CP-4-15, CP-7-8 "accessibility/reduced motion": reduced motion turned on while
// animations are still queued (accepted, never shown) takes the same fallback path when they reach
// the display slot: with allowFallback the declared notice is shown instead (resolvedCapability,
// mapped params and fallbackReason recorded, new revision); without it the request ends
// cancelled/reduced_motion. No animation is ever shown while reduced motion is on.
#[tokio::test(start_paused = true)]
async fn reduced_motion_applies_to_queued_animations() {
    let mut f = start();
    let a = agent("a");
    // Hold the display slot so that the animations stay queued.
    let progress =
        create(&f.engine, &a, create_body("progress.show", json!({"label": "Build", "value": 0.1}), 600_000)).await;
    let progress_id = id_of(&progress);
    expect_show(&mut f.events, &progress_id).await;
    let mut body = create_body("animation.celebrate", json!({"message": "Shipped!"}), 60_000);
    body["allowFallback"] = json!(true);
    let allowed = create(&f.engine, &a, body).await;
    let plain = create(&f.engine, &a, create_body("animation.celebrate", json!({}), 60_000)).await;
    let then = create(&f.engine, &a, create_body("notice.show", json!({"text": "after"}), 60_000)).await;
    for s in [&allowed, &plain] {
        assert_eq!((state(s), s["resolvedCapability"].as_str()), ("queued", Some("animation.celebrate")));
    }
    let allowed_id = id_of(&allowed);
    let plain_id = id_of(&plain);

    f.engine.set_reduced_motion(true);
    let s = f.engine.call(
        &a,
        "requests.update",
        json!({"requestId": progress_id, "expectedRevision": 2, "complete": true}),
    );
    assert_eq!(state(&s.await.unwrap()), "completed");

    // Allowed: the declared reduced-motion fallback, params through its map.
    let mut shown = Vec::new();
    for e in drain(&mut f.events).await {
        if let PresenterEvent::Show(p) = e {
            shown.push(p);
        }
    }
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert_eq!(shown[0].request_id, allowed_id);
    assert_eq!(shown[0].capability, "notice.show");
    assert_eq!(shown[0].params, json!({"text": "Shipped!", "tone": "success"}));
    let s = get(&f.engine, &a, &allowed_id).await.unwrap();
    assert_eq!(state(&s), "running");
    assert_eq!(s["capability"], "animation.celebrate");
    assert_eq!(s["resolvedCapability"], "notice.show");
    assert_eq!(s["fallbackReason"], "reduced_motion");
    assert_eq!(s["revision"].as_u64().unwrap(), allowed["revision"].as_u64().unwrap() + 2);

    // Not allowed: never shown, cancelled with a clear reason; the slot goes to the next request.
    f.engine.view_closed(&allowed_id).unwrap();
    let s = get(&f.engine, &a, &plain_id).await.unwrap();
    assert_eq!((state(&s), s["terminalReason"].as_str()), ("cancelled", Some("reduced_motion")));
    assert_eq!(s["resolvedCapability"], "animation.celebrate");
    assert_eq!(s["fallbackReason"], Value::Null);
    assert_eq!(s["displayedAt"], Value::Null);
    let shown: Vec<String> = drain(&mut f.events)
        .await
        .into_iter()
        .filter_map(|e| match e {
            PresenterEvent::Show(p) => Some(p.request_id),
            _ => None,
        })
        .collect();
    assert_eq!(shown, [id_of(&then)]);
}

// ---------------------------------------------------------------------------------------------
// Authorisation and identity

// CP-5-6, CP-6-20, OQ-CP-14: a missing scope is FORBIDDEN, and a fallback cannot get around it.
#[tokio::test(start_paused = true)]
async fn scopes_are_enforced_including_on_fallbacks() {
    let f = start();
    let notifier = ClientIdentity::external("n", "n", [Scope::Notify]);
    let e = create_err(&f.engine, &notifier, create_body("interaction.choose", choose_params(), 5000)).await;
    assert_eq!(e.code, ErrorCode::Forbidden);
    assert_eq!(e.data()["missingScopes"], json!(["interact"]));
    let animator = ClientIdentity::external("m", "m", [Scope::Animate]);
    let mut body = create_body("animation.celebrate", json!({}), 5000);
    body["character"] = json!("cat");
    body["allowFallback"] = json!(true);
    let e = create_err(&f.engine, &animator, body).await;
    assert_eq!(e.code, ErrorCode::Forbidden);
    assert_eq!(e.data()["missingScopes"], json!(["notify"]));
}

// CP-1-7, CP-3-4, CP-4-7: identity comes from authentication; params cannot name a source, and
// the presenter's source label is the pairing record's.
#[tokio::test(start_paused = true)]
async fn identity_comes_from_authentication_only() {
    let mut f = start();
    let a = agent("a");
    for forged in [json!({"clientId": "host"}), json!({"source": "system"}), json!({"internal": true})] {
        let mut body = create_body("notice.show", json!({"text": "x"}), 5000);
        body.as_object_mut().unwrap().extend(forged.as_object().unwrap().clone());
        assert_eq!(create_err(&f.engine, &a, body).await.code, ErrorCode::InvalidParams);
    }
    create(&f.engine, &a, create_body("notice.show", json!({"text": "x"}), 5000)).await;
    match next_event(&mut f.events).await {
        PresenterEvent::Show(p) => {
            assert_eq!(p.source.client_id, "a");
            assert_eq!(p.source.label, "a (paired)");
            assert!(!p.source.internal);
        }
        other => panic!("{other:?}"),
    }
}

// CP-1-5, CP-1-6: host-internal callers use the same validation, queue and result model.
#[tokio::test(start_paused = true)]
async fn host_internal_calls_take_the_same_path() {
    let mut f = start();
    let host = ClientIdentity::host("host.reminders", "Reminders");
    let e = create_err(&f.engine, &host, create_body("interaction.choose", json!({"title": "t"}), 5000)).await;
    assert_eq!(e.code, ErrorCode::InvalidParams);
    let snap = create(&f.engine, &host, create_body("notice.show", json!({"text": "Stand up"}), 5000)).await;
    assert_eq!(snap["state"], "running");
    match next_event(&mut f.events).await {
        PresenterEvent::Show(p) => assert!(p.source.internal),
        other => panic!("{other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Duplicate creation (CP-7-8)

// CP-4-1, CP-4-2, CP-4-3, CP-4-5, OQ-CP-16: same key + same canonical params → the original
// request (key order irrelevant); different params → IDEMPOTENCY_CONFLICT; keys are per client;
// an omitted character differs from an explicit one.
#[tokio::test(start_paused = true)]
async fn duplicate_creates_are_idempotent_per_client() {
    let f = start();
    let (a, b) = (agent("a"), agent("b"));
    let body = json!({"capability": "interaction.choose", "params": choose_params(), "timeoutMs": 5000,
                      "idempotencyKey": "deploy-1"});
    let first = create(&f.engine, &a, body.clone()).await;
    let reordered = json!({"idempotencyKey": "deploy-1", "timeoutMs": 5000,
                           "params": {"options": choose_params()["options"], "title": "Deploy now?"},
                           "capability": "interaction.choose"});
    let again = create(&f.engine, &a, reordered).await;
    assert_eq!(again["requestId"], first["requestId"]);

    let mut changed = body.clone();
    changed["params"]["title"] = json!("Deploy later?");
    let e = create_err(&f.engine, &a, changed).await;
    assert_eq!(e.code, ErrorCode::IdempotencyConflict);
    assert!(!e.retryable());
    let mut explicit = body.clone();
    explicit["character"] = json!("robot");
    assert_eq!(create_err(&f.engine, &a, explicit).await.code, ErrorCode::IdempotencyConflict);

    let other = create(&f.engine, &b, body.clone()).await;
    assert_ne!(other["requestId"], first["requestId"]);

    // A retry after the original ended still returns it (query, never re-prompt: CP-4-5).
    f.engine.call(&a, "requests.cancel", json!({"requestId": first["requestId"]})).await.unwrap();
    let after = create(&f.engine, &a, body).await;
    assert_eq!(after["requestId"], first["requestId"]);
    assert_eq!(after["state"], "cancelled");
}

// ---------------------------------------------------------------------------------------------
// Ownership isolation (CP-7-8)

// CP-4-6, CP-6-18, CP-3-3, CP-5-7, CP-2-10, CP-5-19: another client's request (here a user
// interaction) is NOT_FOUND for every method, indistinguishable from a request that never
// existed; a shared taskId gives no access: its content goes to its owner only.
#[tokio::test(start_paused = true)]
async fn other_clients_requests_are_not_found() {
    let f = start();
    let (a, b) = (agent("a"), agent("b"));
    let mut body = create_body("interaction.choose", choose_params(), 5000);
    body["taskId"] = json!("shared-task");
    let snap = create(&f.engine, &a, body).await;
    assert_eq!(snap["taskId"], "shared-task");
    let id = id_of(&snap);
    let calls = |rid: &str| {
        [
            ("requests.get", json!({"requestId": rid})),
            ("requests.wait", json!({"requestId": rid, "waitMs": 0})),
            ("requests.cancel", json!({"requestId": rid})),
            ("requests.update", json!({"requestId": rid, "expectedRevision": 1, "params": {"title": "x"}})),
        ]
    };
    for ((m, theirs), (_, missing)) in calls(&id).into_iter().zip(calls("req_00000000000000000000000000000000")) {
        let e1 = f.engine.call(&b, m, theirs).await.unwrap_err();
        let e2 = f.engine.call(&b, m, missing).await.unwrap_err();
        assert_eq!(e1.code, ErrorCode::NotFound, "{m}");
        assert_eq!(e1, e2, "{m}: indistinguishable");
    }
    // b's failed attempts changed nothing.
    let mine = get(&f.engine, &a, &id).await.unwrap();
    assert_eq!(mine["revision"], snap["revision"]);
    assert_ne!(mine["state"], "cancelled");
}

// ---------------------------------------------------------------------------------------------
// State machine and results

// CP-3-9, CP-3-10, CP-3-13, CP-3-14, CP-3-16, CP-2-23, CP-2-24, CP-3-11: a choice runs, is
// displayed (displayedAt recorded then), awaits the user, completes only with a valid selected
// id, and stays completed.
#[tokio::test(start_paused = true)]
async fn a_choice_completes_only_by_a_valid_user_selection() {
    let mut f = start();
    let a = agent("a");
    let snap = create(&f.engine, &a, create_body("interaction.choose", choose_params(), 30_000)).await;
    let id = id_of(&snap);
    assert_eq!(snap["state"], "running");
    assert_eq!(snap["revision"], 2);
    assert_eq!(snap["displayedAt"], Value::Null);
    assert_eq!(snap["result"], Value::Null);
    assert_eq!(snap["runtimeInstanceId"], f.engine.runtime_instance_id());
    assert_eq!(snap["deadlineAt"].as_i64().unwrap() - snap["createdAt"].as_i64().unwrap(), 30_000);
    expect_show(&mut f.events, &id).await;

    // The user answers nothing before the view is up.
    assert!(matches!(
        f.engine.user_responded(&id, json!({"selectedId": "yes"})),
        Err(HostError::WrongState { state: RequestState::Running })
    ));
    advance_ms(250).await;
    f.engine.displayed(&id).unwrap();
    let s = get(&f.engine, &a, &id).await.unwrap();
    assert_eq!(s["state"], "awaiting_user");
    assert_eq!(s["displayedAt"].as_i64().unwrap(), snap["createdAt"].as_i64().unwrap() + 250);

    assert!(matches!(f.engine.user_responded(&id, json!({"selectedId": "maybe"})), Err(HostError::InvalidResult(_))));
    assert!(matches!(f.engine.user_responded(&id, json!({"label": "Yes"})), Err(HostError::InvalidResult(_))));
    assert_eq!(state(&get(&f.engine, &a, &id).await.unwrap()), "awaiting_user");

    f.engine.user_responded(&id, json!({"selectedId": "yes"})).unwrap();
    let done = get(&f.engine, &a, &id).await.unwrap();
    assert_eq!(done["state"], "completed");
    assert_eq!(done["result"], json!({"selectedId": "yes"}));
    assert_eq!(done["terminalReason"], Value::Null);
    match next_event(&mut f.events).await {
        PresenterEvent::Hide { request_id, why } => {
            assert_eq!(request_id, id);
            assert_eq!(why.state, RequestState::Completed);
        }
        other => panic!("{other:?}"),
    }
    // Terminal is final: later cancels and closes report the same state.
    let c = f.engine.call(&a, "requests.cancel", json!({"requestId": id})).await.unwrap();
    assert_eq!(c, done);
    assert!(f.engine.view_closed(&id).is_err());
    assert!(f.engine.user_responded(&id, json!({"selectedId": "no"})).is_err());
    assert_eq!(get(&f.engine, &a, &id).await.unwrap(), done);
}

// CP-3-12, CP-3-16: closing the choice view is an explicit cancellation with no answer.
#[tokio::test(start_paused = true)]
async fn closing_a_choice_cancels_without_a_default_answer() {
    let mut f = start();
    let a = agent("a");
    let id = id_of(&create(&f.engine, &a, create_body("interaction.choose", choose_params(), 30_000)).await);
    expect_show(&mut f.events, &id).await;
    f.engine.displayed(&id).unwrap();
    f.engine.view_closed(&id).unwrap();
    let s = get(&f.engine, &a, &id).await.unwrap();
    assert_eq!(s["state"], "cancelled");
    assert_eq!(s["terminalReason"], "user_cancelled");
    assert_eq!(s["result"], Value::Null);
}

// CP-3-15, CP-3-19, CP-2-19: a notice completes after its display time counted from displayedAt;
// an animation completes when the host says it ended, with `{}` as result.
#[tokio::test(start_paused = true)]
async fn notices_and_animations_complete_by_their_contract() {
    let mut f = start();
    let a = agent("a");
    let n = id_of(&create(&f.engine, &a, create_body("notice.show", json!({"text": "Saved"}), 60_000)).await);
    expect_show(&mut f.events, &n).await;
    advance_ms(1_000).await; // time on the queue/slot before display does not count
    f.engine.displayed(&n).unwrap();
    advance_ms(3_999).await;
    assert_eq!(state(&get(&f.engine, &a, &n).await.unwrap()), "running");
    advance_ms(1).await;
    let s = get(&f.engine, &a, &n).await.unwrap();
    assert_eq!(s["state"], "completed");
    assert_eq!(s["result"], json!({}));

    let c = id_of(&create(&f.engine, &a, create_body("animation.celebrate", json!({}), 60_000)).await);
    expect_show(&mut f.events, &c).await;
    f.engine.displayed(&c).unwrap();
    assert_eq!(state(&get(&f.engine, &a, &c).await.unwrap()), "running");
    f.engine.finished(&c).unwrap();
    let s = get(&f.engine, &a, &c).await.unwrap();
    assert_eq!(s["state"], "completed");
    assert_eq!(s["result"], json!({}));
}

// ---------------------------------------------------------------------------------------------
// Updates and concurrent updates (CP-7-8)

// CP-2-11, CP-3-25, CP-3-26: progress updates keep one requestId and one view (one show, then
// in-place updates), need the current revision, change only updatable fields, and the caller
// completes it.
#[tokio::test(start_paused = true)]
async fn progress_updates_in_place() {
    let mut f = start();
    let a = agent("a");
    let snap =
        create(&f.engine, &a, create_body("progress.show", json!({"label": "Build", "value": 0.1}), 600_000)).await;
    let id = id_of(&snap);
    expect_show(&mut f.events, &id).await;
    f.engine.displayed(&id).unwrap();
    let mut rev = get(&f.engine, &a, &id).await.unwrap()["revision"].as_u64().unwrap();
    for v in [0.4, 0.8] {
        let s = f
            .engine
            .call(&a, "requests.update", json!({"requestId": id, "expectedRevision": rev, "params": {"value": v}}))
            .await
            .unwrap();
        assert_eq!(s["requestId"], id.as_str());
        assert_eq!(s["revision"].as_u64().unwrap(), rev + 1);
        assert_eq!(s["deadlineAt"], snap["deadlineAt"]);
        rev += 1;
        match next_event(&mut f.events).await {
            PresenterEvent::Update(p) => {
                assert_eq!(p.request_id, id);
                assert_eq!(p.params, json!({"label": "Build", "value": v}));
            }
            other => panic!("expected an in-place update, got {other:?}"),
        }
    }
    let stale = f
        .engine
        .call(&a, "requests.update", json!({"requestId": id, "expectedRevision": rev - 1, "params": {"value": 0.9}}))
        .await
        .unwrap_err();
    assert_eq!(stale.code, ErrorCode::RevisionConflict);
    assert_eq!(stale.data()["currentRevision"], rev);
    let e = f
        .engine
        .call(&a, "requests.update", json!({"requestId": id, "expectedRevision": rev, "params": {"colour": "red"}}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidParams);
    let e = f
        .engine
        .call(&a, "requests.update", json!({"requestId": id, "expectedRevision": rev, "params": {"value": 7}}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidParams);
    // CP-3-25: expectedRevision is required.
    let e = f.engine.call(&a, "requests.update", json!({"requestId": id, "params": {"value": 0.9}})).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidParams);
    // CP-3-18: the deadline cannot be extended through updates.
    let e = f
        .engine
        .call(&a, "requests.update", json!({"requestId": id, "expectedRevision": rev, "timeoutMs": 3_600_000}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidParams);
    let e = f
        .engine
        .call(&a, "requests.update", json!({"requestId": id, "expectedRevision": rev, "params": {"timeoutMs": 1}}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidParams);

    let done = f
        .engine
        .call(&a, "requests.update", json!({"requestId": id, "expectedRevision": rev, "complete": true}))
        .await
        .unwrap();
    assert_eq!(done["state"], "completed");
    let shows = drain(&mut f.events).await.iter().filter(|e| matches!(e, PresenterEvent::Show(_))).count();
    assert_eq!(shows, 0, "no second bubble");
    let e = f
        .engine
        .call(&a, "requests.update", json!({"requestId": id, "expectedRevision": rev + 1, "params": {"value": 1}}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidParams);
}

// CP-3-25, CP-3-24, CP-7-8 "concurrent updates": two updates based on the same revision, run
// concurrently: exactly one applies, the other gets REVISION_CONFLICT.
#[test]
fn concurrent_updates_exactly_one_wins() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async {
        let f = start();
        let a = agent("a");
        for round in 0..50 {
            let s =
                create(&f.engine, &a, create_body("progress.show", json!({"label": "x", "value": 0}), 600_000)).await;
            let id = id_of(&s);
            let rev = s["revision"].as_u64().unwrap();
            let mk = |v: f64| {
                let (e, a, id) = (f.engine.clone(), a.clone(), id.clone());
                tokio::spawn(async move {
                    e.call(
                        &a,
                        "requests.update",
                        json!({"requestId": id, "expectedRevision": rev, "params": {"value": v}}),
                    )
                    .await
                })
            };
            let (r1, r2) = tokio::join!(mk(0.25), mk(0.75));
            let results = [r1.unwrap(), r2.unwrap()];
            let ok = results.iter().filter(|r| r.is_ok()).count();
            let conflicts =
                results.iter().filter(|r| matches!(r, Err(e) if e.code == ErrorCode::RevisionConflict)).count();
            assert_eq!((ok, conflicts), (1, 1), "round {round}");
            let now = get(&f.engine, &a, &id).await.unwrap();
            assert_eq!(now["revision"].as_u64().unwrap(), rev + 1);
            f.engine.call(&a, "requests.cancel", json!({"requestId": id})).await.unwrap();
        }
    });
}

// CP-3-27, OQ-CP-17: an interaction's question may change while queued, never once displayed.
#[tokio::test(start_paused = true)]
async fn displayed_interactions_are_frozen() {
    let mut f = start();
    let a = agent("a");
    let first = id_of(&create(&f.engine, &a, create_body("interaction.choose", choose_params(), 60_000)).await);
    let text = create(&f.engine, &a, create_body("interaction.text", json!({"prompt": "Name?"}), 60_000)).await;
    let id = id_of(&text);
    assert_eq!(text["state"], "queued");
    let s = f
        .engine
        .call(
            &a,
            "requests.update",
            json!({"requestId": id, "expectedRevision": 1, "params": {"prompt": "Full name?"}}),
        )
        .await
        .unwrap();
    assert_eq!(s["revision"], 2);
    // interaction.choose declares no updatable field at all.
    let e = f
        .engine
        .call(&a, "requests.update", json!({"requestId": first, "expectedRevision": 2, "params": {"title": "x"}}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidParams);

    expect_show(&mut f.events, &first).await;
    f.engine.displayed(&first).unwrap();
    f.engine.user_responded(&first, json!({"selectedId": "no"})).unwrap();
    let shown = match next_event(&mut f.events).await {
        PresenterEvent::Hide { .. } => drain_first_show(&mut f).await,
        PresenterEvent::Show(p) => p.request_id,
        other => panic!("{other:?}"),
    };
    assert_eq!(shown, id);
    f.engine.displayed(&id).unwrap();
    let rev = get(&f.engine, &a, &id).await.unwrap()["revision"].as_u64().unwrap();
    let e = f
        .engine
        .call(&a, "requests.update", json!({"requestId": id, "expectedRevision": rev, "params": {"prompt": "Other?"}}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidParams);
    assert!(!e.retryable());
    let s = get(&f.engine, &a, &id).await.unwrap();
    assert_eq!(s["revision"].as_u64().unwrap(), rev);
}

// ---------------------------------------------------------------------------------------------
// Timeouts and waiting (CP-7-8)

// CP-3-17, CP-3-18, CP-4-12: the deadline runs from acceptance and includes queueing: a queued
// request expires without ever being shown; a displayed interaction expires with no answer and a
// late click loses.
#[tokio::test(start_paused = true)]
async fn timeouts_run_from_acceptance() {
    let mut f = start();
    let a = agent("a");
    let holder = id_of(&create(&f.engine, &a, create_body("interaction.choose", choose_params(), 20_000)).await);
    expect_show(&mut f.events, &holder).await;
    f.engine.displayed(&holder).unwrap();
    let queued = create(&f.engine, &a, create_body("notice.show", json!({"text": "later"}), 5_000)).await;
    let q = id_of(&queued);
    assert_eq!(queued["state"], "queued");
    advance_ms(4_999).await;
    assert_eq!(state(&get(&f.engine, &a, &q).await.unwrap()), "queued");
    advance_ms(1).await;
    let s = get(&f.engine, &a, &q).await.unwrap();
    assert_eq!(s["state"], "expired");
    assert_eq!(s["terminalReason"], "timeout");
    assert_eq!(s["displayedAt"], Value::Null);

    advance_ms(15_000).await;
    let s = get(&f.engine, &a, &holder).await.unwrap();
    assert_eq!(s["state"], "expired");
    assert_eq!(s["result"], Value::Null);
    assert!(matches!(
        f.engine.user_responded(&holder, json!({"selectedId": "yes"})),
        Err(HostError::WrongState { state: RequestState::Expired })
    ));
    let events = drain(&mut f.events).await;
    assert!(!events.iter().any(|e| matches!(e, PresenterEvent::Show(p) if p.request_id == q)), "never shown");
}

// CP-2-9, CP-3-20, CP-3-21, OQ-CP-7: wait returns `unchanged` with the revision after waitMs and
// cancels nothing; it returns at once when the revision moved; it wakes on the user's answer;
// waitMs is bounded.
#[tokio::test(start_paused = true)]
async fn wait_is_bounded_and_never_cancels() {
    let mut f = start();
    let a = agent("a");
    let snap = create(&f.engine, &a, create_body("interaction.choose", choose_params(), 120_000)).await;
    let id = id_of(&snap);
    expect_show(&mut f.events, &id).await;
    f.engine.displayed(&id).unwrap();
    let rev = get(&f.engine, &a, &id).await.unwrap()["revision"].as_u64().unwrap();

    let start = tokio::time::Instant::now();
    let w = f.engine.call(&a, "requests.wait", json!({"requestId": id, "afterRevision": rev, "waitMs": 10_000})).await;
    assert_eq!(w.unwrap(), json!({"unchanged": true, "requestId": id, "revision": rev, "state": "awaiting_user"}));
    assert_eq!(start.elapsed(), Duration::from_millis(10_000));
    assert_eq!(state(&get(&f.engine, &a, &id).await.unwrap()), "awaiting_user");

    let w = f.engine.call(&a, "requests.wait", json!({"requestId": id, "afterRevision": 1})).await.unwrap();
    assert_eq!(w["revision"].as_u64().unwrap(), rev);
    let e = f.engine.call(&a, "requests.wait", json!({"requestId": id, "waitMs": 60_001})).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidParams);

    let (engine, a2, id2) = (f.engine.clone(), a.clone(), id.clone());
    let waiter = tokio::spawn(async move {
        engine.call(&a2, "requests.wait", json!({"requestId": id2, "afterRevision": rev, "waitMs": 60_000})).await
    });
    settle().await;
    advance_ms(2_000).await;
    f.engine.user_responded(&id, json!({"selectedId": "no"})).unwrap();
    let w = waiter.await.unwrap().unwrap();
    assert_eq!(w["state"], "completed");
    assert_eq!(w["result"], json!({"selectedId": "no"}));
}

// ---------------------------------------------------------------------------------------------
// Click races (CP-7-8)

// CP-3-24, CP-3-11: the user's click, the client's cancel, the view closing and the deadline race
// on real threads; exactly one terminal state wins, the host learns whether its click counted,
// and every later read agrees.
#[test]
fn click_races_end_in_exactly_one_terminal_state() {
    use bridge_runtime::companion::{Clock, Engine, ScriptedPresenter};
    use std::sync::{Arc, Barrier};

    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let clock = Clock::manual(1_800_000_000_000);
    let (engine, _events) = rt.block_on(async {
        let (presenter, events) = ScriptedPresenter::new();
        let presenter = presenter.auto_display(true);
        let engine = Engine::builder(catalog()).presenter(presenter).clock(clock.clone()).start().unwrap();
        (engine, events)
    });
    let a = agent("a");
    let mut outcomes = std::collections::HashMap::new();
    for round in 0..60 {
        let snap = rt.block_on(create(&engine, &a, create_body("interaction.choose", choose_params(), 1_000)));
        let id = id_of(&snap);
        // Wait for the scripted presenter to report the display.
        loop {
            let s = rt.block_on(get(&engine, &a, &id)).unwrap();
            if s["state"] == "awaiting_user" {
                break;
            }
            std::thread::yield_now();
        }
        let barrier = Arc::new(Barrier::new(4));
        let spawn = |f: Box<dyn FnOnce() -> Option<String> + Send>| {
            let b = barrier.clone();
            std::thread::spawn(move || {
                b.wait();
                f()
            })
        };
        let (e1, id1) = (engine.clone(), id.clone());
        let click =
            spawn(Box::new(move || e1.user_responded(&id1, json!({"selectedId": "yes"})).ok().map(|_| "click".into())));
        let (e2, id2, a2, h) = (engine.clone(), id.clone(), a.clone(), rt.handle().clone());
        let cancel = spawn(Box::new(move || {
            let s = h.block_on(e2.call(&a2, "requests.cancel", json!({"requestId": id2}))).unwrap();
            Some(s["state"].as_str().unwrap().to_owned())
        }));
        let (e3, id3) = (engine.clone(), id.clone());
        let close = spawn(Box::new(move || e3.view_closed(&id3).ok().map(|_| "close".into())));
        let (e4, c4) = (engine.clone(), clock.clone());
        let expire = spawn(Box::new(move || {
            c4.advance(1_000);
            e4.recheck_timers();
            None
        }));
        let clicked = click.join().unwrap().is_some();
        let cancel_saw = cancel.join().unwrap().unwrap();
        let closed = close.join().unwrap().is_some();
        expire.join().unwrap();

        let fin = rt.block_on(get(&engine, &a, &id)).unwrap();
        let st = fin["state"].as_str().unwrap().to_owned();
        assert!(["completed", "cancelled", "expired"].contains(&st.as_str()), "round {round}: {fin}");
        // Exactly one winner, and the losers were told.
        assert_eq!(clicked, st == "completed", "round {round}: {fin}");
        assert_eq!(closed, fin["terminalReason"] == "user_cancelled", "round {round}: {fin}");
        assert_eq!(cancel_saw, st, "the cancel call reports the winning terminal state");
        if st == "completed" {
            assert_eq!(fin["result"], json!({"selectedId": "yes"}));
        } else {
            assert_eq!(fin["result"], Value::Null);
        }
        for _ in 0..3 {
            assert_eq!(rt.block_on(get(&engine, &a, &id)).unwrap(), fin);
        }
        *outcomes.entry(format!("{st}/{}", fin["terminalReason"])).or_insert(0) += 1;
    }
    eprintln!("click race outcomes: {outcomes:?}");
}

// ---------------------------------------------------------------------------------------------
// Hidden state (CP-7-8)

// CP-4-15, CP-7-13: hiding the sprite rejects new requests from every source and cancels the
// accepted ones with a reason; showing it again brings nothing back by itself. Pausing external
// interaction does the same for external clients only.
#[tokio::test(start_paused = true)]
async fn hidden_or_paused_runtime_rejects_and_cancels() {
    let mut f = start();
    let a = agent("a");
    let host = ClientIdentity::host("host", "Host");
    let shown = id_of(&create(&f.engine, &a, create_body("interaction.choose", choose_params(), 60_000)).await);
    let queued = id_of(&create(&f.engine, &a, create_body("notice.show", json!({"text": "x"}), 60_000)).await);
    expect_show(&mut f.events, &shown).await;
    f.engine.displayed(&shown).unwrap();

    f.engine.set_visible(false);
    for id in [&shown, &queued] {
        let s = get(&f.engine, &a, id).await.unwrap();
        assert_eq!(s["state"], "cancelled");
        assert_eq!(s["terminalReason"], "runtime_unavailable");
    }
    assert!(matches!(next_event(&mut f.events).await, PresenterEvent::Hide { request_id, .. } if request_id == shown));
    for who in [&a, &host] {
        let e = create_err(&f.engine, who, create_body("notice.show", json!({"text": "x"}), 5_000)).await;
        assert_eq!(e.code, ErrorCode::RuntimeUnavailable);
        assert!(e.retryable());
    }
    f.engine.set_visible(true);
    assert!(drain(&mut f.events).await.is_empty(), "nothing comes back by itself");

    let ext = id_of(&create(&f.engine, &a, create_body("notice.show", json!({"text": "x"}), 60_000)).await);
    f.engine.set_external_paused(true);
    let s = get(&f.engine, &a, &ext).await.unwrap();
    assert_eq!((s["state"].as_str(), s["terminalReason"].as_str()), (Some("cancelled"), Some("runtime_unavailable")));
    let e = create_err(&f.engine, &a, create_body("notice.show", json!({"text": "x"}), 5_000)).await;
    assert_eq!(e.code, ErrorCode::RuntimeUnavailable);
    let internal = create(&f.engine, &host, create_body("notice.show", json!({"text": "x"}), 5_000)).await;
    assert_eq!(internal["state"], "running");
}

// ---------------------------------------------------------------------------------------------
// Capacity (CP-7-8)

fn small_config() -> EngineConfig {
    EngineConfig {
        max_active_per_client: 3,
        max_active_total: 4,
        max_creates_per_minute: 100,
        ..EngineConfig::default()
    }
}

// CP-4-8, CP-4-9, CP-4-10, CP-4-11, OQ-CP-8: per-client and total limits give QUEUE_FULL
// (retryable); a queued notice may be evicted (cancelled/queue_evicted, never silently) by a newer
// request of its own client; interactions are never evicted.
#[tokio::test(start_paused = true)]
async fn capacity_is_bounded_and_eviction_is_visible() {
    let f = start_with(small_config(), SqliteStore::in_memory().unwrap());
    let (a, b) = (agent("a"), agent("b"));
    let choose = || create_body("interaction.choose", choose_params(), 60_000);
    let notice = |t: &str| create_body("notice.show", json!({"text": t}), 60_000);
    let c1 = id_of(&create(&f.engine, &a, choose()).await);
    let n1 = id_of(&create(&f.engine, &a, notice("n1")).await);
    let n2 = id_of(&create(&f.engine, &a, notice("n2")).await);
    // Full for a: a new notice evicts a's oldest queued notice.
    let n3 = id_of(&create(&f.engine, &a, notice("n3")).await);
    assert_eq!(state(&get(&f.engine, &a, &n3).await.unwrap()), "queued");
    let s = get(&f.engine, &a, &n1).await.unwrap();
    assert_eq!((s["state"].as_str(), s["terminalReason"].as_str()), (Some("cancelled"), Some("queue_evicted")));
    assert_eq!(state(&get(&f.engine, &a, &n2).await.unwrap()), "queued");
    // An interaction never evicts anything but a notice, and is never evicted: fill a with chooses.
    let c2 = id_of(&create(&f.engine, &a, choose()).await); // evicts n2
    let c3 = id_of(&create(&f.engine, &a, choose()).await); // evicts n3
    let e = create_err(&f.engine, &a, notice("n4")).await;
    assert_eq!(e.code, ErrorCode::QueueFull);
    assert!(e.retryable());
    assert_eq!(e.data()["limit"], "maxActivePerClient");
    for id in [&c1, &c2, &c3] {
        assert_ne!(state(&get(&f.engine, &a, id).await.unwrap()), "cancelled");
    }
    // Total limit: b gets one (an interaction), then QUEUE_FULL: b has nothing of its own to evict
    // and other clients' requests are never evicted for it.
    create(&f.engine, &b, create_body("interaction.text", json!({"prompt": "?"}), 60_000)).await;
    let e = create_err(&f.engine, &b, notice("b2")).await;
    assert_eq!(e.code, ErrorCode::QueueFull);
    assert_eq!(e.data()["limit"], "maxActiveTotal");
}

// CP-4-9, OQ-CP-8: the create rate per client is limited (RATE_LIMITED with retryAfterMs) and
// recovers after the window.
#[tokio::test(start_paused = true)]
async fn create_rate_is_limited() {
    let config = EngineConfig { max_creates_per_minute: 3, ..EngineConfig::default() };
    let f = start_with(config, SqliteStore::in_memory().unwrap());
    let a = agent("a");
    for _ in 0..3 {
        let id = id_of(&create(&f.engine, &a, create_body("notice.show", json!({"text": "x"}), 5_000)).await);
        f.engine.call(&a, "requests.cancel", json!({"requestId": id})).await.unwrap();
    }
    let e = create_err(&f.engine, &a, create_body("notice.show", json!({"text": "x"}), 5_000)).await;
    assert_eq!(e.code, ErrorCode::RateLimited);
    assert!(e.retryable());
    assert_eq!(e.data()["retryAfterMs"], 60_000);
    create(&f.engine, &agent("b"), create_body("notice.show", json!({"text": "x"}), 5_000)).await;
    advance_ms(60_000).await;
    create(&f.engine, &a, create_body("notice.show", json!({"text": "x"}), 5_000)).await;
}

// CP-4-12: the display slot goes round robin across clients, so one busy client cannot keep it.
#[tokio::test(start_paused = true)]
async fn the_display_slot_is_shared_fairly() {
    let mut f = start();
    let (a, b) = (agent("a"), agent("b"));
    let mut a_ids = Vec::new();
    for t in ["a1", "a2", "a3"] {
        a_ids.push(id_of(&create(&f.engine, &a, create_body("notice.show", json!({"text": t}), 60_000)).await));
    }
    let b1 = id_of(&create(&f.engine, &b, create_body("notice.show", json!({"text": "b1"}), 60_000)).await);
    let mut order = Vec::new();
    for _ in 0..4 {
        let id = drain_first_show(&mut f).await;
        f.engine.displayed(&id).unwrap();
        f.engine.finished(&id).unwrap();
        order.push(id);
        let _hide = next_event(&mut f.events).await;
    }
    assert_eq!(order, vec![a_ids[0].clone(), b1, a_ids[1].clone(), a_ids[2].clone()]);
}

// CP-2-10: a capability that declares `cancelable: false` cannot be cancelled by its caller.
#[tokio::test(start_paused = true)]
async fn non_cancelable_capabilities_refuse_cancel() {
    let f = start();
    f.catalog
        .write()
        .unwrap()
        .register_capability(
            CapabilitySpec::new("animation.bow", bridge_runtime::catalog::CapabilityKind::Animation)
                .version("0.1.0")
                .cancelable(false)
                .build()
                .unwrap(),
        )
        .unwrap();
    let a = agent("a");
    let mut body = create_body("animation.bow", json!({}), 5_000);
    body["character"] = json!("robot");
    // robot does not list animation.bow: unsupported; register support via a new character.
    assert_eq!(create_err(&f.engine, &a, body.clone()).await.code, ErrorCode::UnsupportedCapability);
    f.catalog
        .write()
        .unwrap()
        .register_character(bridge_runtime::catalog::CharacterSpec::new("owl", "Owl").supports(["animation.bow"]))
        .unwrap();
    body["character"] = json!("owl");
    let id = id_of(&create(&f.engine, &a, body).await);
    let e = f.engine.call(&a, "requests.cancel", json!({"requestId": id})).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidParams);
    assert_eq!(state(&get(&f.engine, &a, &id).await.unwrap()), "running");
}

// ---------------------------------------------------------------------------------------------
// Revocation (CP-7-8)

// CP-4-22, CP-5-2: revoking a key cancels that client's open requests at once, purges its params
// and results from storage, rejects its further calls, and leaves other clients alone.
#[tokio::test(start_paused = true)]
async fn revocation_cancels_and_purges() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("companion.sqlite");
    let mut f = start_with(EngineConfig::default(), SqliteStore::open(&path).unwrap());
    let (a, b) = (agent("a"), agent("b"));
    let done = id_of(&create(&f.engine, &a, create_body("interaction.choose", choose_params(), 60_000)).await);
    expect_show(&mut f.events, &done).await;
    f.engine.displayed(&done).unwrap();
    f.engine.user_responded(&done, json!({"selectedId": "yes"})).unwrap();
    let open =
        id_of(&create(&f.engine, &a, create_body("interaction.text", json!({"prompt": "Secret?"}), 60_000)).await);
    let theirs = id_of(&create(&f.engine, &b, create_body("notice.show", json!({"text": "b"}), 60_000)).await);

    f.engine.client_revoked("a");
    let e = get(&f.engine, &a, &open).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::Unauthenticated);
    assert_eq!(
        create_err(&f.engine, &a, create_body("notice.show", json!({"text": "x"}), 5_000)).await.code,
        ErrorCode::Unauthenticated
    );
    assert_ne!(state(&get(&f.engine, &b, &theirs).await.unwrap()), "cancelled");

    let conn = rusqlite::Connection::open(&path).unwrap();
    let body = |id: &str| -> Value {
        let s: String = conn.query_row("SELECT body FROM requests WHERE request_id = ?1", [id], |r| r.get(0)).unwrap();
        serde_json::from_str(&s).unwrap()
    };
    let open_rec = body(&open);
    assert_eq!(open_rec["snapshot"]["state"], "cancelled");
    assert_eq!(open_rec["snapshot"]["terminalReason"], "key_revoked");
    let done_rec = body(&done);
    assert_eq!(done_rec["snapshot"]["state"], "completed");
    for rec in [&open_rec, &done_rec] {
        assert_eq!(rec["snapshot"]["result"], Value::Null);
        assert_eq!(rec["params"], Value::Null);
        assert_eq!(rec["resolvedParams"], Value::Null);
        assert!(!rec.to_string().contains("Secret?") && !rec.to_string().contains("Deploy now?"));
    }
    assert_eq!(body(&theirs)["params"], json!({"text": "b"}));
}

// CP-3-8, OQ-CP-5: create and query responses share one snapshot model, every key always present.
#[tokio::test(start_paused = true)]
async fn create_and_get_share_one_snapshot_model() {
    let f = start();
    let a = agent("a");
    let created = create(&f.engine, &a, create_body("notice.show", json!({"text": "x"}), 5_000)).await;
    let fetched = get(&f.engine, &a, &id_of(&created)).await.unwrap();
    let keys = [
        "requestId",
        "runtimeInstanceId",
        "capability",
        "character",
        "taskId",
        "state",
        "revision",
        "createdAt",
        "deadlineAt",
        "displayedAt",
        "resolvedCapability",
        "resolvedStyle",
        "fallbackReason",
        "terminalReason",
        "result",
    ];
    for snap in [&created, &fetched] {
        let mut have: Vec<&str> = snap.as_object().unwrap().keys().map(String::as_str).collect();
        have.sort();
        let mut want = keys.to_vec();
        want.sort();
        assert_eq!(have, want);
    }
    assert_eq!(created, fetched);
    assert!(created["requestId"].as_str().unwrap().starts_with("req_"));
}

/// Creates and cancels `n` notices of `client` (terminal records that stay stored), then returns
/// their ids and the error of one more create.
async fn fill_records(
    engine: &bridge_runtime::companion::Engine,
    client: &ClientIdentity,
    n: usize,
) -> (Vec<String>, bridge_runtime::companion::CompanionError) {
    let mut ids = Vec::new();
    for _ in 0..n {
        let id = id_of(&create(engine, client, create_body("notice.show", json!({"text": "x"}), 5_000)).await);
        engine.call(client, "requests.cancel", json!({"requestId": id})).await.unwrap();
        ids.push(id);
    }
    (ids, create_err(engine, client, create_body("notice.show", json!({"text": "x"}), 5_000)).await)
}

// CP-4-19, OQ-CP-8: at the record limit new requests are refused with QUEUE_FULL; the stored
// results are not evicted to make room.
#[tokio::test(start_paused = true)]
async fn the_record_limit_refuses_instead_of_evicting_results() {
    let config =
        EngineConfig { max_active_per_client: 2, max_active_total: 2, max_records: 3, ..EngineConfig::default() };
    let f = start_with(config, SqliteStore::in_memory().unwrap());
    let a = agent("a");
    let (ids, e) = fill_records(&f.engine, &a, 3).await;
    assert_eq!(e.code, ErrorCode::QueueFull);
    assert_eq!(e.data()["limit"], "maxRecords");
    for id in &ids {
        assert_eq!(state(&get(&f.engine, &a, id).await.unwrap()), "cancelled");
    }
}

// CP-2-19, CP-3-9: an animation without business output still ends in a request state: failed
// when the host cannot present it, cancelled when its caller cancels.
#[tokio::test(start_paused = true)]
async fn animations_still_have_request_states() {
    let mut f = start();
    let a = agent("a");
    let id = id_of(&create(&f.engine, &a, create_body("animation.celebrate", json!({}), 5_000)).await);
    expect_show(&mut f.events, &id).await;
    f.engine.presentation_failed(&id).unwrap();
    let s = get(&f.engine, &a, &id).await.unwrap();
    assert_eq!((s["state"].as_str(), s["terminalReason"].as_str()), (Some("failed"), Some("presentation_failed")));
    assert_eq!(s["result"], Value::Null);
    let id = id_of(&create(&f.engine, &a, create_body("animation.celebrate", json!({}), 5_000)).await);
    let s = f.engine.call(&a, "requests.cancel", json!({"requestId": id})).await.unwrap();
    assert_eq!((s["state"].as_str(), s["terminalReason"].as_str()), (Some("cancelled"), Some("client_cancelled")));
}

// CP-4-8, CP-4-19, OQ-CP-8: one client cannot fill the record store and lock every other client
// out for the retention period: past its share (`maxRecordsPerClient`, published by
// runtime.describe) it gets QUEUE_FULL, its stored results stay, and another client still
// creates. (Old main had only the global cap: client A took all of it and B got QUEUE_FULL.)
#[tokio::test(start_paused = true)]
async fn one_client_cannot_take_every_record() {
    let config = EngineConfig {
        max_active_per_client: 2,
        max_active_total: 4,
        max_records: 6,
        max_records_per_client: 3,
        ..EngineConfig::default()
    };
    let f = start_with(config, SqliteStore::in_memory().unwrap());
    let (a, b) = (agent("a"), agent("b"));
    let d = f.engine.call(&a, "runtime.describe", json!({})).await.unwrap();
    assert_eq!(d["limits"]["maxRecordsPerClient"], 3);
    let (ids, e) = fill_records(&f.engine, &a, 3).await;
    assert_eq!(e.code, ErrorCode::QueueFull);
    assert_eq!(e.data()["limit"], "maxRecordsPerClient");
    assert!(e.retryable());
    for id in &ids {
        assert_eq!(state(&get(&f.engine, &a, id).await.unwrap()), "cancelled", "nothing evicted");
    }
    let other = create(&f.engine, &b, create_body("notice.show", json!({"text": "y"}), 5_000)).await;
    assert!(other["requestId"].is_string(), "another client still creates");
}

/// A presenter whose UI thread froze: its first `show` does not return until the test releases
/// it, so the engine's queue of presentation changes is not drained meanwhile. Every call is
/// recorded by the inner [`ScriptedPresenter`].
struct FrozenPresenter {
    inner: ScriptedPresenter,
    entered: std::sync::Mutex<Option<std::sync::mpsc::Sender<()>>>,
    gate: Arc<(std::sync::Mutex<bool>, std::sync::Condvar)>,
}

/// Unfreezes the presenter when dropped, so that a failing test ends instead of hanging.
struct Thaw(Arc<(std::sync::Mutex<bool>, std::sync::Condvar)>);

impl Drop for Thaw {
    fn drop(&mut self) {
        *self.0.0.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.0.1.notify_all();
    }
}

impl Presenter for FrozenPresenter {
    fn show(&self, presentation: &Presentation, engine: &Engine) {
        self.inner.show(presentation, engine);
        if let Some(entered) = self.entered.lock().unwrap().take() {
            entered.send(()).unwrap();
            let (open, cv) = &*self.gate;
            let _open = cv.wait_while(open.lock().unwrap(), |open| !*open).unwrap();
        }
    }
    fn update(&self, presentation: &Presentation, engine: &Engine) {
        self.inner.update(presentation, engine);
    }
    fn hide(&self, request_id: &str, why: HideReason, engine: &Engine) {
        self.inner.hide(request_id, why, engine);
    }
}

// CP-4-8, CP-4-9, CP-4-20: the presenter's queue of changes is bounded. While the app does not
// draw, updates of the request on screen are accepted up to `maxPendingPresentations`
// (published in runtime.describe), then refused with QUEUE_FULL (retryable, `limit` named)
// before anything is recorded: the revision stays, the refused value never reaches the screen.
// Taking the view down still has room, and a request created meanwhile stays queued and is
// shown once the app catches up: nothing accepted is lost. (Before: every update was accepted
// and queued without bound.)
#[test]
fn a_presenter_that_does_not_draw_gets_queue_full_and_nothing_is_lost() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async {
        let (inner, mut events) = ScriptedPresenter::new();
        let (entered_tx, entered) = std::sync::mpsc::channel();
        let gate = Arc::new((std::sync::Mutex::new(false), std::sync::Condvar::new()));
        let presenter = FrozenPresenter { inner, entered: std::sync::Mutex::new(Some(entered_tx)), gate: gate.clone() };
        let thaw = Thaw(gate);
        let engine = Engine::builder(catalog()).presenter(presenter).start().unwrap();
        let a = agent("a");
        let snap =
            create(&engine, &a, create_body("progress.show", json!({"label": "Build", "value": 0}), 600_000)).await;
        let id = id_of(&snap);
        tokio::task::spawn_blocking(move || entered.recv_timeout(Duration::from_secs(30)).expect("shown"))
            .await
            .unwrap();

        let mut rev = get(&engine, &a, &id).await.unwrap()["revision"].as_u64().unwrap();
        let mut accepted = Vec::new();
        let mut refused = None;
        for i in 1..=10_000u32 {
            let value = f64::from(i) / 100_000.0;
            let body = json!({"requestId": id, "expectedRevision": rev, "params": {"value": value}});
            match engine.call(&a, "requests.update", body).await {
                Ok(s) => {
                    rev = s["revision"].as_u64().unwrap();
                    accepted.push(value);
                }
                Err(e) => {
                    refused = Some((e, value));
                    break;
                }
            }
        }
        let (e, refused_value) = refused.expect("a presenter that never draws must not be queued for without bound");
        assert_eq!(e.code, ErrorCode::QueueFull, "{e:?}");
        assert!(e.retryable());
        assert_eq!(e.data()["limit"], "maxPendingPresentations");
        let limits = engine.call(&a, "runtime.describe", json!({})).await.unwrap()["limits"].clone();
        let limit = limits["maxPendingPresentations"].as_u64().expect("the bound is published");
        assert_eq!(limit, EngineConfig::default().max_pending_presentations as u64);
        // One place stays free for taking the view down.
        assert_eq!(accepted.len() as u64, limit - 1);
        // Refused before it was recorded: the request is as the last accepted update left it.
        let now = get(&engine, &a, &id).await.unwrap();
        assert_eq!(now["revision"].as_u64().unwrap(), rev);
        assert_eq!(now["state"], "running");
        let again = json!({"requestId": id, "expectedRevision": rev, "params": {"value": refused_value}});
        assert_eq!(engine.call(&a, "requests.update", again).await.unwrap_err().code, ErrorCode::QueueFull);

        // The view can still be taken down; the next request waits for the app to catch up.
        let cancelled = engine.call(&a, "requests.cancel", json!({"requestId": id})).await.unwrap();
        assert_eq!(cancelled["state"], "cancelled");
        let next = create(&engine, &a, create_body("notice.show", json!({"text": "next"}), 60_000)).await;
        let next_id = id_of(&next);
        assert_eq!(get(&engine, &a, &next_id).await.unwrap()["state"], "queued");

        drop(thaw);
        let mut seen = Vec::new();
        loop {
            let event = tokio::time::timeout(Duration::from_secs(30), events.recv()).await.unwrap().unwrap();
            let done = matches!(&event, PresenterEvent::Show(p) if p.request_id == next_id);
            seen.push(event);
            if done {
                break;
            }
        }
        let mut expected_updates = accepted.iter();
        assert!(matches!(&seen[0], PresenterEvent::Show(p) if p.request_id == id));
        for event in &seen[1..seen.len() - 2] {
            match event {
                PresenterEvent::Update(p) => assert_eq!(p.params["value"], *expected_updates.next().unwrap()),
                other => panic!("expected an update, got {other:?}"),
            }
        }
        assert_eq!(expected_updates.next(), None, "every accepted update was drawn, in order");
        assert!(matches!(&seen[seen.len() - 2], PresenterEvent::Hide { request_id, .. } if *request_id == id));
        assert_eq!(get(&engine, &a, &next_id).await.unwrap()["state"], "running");
    });
}

/// The schema of `runtime.describe`'s `limits` in `doc`, wherever it is nested.
fn limits_schema(doc: &Value) -> Option<&Value> {
    match doc {
        Value::Object(o) if o.get("properties").is_some_and(|p| p.get("maxActiveTotal").is_some()) => Some(doc),
        Value::Object(o) => o.values().find_map(limits_schema),
        Value::Array(a) => a.iter().find_map(limits_schema),
        _ => None,
    }
}

// CP-4-8, CP-8-2: a limit is published or absent, never a made-up number. The OpenRPC schema
// gives `maxRecordsPerClient` and `maxPendingPresentations` no default (an absent one means "not
// published", not 0) and does not require them, so an older runtime's answer without them still
// parses; this runtime always publishes both. (Before: `"default": 0` for `maxRecordsPerClient`,
// which also sat in `required`.)
#[tokio::test(start_paused = true)]
async fn unpublished_limits_are_absent_not_zero() {
    let f = start();
    let doc = bridge_runtime::companion::openrpc::document(&f.catalog.read().unwrap());
    let schema = limits_schema(&doc).expect("the limits schema").clone();
    let required: Vec<&str> = schema["required"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    for key in ["maxRecordsPerClient", "maxPendingPresentations"] {
        let property = &schema["properties"][key];
        assert_eq!(property["type"], "integer", "{key}");
        assert!(property.get("default").is_none(), "{key} has a made-up default: {property}");
        assert!(!required.contains(&key), "{key} is required, so older answers would not fit");
    }
    // An older runtime's limits, without them, still parse: absent, not 0.
    let older = json!({
        "maxActivePerClient": 8, "maxActiveTotal": 64, "maxRecords": 10_000, "maxCreatesPerMinute": 60,
        "defaultWaitMs": 30_000, "maxWaitMs": 60_000, "maxTimeoutMs": 86_400_000
    });
    let limits: bridge_runtime::companion::protocol::results::Limits = serde_json::from_value(older).unwrap();
    assert_eq!((limits.max_records_per_client, limits.max_pending_presentations), (None, None));
    // This runtime publishes both, with their configured values.
    let d = f.engine.call(&agent("a"), "runtime.describe", json!({})).await.unwrap();
    assert_eq!(d["limits"]["maxRecordsPerClient"], 1_000);
    assert_eq!(d["limits"]["maxPendingPresentations"], 64);
}
