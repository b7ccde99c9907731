//! The companion socket's input path without a socket, for the fuzz target `jsonrpc` and its
//! corpus replay test (feature `fuzzing`; not public API). See [`crate::__internals`].
//!
//! [`jsonrpc`] runs bytes as a connection would deliver them through what the server does with
//! them up to a typed request — line framing ([`jsonrpc::read_line`]) with a size limit, blank
//! lines skipped, message parsing ([`jsonrpc::parse`]), routing by the server's routing function
//! ([`route`]) and params decoding as the server reads them ([`read_params`]: the method's params
//! type through the schema pipeline; `session.authenticate` and `pairing.request` through the
//! socket's own checks) — and panics when one of the properties below breaks. Nothing is
//! executed: no engine, no credentials.
//!
//! Properties (CP-1-4, CP-8-1, OQ-CP-12, CP-4-18, CP-5-13):
//! - framing matches a reference model: each line is delivered whole (without `\n` and one
//!   `\r` before it) if it has at most `max` bytes, else `TooLong` ends the connection, whatever
//!   the read buffer's size; reading in-memory input never blocks;
//! - every error response is `{"jsonrpc":"2.0","id","error":{"code": int, "message": string,
//!   "data":{"code": string, "retryable": bool}}}`, with `-32700` exactly for bytes that are not
//!   JSON and `id` echoed only when it is a string, number or `null`;
//! - a batch keeps its length and order; a call keeps its `id`, `method` and `params`;
//! - params decoding either gives the typed params — which serialize to params that decode to
//!   the same value again — or `INVALID_PARAMS`; an unknown method gives `METHOD_NOT_FOUND`;
//! - no error quotes a string value from the params (only keys and paths), so a secret typed
//!   into the wrong field never reaches the client or the logs.

use super::error::{CompanionError, ErrorCode};
use super::jsonrpc::{self, Call, Entry, Incoming, Line};
use super::protocol::{Lane, Route, route};
use super::server::read_params;
use serde_json::{Map, Value};
use std::task::{Context, Poll, Waker};
use tokio::io::BufReader;

/// What one input did, for a replay test to see that a corpus reaches every stage.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JsonrpcReport {
    /// Lines delivered (blank ones included).
    pub lines: usize,
    /// The input ended with a line over the limit.
    pub too_long: bool,
    /// Messages answered with a `-32700`/`-32600` error as a whole (not JSON, empty or oversize
    /// batch).
    pub rejected_messages: usize,
    /// Batches parsed.
    pub batches: usize,
    /// Entries that were not valid request objects (`-32600`).
    pub invalid_entries: usize,
    /// Calls with an unknown method (`-32601`).
    pub unknown_methods: usize,
    /// Calls whose params were rejected (`INVALID_PARAMS`).
    pub invalid_params: usize,
    /// Wire names of the methods whose params decoded into their typed form.
    pub decoded: Vec<&'static str>,
}

/// Largest lines and batches [`jsonrpc`] picks from its first byte: small ones so the limits are
/// reached, and the server's defaults.
const MAX_BYTES: [usize; 4] = [16, 300, super::server::DEFAULT_MAX_UNAUTHENTICATED_MESSAGE_BYTES, 1 << 20];
const BUF_CAPACITY: [usize; 4] = [1, 7, 64, 16 << 10];
const MAX_BATCH: [usize; 4] = [1, 3, 64, 64];

/// Runs `data` through the socket server's input path (see the module docs) and panics,
/// naming the property, if one breaks. `data[0]` picks the limits (bits 0–1: the line limit of
/// 16, 300, 8 KiB or 1 MiB bytes; bits 2–3: the read buffer's capacity, 1 to 16 KiB bytes;
/// bits 4–5: the batch limit, 1 to 64); the rest is the byte stream the peer sends. Empty input
/// does nothing.
pub fn jsonrpc(data: &[u8]) -> JsonrpcReport {
    let mut report = JsonrpcReport::default();
    let Some((&config, stream)) = data.split_first() else { return report };
    let max = MAX_BYTES[usize::from(config & 3)];
    let capacity = BUF_CAPACITY[usize::from((config >> 2) & 3)];
    let max_batch = MAX_BATCH[usize::from((config >> 4) & 3)];

    let expected = model_lines(stream, max);
    let mut reader = BufReader::with_capacity(capacity, stream);
    let mut buf = Vec::new();
    for want in expected {
        let got = ready(jsonrpc::read_line(&mut reader, &mut buf, max)).expect("reading memory cannot fail");
        assert_eq!(got, want, "framing (max {max}, buffer {capacity}) differs from the line model");
        assert!(buf.len() <= max, "read_line buffered {} bytes, over its limit {max}", buf.len());
        match got {
            Line::Message(bytes) => {
                report.lines += 1;
                if !jsonrpc::is_blank(&bytes) {
                    message(&bytes, max_batch, &mut report);
                }
            }
            Line::TooLong => report.too_long = true,
            Line::Eof => {}
        }
    }
    report
}

