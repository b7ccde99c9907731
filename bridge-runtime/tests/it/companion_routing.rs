//! The protocol table routes and admits (CP-1-4 … CP-1-7, CP-5-1, CP-5-6, CP-7-2, OQ-CP-16):
//! `runtime.describe` is open to every socket connection and reports the caller's real
//! authorization; the engine's typed entry admits by the method's row, decodes the params type,
//! digests idempotent params as they arrived, and returns the result type.

use crate::support::companion as companion_support;
use crate::support::companion_socket as companion_socket_support;

use bridge_runtime::catalog::Scope;
use bridge_runtime::companion::protocol::method;
use bridge_runtime::companion::protocol::results::WaitResult;
use bridge_runtime::companion::{ClientIdentity, ErrorCode, RequestState};
use companion_support::*;
use serde_json::{Value, json};

// CP-7-2, CP-5-1, CP-2-2: an unauthenticated and a `notify`-only connection both get
// `runtime.describe`, can negotiate the protocol version with it, and see their real
// authorization (no scope added for the call).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runtime_describe_is_open_and_reports_the_real_authorization_cp_7_2() {
    let mut h = companion_socket_support::start().await;
    let notifier = h.pair("notifier", &["notify"]).await;

    let mut anonymous = h.connect().await;
    let d = anonymous.ok("runtime.describe", json!({"protocolVersions": ["0.1"]})).await;
    assert_eq!(d["authorization"], json!({"authenticated": false, "clientId": null, "scopes": [], "internal": false}));
    assert_eq!(d["protocolVersion"], "0.1");
    assert!(d["limits"]["maxUnauthenticatedMessageBytes"].as_u64().is_some(), "{d}");
    assert_eq!(d["authentication"]["pairingMethod"], "pairing.request");
    let e = anonymous.err("runtime.describe", json!({"protocolVersions": ["9.9"]})).await;
    assert_eq!(companion_socket_support::code(&e), "INVALID_PARAMS");
    assert_eq!(e["data"]["supportedProtocolVersions"], json!(["0.1"]));

    let mut notify = h.connect().await;
    notify.authenticate(&notifier).await;
    let d = notify.ok("runtime.describe", json!({})).await;
    assert_eq!(
        d["authorization"],
        json!({"authenticated": true, "clientId": notifier.client_id, "scopes": ["notify"], "internal": false})
    );
    assert!(d["limits"]["maxMessageBytes"].as_u64().is_some(), "{d}");
    // The scope really is missing: the other discovery methods are refused.
    let e = notify.err("characters.list", json!({})).await;
    assert_eq!(companion_socket_support::code(&e), "FORBIDDEN");
    assert_eq!(e["data"]["missingScopes"], json!(["discover"]));
}

// CP-1-5, CP-1-6, CP-2-7: the typed entry runs a method of the table with its params type and
// returns its result type; the by-name entry returns the same result as JSON.
#[tokio::test(start_paused = true)]
async fn the_typed_entry_returns_the_result_type_cp_1_6() {
    let f = start();
    let host = ClientIdentity::host("host", "The app");
    let body = create_body("notice.show", json!({"text": "typed"}), 10_000);
    let snapshot = f.engine.call_typed::<method::RequestsCreate>(&host, body).await.unwrap();
    assert!(matches!(snapshot.state, RequestState::Queued | RequestState::Running));
    assert_eq!(snapshot.capability, "notice.show");
    let by_name = get(&f.engine, &host, &snapshot.request_id).await.unwrap();
    let typed =
        f.engine.call_typed::<method::RequestsGet>(&host, json!({"requestId": snapshot.request_id})).await.unwrap();
    assert_eq!(serde_json::to_value(&typed).unwrap(), by_name);

    // `requests.wait` gives the `unchanged` marker as its own variant.
    let waited = f
        .engine
        .call_typed::<method::RequestsWait>(
            &host,
            json!({"requestId": snapshot.request_id, "afterRevision": typed.revision + 10, "waitMs": 0}),
        )
        .await
        .unwrap();
    match waited {
        WaitResult::Unchanged(u) => assert!(u.unchanged && u.request_id == snapshot.request_id),
        WaitResult::Changed(s) => panic!("nothing changed, got {s:?}"),
    }

    let page = f.engine.call_typed::<method::CapabilitiesList>(&host, json!({"limit": 2})).await.unwrap();
    assert_eq!(page.capabilities.len(), 2);
    assert!(page.next_cursor.is_some());
}

