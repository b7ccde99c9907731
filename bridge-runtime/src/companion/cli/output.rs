//! Exit codes (CP-6-8 … CP-6-14, OQ-CP-11), the error shape and the CLI's own codes (CP-6-16,
//! CP-6-17, OQ-CP-12) and the plain-text rendering (CP-6-6).

use crate::companion::client::RpcError;
use crate::companion::error::ErrorCode;
use crate::companion::model::RequestState;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::fmt;

/// The exit codes (CP-6-8 … CP-6-14, OQ-CP-11; 1 is never used). Every non-zero exit prints a
/// `Failure` (the JSON error object on stderr).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Exit {
    /// 0: the requested operation succeeded (also `get` of a request still running).
    Ok = 0,
    /// 2: invalid parameters (`INVALID_PARAMS`, `UNSUPPORTED_*`, `REVISION_CONFLICT`,
    /// `IDEMPOTENCY_CONFLICT`, `METHOD_NOT_FOUND`, `INVALID_REQUEST`) or command-line usage
    /// (`USAGE_ERROR`).
    Params = 2,
    /// 3: `UNAUTHENTICATED`, `FORBIDDEN`, or no usable credential profile (`PROFILE_ERROR`).
    Auth = 3,
    /// 4: cannot connect, or the connection failed (`CONNECTION_FAILED`).
    Connect = 4,
    /// 5: the request `failed` (`REQUEST_FAILED`), or `QUEUE_FULL`, `RATE_LIMITED`,
    /// `RUNTIME_UNAVAILABLE`, `NOT_FOUND`, `RESULT_EXPIRED`, `INTERNAL_ERROR`, `PARSE_ERROR`, or a
    /// code this CLI does not know.
    Failed = 5,
    /// 6: the request is `cancelled` (`REQUEST_CANCELLED`) or `expired` (`REQUEST_EXPIRED`).
    Cancelled = 6,
    /// 7: the wait ended while the request is still running (`REQUEST_PENDING`).
    StillRunning = 7,
}

impl Exit {
    /// The process exit code.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The exit code of a failure with `code`.
    pub fn for_error(code: &FailureCode) -> Exit {
        match code {
            FailureCode::Runtime(code) => match code {
                ErrorCode::InvalidParams
                | ErrorCode::UnsupportedCapability
                | ErrorCode::UnsupportedStyle
                | ErrorCode::RevisionConflict
                | ErrorCode::IdempotencyConflict
                | ErrorCode::MethodNotFound => Exit::Params,
                ErrorCode::Unauthenticated | ErrorCode::Forbidden => Exit::Auth,
                ErrorCode::NotFound
                | ErrorCode::ResultExpired
                | ErrorCode::QueueFull
                | ErrorCode::RateLimited
                | ErrorCode::RuntimeUnavailable
                | ErrorCode::InternalError => Exit::Failed,
            },
            FailureCode::Cli(code) => match code {
                CliCode::UsageError | CliCode::InvalidRequest => Exit::Params,
                CliCode::ProfileError => Exit::Auth,
                CliCode::ConnectionFailed => Exit::Connect,
                CliCode::ParseError | CliCode::RequestFailed => Exit::Failed,
                CliCode::RequestCancelled | CliCode::RequestExpired => Exit::Cancelled,
                CliCode::RequestPending => Exit::StillRunning,
            },
            FailureCode::Unknown(_) => Exit::Failed,
        }
    }
}