/// The lines a peer sending `stream` delivers with limit `max`: every `\n`-terminated line (a
/// last one cut by the end too) without its terminator, until one longer than `max` (counted
/// before a `\r` is removed) or the end.
fn model_lines(stream: &[u8], max: usize) -> Vec<Line> {
    let mut out = Vec::new();
    let mut rest = stream;
    loop {
        if rest.is_empty() {
            out.push(Line::Eof);
            return out;
        }
        let (line, next) = match rest.iter().position(|b| *b == b'\n') {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, &rest[rest.len()..]),
        };
        if line.len() > max {
            out.push(Line::TooLong);
            return out;
        }
        out.push(Line::Message(line.strip_suffix(b"\r").unwrap_or(line).to_vec()));
        rest = next;
    }
}

/// Polls `fut` to completion; it must never wait (in-memory input).
fn ready<F: Future>(fut: F) -> F::Output {
    let mut fut = std::pin::pin!(fut);
    let mut cx = Context::from_waker(Waker::noop());
    match fut.as_mut().poll(&mut cx) {
        Poll::Ready(v) => v,
        Poll::Pending => panic!("read_line waited on in-memory input"),
    }
}

/// One non-blank message: parse, then each call as the server routes it.
fn message(bytes: &[u8], max_batch: usize, report: &mut JsonrpcReport) {
    let json: Option<Value> = serde_json::from_slice(bytes).ok();
    match jsonrpc::parse(bytes, max_batch) {
        Err(response) => {
            report.rejected_messages += 1;
            let code = error_response(&response, Some(&Value::Null));
            match &json {
                None => assert_eq!(code, jsonrpc::PARSE_ERROR, "valid JSON is never a parse error: {response}"),
                Some(v) => {
                    assert_eq!(code, jsonrpc::INVALID_REQUEST, "{response}");
                    let n = v.as_array().map(Vec::len);
                    assert!(n == Some(0) || n.is_some_and(|n| n > max_batch), "only bad batches fail whole: {v}");
                }
            }
        }
        Ok(incoming) => {
            let json = json.expect("parse accepted bytes that are not JSON");
            match (incoming, json) {
                (Incoming::One(entry), v) => {
                    assert!(!v.is_array(), "an array is a batch");
                    call_entry(entry, &v, report);
                }
                (Incoming::Batch(entries), Value::Array(items)) => {
                    report.batches += 1;
                    assert!(!items.is_empty() && items.len() <= max_batch, "batch of {} accepted", items.len());
                    assert_eq!(entries.len(), items.len(), "a batch keeps its length");
                    for (entry, item) in entries.into_iter().zip(&items) {
                        call_entry(entry, item, report);
                    }
                }
                (Incoming::Batch(_), v) => panic!("a batch from a non-array {v}"),
            }
        }
    }
}

/// One entry of a message, `source` being the JSON it came from.
fn call_entry(entry: Entry, source: &Value, report: &mut JsonrpcReport) {
    let echoable = |id: &Value| matches!(id, Value::String(_) | Value::Number(_) | Value::Null);
    let call = match entry {
        Entry::Call(call) => call,
        Entry::Invalid(response) => {
            report.invalid_entries += 1;
            let id = response.get("id").cloned().unwrap_or_default();
            if !id.is_null() {
                assert_eq!(source.get("id"), Some(&id), "an echoed id is the request's own");
            }
            let code = error_response(&response, None);
            assert_eq!(code, jsonrpc::INVALID_REQUEST, "{response}");
            return;
        }
    };
    let obj = source.as_object().expect("a call comes from an object");
    assert_eq!(obj.get("jsonrpc").and_then(Value::as_str), Some("2.0"), "a call without jsonrpc 2.0");
    assert_eq!(obj.get("method").and_then(Value::as_str), Some(call.method.as_str()), "method changed");
    assert_eq!(obj.get("id"), call.id.as_ref(), "id changed");
    assert!(call.id.as_ref().is_none_or(echoable), "a call with an unusable id");
    assert_eq!(obj.get("params").unwrap_or(&Value::Null), &call.params, "params changed");
    assert!(obj.keys().all(|k| matches!(k.as_str(), "jsonrpc" | "id" | "method" | "params")), "extra member");
    route_call(call, report);
}

/// Routes a call with the server's routing function, up to its decoded params.
fn route_call(call: Call, report: &mut JsonrpcReport) {
    let Some(route) = route(&call.method) else {
        report.unknown_methods += 1;
        // What the server answers (its dispatch), as a response.
        let err = CompanionError::new(ErrorCode::MethodNotFound, "Method not found");
        let response = jsonrpc::failure(call.id.unwrap_or_default(), err.to_jsonrpc());
        assert_eq!(error_response(&response, None), -32601);
        return;
    };
    let method = route.method;
    // A pairing sent as a notification is dropped unread (a key sent to nobody).
    let Some(outcome) = decode(route, call.is_notification(), &call.params) else { return };
    match outcome {
        Ok(_) => {
            if !report.decoded.contains(&method.as_str()) {
                report.decoded.push(method.as_str());
            }
        }
        Err(e) => {
            report.invalid_params += 1;
            assert_eq!(e.code, ErrorCode::InvalidParams, "{method}: params rejected with {e}");
            assert!(method.errors().contains(&e.code), "{method} does not list {}", e.code.as_str());
            let response = jsonrpc::failure(call.id.clone().unwrap_or_default(), e.to_jsonrpc());
            assert_eq!(error_response(&response, None), e.code.jsonrpc_code());
            assert!(response["error"]["data"]["problems"].is_array(), "INVALID_PARAMS without problems: {response}");
            quotes_no_value(route, call.is_notification(), &call.params);
        }
    }
}

