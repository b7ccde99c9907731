//! CP-5-13, CP-5-9, CP-4-18: with every log event recorded (TRACE, all fields), pairing,
//! authentication (good and bad) and a request never put a key or request content in the logs.
//! The only test that installs the global tracing subscriber: it also records the events of the
//! tests running beside it in this binary, which can only add to what it checks.

use crate::support::companion as companion_support;
use crate::support::companion_socket as companion_socket_support;

use companion_socket_support::*;
use serde_json::json;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// Records the message and every field of every event and span.
struct Recorder {
    text: Arc<Mutex<String>>,
    next: AtomicU64,
}

struct Fields<'a>(&'a mut String);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        let _ = write!(self.0, " {}={:?}", field.name(), value);
    }
}

impl Subscriber for Recorder {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let mut text = self.text.lock().unwrap();
        span.record(&mut Fields(&mut text));
        text.push('\n');
        Id::from_u64(self.next.fetch_add(1, Ordering::Relaxed))
    }
    fn record(&self, _: &Id, values: &Record<'_>) {
        values.record(&mut Fields(&mut self.text.lock().unwrap()));
    }
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut text = self.text.lock().unwrap();
        event.record(&mut Fields(&mut text));
        text.push('\n');
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_and_content_never_reach_the_logs() {
    let text = Arc::new(Mutex::new(String::new()));
    tracing::subscriber::set_global_default(Recorder { text: text.clone(), next: AtomicU64::new(1) })
        .expect("the only subscriber in this binary");

    let mut h = start().await;
    let (mut c, creds) = h.client("logged agent").await;
    let secret_text = "quarterly numbers: 1234567";
    let body = companion_support::create_body("notice.show", json!({"text": secret_text}), 10_000);
    let id = c.ok("requests.create", body).await["requestId"].as_str().unwrap().to_owned();
    h.expect_show(&id).await;
    let mut bad = h.connect().await;
    let wrong_key = format!("{}ff", &creds.key[..creds.key.len() - 2]);
    bad.err("session.authenticate", json!({"clientId": creds.client_id, "key": wrong_key})).await;
    bad.send_raw(format!("{{\"method\": \"session.authenticate\", \"key\": \"{}\"\n", creds.key).as_bytes()).await;
    bad.recv().await;
    h.auth.revoke(&h.engine, &creds.client_id).unwrap();
    assert_eq!(code(&c.recv().await["error"]), "UNAUTHENTICATED", "the revoked connection is told why");
    c.expect_closed().await;

    let logs = text.lock().unwrap().clone();
    assert!(logs.contains("companion"), "the recorder saw the runtime's events: {logs}");
    assert!(logs.contains(&creds.client_id), "client ids may be logged");
    assert!(!logs.contains(&creds.key), "the key is never logged (CP-5-13, CP-5-9)");
    assert!(!logs.contains(&creds.key[3..]));
    assert!(!logs.contains(&wrong_key), "nor a wrong one");
    assert!(!logs.contains(secret_text), "request content is not logged (CP-4-18)");
}