/// The CLI's own stable codes, beside the protocol's [`ErrorCode`]s (CP-6-17 asks for "at
/// least" those): problems found before anything reaches the runtime, JSON-RPC framing errors,
/// and the outcomes of a request that the runtime reports as a state rather than as an error
/// (CP-6-12 … CP-6-14). Wire strings in `SCREAMING_SNAKE_CASE`.
///
/// | code | exit | retryable | meaning |
/// | --- | --- | --- | --- |
/// | `USAGE_ERROR` | 2 | no | the command line or a request file is unusable (unreadable, over 1 MiB) |
/// | `INVALID_REQUEST` | 2 | no | the runtime rejected the message as not a JSON-RPC request |
/// | `PROFILE_ERROR` | 3 | no | no usable credential profile (none, several and none named, unsafe file) |
/// | `CONNECTION_FAILED` | 4 | yes (no for a socket the client does not trust) | the socket cannot be reached, or the connection broke, or the socket is not safely yours |
/// | `PARSE_ERROR` | 5 | no | the runtime could not parse the message |
/// | `REQUEST_FAILED` | 5 | no | the request ended `failed` (`request.terminalReason` says why) |
/// | `REQUEST_CANCELLED` | 6 | no | the request ended `cancelled` (by the user, the runtime or another command) |
/// | `REQUEST_EXPIRED` | 6 | no | the request's deadline passed (`expired`) |
/// | `REQUEST_PENDING` | 7 | yes | `requests wait` ended while the request is still running; wait again |
///
/// The four `REQUEST_*` codes come with the request's full snapshot under `request` (the newest
/// one the CLI saw; for `REQUEST_PENDING` fetched with `requests.get` when the wait ended on the
/// `unchanged` marker of `requests.wait`, which is kept only should that call fail).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum CliCode {
    /// The command line or a request file is unusable (exit 2).
    UsageError,
    /// The runtime rejected the message as not a JSON-RPC request (exit 2).
    InvalidRequest,
    /// No usable credential profile (exit 3).
    ProfileError,
    /// The socket cannot be reached, or the connection broke (exit 4, retryable).
    ConnectionFailed,
    /// The runtime could not parse the message (exit 5).
    ParseError,
    /// The request ended `failed` (exit 5).
    RequestFailed,
    /// The request ended `cancelled` (exit 6).
    RequestCancelled,
    /// The request ended `expired` (exit 6).
    RequestExpired,
    /// The wait ended while the request is still running (exit 7, retryable).
    RequestPending,
}

impl CliCode {
    /// The wire string, e.g. `"REQUEST_PENDING"`.
    pub fn as_str(self) -> &'static str {
        match self {
            CliCode::UsageError => "USAGE_ERROR",
            CliCode::InvalidRequest => "INVALID_REQUEST",
            CliCode::ProfileError => "PROFILE_ERROR",
            CliCode::ConnectionFailed => "CONNECTION_FAILED",
            CliCode::ParseError => "PARSE_ERROR",
            CliCode::RequestFailed => "REQUEST_FAILED",
            CliCode::RequestCancelled => "REQUEST_CANCELLED",
            CliCode::RequestExpired => "REQUEST_EXPIRED",
            CliCode::RequestPending => "REQUEST_PENDING",
        }
    }

    /// Whether trying the same command again later may succeed.
    pub fn retryable(self) -> bool {
        match self {
            CliCode::ConnectionFailed | CliCode::RequestPending => true,
            CliCode::UsageError
            | CliCode::InvalidRequest
            | CliCode::ProfileError
            | CliCode::ParseError
            | CliCode::RequestFailed
            | CliCode::RequestCancelled
            | CliCode::RequestExpired => false,
        }
    }
}

/// The stable code of a `Failure` (the JSON error object the CLI prints).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FailureCode {
    /// A protocol error code from the runtime (CP-6-17).
    Runtime(ErrorCode),
    /// One of the CLI's own codes.
    Cli(CliCode),
    /// A code this CLI does not know (a newer runtime), kept as sent (exit 5).
    Unknown(String),
}

impl FailureCode {
    /// The code sent in `error.data.code`: a protocol code, a framing code or an unknown one.
    pub fn parse(code: &str) -> FailureCode {
        let v = Value::from(code);
        if let Ok(c) = serde_json::from_value::<ErrorCode>(v.clone()) {
            return FailureCode::Runtime(c);
        }
        if let Ok(c @ (CliCode::ParseError | CliCode::InvalidRequest)) = serde_json::from_value::<CliCode>(v) {
            return FailureCode::Cli(c);
        }
        FailureCode::Unknown(code.to_owned())
    }

    /// The wire string.
    pub fn as_str(&self) -> &str {
        match self {
            FailureCode::Runtime(c) => c.as_str(),
            FailureCode::Cli(c) => c.as_str(),
            FailureCode::Unknown(s) => s,
        }
    }
}

impl fmt::Display for FailureCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<ErrorCode> for FailureCode {
    fn from(c: ErrorCode) -> Self {
        FailureCode::Runtime(c)
    }
}

impl From<CliCode> for FailureCode {
    fn from(c: CliCode) -> Self {
        FailureCode::Cli(c)
    }
}

/// A failure as printed (CP-6-16): `{"error": {"code", "message", "retryable", ...details}}`,
/// plus `"request": {snapshot}` when the failure is a request's outcome (exits 5, 6, 7 from
/// [`CliCode`]`::REQUEST_*`).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Failure {
    /// The stable code.
    pub code: FailureCode,
    /// Readable message.
    pub message: String,
    /// Whether trying again later may succeed.
    pub retryable: bool,
    /// Extra keys from the server's `error.data` (e.g. `problems`, `currentRevision`).
    pub details: Map<String, Value>,
    /// The request's snapshot, as the runtime sent it, for a request outcome.
    pub request: Option<Value>,
}

