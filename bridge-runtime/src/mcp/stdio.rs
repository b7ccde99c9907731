//! The stdio pre-layer: owns the client's byte stream, answers what rmcp would drop or
//! misanswer, keeps one connection's requests in arrival order, enforces MCP's lifecycle, and
//! hands every valid message to rmcp byte for byte.
//!
//! ```text
//! client ──► read loop ──(classify)──► in-process pipe ──► rmcp ──► pipe ──► write loop ──► client
//!               │  tickets: CallOrder ◄──── handlers wait their turn       ▲
//!               └──── the pre-layer's own answers (whole lines) ───────────┘
//! ```
//!
//! - **Order** (GB-10.1-3): every request that reads or changes state (all but `ping`, the
//!   lifecycle's `initialize` and `server/discover`, and the long-lived
//!   `subscriptions/listen`) takes a ticket as its line is read ([`CallOrder`]); its handler
//!   runs only when every such request read before it is done, and not at all if it was
//!   cancelled (`notifications/cancelled`) before its turn. A request reusing the id of one in
//!   flight (any request: a `ping` too) gets `-32600` right after that one's answer. The pre-layer's own answers to
//!   requests (a `tools/call` too deep to read, a lifecycle refusal) keep their turn too: each
//!   is written after the answers to the requests read before it ([`CallOrder::hold`]).
//! - **Lifecycle**: before the session starts only `ping` and `server/discover` are served;
//!   a second `initialize` is refused (see `admit`), after the first one's answer.
//! - **End of stream**: a last line without its newline is still a line (answered, then the
//!   session ends as at any end of stdin).
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
//!   a line shaped as a response or error, whole or cut short (which is what an echo of our
//!   answer looks like).
//!   Requests with a usable id are always answered: the client waits for them.
//!
//! Answers from the pre-layer and from rmcp leave through one writer task, whole line by whole
//! line, so they never interleave.

