//! JSON-RPC 2.0 framing for the companion socket (CP-1-4, CP-8-1): one message per line
//! (`\n`-terminated UTF-8 JSON), single calls and batches, the standard error objects, and a
//! line reader that never buffers more than its limit. Used by the server ([`super::server`]) and
//! the client ([`super::client`]).
//!
//! Standard errors (JSON-RPC 2.0 §5.1), each with `error.data = {"code": <string>, "retryable":
//! false}` like every coded error (OQ-CP-12):
//!
//! | situation | `error.code` | `error.data.code` | `id` |
//! | --- | --- | --- | --- |
//! | not JSON / not UTF-8 | -32700 | `PARSE_ERROR` | `null` |
//! | JSON nested deeper than [`MAX_NESTING_DEPTH`] levels | -32600 | `INVALID_REQUEST` (with `maxNestingDepth`) | `null` |
//! | not a request object, empty or oversize batch, message over the size limit | -32600 | `INVALID_REQUEST` | the request's `id` if it is a string/number, else `null` |
//! | unknown method | -32601 | `METHOD_NOT_FOUND` | the request's `id` |

use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// `error.code` for a message that is not JSON (JSON-RPC "Parse error").
pub(super) const PARSE_ERROR: i64 = -32700;
/// `error.code` for a message that is not a valid request (JSON-RPC "Invalid Request").
pub(super) const INVALID_REQUEST: i64 = -32600;
/// Deepest nesting of arrays and objects a message may have (the message itself is level 1):
/// the JSON parser's recursion limit. A deeper message is refused with `-32600` and a message
/// naming this cap, not called unparseable; no companion method's params come near it.
pub(crate) const MAX_NESTING_DEPTH: usize = 127;

/// One validated call from a message: a request (`id` present, possibly `null`) or a
/// notification (`id` absent: executed, never answered).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Call {
    /// `Some(id)` for a request (a string, a number or `null`); `None` for a notification.
    pub id: Option<Value>,
    /// The method name, e.g. `"requests.create"`.
    pub method: String,
    /// `params` as sent (`null` when absent); an object or an array.
    pub params: Value,
}

impl Call {
    /// Whether the call is a notification (no `id` member): it gets no response.
    pub(super) fn is_notification(&self) -> bool {
        self.id.is_none()
    }
}

/// One element of an incoming message after validation.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Entry {
    /// A well-formed call.
    Call(Call),
    /// Not a valid request object: this is the complete error response to send (`-32600`).
    Invalid(Value),
}

/// A parsed message: one call or a batch (a non-empty JSON array of calls).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Incoming {
    /// A single request object.
    One(Entry),
    /// A batch; answered with an array of the responses that are not for notifications, or
    /// nothing at all when every entry is a notification.
    Batch(Vec<Entry>),
}

/// Parses one line. `Err` holds the complete error response to send instead: `-32700` for
/// bytes that are not JSON, `-32600` for an empty batch or a batch longer than `max_batch`.
/// Valid JSON nested deeper than [`MAX_NESTING_DEPTH`] is `-32600` naming the cap.
pub(super) fn parse(line: &[u8], max_batch: usize) -> Result<Incoming, Value> {
    let value: Value = serde_json::from_slice(line).map_err(|e| {
        if too_deep(line, &e) {
            let msg = format!(
                "Invalid Request: the message nests arrays and objects more than {MAX_NESTING_DEPTH} levels deep (the limit)"
            );
            let mut err = error_object(INVALID_REQUEST, &msg, "INVALID_REQUEST");
            err["data"]["maxNestingDepth"] = json!(MAX_NESTING_DEPTH);
            return failure(Value::Null, err);
        }
        failure(Value::Null, error_object(PARSE_ERROR, "Parse error: the message is not valid JSON", "PARSE_ERROR"))
    })?;
    match value {
        Value::Array(items) if items.is_empty() => {
            Err(invalid_request(Value::Null, "Invalid Request: an empty batch is not a request"))
        }
        Value::Array(items) if items.len() > max_batch => {
            Err(invalid_request(Value::Null, &format!("Invalid Request: a batch may hold at most {max_batch} calls")))
        }
        Value::Array(items) => Ok(Incoming::Batch(items.into_iter().map(entry).collect())),
        other => Ok(Incoming::One(entry(other))),
    }
}

/// Whether the parser's error `e` on `line` is its nesting limit alone: `line` is valid JSON
/// (UTF-8, and accepted by serde_json's non-recursive skipping parser) nested deeper than
/// [`MAX_NESTING_DEPTH`]. Run only on the error path; each step is one linear pass over the line
/// (which the transport's size limit bounds) and none recurses.
fn too_deep(line: &[u8], e: &serde_json::Error) -> bool {
    e.classify() == serde_json::error::Category::Syntax
        && nesting_depth(line) > MAX_NESTING_DEPTH
        && std::str::from_utf8(line).is_ok()
        && serde_json::from_slice::<serde::de::IgnoredAny>(line).is_ok()
}

