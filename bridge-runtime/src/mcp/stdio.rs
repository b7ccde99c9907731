//! The stdio pre-layer: owns the client's byte stream, answers what rmcp would drop or
//! misanswer, keeps one connection's calls in arrival order, and hands every valid message to
//! rmcp byte for byte.
//!
//! ```text
//! client ──► read loop ──(classify)──► in-process pipe ──► rmcp ──► pipe ──► write loop ──► client
//!               │  tickets: CallOrder ◄──── call_tool waits its turn       ▲
//!               └──── the pre-layer's own answers (whole lines) ───────────┘
//! ```
//!
//! - **Order** (GB-10.1-3): every `tools/call` forwarded takes a ticket as its line is read
//!   ([`CallOrder`]); the handler runs only when every call read before it is done, and not at
//!   all if it was cancelled (`notifications/cancelled`) before its turn.
//! - **Honest answers**: [`classify`] decides, with rmcp's types, what rmcp would get wrong:
//!   `-32602` for params of the wrong JSON type, `-32600` with the request's id (or `null`),
//!   `-32700` for input that is not JSON, `validation_failed` for a `tools/call` nested deeper
//!   than the parser can read; a notification is never answered (MA-8-2). Lines longer than
//!   [`MAX_LINE_BYTES`] are answered (with the id found in their first bytes, else `null`) and
//!   skipped in bounded memory.
//! - **Storm guard**: rmcp answered unparseable stdio input once and took it out again
//!   (rust-sdk #938/#940): a peer that writes its logs into the pipe, or echoes what it reads,
//!   got a reply for every line and could answer those replies in turn. Answers with a `null`
//!   id (parse errors, invalid requests without an id, over-long lines without one) are
//!   therefore rationed here: at most one per [`STORM_INTERVAL`], none after
//!   [`STORM_LIMIT`] such lines in a row until a valid message arrives, and never an answer to
//!   a line shaped as a response or error (which is what an echo of our answer looks like).
//!   Requests with a usable id are always answered: the client waits for them.
//!
//! Answers from the pre-layer and from rmcp leave through one writer task, whole line by whole
//! line, so they never interleave.

use super::GuiBridgeServer;
use super::apps;
use super::inbound::{Inbound, MAX_LINE_BYTES, OVERSIZED_PREFIX_BYTES, classify, classify_oversized};
use super::mapping::to_call_tool_result;
use super::order::{Admit, CallOrder, MAX_QUEUED_CALLS};
use super::transport::ServeError;
use rmcp::ServiceExt;
use rmcp::model::{ErrorCode, ErrorData, RequestId};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::sync::mpsc;

/// Least time between two answers with a `null` id.
pub(crate) const STORM_INTERVAL: Duration = Duration::from_secs(1);

/// Unidentifiable lines in a row after which none is answered until a valid message arrives.
pub(crate) const STORM_LIMIT: u32 = 8;

/// JSON-RPC error code of the busy answer (a server error, `-32000` to `-32099`).
const BUSY: ErrorCode = ErrorCode(-32000);

/// Capacity of each in-process pipe between the pre-layer and rmcp.
const PIPE_BYTES: usize = 64 * 1024;

/// Serves one MCP client on a line-delimited byte stream (`reader` from the client, `writer`
/// to it) with the stdio transport's rules ([`serve_stdio`](super::serve_stdio) on this
/// process's stdin/stdout): calls in arrival order, every request answered, a storm guard on
/// answers without an id. Returns when the client closes `reader` or the session ends.
pub async fn serve_stdio_on<R, W>(server: impl Into<GuiBridgeServer>, reader: R, writer: W) -> Result<(), ServeError>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let order = Arc::new(CallOrder::default());
    let server = server.into().with_call_order(order.clone());
    let meta = apps::server_info_meta(server.bridge().identity());
    let (to_rmcp, rmcp_in) = tokio::io::duplex(PIPE_BYTES);
    let (rmcp_out, from_rmcp) = tokio::io::duplex(PIPE_BYTES);
    let (answers, answers_rx) = mpsc::channel::<Vec<u8>>(64);
    let writer = tokio::spawn(write_loop(writer, from_rmcp, answers_rx, order.clone()));
    let reader = tokio::spawn(read_loop(reader, to_rmcp, answers, order, meta));
    let served = async {
        let running = server.serve((rmcp_in, rmcp_out)).await?;
        let reason = running.waiting().await?;
        tracing::debug!(?reason, "stdio MCP session ended");
        Ok::<_, ServeError>(())
    }
    .await;
    // rmcp is gone: stop reading, let the writer drain what rmcp and the pre-layer wrote.
    reader.abort();
    let written = writer.await;
    served?;
    written??;
    Ok(())
}

