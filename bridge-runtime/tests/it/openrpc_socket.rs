//! The OpenRPC document against the real socket server (CP-8-2, CP-2-13): `rpc.discover` returns
//! the document generated from the registry the server runs on, and every answer of the
//! transport's own methods (`runtime.describe` with its transport keys, `pairing.request`,
//! `session.authenticate`) and every error fits what the document says.

use crate::support::companion_socket as companion_socket_support;
use crate::support::openrpc as openrpc_support;

use bridge_runtime::companion::openrpc;
use companion_socket_support::*;
use openrpc_support::*;
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_socket_answers_fit_the_document_it_serves() {
    let mut h = start().await;
    let published = openrpc::document(&h.engine.catalog());
    let doc = strict(&published);

    // Unauthenticated: runtime.describe (open, CP-7-2) with the transport's keys.
    let mut anon = h.connect().await;
    let describe = anon.ok("runtime.describe", json!({})).await;
    assert_eq!(describe["authorization"]["authenticated"], false);
    assert_fits(&result_validator(&doc, "runtime.describe"), &describe, "runtime.describe (anonymous)");
    let e = anon.err("capabilities.list", json!({})).await;
    assert_eq!(code(&e), "UNAUTHENTICATED");
    assert_documented_error(&doc, "capabilities.list", &e);

    // pairing.request → the documented pairing result.
    let mut conn = h.connect().await;
    conn.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "pairing.request",
                      "params": {"name": "OpenRPC check", "scopes": ["discover", "notify"]}}))
        .await;
    let (request, reply) = h.next_approval().await;
    assert!(reply.approve_as_requested(&request));
    let paired = conn.recv().await["result"].clone();
    assert_fits(&result_validator(&doc, "pairing.request"), &paired, "pairing.request");
    let bad = conn.err("pairing.request", json!({"name": "x", "scopes": ["root"]})).await;
    assert_documented_error(&doc, "pairing.request", &bad);

    // session.authenticate → the documented session result; a wrong key is a documented error.
    let mut c = h.connect().await;
    let e = c.err("session.authenticate", json!({"clientId": paired["clientId"], "key": "ck_wrong"})).await;
    assert_documented_error(&doc, "session.authenticate", &e);
    let session = c.ok("session.authenticate", json!({"clientId": paired["clientId"], "key": paired["key"]})).await;
    assert_fits(&result_validator(&doc, "session.authenticate"), &session, "session.authenticate");
    let describe = c.ok("runtime.describe", json!({})).await;
    assert_eq!(describe["authorization"]["authenticated"], true);
    assert_fits(&result_validator(&doc, "runtime.describe"), &describe, "runtime.describe");

    // rpc.discover: exactly the generated document, which fits its own documented result.
    let served = c.ok("rpc.discover", json!({})).await;
    assert_eq!(served, published);
    assert_valid(&served);
    assert_fits(&result_validator(&doc, "rpc.discover"), &served, "rpc.discover");

    // A scope the client lacks: FORBIDDEN, documented for the method.
    let e = c.err("requests.create", choose_request()).await;
    assert_eq!(code(&e), "FORBIDDEN");
    assert_documented_error(&doc, "requests.create", &e);
}

/// `error` is a documented error of `method`: its integer code is that of the component its
/// `data.code` names, the method lists that component, and `data` fits `ErrorData`.
fn assert_documented_error(doc: &Value, method_name: &str, error: &Value) {
    let name = code(error);
    assert_eq!(error["code"], doc["components"]["errors"][name]["code"], "{method_name}: {error}");
    let listed = method(doc, method_name)["errors"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["$ref"].as_str() == Some(format!("#/components/errors/{name}").as_str()));
    assert!(listed, "{method_name} does not document {name}");
    let data = validator_in(doc, &json!({"$ref": "#/components/schemas/ErrorData"}));
    assert_fits(&data, &error["data"], name);
}