/// The deepest nesting of arrays and objects in `line`, brackets inside strings (escapes
/// included) not counted. Linear, for any bytes.
fn nesting_depth(line: &[u8]) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for &b in line {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

fn entry(value: Value) -> Entry {
    let Value::Object(mut obj) = value else {
        return Entry::Invalid(invalid_request(Value::Null, "Invalid Request: expected a request object"));
    };
    // A usable id is echoed even when the rest is wrong, so the client can match the error.
    let id = match obj.remove("id") {
        None => None,
        Some(id @ (Value::String(_) | Value::Number(_) | Value::Null)) => Some(id),
        Some(_) => {
            return Entry::Invalid(invalid_request(Value::Null, "Invalid Request: `id` must be a string or a number"));
        }
    };
    let reply_id = id.clone().unwrap_or(Value::Null);
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Entry::Invalid(invalid_request(reply_id, "Invalid Request: `jsonrpc` must be \"2.0\""));
    }
    let method = match obj.remove("method") {
        Some(Value::String(m)) => m,
        _ => return Entry::Invalid(invalid_request(reply_id, "Invalid Request: `method` must be a string")),
    };
    let params = match obj.remove("params") {
        None => Value::Null,
        Some(p @ (Value::Object(_) | Value::Array(_))) => p,
        Some(_) => {
            return Entry::Invalid(invalid_request(
                reply_id,
                "Invalid Request: `params` must be an object or an array",
            ));
        }
    };
    if let Some(extra) = obj.keys().find(|k| k.as_str() != "jsonrpc") {
        let msg = format!("Invalid Request: unexpected member `{}`", truncate(extra, 32));
        return Entry::Invalid(invalid_request(reply_id, &msg));
    }
    Entry::Call(Call { id, method, params })
}

fn truncate(s: &str, max_chars: usize) -> String {
    s.chars().take(max_chars).filter(|c| !c.is_control()).collect()
}

/// A JSON-RPC error object `{"code", "message", "data": {"code": data_code, "retryable": false}}`
/// for the protocol-level errors of this module.
pub(super) fn error_object(code: i64, message: &str, data_code: &str) -> Value {
    json!({"code": code, "message": message, "data": {"code": data_code, "retryable": false}})
}

/// The `-32600` response for `id`.
pub(super) fn invalid_request(id: Value, message: &str) -> Value {
    failure(id, error_object(INVALID_REQUEST, message, "INVALID_REQUEST"))
}

/// A success response `{"jsonrpc": "2.0", "id", "result"}`.
pub(super) fn success(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// An error response `{"jsonrpc": "2.0", "id", "error"}`.
pub(super) fn failure(id: Value, error: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": error})
}

/// What [`read_line`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Line {
    /// A complete line without its terminator (`\n`, and a `\r` before it). A last line cut by
    /// end of input counts too.
    Message(Vec<u8>),
    /// The line exceeds the limit; at most `max` of its bytes were buffered.
    TooLong,
    /// End of input before any byte of a new line.
    Eof,
}

/// Reads one `\n`-terminated line of at most `max` bytes (the `\n` excluded) into `buf`
/// (cleared first). Never buffers more than `max` bytes, whatever the peer sends.
pub(super) async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Line> {
    buf.clear();
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(if buf.is_empty() { Line::Eof } else { Line::Message(take_line(buf)) });
        }
        match available.iter().position(|b| *b == b'\n') {
            Some(i) => {
                if buf.len() + i > max {
                    return Ok(Line::TooLong);
                }
                buf.extend_from_slice(&available[..i]);
                reader.consume(i + 1);
                return Ok(Line::Message(take_line(buf)));
            }
            None => {
                let n = available.len();
                if buf.len() + n > max {
                    return Ok(Line::TooLong);
                }
                buf.extend_from_slice(available);
                reader.consume(n);
            }
        }
    }
}

fn take_line(buf: &mut Vec<u8>) -> Vec<u8> {
    if buf.last() == Some(&b'\r') {
        buf.pop();
    }
    std::mem::take(buf)
}

/// Whether `line` holds only whitespace (such lines are skipped, not answered).
pub(super) fn is_blank(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace)
}

// Framing never panics on any input (moved from the socket tests: framing is crate-private).
#[cfg(test)]
mod tests {
    use super::{Entry, Incoming, parse};
    use proptest::prelude::*;
    use serde_json::Value;