/// What the storm guard allows.
#[derive(Debug, Default)]
pub(crate) struct StormGuard {
    last: Option<Instant>,
    in_a_row: u32,
}

impl StormGuard {
    /// One more unidentifiable line at `now`: may it be answered?
    pub(crate) fn allow(&mut self, now: Instant) -> bool {
        self.in_a_row = self.in_a_row.saturating_add(1);
        if self.in_a_row > STORM_LIMIT || self.last.is_some_and(|last| now.duration_since(last) < STORM_INTERVAL) {
            return false;
        }
        self.last = Some(now);
        true
    }

    /// A valid message arrived: the count of lines in a row starts again.
    pub(crate) fn valid(&mut self) {
        self.in_a_row = 0;
    }
}

/// One line read in bounded memory.
enum LineRead {
    /// A whole line (its `\n` included) is in the buffer.
    Line,
    /// The line was longer than the cap; the buffer holds its first bytes, the rest was skipped.
    Oversized,
    Eof,
}

/// Reads one line into `line` without letting it grow past [`MAX_LINE_BYTES`]; an over-long
/// line keeps its first [`OVERSIZED_PREFIX_BYTES`] and is skipped to its end.
async fn read_line<R: AsyncRead + Unpin>(reader: &mut BufReader<R>, line: &mut Vec<u8>) -> std::io::Result<LineRead> {
    line.clear();
    let mut oversized = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            // A trailing fragment without its newline is no message (rmcp drops it too).
            return Ok(if oversized { LineRead::Oversized } else { LineRead::Eof });
        }
        let newline = available.iter().position(|b| *b == b'\n');
        let take = newline.map_or(available.len(), |i| i + 1);
        if !oversized && line.len() + take > MAX_LINE_BYTES {
            oversized = true;
            line.truncate(OVERSIZED_PREFIX_BYTES);
        }
        if oversized {
            let room = OVERSIZED_PREFIX_BYTES.saturating_sub(line.len());
            line.extend_from_slice(&available[..take.min(room)]);
        } else {
            line.extend_from_slice(&available[..take]);
        }
        reader.consume(take);
        if newline.is_some() {
            return Ok(if oversized { LineRead::Oversized } else { LineRead::Line });
        }
    }
}

/// Reads the client's lines, answers what must be answered, forwards the rest to rmcp.
async fn read_loop<R: AsyncRead + Unpin>(
    reader: R,
    mut to_rmcp: tokio::io::DuplexStream,
    answers: mpsc::Sender<Vec<u8>>,
    order: Arc<CallOrder>,
    meta: rmcp::model::MetaObject,
) {
    let mut reader = BufReader::with_capacity(PIPE_BYTES, reader);
    let mut line = Vec::new();
    let mut guard = StormGuard::default();
    let mut started = false;
    loop {
        let inbound = match read_line(&mut reader, &mut line).await {
            Ok(LineRead::Line) => classify(line.strip_suffix(b"\n").unwrap_or(&line)),
            Ok(LineRead::Oversized) => {
                tracing::warn!(max = MAX_LINE_BYTES, "incoming message longer than the maximum, skipped");
                classify_oversized(&line)
            }
            Ok(LineRead::Eof) => break,
            Err(e) => {
                tracing::error!("error reading the client's stream: {e}");
                break;
            }
        };
        let answer = match inbound {
            Inbound::Blank | Inbound::Silent => continue,
            Inbound::Forward { call } => {
                guard.valid();
                if !started {
                    match opening(&line) {
                        Opening::Starts => started = true,
                        Opening::Request => {}
                        Opening::Fatal => {
                            tracing::debug!("a notification or response before the session started, dropped");
                            continue;
                        }
                    }
                }
                match call.map(|id| (order.admit(&id), id)) {
                    Some((Admit::Busy, id)) => error_line(Some(&id), &busy()),
                    Some((Admit::Duplicate, id)) => error_line(
                        Some(&id),
                        &ErrorData::invalid_request("Invalid Request: a call with this id is still in progress", None),
                    ),
                    _ => {
                        if to_rmcp.write_all(&line).await.is_err() {
                            break;
                        }
                        continue;
                    }
                }
            }
            Inbound::Reply { id, error } => error_line(Some(&id), &error),
            Inbound::RefuseCall { id, error } => {
                let mut result = to_call_tool_result(&Err(error));
                result.meta = Some(meta.clone());
                result_line(&id, &result)
            }
            Inbound::Unidentified(error) => {
                if !guard.allow(Instant::now()) {
                    tracing::debug!(code = error.code.0, "unidentifiable input not answered (storm guard)");
                    continue;
                }
                error_line(None, &error)
            }
        };
        if answers.send(answer).await.is_err() {
            break;
        }
    }
}

