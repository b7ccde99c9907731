//! What an agent reads, as the bytes on the wire: an rmcp client whose transport copies every
//! line the server writes, so each figure is the server's own compact JSON (key order and all),
//! never a re-serialization. Shared by the token benchmark (`examples/token_budget`) and the
//! test that pins the Order Editor's figures (`tests/it/token_budget.rs`).

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ExtensionCapabilities, ProtocolVersion,
    ReadResourceRequestParams, SubscribeRequestParams, SubscriptionFilter,
};
use rmcp::service::{ClientLifecycleMode, RoleClient, RunningService, Subscription};
use rmcp::{ClientHandler, ClientServiceExt, ServiceExt};
use serde_json::{Value, json};
use std::pin::Pin;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::process::{Child, Command};

/// Errors of the benchmark and its test.
pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// The MCP Apps extension a host declares in its capabilities.
pub const UI_EXTENSION: &str = "io.modelcontextprotocol/ui";

/// Tokens of `text` in OpenAI's `o200k_base` encoding (special-token text counted as ordinary
/// text, as js-tiktoken's `encode(text, [], [])` counts it): the export's tokenizer.
pub fn tokens(text: &str) -> usize {
    bridge_runtime::export::count_tokens(text).expect("the o200k_base ranks ship with tiktoken-rs")
}

/// Bytes and tokens of one piece of text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cost {
    /// UTF-8 bytes.
    pub bytes: usize,
    /// `o200k_base` tokens.
    pub tokens: usize,
}

impl Cost {
    /// The cost of `text`.
    pub fn of(text: &str) -> Self {
        Self { bytes: text.len(), tokens: tokens(text) }
    }
}

impl std::ops::AddAssign for Cost {
    fn add_assign(&mut self, other: Self) {
        self.bytes += other.bytes;
        self.tokens += other.tokens;
    }
}

/// Which client: protocol era and whether it declares the MCP Apps extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Case {
    /// 2026-07-28 (`server/discover`, stateless requests) instead of a 2025-11-25 session.
    pub modern: bool,
    /// Declares `io.modelcontextprotocol/ui` in its capabilities.
    pub ui: bool,
}

impl Case {
    /// The four cases, the baseline (2025-11-25, no extension) first.
    pub const ALL: [Case; 4] = [
        Case { modern: false, ui: false },
        Case { modern: false, ui: true },
        Case { modern: true, ui: false },
        Case { modern: true, ui: true },
    ];

    /// "2025-11-25" or "2026-07-28", with "+ui" when the extension is declared.
    pub fn label(self) -> String {
        format!("{}{}", if self.modern { "2026-07-28" } else { "2025-11-25" }, if self.ui { " + ui" } else { "" })
    }
}

/// The client: its capabilities say whether it hosts MCP Apps; notifications are read from the
/// wire copy, not from callbacks.
#[derive(Clone)]
struct Agent {
    ui: bool,
}

impl ClientHandler for Agent {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        if self.ui {
            let mut ext = ExtensionCapabilities::new();
            let settings = json!({"mimeTypes": ["text/html;profile=mcp-app"]});
            ext.insert(UI_EXTENSION.into(), settings.as_object().cloned().unwrap_or_default());
            capabilities.extensions = Some(ext);
        }
        let mut info = ClientConfig::default();
        info.capabilities = capabilities;
        info
    }
}

/// A reader that copies every byte it passes on into `tap`.
struct Tap<R> {
    inner: R,
    tap: Arc<Mutex<Vec<u8>>>,
}

impl<R: AsyncRead + Unpin> AsyncRead for Tap<R> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = &polled {
            let fresh = buf.filled()[before..].to_vec();
            self.tap.lock().unwrap_or_else(|e| e.into_inner()).extend_from_slice(&fresh);
        }
        polled
    }
}

/// One line the server wrote, parsed, with its raw text.
#[derive(Debug, Clone)]
pub struct Line {
    /// The line as sent (compact JSON).
    pub raw: String,
    /// The same, parsed.
    pub json: Value,
}

impl Line {
    /// The notification's method, if the line is one.
    pub fn method(&self) -> Option<&str> {
        self.json.get("method").and_then(Value::as_str)
    }
}

