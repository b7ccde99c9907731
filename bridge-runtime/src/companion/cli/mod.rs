//! The `companion` command line (CP §6, OQ-CP-11, OQ-CP-19): a client of the runtime's Unix
//! socket ([`super::server`]). The binary `companion` calls [`main`].
//!
//! ```text
//! companion [--json] [--credential-profile NAME] [--socket PATH] <command>
//!   runtime describe [--protocol-version V]...
//!   characters list
//!   capabilities list
//!   capabilities describe ID
//!   styles list
//!   requests create --file F          (F: requests.create params; `-` = stdin)
//!   requests get ID
//!   requests wait ID [--wait-ms N] [--after-revision N]
//!   requests cancel ID
//!   requests update ID --file F       (F: {"expectedRevision", "params"?, "complete"?})
//!   pair --name NAME --scopes discover,notify,... --profile NAME [--force]
//! ```
//!
//! - **Credentials (CP-5-9, CP-5-10, CP-6-2, CP-6-7).** Only from a credential profile file
//!   ([`profile`]), never from arguments or request files (a request file holding `key` or
//!   `clientId` is refused before anything is sent). `--credential-profile NAME`, else the only
//!   profile; several and none named → exit 3. `runtime describe` works without any profile.
//! - **Machine mode (`--json`, CP-6-3 … CP-6-5).** stdout carries exactly one JSON value (UTF-8,
//!   never NaN/Infinity): the result, or `{"error": {"code", "message", "retryable", ...}}`.
//!   Diagnostics go to stderr; no colour, no progress text.
//! - **Plain mode.** A short plain-text rendering; content is never interpreted (control
//!   characters are escaped, HTML is just text, CP-6-6). Errors go to stderr.
//! - **Exit codes**: see [`Exit`]. Request commands map the request's state: `failed` → 5,
//!   `cancelled`/`expired` → 6, others 0 (`requests cancel` ending `cancelled` → 0). `requests
//!   wait` waits for the end (or, with `--after-revision`, for the next change), looping over
//!   `requests.wait` (CP-3-22) for at most `--wait-ms` in total (default 30000); still running
//!   then → 7. Its output always includes `state` (CP-6-15).

mod args;
mod client;
mod output;
pub mod profile;

pub use args::{CapabilitiesCommand, Cli, Command, ListCommand, PairArgs, RequestsCommand, RuntimeCommand};
pub use output::{Exit, Failure, Render, plain};

use crate::companion::server::default_socket_path;
use clap::Parser;
use client::{CallError, Client};
use profile::Profile;
use serde_json::{Map, Value, json};
use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Default total wait of `requests wait`, ms.
pub const DEFAULT_WAIT_MS: u64 = 30_000;
/// How long the CLI waits for an ordinary answer.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);
/// How long `pair` waits for the user (the runtime bounds it too).
const PAIR_TIMEOUT: Duration = Duration::from_secs(15 * 60);
/// Largest request file, bytes.
const MAX_FILE_BYTES: u64 = 1 << 20;

/// Runs the CLI on the process's arguments and stdio; returns the exit code.
pub fn main() -> std::process::ExitCode {
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    let code = run(std::env::args_os(), &mut stdout.lock(), &mut stderr.lock());
    std::process::ExitCode::from(code)
}

/// Runs the CLI on `args` (program name first), printing to `stdout`/`stderr`; returns the
/// exit code ([`Exit`]).
pub fn run(args: impl IntoIterator<Item = OsString>, stdout: &mut dyn Write, stderr: &mut dyn Write) -> u8 {
    let args: Vec<OsString> = args.into_iter().collect();
    let json_hint = args.iter().skip(1).any(|a| a == "--json");
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                let _ = write!(stdout, "{}", e.render());
                return Exit::Ok.code();
            }
            if json_hint {
                let text = e.to_string();
                let message: Vec<&str> = text.lines().take_while(|l| !l.trim().is_empty()).map(str::trim).collect();
                let message = message.join(" ").trim_start_matches("error: ").to_owned();
                let _ = writeln!(stderr, "{}", e.render());
                emit_json(stdout, &Failure::new("USAGE_ERROR", message, false).to_json());
            } else {
                let _ = write!(stderr, "{}", e.render());
            }
            return Exit::Params.code();
        }
    };
    match execute(&cli) {
        Ok((value, exit, kind)) => {
            if cli.json {
                emit_json(stdout, &value);
            } else {
                let _ = writeln!(stdout, "{}", output::render(kind, &value));
            }
            exit.code()
        }
        Err(failure) => {
            if cli.json {
                emit_json(stdout, &failure.to_json());
            } else {
                let _ = writeln!(stderr, "{}", failure.to_text());
            }
            failure.exit().code()
        }
    }
}