impl Failure {
    /// A failure with no details; `retryable` as the code says.
    pub(super) fn new(code: impl Into<FailureCode>, message: impl Into<String>) -> Self {
        let code = code.into();
        let retryable = match &code {
            FailureCode::Runtime(c) => c.retryable(),
            FailureCode::Cli(c) => c.retryable(),
            FailureCode::Unknown(_) => false,
        };
        Self { code, message: message.into(), retryable, details: Map::new(), request: None }
    }

    /// A server error.
    pub(super) fn from_rpc(e: RpcError) -> Self {
        let code = e.code_str().map_or(FailureCode::Runtime(ErrorCode::InternalError), FailureCode::parse);
        let retryable = e.retryable();
        let mut details = match e.data {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        details.remove("code");
        details.remove("retryable");
        Self { code, message: e.message, retryable, details, request: None }
    }

    /// The failure a request's `state` amounts to, with its snapshot `request` (as received):
    /// `failed` → `REQUEST_FAILED`, `cancelled` → `REQUEST_CANCELLED`, `expired` →
    /// `REQUEST_EXPIRED`; `None` for `completed` and the non-terminal states.
    pub(super) fn for_state(state: RequestState, request: &Value) -> Option<Failure> {
        let reason = request.get("terminalReason").and_then(Value::as_str).map(plain);
        let because = reason.map(|r| format!(" ({r})")).unwrap_or_default();
        let failure = match state {
            RequestState::Failed => Failure::new(CliCode::RequestFailed, format!("the request failed{because}")),
            RequestState::Cancelled => {
                Failure::new(CliCode::RequestCancelled, format!("the request was cancelled{because}"))
            }
            RequestState::Expired => {
                Failure::new(CliCode::RequestExpired, "the request expired: its deadline passed before it ended")
            }
            RequestState::Queued | RequestState::Running | RequestState::AwaitingUser | RequestState::Completed => {
                return None;
            }
        };
        Some(failure.with_request(request.clone()))
    }

    /// `REQUEST_PENDING`: the wait ended while the request, last seen as `request`, still runs.
    pub(super) fn pending(state: RequestState, request: Value) -> Failure {
        Failure::new(
            CliCode::RequestPending,
            format!("the wait ended while the request is still {}; wait again", state.as_str()),
        )
        .with_request(request)
    }

    /// Overrides `retryable`.
    pub(super) fn retryable(mut self, retryable: bool) -> Self {
        self.retryable = retryable;
        self
    }

    /// Attaches the request's snapshot.
    pub(super) fn with_request(mut self, request: Value) -> Self {
        self.request = Some(request);
        self
    }

    /// The exit code.
    pub(super) fn exit(&self) -> Exit {
        Exit::for_error(&self.code)
    }

    /// The JSON printed in `--json` mode.
    pub(super) fn to_json(&self) -> Value {
        let mut obj = Map::new();
        obj.insert("code".into(), self.code.as_str().into());
        obj.insert("message".into(), self.message.clone().into());
        obj.insert("retryable".into(), self.retryable.into());
        for (k, v) in &self.details {
            obj.entry(k.clone()).or_insert_with(|| v.clone());
        }
        match &self.request {
            Some(request) => json!({"error": obj, "request": request}),
            None => json!({"error": obj}),
        }
    }

    /// The plain-text line printed on stderr otherwise.
    pub(super) fn to_text(&self) -> String {
        let mut s = format!(
            "error: {}: {}{}",
            plain(self.code.as_str()),
            plain(&self.message),
            if self.retryable { " (retryable)" } else { "" }
        );
        if let Some(Value::Array(problems)) = self.details.get("problems") {
            for p in problems {
                let path = p.get("path").and_then(Value::as_str).unwrap_or("");
                let msg = p.get("message").and_then(Value::as_str).unwrap_or("");
                s.push_str(&format!("\n  {}: {}", plain(if path.is_empty() { "/" } else { path }), plain(msg)));
            }
        }
        s
    }
}

/// Text made safe to print: control characters (escape sequences, carriage returns, …) are
/// shown as `\u{..}` instead of being interpreted by the terminal (CP-6-6). Newlines and tabs
/// are kept only when `multiline`.
pub(super) fn plain_with(s: &str, multiline: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_control() && !(multiline && (c == '\n' || c == '\t')) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// Text made safe to print on one line: control characters are shown as `\u{..}` (CP-6-6).
pub(super) fn plain(s: &str) -> String {
    plain_with(s, false)
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

fn list_of(v: &Value) -> String {
    match v {
        Value::Array(items) => {
            items.iter().map(|i| i.as_str().map(plain).unwrap_or_else(|| i.to_string())).collect::<Vec<_>>().join(", ")
        }
        Value::Null => String::new(),
        other => plain(&other.to_string()),
    }
}

/// What a successful command printed, by kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Render {
    /// `runtime describe`.
    Runtime,
    /// `characters list`.
    Characters,
    /// `capabilities list`.
    Capabilities,
    /// `capabilities describe`.
    Descriptor,
    /// `styles list`.
    Styles,
    /// A request snapshot (or the `unchanged` marker of a wait).
    Request,
    /// `pair`.
    Pair,
}

/// The plain-text rendering of a result (every string passes through [`plain`]).
pub(super) fn render(kind: Render, v: &Value) -> String {
    let mut out = Vec::new();
    match kind {
        Render::Runtime => {
            let imp = &v["implementation"];
            out.push(format!("implementation: {} {}", plain(str_of(imp, "name")), plain(str_of(imp, "version"))));
            out.push(format!(
                "protocol: {} (supported: {})",
                plain(str_of(v, "protocolVersion")),
                list_of(&v["supportedProtocolVersions"])
            ));
            out.push(format!("runtime instance: {}", plain(str_of(v, "runtimeInstanceId"))));
            let auth = &v["authorization"];
            if auth["authenticated"] == Value::Bool(true) {
                out.push(format!(
                    "authenticated: {} (scopes: {})",
                    plain(str_of(auth, "clientId")),
                    list_of(&auth["scopes"])
                ));
            } else {
                out.push("authenticated: no".into());
            }
            if let Some(limits) = v["limits"].as_object() {
                for (k, val) in limits {
                    out.push(format!("limit {}: {}", plain(k), plain(&val.to_string())));
                }
            }
            out.push(format!("result retention: {} ms", v["resultRetentionMs"]));
        }
        Render::Characters => {
            let current = str_of(v, "current");
            for c in v["characters"].as_array().into_iter().flatten() {
                let id = str_of(c, "id");
                out.push(format!(
                    "{} {}  {}  [{}]",
                    if id == current { "*" } else { " " },
                    plain(id),
                    plain(str_of(c, "name")),
                    list_of(&c["capabilities"])
                ));
            }
        }
        Render::Capabilities => {
            for c in v["capabilities"].as_array().into_iter().flatten() {
                out.push(format!(
                    "{}  {}  {}  {}",
                    plain(str_of(c, "id")),
                    plain(str_of(c, "version")),
                    plain(str_of(c, "kind")),
                    plain(str_of(c, "description"))
                ));
            }
        }
        Render::Descriptor => {
            out.push(plain_with(&serde_json::to_string_pretty(v).unwrap_or_default(), true));
        }
        Render::Styles => {
            for s in v["styles"].as_array().into_iter().flatten() {
                out.push(format!(
                    "{}  {}  [{}]",
                    plain(str_of(s, "id")),
                    plain(str_of(s, "description")),
                    list_of(&s["capabilities"])
                ));
            }
        }
        Render::Request => {
            out.push(format!("request: {}", plain(str_of(v, "requestId"))));
            out.push(format!("state: {}", plain(str_of(v, "state"))));
            out.push(format!("revision: {}", v["revision"]));
            if v["unchanged"] == Value::Bool(true) {
                out.push("(no change before the wait ended)".into());
            } else {
                let cap = str_of(v, "capability");
                let resolved = str_of(v, "resolvedCapability");
                if resolved.is_empty() || resolved == cap {
                    out.push(format!("capability: {}", plain(cap)));
                } else {
                    out.push(format!("capability: {} (shown as {})", plain(cap), plain(resolved)));
                }
                out.push(format!("character: {}", plain(str_of(v, "character"))));
                if let Some(r) = v["terminalReason"].as_str() {
                    out.push(format!("reason: {}", plain(r)));
                }
                if !v["result"].is_null() {
                    out.push(format!("result: {}", plain(&v["result"].to_string())));
                }
            }
        }
        Render::Pair => {
            out.push(format!(
                "paired as {} (scopes: {}); credentials saved in profile `{}`",
                plain(str_of(v, "clientId")),
                list_of(&v["scopes"]),
                plain(str_of(v, "profile"))
            ));
        }
    }
    out.join("\n")
}