use super::GuiBridgeServer;
use super::inbound::{
    Inbound, InlineMeta, MAX_LINE_BYTES, Message, OVERSIZED_PREFIX_BYTES, classify, classify_oversized,
};
use super::order::{Admit, CallOrder, Hold, MAX_QUEUED_CALLS, Release};
use super::server::refused_call_result;
use super::transport::ServeError;
use rmcp::ServiceExt;
use rmcp::model::{ErrorCode, ErrorData, RequestId};
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
/// process's stdin/stdout): requests in arrival order, every request answered, a storm guard on
/// answers without an id. Returns when the client closes `reader` or the session ends.
pub async fn serve_stdio_on<R, W>(server: impl Into<GuiBridgeServer>, reader: R, writer: W) -> Result<(), ServeError>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let order = Arc::new(CallOrder::default());
    let server = server.into().with_call_order(order.clone()).on_stdio();
    let bridge = server.bridge().clone();
    let (to_rmcp, rmcp_in) = tokio::io::duplex(PIPE_BYTES);
    let (rmcp_out, from_rmcp) = tokio::io::duplex(PIPE_BYTES);
    let (answers, answers_rx) = mpsc::channel::<Vec<u8>>(64);
    let writer = tokio::spawn(write_loop(writer, from_rmcp, answers_rx, order.clone()));
    let reader = tokio::spawn(read_loop(reader, to_rmcp, answers, order, bridge));
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
    /// A whole line is in the buffer: its `\n` included, unless it is the last one before the
    /// end of the stream.
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
            // A last line the client did not end with a newline before closing the stream is
            // still a line (rmcp drops it; the client waits for its answer).
            return Ok(if oversized {
                LineRead::Oversized
            } else if line.is_empty() {
                LineRead::Eof
            } else {
                LineRead::Line
            });
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
    bridge: crate::gui::Bridge,
) {
    let mut reader = BufReader::with_capacity(PIPE_BYTES, reader);
    let mut line = Vec::new();
    let mut guard = StormGuard::default();
    let mut lifecycle = Lifecycle::default();
    loop {
        let inbound = match read_line(&mut reader, &mut line).await {
            Ok(LineRead::Line) => classify(line.strip_suffix(b"\n").unwrap_or(&line)),
            Ok(LineRead::Oversized) => {
                tracing::debug!(max = MAX_LINE_BYTES, "incoming message longer than the maximum, skipped");
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
            Inbound::Forward(message) => {
                guard.valid();
                match admit(&message, &mut lifecycle, &order) {
                    Ok(()) => {
                        if !line.ends_with(b"\n") {
                            // The last line, unterminated: rmcp reads whole lines only.
                            line.push(b'\n');
                        }
                        if to_rmcp.write_all(&line).await.is_err() {
                            break;
                        }
                        continue;
                    }
                    Err(Refusal::Drop) => continue,
                    Err(Refusal::Answer(answer)) => answer,
                    Err(Refusal::InTurn(id, answer)) => match take_turn(&order, &id, answer) {
                        Some(answer) => answer,
                        None => continue,
                    },
                }
            }
            Inbound::Reply { id, error } => error_line(Some(&id), &error),
            Inbound::RefuseCall { id, error, tool, version, ui } => {
                guard.valid();
                // The era and capabilities of the request's own `_meta`, else of the connection
                // (rmcp's rule).
                let modern = version.as_deref().map_or(lifecycle.modern, super::inbound::is_modern);
                let ui = ui.unwrap_or(lifecycle.ui);
                let result = refused_call_result(&bridge, tool.as_deref(), error, modern, ui);
                match take_turn(&order, &id, result_line(&id, &result)) {
                    Some(answer) => answer,
                    None => continue,
                }
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

/// Queues the pre-layer's `answer` to request `id` behind the requests read before it: the
/// line to write now, or `None` when it waits for its turn (or is dropped as a duplicate, or
/// the queue is full: then the busy error is written now instead).
fn take_turn(order: &CallOrder, id: &RequestId, answer: Vec<u8>) -> Option<Vec<u8>> {
    match order.hold(id, answer) {
        Hold::Now(answer) => Some(answer),
        Hold::Held | Hold::Duplicate => None,
        Hold::Busy => Some(error_line(Some(id), &busy())),
    }
}

/// Where the connection's MCP lifecycle is.
#[derive(Debug, Default)]
struct Lifecycle {
    /// An `initialize` request, or a request with complete 2026-07-28 inline `_meta`, has been
    /// forwarded: rmcp's session has started.
    started: bool,
    /// The session started with inline 2026-07-28 `_meta` (not `initialize`): results carry
    /// `resultType`.
    modern: bool,
    /// The `initialize` declared the MCP Apps extension.
    ui: bool,
}

/// Why a valid message is not forwarded.
enum Refusal {
    /// Dropped without an answer.
    Drop,
    /// Answered with this line instead, at once.
    Answer(Vec<u8>),
    /// Answered with this line instead, in the request's turn (after the answers to the
    /// requests read before it).
    InTurn(RequestId, Vec<u8>),
}

/// Applies the lifecycle and the request order to one valid message: `Ok` forwards it to
/// rmcp.
///
/// The lifecycle (MCP 2025-11-25 "Lifecycle"; 2026-07-28 stateless requests):
/// - before the session starts, `ping` and `server/discover` are answered (by rmcp);
///   `initialize` or a request with complete inline `_meta` starts it; a request with some of
///   the 2026-07-28 `_meta` keys but not all is rmcp's to refuse (`-32602` naming the missing
///   keys); any other request (a 2025-11-25 request before `initialize`) gets `-32600` with
///   its id, where rmcp would answer `-32602` about `_meta` keys that client never heard of;
/// - a notification or a response before the session starts is dropped: rmcp's handshake
///   ends the session on one, so one stray line (a host cancelling its own `initialize`,
///   echoing what it reads) would stop the app;
/// - a second `initialize` gets `-32600` with its id, after the first one's answer (the first
///   takes a ticket that holds no request back, [`CallOrder::admit_done`]): a connection has
///   one lifecycle, and rmcp would run the handshake again on a live session.
///
/// The order: a request that reads or changes state takes a ticket ([`CallOrder::admit`]),
/// any other request one that only tracks its id ([`CallOrder::admit_unordered`]: a `ping`
/// must not take the answer of a `tools/call` with its id); a duplicate id is refused with
/// `-32600` once the original is answered; beyond the cap, busy.
fn admit(message: &Message, lifecycle: &mut Lifecycle, order: &CallOrder) -> Result<(), Refusal> {
    match message {
        Message::Initialize { id, .. } if lifecycle.started => Err(Refusal::InTurn(
            id.clone(),
            error_line(
                Some(id),
                &ErrorData::invalid_request("Invalid Request: this connection is already initialized", None),
            ),
        )),
        Message::Initialize { id, ui } => {
            lifecycle.started = true;
            lifecycle.ui = *ui;
            // Busy cannot be: nothing is queued before the session starts but requests rmcp
            // answers at once.
            let _ = order.admit_done(id);
            Ok(())
        }
        Message::Unordered { id } => admitted(id, order.admit_unordered(id)),
        Message::Notification { .. } | Message::Response if !lifecycle.started => {
            tracing::debug!("a notification or response before the session started, dropped");
            Err(Refusal::Drop)
        }
        Message::Notification { cancels } => {
            if let Some(id) = cancels {
                order.peer_cancelled(id);
            }
            Ok(())
        }
        Message::Response => Ok(()),
        Message::Request { id, ordered, meta } => {
            if !lifecycle.started {
                match meta {
                    InlineMeta::Complete => {
                        lifecycle.started = true;
                        lifecycle.modern = true;
                    }
                    InlineMeta::Incomplete => {}
                    InlineMeta::Absent => {
                        return Err(Refusal::InTurn(
                            id.clone(),
                            error_line(
                                Some(id),
                                &ErrorData::invalid_request(
                                    "Invalid Request: send initialize first; only ping and server/discover \
                                     may come before it",
                                    None,
                                ),
                            ),
                        ));
                    }
                }
            }
            admitted(id, if *ordered { order.admit(id) } else { order.admit_unordered(id) })
        }
    }
}

/// The pre-layer's part in a ticket's outcome for request `id`.
fn admitted(id: &RequestId, admit: Admit) -> Result<(), Refusal> {
    match admit {
        Admit::Queued => Ok(()),
        Admit::Busy => Err(Refusal::Answer(error_line(Some(id), &busy()))),
        // Its error is written after the original's answer (see `write_loop`).
        Admit::Duplicate => Err(Refusal::Drop),
    }
}

/// The error of a request whose id is the id of one still in flight.
fn duplicate() -> ErrorData {
    ErrorData::invalid_request("Invalid Request: a request with this id is still in progress", None)
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

/// A JSON-RPC error line; `id: None` writes `"id": null`. Members in rmcp's order
/// (`jsonrpc`, `id`, `error`).
pub(crate) fn error_line(id: Option<&RequestId>, error: &ErrorData) -> Vec<u8> {
    #[derive(serde::Serialize)]
    struct ErrorLine<'a> {
        jsonrpc: &'static str,
        id: Option<&'a RequestId>,
        error: &'a ErrorData,
    }
    line(&ErrorLine { jsonrpc: "2.0", id, error })
}

/// A JSON-RPC result line, members in rmcp's order (`jsonrpc`, `id`, `result`), the result's
/// members in its type's order (as rmcp writes them).
pub(crate) fn result_line(id: &RequestId, result: &impl serde::Serialize) -> Vec<u8> {
    #[derive(serde::Serialize)]
    struct ResultLine<'a, T> {
        jsonrpc: &'static str,
        id: &'a RequestId,
        result: &'a T,
    }
    line(&ResultLine { jsonrpc: "2.0", id, result })
}

fn line(value: &impl serde::Serialize) -> Vec<u8> {
    // These types always serialize (string keys, no failing `Serialize`); an empty line would
    // be skipped by the client.
    let mut bytes = serde_json::to_vec(value).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

/// Logs an error answer of rmcp's at `DEBUG` (rmcp's own `WARN` for it is dropped by
/// [`loggable`](super::loggable)): a peer's mistakes never log louder.
fn log_error_answer(line: &[u8]) {
    #[derive(serde::Deserialize)]
    struct Answer {
        id: Option<RequestId>,
        error: Option<Code>,
    }
    #[derive(serde::Deserialize)]
    struct Code {
        code: i32,
    }
    if let Ok(Answer { id, error: Some(Code { code }) }) = serde_json::from_slice::<Answer>(line) {
        tracing::debug!(?id, code, "request answered with a JSON-RPC error");
    }
}

/// Writes what the request order let go: the errors of requests that reused an id, held
/// answers whose turn came.
async fn write_released<W: AsyncWrite + Unpin>(out: &mut W, released: Vec<Release>) -> std::io::Result<()> {
    for release in released {
        match release {
            Release::Duplicates(id, duplicates) => {
                let answer = error_line(Some(&id), &duplicate());
                for _ in 0..duplicates {
                    out.write_all(&answer).await?;
                }
            }
            Release::Line(line) => out.write_all(&line).await?,
        }
    }
    Ok(())
}

/// Writes rmcp's lines and the pre-layer's answers to the client, whole lines only; rmcp's
/// answers also remove their requests' tickets, and are followed by the errors of the
/// duplicates held for them, so the client reads the original's answer first.
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
                    // What a request that will never be answered let go came first.
                    write_released(&mut out, order.take_freed()).await?;
                    let released = order.observe_outgoing(&buf);
                    if tracing::enabled!(tracing::Level::DEBUG) {
                        log_error_answer(&buf);
                    }
                    out.write_all(&buf).await?;
                    buf.clear();
                    write_released(&mut out, released).await?;
                }
            }
            // Let go by a request that will never be answered (the peer cancelled it).
            _ = order.freed_ready() => write_released(&mut out, order.take_freed()).await?,
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