fn emit_json(stdout: &mut dyn Write, value: &Value) {
    // serde_json cannot hold NaN or Infinity, and writes UTF-8 (CP-6-5).
    let text = serde_json::to_string(value).unwrap_or_else(|_| "null".into());
    let _ = writeln!(stdout, "{text}");
    let _ = stdout.flush();
}

type Outcome = Result<(Value, Exit, Render), Failure>;

fn usage(message: impl Into<String>) -> Failure {
    Failure::new("USAGE_ERROR", message, false)
}

fn execute(cli: &Cli) -> Outcome {
    match &cli.command {
        Command::Pair(args) => pair(cli, args),
        Command::Runtime(RuntimeCommand::Describe { protocol_versions }) => {
            let mut session = Session::open(cli, false)?;
            let params =
                if protocol_versions.is_empty() { json!({}) } else { json!({"protocolVersions": protocol_versions}) };
            let v = session.call("runtime.describe", params, CALL_TIMEOUT)?;
            Ok((v, Exit::Ok, Render::Runtime))
        }
        Command::Characters(ListCommand::List) => {
            let v = Session::open(cli, true)?.call("characters.list", json!({}), CALL_TIMEOUT)?;
            Ok((v, Exit::Ok, Render::Characters))
        }
        Command::Styles(ListCommand::List) => {
            let v = Session::open(cli, true)?.call("styles.list", json!({}), CALL_TIMEOUT)?;
            Ok((v, Exit::Ok, Render::Styles))
        }
        Command::Capabilities(CapabilitiesCommand::List) => {
            let mut session = Session::open(cli, true)?;
            let mut all = Vec::new();
            let mut cursor: Option<String> = None;
            // Bounded: a well-behaved runtime ends with `nextCursor: null` long before this.
            for _ in 0..1000 {
                let params = match &cursor {
                    None => json!({}),
                    Some(c) => json!({"cursor": c}),
                };
                let page = session.call("capabilities.list", params, CALL_TIMEOUT)?;
                all.extend(page["capabilities"].as_array().cloned().unwrap_or_default());
                match page["nextCursor"].as_str() {
                    Some(next) => cursor = Some(next.to_owned()),
                    None => {
                        let v = json!({"catalogRevision": page["catalogRevision"], "capabilities": all, "nextCursor": null});
                        return Ok((v, Exit::Ok, Render::Capabilities));
                    }
                }
            }
            Err(Failure::new("INTERNAL_ERROR", "the runtime kept paginating", true))
        }
        Command::Capabilities(CapabilitiesCommand::Describe { id }) => {
            let v = Session::open(cli, true)?.call("capabilities.describe", json!({"capability": id}), CALL_TIMEOUT)?;
            Ok((v, Exit::Ok, Render::Descriptor))
        }
        Command::Requests(cmd) => requests(cli, cmd),
    }
}