/// A connected client with the copy of everything the server sent.
pub struct Wire {
    client: RunningService<RoleClient, Agent>,
    tap: Arc<Mutex<Vec<u8>>>,
    lines: Vec<Line>,
    _child: Option<Child>,
    _listen: Option<Subscription>,
    /// The connection's first response: `initialize` or `server/discover`.
    pub hello: Line,
}

impl Wire {
    /// Starts `bin args…` (a server over stdio) and connects to it as `case` says.
    pub async fn spawn(bin: &std::path::Path, args: &[&str], case: Case) -> Result<Self, Error> {
        let mut child = Command::new(bin)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("{}: {e} (build it first: cargo build --examples)", bin.display()))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        Self::connect(stdout, stdin, case, Some(child)).await
    }

    /// Connects over an already open pair of streams.
    pub async fn connect<R, W>(read: R, write: W, case: Case, child: Option<Child>) -> Result<Self, Error>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let tap = Arc::new(Mutex::new(Vec::new()));
        let reader = Tap { inner: read, tap: tap.clone() };
        let agent = Agent { ui: case.ui };
        let client = if case.modern {
            agent
                .serve_with_lifecycle(
                    (reader, write),
                    ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] },
                )
                .await?
        } else {
            agent.serve((reader, write)).await?
        };
        let mut wire = Self {
            client,
            tap,
            lines: Vec::new(),
            _child: child,
            _listen: None,
            hello: Line { raw: String::new(), json: Value::Null },
        };
        wire.hello = wire.response()?;
        Ok(wire)
    }

    /// The server's `instructions` (the text itself).
    pub fn instructions(&self) -> String {
        self.hello.json["result"]["instructions"].as_str().unwrap_or_default().to_owned()
    }

    /// Asks for `app://windows` updates and tool-list changes: `resources/subscribe` in a
    /// 2025-11-25 session, `subscriptions/listen` in 2026-07-28.
    pub async fn subscribe(&mut self, modern: bool) -> Result<(), Error> {
        if modern {
            let mut filter = SubscriptionFilter::new();
            filter.tools_list_changed = Some(true);
            filter.resource_subscriptions = Some(vec!["app://windows".into()]);
            self._listen = Some(self.client.listen(filter).await?);
        } else {
            #[allow(deprecated)]
            self.client.subscribe(SubscribeRequestParams::new("app://windows")).await?;
        }
        self.pull();
        self.lines.retain(|l| l.method().is_some());
        Ok(())
    }

    /// Moves the complete lines received so far into `self.lines`.
    fn pull(&mut self) {
        let mut buf = self.tap.lock().unwrap_or_else(|e| e.into_inner());
        while let Some(end) = buf.iter().position(|&b| b == b'\n') {
            let raw: Vec<u8> = buf.drain(..=end).collect();
            let raw = String::from_utf8_lossy(&raw).trim_end().to_owned();
            if raw.is_empty() {
                continue;
            }
            let json = serde_json::from_str(&raw).unwrap_or(Value::Null);
            self.lines.push(Line { raw, json });
        }
    }

    /// The latest response line (the answer to the request just made); notifications stay queued.
    fn response(&mut self) -> Result<Line, Error> {
        self.pull();
        let at = self
            .lines
            .iter()
            .rposition(|l| l.method().is_none() && (l.json.get("result").is_some() || l.json.get("error").is_some()))
            .ok_or("no response on the wire")?;
        let line = self.lines.remove(at);
        self.lines.retain(|l| l.method().is_some());
        Ok(line)
    }

    /// Notifications received since the last call, in order (waits `settle` for late ones).
    pub async fn notifications(&mut self, settle: std::time::Duration) -> Vec<Line> {
        tokio::time::sleep(settle).await;
        self.pull();
        std::mem::take(&mut self.lines).into_iter().filter(|l| l.method().is_some()).collect()
    }

    /// `tools/list`: the raw `result` object.
    pub async fn tools_list(&mut self) -> Result<String, Error> {
        self.client.list_tools(None).await?;
        result_of(&self.response()?)
    }

    /// `resources/read app://windows`: the resource's text (the window snapshot as JSON).
    pub async fn windows(&mut self) -> Result<String, Error> {
        self.client.read_resource(ReadResourceRequestParams::new("app://windows")).await?;
        let line = self.response()?;
        line.json["result"]["contents"][0]["text"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| format!("app://windows has no text: {}", line.raw).into())
    }

    /// `tools/call`: the raw `result` object (an error result too).
    pub async fn call(&mut self, name: &str, args: Value) -> Result<String, Error> {
        let params =
            CallToolRequestParams::new(name.to_owned()).with_arguments(args.as_object().cloned().unwrap_or_default());
        self.client.call_tool(params).await?;
        result_of(&self.response()?)
    }

    /// Closes the connection (and ends the child, if any).
    pub async fn close(self) {
        let _ = self.client.cancel().await;
    }
}