    fn arb_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            "[a-z.\"\\\\]{0,12}".prop_map(Value::from),
            Just(Value::from("2.0")),
            Just(Value::from("jsonrpc")),
            Just(Value::from("method")),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec(
                    (prop_oneof![Just("jsonrpc"), Just("id"), Just("method"), Just("params"), Just("x")], inner),
                    0..5
                )
                .prop_map(|kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
            ]
        })
    }

    fn check_error_response(v: &Value) {
        assert_eq!(v["jsonrpc"], "2.0");
        assert!(v.get("id").is_some());
        let code = v["error"]["code"].as_i64().unwrap();
        assert!(code == -32700 || code == -32600, "{v}");
        assert!(v["error"]["data"]["code"].is_string());
    }

    fn nested(depth: usize, inner: &str) -> Vec<u8> {
        let params = format!("{}{inner}{}", "[".repeat(depth), "]".repeat(depth));
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"p":{params}}}}}"#).into_bytes()
    }

    // CP-8-1 / JSON-RPC 2.0: a well-formed message nested deeper than the cap is valid JSON, so
    // it is not a parse error: -32600 with a message naming the cap (before: -32700 "not valid
    // JSON"). Up to the cap it parses; a real syntax error before the cap stays -32700, and so
    // do brackets inside strings.
    #[test]
    fn nesting_beyond_the_cap_is_an_invalid_request_naming_it() {
        use super::MAX_NESTING_DEPTH;
        // The request object and `params` are two levels.
        let inside = MAX_NESTING_DEPTH - 2;
        assert!(matches!(parse(&nested(inside, ""), 64), Ok(Incoming::One(Entry::Call(_)))));
        for depth in [inside + 1, inside + 2, 1000, 100_000] {
            let e = parse(&nested(depth, ""), 64).unwrap_err();
            check_error_response(&e);
            assert_eq!(e["error"]["code"], -32600, "{depth}: {e}");
            assert_eq!(e["error"]["data"]["code"], "INVALID_REQUEST");
            assert_eq!(e["error"]["data"]["maxNestingDepth"], MAX_NESTING_DEPTH);
            let msg = e["error"]["message"].as_str().unwrap();
            assert!(msg.contains(&MAX_NESTING_DEPTH.to_string()) && !msg.contains("not valid JSON"), "{msg}");
        }
        // Deep but not JSON (garbage before or after the cap, unclosed, not UTF-8): unparseable.
        let mut early = b"{\"a\": x, \"b\": ".to_vec();
        early.extend(nested(1000, ""));
        assert_eq!(parse(&early, 64).unwrap_err()["error"]["code"], -32700);
        let mut late = nested(1000, "");
        late.extend(b" x");
        assert_eq!(parse(&late, 64).unwrap_err()["error"]["code"], -32700);
        let deep_unclosed = "[".repeat(1000);
        assert_eq!(parse(deep_unclosed.as_bytes(), 64).unwrap_err()["error"]["code"], -32700);
        assert_eq!(parse(&nested(1000, "\"\u{ff}\""), 64).unwrap_err()["error"]["code"], -32600);
        assert_eq!(parse(&nested(1000, "\"\\u00ff\""), 64).unwrap_err()["error"]["code"], -32600);
        let mut bad_utf8 = nested(1000, "\"\"");
        let quote = bad_utf8.iter().rposition(|b| *b == b'"').unwrap();
        bad_utf8.insert(quote, 0xff);
        assert_eq!(parse(&bad_utf8, 64).unwrap_err()["error"]["code"], -32700);
        // Brackets in strings are text, escaped quotes included.
        let text = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":["\"{}"]}}"#, "[".repeat(1000));
        assert!(matches!(parse(text.as_bytes(), 64), Ok(Incoming::One(Entry::Call(_)))));
        let broken = format!(r#"["\"{}" x"#, "[".repeat(1000));
        assert_eq!(parse(broken.as_bytes(), 64).unwrap_err()["error"]["code"], -32700);
    }

    proptest! {
        // CP-1-4 / JSON-RPC 2.0: any bytes give a well-formed error or valid calls; no panic.
        #[test]
        fn any_bytes(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
            match parse(&bytes, 64) {
                Err(v) => check_error_response(&v),
                Ok(Incoming::One(Entry::Invalid(v))) => check_error_response(&v),
                Ok(Incoming::Batch(entries)) => for e in entries {
                    if let Entry::Invalid(v) = e { check_error_response(&v) }
                },
                Ok(Incoming::One(Entry::Call(_))) => {}
            }
        }

        #[test]
        fn any_json(value in arb_json()) {
            let bytes = serde_json::to_vec(&value).unwrap();
            match parse(&bytes, 64) {
                Err(v) => check_error_response(&v),
                Ok(Incoming::One(Entry::Invalid(v))) => check_error_response(&v),
                Ok(Incoming::One(Entry::Call(c))) => {
                    prop_assert!(value.is_object());
                    prop_assert!(c.params.is_null() || c.params.is_object() || c.params.is_array());
                }
                Ok(Incoming::Batch(entries)) => prop_assert_eq!(entries.len(), value.as_array().unwrap().len()),
            }
        }
    }
}