fn requests(cli: &Cli, cmd: &RequestsCommand) -> Outcome {
    let state_exit = |v: &Value| Exit::for_state(v["state"].as_str().unwrap_or(""));
    match cmd {
        RequestsCommand::Create { file } => {
            let params = read_params_file(file)?;
            let v = Session::open(cli, true)?.call("requests.create", params, CALL_TIMEOUT)?;
            let exit = state_exit(&v);
            Ok((v, exit, Render::Request))
        }
        RequestsCommand::Get { id } => {
            let v = Session::open(cli, true)?.call("requests.get", json!({"requestId": id}), CALL_TIMEOUT)?;
            let exit = state_exit(&v);
            Ok((v, exit, Render::Request))
        }
        RequestsCommand::Cancel { id } => {
            let v = Session::open(cli, true)?.call("requests.cancel", json!({"requestId": id}), CALL_TIMEOUT)?;
            let exit = if v["state"] == "cancelled" { Exit::Ok } else { state_exit(&v) };
            Ok((v, exit, Render::Request))
        }
        RequestsCommand::Update { id, file } => {
            let mut params = read_params_file(file)?;
            let obj = params.as_object_mut().ok_or_else(|| usage("the update file must hold a JSON object"))?;
            match obj.get("requestId") {
                None => {
                    obj.insert("requestId".into(), id.clone().into());
                }
                Some(v) if v == id.as_str() => {}
                Some(_) => return Err(usage("the update file names another requestId")),
            }
            let v = Session::open(cli, true)?.call("requests.update", params, CALL_TIMEOUT)?;
            let exit = state_exit(&v);
            Ok((v, exit, Render::Request))
        }
        RequestsCommand::Wait { id, wait_ms, after_revision } => {
            let mut session = Session::open(cli, true)?;
            wait(&mut session, id, wait_ms.unwrap_or(DEFAULT_WAIT_MS), *after_revision)
        }
    }
}

/// `requests wait`: loops over `requests.wait` until the request is terminal (or changed, with
/// `after_revision`), within `budget_ms` in total.
fn wait(session: &mut Session, id: &str, budget_ms: u64, after_revision: Option<u64>) -> Outcome {
    let start = Instant::now();
    let next_change_only = after_revision.is_some();
    let mut after = after_revision;
    let mut last: Option<Value> = None;
    loop {
        let elapsed = u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
        let remaining = budget_ms.saturating_sub(elapsed);
        let mut params = json!({"requestId": id, "waitMs": remaining});
        if let Some(rev) = after {
            params["afterRevision"] = rev.into();
        }
        let v = session.call("requests.wait", params, Duration::from_millis(remaining) + CALL_TIMEOUT)?;
        let state = v["state"].as_str().unwrap_or("").to_owned();
        let terminal = matches!(state.as_str(), "completed" | "cancelled" | "expired" | "failed");
        if v["unchanged"] == Value::Bool(true) {
            // Still running when the wait ended: the newest full snapshot if there is one.
            let out = match last {
                Some(snapshot) if snapshot["revision"] == v["revision"] => snapshot,
                _ => v,
            };
            return Ok((out, Exit::StillRunning, Render::Request));
        }
        if terminal {
            return Ok((v, Exit::for_state(&state), Render::Request));
        }
        if next_change_only {
            return Ok((v, Exit::Ok, Render::Request));
        }
        after = v["revision"].as_u64();
        if remaining == 0 {
            return Ok((v, Exit::StillRunning, Render::Request));
        }
        last = Some(v);
    }
}

/// Reads a JSON object of protocol params from `path` (`-` = stdin). Credentials are refused
/// (CP-6-2): the key only ever comes from a profile.
fn read_params_file(path: &Path) -> Result<Value, Failure> {
    let mut text = String::new();
    let read = if path == Path::new("-") {
        std::io::stdin().take(MAX_FILE_BYTES).read_to_string(&mut text)
    } else {
        std::fs::File::open(path).and_then(|f| f.take(MAX_FILE_BYTES).read_to_string(&mut text))
    };
    read.map_err(|e| usage(format!("cannot read {}: {e}", path.display())))?;
    let value: Value = serde_json::from_str(&text)
        .map_err(|e| Failure::new("INVALID_PARAMS", format!("{} is not valid JSON: {e}", path.display()), false))?;
    let Some(obj) = value.as_object() else {
        return Err(Failure::new("INVALID_PARAMS", format!("{} must hold a JSON object", path.display()), false));
    };
    if obj.contains_key("key") || obj.contains_key("clientId") {
        return Err(Failure::new(
            "INVALID_PARAMS",
            "the request file must not contain credentials (key, clientId); they come from the credential profile",
            false,
        ));
    }
    Ok(value)
}

