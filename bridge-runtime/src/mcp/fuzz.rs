//! The stdio pre-layer's classifier without a process, for the fuzz target `prelayer` and its
//! corpus replay test (feature `fuzzing`; not public API). See [`crate::__internals`].
//!
//! [`prelayer`] splits bytes into lines as the pre-layer does (an input longer than the line
//! cap is cut to the prefix the pre-layer keeps), classifies each, builds the answer the
//! pre-layer would write, and panics when one of these properties breaks (JSON-RPC 2.0 §4, §5;
//! MA-8-2; GB-7.4-3):
//! - a forwarded line is one rmcp's own message type reads, and a forwarded request that
//!   reads or changes state carries the id rmcp reads (its ticket);
//! - a notification (a JSON object with a `method` and no `id` member) or a line shaped as a
//!   response (`result` or `error`, no `method`) is never answered;
//! - every answer is one JSON line `{"jsonrpc":"2.0","id",…}` with exactly one of `result` and
//!   `error`; an error's code is `-32700`, `-32600` or `-32602`, `-32700` only without an id
//!   and never for a JSON object; an answer with an id echoes the line's own id (for a line
//!   too deep for serde_json: an id the line spells);
//! - a refused `tools/call` is the GB `validation_failed` tool error naming one field;
//! - no answer message is longer than a bounded size, whatever the line's length.

use super::inbound::{Inbound, Message, OVERSIZED_PREFIX_BYTES, classify, classify_oversized};
use crate::model::ErrorCode as GbCode;
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, ErrorCode, JsonRpcMessage, RequestId};
use serde_json::Value;

/// Longest error message an answer may carry (quotes are clipped).
const MAX_MESSAGE_BYTES: usize = 1024;

/// What one input reached, for a replay test to see that a corpus covers every class.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PrelayerReport {
    /// Lines classified (the last, unterminated one included).
    pub lines: usize,
    /// Forwarded to rmcp unchanged.
    pub forwarded: usize,
    /// Forwarded requests that read or change state (they take a ticket).
    pub calls: usize,
    /// Answered with an error and the request's id.
    pub replies: usize,
    /// `tools/call` refused with `validation_failed`.
    pub refused_calls: usize,
    /// Answered with a `null` id (parse errors, invalid requests without an id).
    pub unidentified: usize,
    /// Never answered (notifications, responses).
    pub silent: usize,
    /// Lines cut to the over-long prefix.
    pub oversized: usize,
}

/// Runs `data` through the pre-layer's classifier, line by line, checking the properties
/// above; the first byte, when odd, makes the whole input one over-long line (its prefix).
pub fn prelayer(data: &[u8]) -> PrelayerReport {
    let mut report = PrelayerReport::default();
    let Some((&mode, data)) = data.split_first() else { return report };
    if mode % 2 == 1 {
        let prefix = &data[..data.len().min(OVERSIZED_PREFIX_BYTES)];
        report.oversized += 1;
        report.lines += 1;
        check(prefix, classify_oversized(prefix), true, &mut report);
        return report;
    }
    for line in data.split(|b| *b == b'\n') {
        report.lines += 1;
        check(line, classify(line), false, &mut report);
    }
    report
}