/// The raw text of a response line's `result`.
fn result_of(line: &Line) -> Result<String, Error> {
    member(&line.raw, "result").map(str::to_owned).ok_or_else(|| format!("no result: {}", line.raw).into())
}

/// The raw text of member `key` of the JSON object `raw` (compact or not), as sent.
pub fn member<'a>(raw: &'a str, key: &str) -> Option<&'a str> {
    members(raw)?.into_iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

/// The members of the JSON object `raw`: key (unescaped) and raw value text, in wire order.
pub fn members(raw: &str) -> Option<Vec<(String, &str)>> {
    items(raw, b'{', b'}')?.into_iter().map(|(key, value)| Some((key?, value))).collect()
}

/// The elements of the JSON array `raw`, as raw text, in order.
pub fn elements(raw: &str) -> Option<Vec<&str>> {
    Some(items(raw, b'[', b']')?.into_iter().map(|(_, value)| value).collect())
}

/// The items of the object or array `raw` (`open`, `close` its brackets): each value's raw
/// text, with its key for an object.
fn items(raw: &str, open: u8, close: u8) -> Option<Vec<(Option<String>, &str)>> {
    let b = raw.as_bytes();
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&open) {
        return None;
    }
    i = skip_ws(b, i + 1);
    let mut out = Vec::new();
    while b.get(i) != Some(&close) {
        let mut key = None;
        if open == b'{' {
            let key_end = skip_value(b, i)?;
            key = Some(serde_json::from_str(&raw[i..key_end]).ok()?);
            i = skip_ws(b, key_end);
            if b.get(i) != Some(&b':') {
                return None;
            }
            i = skip_ws(b, i + 1);
        }
        let end = skip_value(b, i)?;
        out.push((key, &raw[i..end]));
        i = skip_ws(b, end);
        if b.get(i) == Some(&b',') {
            i = skip_ws(b, i + 1);
        }
    }
    Some(out)
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

/// The end (exclusive) of the JSON value starting at `i`.
fn skip_value(b: &[u8], i: usize) -> Option<usize> {
    match *b.get(i)? {
        b'"' => {
            let mut j = i + 1;
            loop {
                match *b.get(j)? {
                    b'\\' => j += 2,
                    b'"' => return Some(j + 1),
                    _ => j += 1,
                }
            }
        }
        b'{' | b'[' => {
            let (mut depth, mut j) = (0usize, i);
            loop {
                match *b.get(j)? {
                    b'"' => {
                        j = skip_value(b, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        _ => {
            let mut j = i;
            while b.get(j).is_some_and(|c| !matches!(c, b',' | b'}' | b']') && !c.is_ascii_whitespace()) {
                j += 1;
            }
            (j > i).then_some(j)
        }
    }
}

/// The tools of a raw `tools/list` result: name and raw text of each, in wire order.
pub fn tools(list: &str) -> Vec<(String, &str)> {
    named(list, "tools", "name")
}

/// The windows of a raw `app://windows` text: id and raw text of each.
pub fn windows(snapshot: &str) -> Vec<(String, &str)> {
    named(snapshot, "windows", "id")
}

/// The objects of the array member `array` of `raw`, each with its string member `key`.
fn named<'a>(raw: &'a str, array: &str, key: &str) -> Vec<(String, &'a str)> {
    let items = member(raw, array).and_then(elements).unwrap_or_default();
    let name = |item: &str| member(item, key).and_then(|n| serde_json::from_str(n).ok()).unwrap_or_default();
    items.into_iter().map(|item| (name(item), item)).collect()
}