/// The params of a call on `route` as the server reads them ([`read_params`]), checked: the
/// connection's own methods accept no empty credentials or names; a typed method's decoded
/// params decode to the same value again (what the schema accepts, serde accepts, and back).
/// `None` when the server does not read them.
fn decode(route: Route, notification: bool, params: &Value) -> Option<Result<Value, CompanionError>> {
    let outcome = read_params(route, notification, params)?;
    let method = route.method;
    Some(outcome.inspect(|wire| match route.lane {
        Lane::Connection => {
            let obj = wire.as_object().expect("decoded params are an object");
            for (key, value) in obj {
                let empty = match value {
                    Value::String(s) => s.trim().is_empty() && (key == "name" || s.is_empty()),
                    Value::Array(a) => a.is_empty(),
                    _ => false,
                };
                assert!(!empty, "{method}: an empty `{key}` accepted");
            }
        }
        Lane::Transport | Lane::Engine => {
            let again = read_params(route, notification, wire)
                .expect("typed params are always read")
                .unwrap_or_else(|e| panic!("{method}: decoded params re-encoded as {wire} are rejected: {e}"));
            assert_eq!(&again, wire, "{method}: decoding is not stable");
        }
    }))
}

/// Checks an error response's shape and returns its `error.code`; `id`, when given, is the only
/// id allowed.
fn error_response(response: &Value, id: Option<&Value>) -> i64 {
    let obj = response.as_object().expect("a response is an object");
    assert_eq!(obj.get("jsonrpc"), Some(&Value::from("2.0")), "{response}");
    let rid = obj.get("id").expect("every response has an id");
    assert!(matches!(rid, Value::String(_) | Value::Number(_) | Value::Null), "{response}");
    if let Some(id) = id {
        assert_eq!(rid, id, "{response}");
    }
    assert!(obj.get("result").is_none(), "an error response with a result: {response}");
    let error = obj.get("error").and_then(Value::as_object).expect("error object");
    let code = error.get("code").and_then(Value::as_i64).expect("integer error.code");
    assert!(error.get("message").and_then(Value::as_str).is_some_and(|m| !m.is_empty()), "{response}");
    let data = error.get("data").and_then(Value::as_object).expect("error.data object (OQ-CP-12)");
    let data_code = data.get("code").and_then(Value::as_str).expect("error.data.code string");
    assert!(!data_code.is_empty() && data_code.bytes().all(|b| b.is_ascii_uppercase() || b == b'_'), "{response}");
    assert!(data.get("retryable").is_some_and(Value::is_boolean), "{response}");
    serde_json::to_vec(response).expect("responses serialize");
    code
}

/// A character no fixed message contains: string values are replaced by runs of it.
const MARK: char = '\u{2603}';

/// CP-4-18: no error quotes a string value of the params (keys may: problems name the offending
/// member). Checked by decoding the params again with every string value of 4 or more
/// characters replaced by as many [`MARK`]s: no run of 4 may reach the error. (Comparing the
/// values with the message text would flag coincidences and teach the fuzzer the messages.)
fn quotes_no_value(route: Route, notification: bool, params: &Value) {
    let mut keys_marked = false;
    let marked = mark(params, &mut keys_marked);
    if keys_marked {
        return;
    }
    if let Some(Err(e)) = decode(route, notification, &marked) {
        let mut texts = Vec::new();
        strings(&e.to_jsonrpc(), &mut texts);
        let run: String = std::iter::repeat_n(MARK, 4).collect();
        let method = route.method;
        assert!(!texts.iter().any(|t| t.contains(&run)), "{method}: the error quotes a params value: {texts:?}");
    }
}

/// `v` with every string of 4 or more characters replaced by as many [`MARK`]s; `keys_marked`
/// is set when a key already holds one.
fn mark(v: &Value, keys_marked: &mut bool) -> Value {
    match v {
        Value::String(s) if s.chars().count() >= 4 => Value::String(s.chars().map(|_| MARK).collect()),
        Value::Array(a) => Value::Array(a.iter().map(|x| mark(x, keys_marked)).collect()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| {
                    *keys_marked |= k.contains(MARK);
                    (k.clone(), mark(x, keys_marked))
                })
                .collect::<Map<String, Value>>(),
        ),
        other => other.clone(),
    }
}

fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(m) => {
            for (k, x) in m {
                out.push(k.clone());
                strings(x, out);
            }
        }
        _ => {}
    }
}