fn socket_for(cli: &Cli, profile: Option<&Profile>) -> PathBuf {
    cli.socket
        .clone()
        .or_else(|| profile.and_then(|p| p.socket.clone()))
        .or_else(|| std::env::var_os("COMPANION_SOCKET").map(PathBuf::from).filter(|p| !p.as_os_str().is_empty()))
        .unwrap_or_else(default_socket_path)
}

fn profile_failure(e: profile::ProfileError) -> Failure {
    match e {
        profile::ProfileError::InvalidName(_) => usage(e.to_string()),
        e => Failure::new("PROFILE_ERROR", e.to_string(), false),
    }
}

fn transport(message: String) -> Failure {
    Failure::new("CONNECTION_FAILED", message, true)
}

/// A connection, authenticated with the chosen profile when there is one.
struct Session {
    client: Client,
}

impl Session {
    /// Connects; authenticates with the profile (required unless `!need_profile`).
    fn open(cli: &Cli, need_profile: bool) -> Result<Self, Failure> {
        let dir = profile::profiles_dir();
        let chosen = profile::choose(dir.as_deref(), cli.credential_profile.as_deref()).map_err(profile_failure)?;
        if need_profile && chosen.is_none() {
            return Err(profile_failure(profile::ProfileError::None));
        }
        let socket = socket_for(cli, chosen.as_ref().map(|(_, p)| p));
        let client = Client::connect(&socket).map_err(transport)?;
        let mut session = Session { client };
        if let Some((_, p)) = chosen {
            session.call("session.authenticate", json!({"clientId": p.client_id, "key": p.key}), CALL_TIMEOUT)?;
        }
        Ok(session)
    }

    fn call(&mut self, method: &str, params: Value, timeout: Duration) -> Result<Value, Failure> {
        self.client.call(method, params, timeout).map_err(|e| match e {
            CallError::Transport(m) => transport(m),
            CallError::Rpc(e) => Failure::from_rpc(e),
            CallError::Protocol(m) => Failure::new("INTERNAL_ERROR", m, true),
        })
    }
}

/// `pair`: asks the runtime to pair (the user confirms in the app), then writes the profile.
/// Prints the profile name, client id and scopes; never the key.
fn pair(cli: &Cli, args: &PairArgs) -> Outcome {
    if !profile::valid_name(&args.profile) {
        return Err(profile_failure(profile::ProfileError::InvalidName(args.profile.clone())));
    }
    let dir = profile::profiles_dir()
        .ok_or_else(|| usage("no config directory: set COMPANION_CONFIG_DIR, XDG_CONFIG_HOME or HOME"))?;
    if !args.force && profile::exists(&dir, &args.profile) {
        return Err(usage(format!("profile `{}` already exists; use --force to replace it", args.profile)));
    }
    let socket = socket_for(cli, None);
    let socket = std::path::absolute(&socket).unwrap_or(socket);
    let client = Client::connect(&socket).map_err(transport)?;
    let mut session = Session { client };
    let result = session.call("pairing.request", json!({"name": args.name, "scopes": args.scopes}), PAIR_TIMEOUT)?;
    let (Some(client_id), Some(key)) = (result["clientId"].as_str(), result["key"].as_str()) else {
        return Err(Failure::new("INTERNAL_ERROR", "the runtime's pairing answer is incomplete", false));
    };
    let profile = Profile { socket: Some(socket), client_id: client_id.to_owned(), key: key.to_owned() };
    let path = profile::write(&dir, &args.profile, &profile, args.force).map_err(|e| {
        Failure::new(
            "INTERNAL_ERROR",
            format!("paired as {client_id}, but the profile could not be written ({e}); revoke that client in the app"),
            false,
        )
    })?;
    let mut out = Map::new();
    out.insert("profile".into(), args.profile.clone().into());
    out.insert("clientId".into(), client_id.into());
    out.insert("scopes".into(), result["scopes"].clone());
    out.insert("label".into(), result["label"].clone());
    out.insert("path".into(), path.display().to_string().into());
    Ok((Value::Object(out), Exit::Ok, Render::Pair))
}