// CP-5-6, CP-2-14, CP-4-22, CP-6-20: the typed entry admits by the method's row: a caller inside
// the app needs the row's scope (`runtime.describe` included: it is open only to socket
// connections, which negotiate versions), a revoked client is UNAUTHENTICATED, params that do
// not fit are INVALID_PARAMS with problems; a method the transport answers is not the engine's.
#[tokio::test(start_paused = true)]
async fn the_typed_entry_admits_by_the_row_cp_5_6() {
    let f = start();
    let notifier = ClientIdentity::external("n", "Notifier", [Scope::Notify]);
    for e in [
        f.engine.call_typed::<method::CharactersList>(&notifier, Value::Null).await.unwrap_err(),
        f.engine.call_typed::<method::RuntimeDescribe>(&notifier, json!({})).await.unwrap_err(),
    ] {
        assert_eq!(e.code, ErrorCode::Forbidden);
        assert_eq!(e.data()["requiredScopes"], json!(["discover"]));
    }
    // No scope in the row: the capability's own `requiredScopes` decide (CP-5-7).
    let notice = create_body("notice.show", json!({"text": "allowed"}), 10_000);
    assert!(f.engine.call_typed::<method::RequestsCreate>(&notifier, notice.clone()).await.is_ok());
    let e = f
        .engine
        .call_typed::<method::RequestsCreate>(&notifier, create_body("interaction.choose", choose_params(), 60_000))
        .await
        .unwrap_err();
    assert_eq!((e.code, e.data()["requiredScopes"].clone()), (ErrorCode::Forbidden, json!(["interact"])));

    let a = agent("a");
    let e = f.engine.call_typed::<method::RequestsGet>(&a, json!({"requestId": 7})).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidParams);
    assert_eq!(e.data()["problems"][0]["path"], "/requestId");

    f.engine.client_revoked("n");
    let e = f.engine.call_typed::<method::RequestsCreate>(&notifier, notice).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::Unauthenticated);

    for name in ["rpc.discover", "session.authenticate", "pairing.request", "nope"] {
        let e = f.engine.call(&a, name, json!({})).await.unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (ErrorCode::MethodNotFound, format!("Unknown method `{name}`").as_str())
        );
    }
}

// CP-4-1 … CP-4-3, OQ-CP-16: the typed entry compares idempotent params as they arrived: the
// same bytes give the same request, an explicit `"character": null` or `"allowFallback": false`
// is other params than their omission, although they decode to the same typed params.
#[tokio::test(start_paused = true)]
async fn the_typed_entry_digests_params_as_they_arrived_oq_cp_16() {
    let f = start();
    let a = agent("a");
    let mut body = create_body("notice.show", json!({"text": "once"}), 10_000);
    body["idempotencyKey"] = json!("k");
    let first = f.engine.call_typed::<method::RequestsCreate>(&a, body.clone()).await.unwrap();
    let again = f.engine.call_typed::<method::RequestsCreate>(&a, body.clone()).await.unwrap();
    assert_eq!(first.request_id, again.request_id);
    for (key, value) in [("character", Value::Null), ("allowFallback", json!(false))] {
        let mut other = body.clone();
        other[key] = value;
        let e = f.engine.call_typed::<method::RequestsCreate>(&a, other).await.unwrap_err();
        assert_eq!(e.code, ErrorCode::IdempotencyConflict, "{key}");
        assert_eq!(e.data()["requestId"], first.request_id.as_str());
    }
}
