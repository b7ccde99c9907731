//! Exit codes (CP-6-8 … CP-6-14, OQ-CP-11), the error shape (CP-6-16, OQ-CP-12) and the
//! plain-text rendering (CP-6-6).

use crate::companion::jsonrpc::RpcError;
use serde_json::{Map, Value, json};

/// The exit codes (CP-6-8 … CP-6-14, OQ-CP-11; 1 is never used).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Exit {
    /// 0: the requested operation succeeded (also `get` of a request still running).
    Ok = 0,
    /// 2: invalid parameters (`INVALID_PARAMS`, `UNSUPPORTED_*`, `REVISION_CONFLICT`,
    /// `IDEMPOTENCY_CONFLICT`) or command-line usage.
    Params = 2,
    /// 3: `UNAUTHENTICATED`, `FORBIDDEN`, or no usable credential profile.
    Auth = 3,
    /// 4: cannot connect (or the connection failed).
    Connect = 4,
    /// 5: the request `failed`, or `QUEUE_FULL`, `RATE_LIMITED`, `RUNTIME_UNAVAILABLE`,
    /// `NOT_FOUND`, `RESULT_EXPIRED`, `INTERNAL_ERROR`.
    Failed = 5,
    /// 6: the request is `cancelled` or `expired`.
    Cancelled = 6,
    /// 7: the wait timed out while the request is still running.
    StillRunning = 7,
}

impl Exit {
    /// The process exit code.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The exit code for a stable error code.
    pub fn for_error(code: &str) -> Exit {
        match code {
            "INVALID_PARAMS"
            | "UNSUPPORTED_CAPABILITY"
            | "UNSUPPORTED_STYLE"
            | "REVISION_CONFLICT"
            | "IDEMPOTENCY_CONFLICT"
            | "METHOD_NOT_FOUND"
            | "USAGE_ERROR"
            | "INVALID_REQUEST" => Exit::Params,
            "UNAUTHENTICATED" | "FORBIDDEN" | "PROFILE_ERROR" => Exit::Auth,
            "CONNECTION_FAILED" => Exit::Connect,
            _ => Exit::Failed,
        }
    }

    /// The exit code for a request in `state`: `failed` → 5, `cancelled`/`expired` → 6, else 0.
    pub fn for_state(state: &str) -> Exit {
        match state {
            "failed" => Exit::Failed,
            "cancelled" | "expired" => Exit::Cancelled,
            _ => Exit::Ok,
        }
    }
}

/// A failure as printed: `{"error": {"code", "message", "retryable", ...details}}`.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// The stable code: a CP-6-17 code, or one of the CLI's own `USAGE_ERROR`,
    /// `PROFILE_ERROR`, `CONNECTION_FAILED`.
    pub code: String,
    /// Readable message.
    pub message: String,
    /// Whether trying again later may succeed.
    pub retryable: bool,
    /// Extra keys from the server's `error.data` (e.g. `problems`, `currentRevision`).
    pub details: Map<String, Value>,
}

impl Failure {
    /// A failure with no details.
    pub fn new(code: &str, message: impl Into<String>, retryable: bool) -> Self {
        Self { code: code.to_owned(), message: message.into(), retryable, details: Map::new() }
    }

    /// A server error.
    pub fn from_rpc(e: RpcError) -> Self {
        let code = e.code_str().unwrap_or("INTERNAL_ERROR").to_owned();
        let retryable = e.retryable();
        let mut details = match e.data {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        details.remove("code");
        details.remove("retryable");
        Self { code, message: e.message, retryable, details }
    }

    /// The exit code.
    pub fn exit(&self) -> Exit {
        Exit::for_error(&self.code)
    }

    /// The JSON printed in `--json` mode.
    pub fn to_json(&self) -> Value {
        let mut obj = Map::new();
        obj.insert("code".into(), self.code.clone().into());
        obj.insert("message".into(), self.message.clone().into());
        obj.insert("retryable".into(), self.retryable.into());
        for (k, v) in &self.details {
            obj.entry(k.clone()).or_insert_with(|| v.clone());
        }
        json!({"error": obj})
    }

    /// The plain-text line printed on stderr otherwise.
    pub fn to_text(&self) -> String {
        let mut s = format!(
            "error: {}: {}{}",
            self.code,
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
pub fn plain_with(s: &str, multiline: bool) -> String {
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
pub fn plain(s: &str) -> String {
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
pub enum Render {
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
pub fn render(kind: Render, v: &Value) -> String {
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