/// What a valid message does before the session has started. rmcp's handshake ends the
/// session on any notification or response that comes before its lifecycle starts (an
/// `initialize` request, or in the 2026-07-28 era a request with complete inline `_meta`), so
/// one stray line (a host cancelling its own `initialize`, echoing what it reads) would stop
/// the app: the pre-layer drops those lines until then, as it never answers them anyway.
enum Opening {
    /// Starts rmcp's lifecycle: forwarded, and from here on every message is.
    Starts,
    /// A request rmcp answers without starting (`ping`, discovery, incomplete `_meta`).
    Request,
    /// A notification or a response: rmcp would end the session on it.
    Fatal,
}

fn opening(line: &[u8]) -> Opening {
    use rmcp::model::{ClientJsonRpcMessage, ClientRequest, GetMeta, ProtocolVersion};
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    match serde_json::from_slice::<ClientJsonRpcMessage>(line) {
        Ok(ClientJsonRpcMessage::Request(request)) => match &request.request {
            ClientRequest::InitializeRequest(_) => Opening::Starts,
            ClientRequest::PingRequest(_) | ClientRequest::DiscoverRequest(_) => Opening::Request,
            other if other.get_meta().missing_required_keys(&ProtocolVersion::V_2026_07_28).is_empty() => {
                Opening::Starts
            }
            _ => Opening::Request,
        },
        // `classify` forwards only what this type reads.
        _ => Opening::Fatal,
    }
}

fn busy() -> ErrorData {
    ErrorData::new(
        BUSY,
        format!(
            "Server busy: {MAX_QUEUED_CALLS} calls of this connection are waiting or running; retry after some are answered"
        ),
        None,
    )
}

/// A JSON-RPC error line; `id: None` writes `"id": null`.
pub(crate) fn error_line(id: Option<&RequestId>, error: &ErrorData) -> Vec<u8> {
    line(json!({"jsonrpc": "2.0", "id": id, "error": error}))
}

pub(crate) fn result_line(id: &RequestId, result: &impl serde::Serialize) -> Vec<u8> {
    line(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

fn line(value: Value) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(&value).expect("a JSON value serializes");
    bytes.push(b'\n');
    bytes
}

/// Writes rmcp's lines and the pre-layer's answers to the client, whole lines only; rmcp's
/// answers also release the tickets of calls rmcp answered without a handler.
async fn write_loop<W: AsyncWrite + Unpin>(
    writer: W,
    from_rmcp: tokio::io::DuplexStream,
    mut answers: mpsc::Receiver<Vec<u8>>,
    order: Arc<CallOrder>,
) -> std::io::Result<()> {
    let mut out = BufWriter::new(writer);
    let mut rmcp = BufReader::with_capacity(PIPE_BYTES, from_rmcp);
    let mut buf = Vec::new();
    let (mut rmcp_open, mut answers_open) = (true, true);
    while rmcp_open || answers_open {
        tokio::select! {
            // The pre-layer's answers first: one is queued before the line after it reaches
            // rmcp, so it leaves before rmcp's reply to any later line.
            biased;
            answer = answers.recv(), if answers_open => match answer {
                Some(answer) => out.write_all(&answer).await?,
                None => answers_open = false,
            },
            // `read_until` keeps a partial line in `buf` when the other branch wins.
            read = rmcp.read_until(b'\n', &mut buf), if rmcp_open => {
                if read? == 0 {
                    rmcp_open = false;
                    if !buf.is_empty() {
                        out.write_all(&buf).await?;
                        buf.clear();
                    }
                } else {
                    order.observe_outgoing(&buf);
                    out.write_all(&buf).await?;
                    buf.clear();
                }
            }
        }
        // Flush once nothing more is ready to write at once.
        if !rmcp.buffer().contains(&b'\n') && answers.is_empty() {
            out.flush().await?;
        }
    }
    out.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;

    // The storm guard: one answer per interval, none after STORM_LIMIT in a row until a valid
    // message arrives.
    #[test]
    fn storm_guard_rations_answers_without_id() {
        let mut guard = StormGuard::default();
        let t0 = Instant::now();
        assert!(guard.allow(t0));
        assert!(!guard.allow(t0 + Duration::from_millis(10)), "a second answer within the interval");
        let mut t = t0;
        for _ in 2..STORM_LIMIT {
            t += STORM_INTERVAL;
            assert!(guard.allow(t));
        }
        t += STORM_INTERVAL;
        assert!(!guard.allow(t), "none after {STORM_LIMIT} in a row");
        guard.valid();
        t += STORM_INTERVAL;
        assert!(guard.allow(t), "a valid message resets the count");
    }
}