fn check(line: &[u8], inbound: Inbound, oversized: bool, report: &mut PrelayerReport) {
    let trimmed = line.strip_suffix(b"\r").unwrap_or(line);
    let trimmed = trimmed.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(trimmed);
    let object = serde_json::from_slice::<Value>(trimmed).ok().and_then(|v| v.as_object().cloned());
    let unanswerable = object.as_ref().is_some_and(|o| {
        let notification = !o.contains_key("id") && o.contains_key("method");
        notification || (!o.contains_key("method") && (o.contains_key("result") || o.contains_key("error")))
    });
    let own_id =
        object.as_ref().and_then(|o| o.get("id")).and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok());
    match inbound {
        Inbound::Blank => assert!(trimmed.iter().all(u8::is_ascii_whitespace), "a non-blank line skipped"),
        Inbound::Forward(forwarded) => {
            assert!(!oversized, "an over-long line forwarded");
            let message =
                serde_json::from_slice::<ClientJsonRpcMessage>(trimmed).expect("forwarded lines parse in rmcp");
            let rmcp_ordered = match message {
                JsonRpcMessage::Request(r)
                    if matches!(
                        r.request,
                        ClientRequest::CallToolRequest(_)
                            | ClientRequest::ListToolsRequest(_)
                            | ClientRequest::ReadResourceRequest(_)
                            | ClientRequest::ListResourcesRequest(_)
                            | ClientRequest::ListResourceTemplatesRequest(_)
                            | ClientRequest::SubscribeRequest(_)
                            | ClientRequest::UnsubscribeRequest(_)
                    ) =>
                {
                    Some(r.id)
                }
                _ => None,
            };
            let ticket = match forwarded {
                Message::Request { id, ordered: true, .. } => Some(id),
                _ => None,
            };
            assert_eq!(ticket, rmcp_ordered, "the ticket's id is the id rmcp reads");
            report.forwarded += 1;
            report.calls += usize::from(ticket.is_some());
        }
        Inbound::Reply { id, error } => {
            assert!(!unanswerable, "a notification or response answered");
            if object.is_some() {
                assert_eq!(Some(&id), own_id.as_ref(), "the answer echoes the line's id");
            } else {
                // Too deep (or cut short) for serde_json: the id is one the line spells.
                let spelled = serde_json::to_vec(&id).unwrap();
                assert!(trimmed.windows(spelled.len()).any(|w| w == spelled), "an id the line does not hold");
            }
            assert!(
                [ErrorCode::INVALID_REQUEST, ErrorCode::INVALID_PARAMS].contains(&error.code),
                "code {}",
                error.code.0
            );
            assert!(error.message.len() <= MAX_MESSAGE_BYTES, "an unbounded error message");
            well_formed(&super::stdio::error_line(Some(&id), &error), true);
            report.replies += 1;
        }
        Inbound::RefuseCall { id, error, .. } => {
            assert!(!unanswerable, "a notification or response answered");
            assert!(super::inbound::check_syntax(trimmed).is_ok(), "a line that is not JSON refused as a deep call");
            assert_eq!(error.code, GbCode::ValidationFailed);
            assert_eq!(error.fields.as_ref().map(Vec::len), Some(1), "names one field");
            let result = super::mapping::to_call_tool_result(&Err(error));
            well_formed(&super::stdio::result_line(&id, &result), false);
            report.refused_calls += 1;
        }
        Inbound::Unidentified(error) => {
            assert!(!unanswerable, "a notification or response answered");
            assert!(
                [ErrorCode::PARSE_ERROR, ErrorCode::INVALID_REQUEST].contains(&error.code),
                "code {}",
                error.code.0
            );
            if error.code == ErrorCode::PARSE_ERROR && !oversized {
                assert!(object.is_none(), "-32700 for a JSON object");
            }
            assert!(error.message.len() <= MAX_MESSAGE_BYTES, "an unbounded error message");
            well_formed(&super::stdio::error_line(None, &error), true);
            report.unidentified += 1;
        }
        Inbound::Silent => report.silent += 1,
    }
}

/// One answer line: `{"jsonrpc":"2.0","id",…}` and exactly one of `result`/`error`.
fn well_formed(line: &[u8], error: bool) {
    let (body, newline) = line.split_at(line.len() - 1);
    assert_eq!(newline, b"\n");
    assert!(!body.contains(&b'\n'), "one line");
    let value: Value = serde_json::from_slice(body).expect("an answer is JSON");
    assert_eq!(value["jsonrpc"], "2.0");
    assert!(value.as_object().unwrap().contains_key("id"));
    assert_eq!(value.get("error").is_some(), error);
    assert_eq!(value.get("result").is_some(), !error);
}
