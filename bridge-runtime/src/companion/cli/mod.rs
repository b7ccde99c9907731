//! The `companion` command line (CP §6, OQ-CP-11, OQ-CP-19): a client of the runtime's Unix
//! socket (served by [`super::Server`]). The binary `companion` calls [`main`].
//!
//! ```text
//! companion [--json] [--credential-profile NAME] [--socket PATH] <command>
//!   runtime describe [--protocol-version V]...
//!   characters list
//!   capabilities list
//!   capabilities describe ID
//!   styles list
//!   requests create --file F          (F: requests.create params; `-` = stdin; at most 1 MiB)
//!   requests get ID
//!   requests wait ID [--wait-ms N] [--after-revision N]
//!   requests cancel ID
//!   requests update ID --file F       (F: {"expectedRevision", "params"?, "complete"?})
//!   pair --name NAME --scopes discover,notify,... --profile NAME [--force]
//! ```
//!
//! - **Credentials (CP-5-9, CP-5-10, CP-6-2, CP-6-7).** Only from a credential profile file
//!   (`<config dir>/profiles/NAME.json`, mode `0600`; the config dir is
//!   `$COMPANION_CONFIG_DIR`, else `$XDG_CONFIG_HOME/companion`, else `~/.config/companion`),
//!   never from arguments or request files (a request file holding `key` or `clientId` is
//!   refused before anything is sent). `--credential-profile NAME`, else the only
//!   profile; several and none named → exit 3 (CP-6-7). `runtime describe` works without a
//!   profile: with none named and none or several existing it asks unauthenticated (on
//!   `--socket`, `$COMPANION_SOCKET` or the default socket); a named or only profile is used.
//! - **Machine mode (`--json`, CP-6-3 … CP-6-5).** stdout carries exactly one JSON value (UTF-8,
//!   never NaN/Infinity): the result on success (exit 0); on every non-zero exit
//!   `{"error": {"code", "message", "retryable", ...details}}`, plus `"request": {snapshot}`
//!   when the exit comes from a request's state (CP-6-16). Diagnostics go to stderr; no colour,
//!   no progress text.
//! - **Plain mode.** A short plain-text rendering; content is never interpreted (control
//!   characters are escaped, HTML is just text, CP-6-6). Errors go to stderr (a request's
//!   snapshot still goes to stdout).
//! - **Codes and exit codes**: see [`Exit`], [`FailureCode`] and [`CliCode`]. Results are
//!   decoded into the protocol's types ([`crate::companion::protocol`]). Request commands map
//!   the request's state: `failed` → 5 (`REQUEST_FAILED`), `cancelled` → 6
//!   (`REQUEST_CANCELLED`), `expired` → 6 (`REQUEST_EXPIRED`), others 0 (`requests cancel`
//!   ending `cancelled` → 0). `requests wait` waits for the end (or, with `--after-revision`,
//!   for the next change), looping over `requests.wait` (CP-3-22) for at most `--wait-ms` in
//!   total (default 30000); still running then → 7 (`REQUEST_PENDING`) with the request's full
//!   snapshot (fetched with `requests.get` when the wait's last answer is the `unchanged`
//!   marker). The snapshot always includes `state` (CP-6-15).

mod args;
mod output;

use args::{CapabilitiesCommand, Cli, Command, ListCommand, PairArgs, RequestsCommand, RuntimeCommand};
pub use output::{CliCode, Exit, FailureCode};
use output::{Failure, Render};

use crate::catalog::Scope;
use crate::companion::client::profile::{self, CredentialProfile};
use crate::companion::client::{BlockingClient, ClientError, PAIR_TIMEOUT, Reply, Waited};
use crate::companion::error::ErrorCode;
use crate::companion::model::RequestState;
use crate::companion::protocol::params::{
    CapabilitiesDescribeParams, CapabilitiesListParams, NoParams, PairingParams, RequestRef, RuntimeDescribeParams,
};
use crate::companion::protocol::results::CapabilityPage;
use crate::companion::protocol::{CompanionMethod, method};
use crate::companion::unix::default_socket_path;
use clap::Parser;
use serde::Serialize;
use serde_json::{Map, Value};
use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Default total wait of `requests wait`, ms.
pub const DEFAULT_WAIT_MS: u64 = 30_000;
/// How long the CLI waits for an ordinary answer.
const CALL_TIMEOUT: Duration = crate::companion::client::DEFAULT_TIMEOUT;
/// Largest request file (`requests create/update --file`), bytes: 1 MiB.
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
            let missing_subcommand =
                matches!(e.kind(), ErrorKind::MissingSubcommand | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand);
            let message = if missing_subcommand { missing_subcommand_message(&args) } else { clap_message(&e) };
            if json_hint {
                let _ = writeln!(stderr, "{}", e.render());
                emit_json(stdout, &Failure::new(CliCode::UsageError, message).to_json());
            } else if missing_subcommand {
                // clap shows the help there; say first what is wrong.
                let _ = write!(stderr, "error: {message}\n\n{}", e.render());
            } else {
                let _ = write!(stderr, "{}", e.render());
            }
            return Exit::Params.code();
        }
    };
    match execute(&cli) {
        Ok((value, kind)) => {
            if cli.json {
                emit_json(stdout, &value);
            } else {
                let _ = writeln!(stdout, "{}", output::render(kind, &value));
            }
            Exit::Ok.code()
        }
        Err(failure) => {
            if cli.json {
                emit_json(stdout, &failure.to_json());
            } else {
                if let Some(request) = &failure.request {
                    let _ = writeln!(stdout, "{}", output::render(Render::Request, request));
                }
                let _ = writeln!(stderr, "{}", failure.to_text());
            }
            failure.exit().code()
        }
    }
}

/// The one-line message of a clap error: its first paragraph without the `error: ` prefix
/// (e.g. "unexpected argument '--key' found", "a value is required for '--file <FILE>' but none
/// was supplied", "invalid value 'x' for '--wait-ms <MS>': invalid digit found in string").
fn clap_message(e: &clap::Error) -> String {
    let text = e.to_string();
    let lines: Vec<&str> = text.lines().take_while(|l| !l.trim().is_empty()).map(str::trim).collect();
    let message = lines.join(" ");
    let message = message.trim_start_matches("error: ").trim();
    if message.is_empty() { "invalid command line; see `companion --help`".to_owned() } else { message.to_owned() }
}

/// The message for a command group given without its subcommand (clap's `MissingSubcommand` and
/// `DisplayHelpOnMissingArgumentOrSubcommand`, whose own text is the group's help): e.g.
/// "`companion capabilities` needs a subcommand: list, describe (see `companion capabilities
/// --help`)". The group is found by walking `args` through the command tree.
fn missing_subcommand_message(args: &[OsString]) -> String {
    use clap::CommandFactory;
    let mut root = Cli::command();
    root.build();
    let mut path = vec![root.get_name().to_owned()];
    let mut current = &root;
    let mut rest = args.iter().skip(1);
    while let Some(arg) = rest.next() {
        let Some(arg) = arg.to_str() else { break };
        if arg == "--" {
            break;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let takes_value = !long.contains('=')
                && current.get_arguments().any(|a| a.get_long() == Some(long) && a.get_action().takes_values());
            if takes_value {
                rest.next();
            }
            continue;
        }
        if arg.starts_with('-') && arg.len() > 1 {
            continue;
        }
        match current.find_subcommand(arg) {
            Some(sub) => {
                path.push(sub.get_name().to_owned());
                current = sub;
            }
            None => break,
        }
    }
    let path = path.join(" ");
    let subs: Vec<&str> = current
        .get_subcommands()
        .filter(|c| !c.is_hide_set() && c.get_name() != "help")
        .map(|c| c.get_name())
        .collect();
    if subs.is_empty() {
        format!("`{path}` needs more arguments (see `{path} --help`)")
    } else {
        format!("`{path}` needs a subcommand: {} (see `{path} --help`)", subs.join(", "))
    }
}

fn emit_json(stdout: &mut dyn Write, value: &Value) {
    // serde_json cannot hold NaN or Infinity, and writes UTF-8 (CP-6-5).
    let text = serde_json::to_string(value).unwrap_or_else(|_| "null".into());
    let _ = writeln!(stdout, "{text}");
    let _ = stdout.flush();
}

/// What a successful command prints; every non-zero exit is a [`Failure`].
type Outcome = Result<(Value, Render), Failure>;

fn usage(message: impl Into<String>) -> Failure {
    Failure::new(CliCode::UsageError, message)
}

/// `value` as JSON params (the params types always encode).
fn params_of<P: Serialize>(value: &P) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

fn execute(cli: &Cli) -> Outcome {
    match &cli.command {
        Command::Pair(args) => pair(cli, args),
        Command::Runtime(RuntimeCommand::Describe { protocol_versions }) => {
            let mut session = Session::open(cli, false)?;
            let params = RuntimeDescribeParams {
                protocol_versions: (!protocol_versions.is_empty()).then(|| protocol_versions.clone()),
            };
            let reply = session.call::<method::RuntimeDescribe>(params_of(&params), CALL_TIMEOUT)?;
            Ok((reply.raw, Render::Runtime))
        }
        Command::Characters(ListCommand::List) => {
            let reply =
                Session::open(cli, true)?.call::<method::CharactersList>(params_of(&NoParams {}), CALL_TIMEOUT)?;
            Ok((reply.raw, Render::Characters))
        }
        Command::Styles(ListCommand::List) => {
            let reply = Session::open(cli, true)?.call::<method::StylesList>(params_of(&NoParams {}), CALL_TIMEOUT)?;
            Ok((reply.raw, Render::Styles))
        }
        Command::Capabilities(CapabilitiesCommand::List) => {
            let mut session = Session::open(cli, true)?;
            let mut all = Vec::new();
            let mut cursor: Option<String> = None;
            // Bounded: a well-behaved runtime ends with `nextCursor: null` long before this.
            for _ in 0..1000 {
                let params = CapabilitiesListParams { cursor: cursor.take(), limit: None };
                let page = session.call::<method::CapabilitiesList>(params_of(&params), CALL_TIMEOUT)?.value;
                all.extend(page.capabilities);
                match page.next_cursor {
                    Some(next) => cursor = Some(next),
                    None => {
                        let whole = CapabilityPage {
                            catalog_revision: page.catalog_revision,
                            capabilities: all,
                            next_cursor: None,
                        };
                        return Ok((params_of(&whole), Render::Capabilities));
                    }
                }
            }
            Err(Failure::new(ErrorCode::InternalError, "the runtime kept paginating"))
        }
        Command::Capabilities(CapabilitiesCommand::Describe { id }) => {
            let params = CapabilitiesDescribeParams { capability: id.clone() };
            let reply =
                Session::open(cli, true)?.call::<method::CapabilitiesDescribe>(params_of(&params), CALL_TIMEOUT)?;
            Ok((reply.raw, Render::Descriptor))
        }
        Command::Requests(cmd) => requests(cli, cmd),
    }
}

/// A request command's outcome from the request's `state`: a failure for `failed`,
/// `cancelled`, `expired` (unless `cancelled` is what was asked for), else the snapshot.
fn request_outcome(state: RequestState, raw: Value, cancelling: bool) -> Outcome {
    if cancelling && state == RequestState::Cancelled {
        return Ok((raw, Render::Request));
    }
    match Failure::for_state(state, &raw) {
        Some(failure) => Err(failure),
        None => Ok((raw, Render::Request)),
    }
}

fn requests(cli: &Cli, cmd: &RequestsCommand) -> Outcome {
    match cmd {
        RequestsCommand::Create { file } => {
            // Sent as written: idempotency compares the params as sent (OQ-CP-16).
            let params = read_params_file(file)?;
            let reply = Session::open(cli, true)?.call::<method::RequestsCreate>(params, CALL_TIMEOUT)?;
            request_outcome(reply.value.state, reply.raw, false)
        }
        RequestsCommand::Get { id } => {
            let params = RequestRef { request_id: id.clone() };
            let reply = Session::open(cli, true)?.call::<method::RequestsGet>(params_of(&params), CALL_TIMEOUT)?;
            request_outcome(reply.value.state, reply.raw, false)
        }
        RequestsCommand::Cancel { id } => {
            let params = RequestRef { request_id: id.clone() };
            let reply = Session::open(cli, true)?.call::<method::RequestsCancel>(params_of(&params), CALL_TIMEOUT)?;
            request_outcome(reply.value.state, reply.raw, true)
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
            let reply = Session::open(cli, true)?.call::<method::RequestsUpdate>(params, CALL_TIMEOUT)?;
            request_outcome(reply.value.state, reply.raw, false)
        }
        RequestsCommand::Wait { id, wait_ms, after_revision } => {
            let mut session = Session::open(cli, true)?;
            wait(&mut session, id, wait_ms.unwrap_or(DEFAULT_WAIT_MS), *after_revision)
        }
    }
}

/// `requests wait`: loops over `requests.wait` until the request is terminal (or changed, with
/// `after_revision`), within `budget_ms` in total; still running then → `REQUEST_PENDING` with
/// the full snapshot (CP-6-15): when the last answer is the `unchanged` marker, the snapshot is
/// fetched with `requests.get` (should that fail, the marker, which has the state, is shown).
fn wait(session: &mut Session, id: &str, budget_ms: u64, after_revision: Option<u64>) -> Outcome {
    match session.client.wait_raw(id, budget_ms, after_revision, None).map_err(failure)? {
        Waited::Done(reply) => request_outcome(reply.value.state, reply.raw, false),
        Waited::Pending(reply) => Err(Failure::pending(reply.value.state, reply.raw)),
        Waited::Marker(marker, _) => Err(Failure::pending(marker.value.state, marker.raw)),
    }
}

/// Reads a JSON object of protocol params from `path` (`-` = stdin), at most
/// [`MAX_FILE_BYTES`] (1 MiB): a larger file is refused as a whole (`USAGE_ERROR`, exit 2, CP-6-9)
/// rather than cut and misread. Credentials are refused (CP-6-2): the key only ever comes from a
/// profile.
fn read_params_file(path: &Path) -> Result<Value, Failure> {
    let cannot_read = |e: std::io::Error| usage(format!("cannot read {}: {e}", path.display()));
    let mut bytes = Vec::new();
    // One byte past the limit tells "exactly at the limit" from "larger".
    let (read, known_size) = if path == Path::new("-") {
        (std::io::stdin().lock().take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes), None)
    } else {
        let file = std::fs::File::open(path).map_err(cannot_read)?;
        let size = file.metadata().ok().filter(|m| m.is_file()).map(|m| m.len());
        (file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes), size)
    };
    read.map_err(cannot_read)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        let name =
            if path == Path::new("-") { "the standard input (-)".to_owned() } else { path.display().to_string() };
        let size = match known_size {
            Some(size) if size > MAX_FILE_BYTES => format!("{size} bytes"),
            _ => format!("more than {MAX_FILE_BYTES} bytes"),
        };
        return Err(usage(format!(
            "{name} is too large ({size}); a request file may hold at most 1 MiB ({MAX_FILE_BYTES} bytes)"
        )));
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| usage(format!("cannot read {}: stream did not contain valid UTF-8", path.display())))?;
    let value: Value = serde_json::from_str(&text)
        .map_err(|e| Failure::new(ErrorCode::InvalidParams, format!("{} is not valid JSON: {e}", path.display())))?;
    let Some(obj) = value.as_object() else {
        return Err(Failure::new(ErrorCode::InvalidParams, format!("{} must hold a JSON object", path.display())));
    };
    if obj.contains_key("key") || obj.contains_key("clientId") {
        return Err(Failure::new(
            ErrorCode::InvalidParams,
            "the request file must not contain credentials (key, clientId); they come from the credential profile",
        ));
    }
    Ok(value)
}

/// The socket to use, and whether it is the default one (whose directory the client creates
/// and checks as the server does).
fn socket_for(cli: &Cli, profile: Option<&CredentialProfile>) -> (PathBuf, bool) {
    let given = cli
        .socket
        .clone()
        .or_else(|| profile.and_then(|p| p.socket().map(Path::to_owned)))
        .or_else(|| std::env::var_os("COMPANION_SOCKET").map(PathBuf::from).filter(|p| !p.as_os_str().is_empty()));
    match given {
        Some(path) => (path, false),
        None => (default_socket_path(), true),
    }
}

fn profile_failure(e: profile::ProfileError) -> Failure {
    match e {
        profile::ProfileError::InvalidName(_) => usage(e.to_string()),
        e => Failure::new(CliCode::ProfileError, e.to_string()),
    }
}

/// The failure a client error amounts to.
fn failure(e: ClientError) -> Failure {
    match e {
        // Trying again reaches the same socket: an untrusted one stays untrusted.
        ClientError::Untrusted(m) => Failure::new(CliCode::ConnectionFailed, m).retryable(false),
        ClientError::Connection(m) => Failure::new(CliCode::ConnectionFailed, m),
        ClientError::Rpc(e) => Failure::from_rpc(e),
        ClientError::Protocol(m) => Failure::new(ErrorCode::InternalError, m),
        ClientError::Mismatch(m) => Failure::new(ErrorCode::InternalError, m).retryable(false),
        ClientError::Profile(e) => profile_failure(e),
        ClientError::Usage(m) => usage(m),
    }
}

/// A connection, authenticated with the chosen profile when there is one.
struct Session {
    client: BlockingClient,
}

impl Session {
    /// Connects; authenticates with the profile (required unless `!need_profile`). Without
    /// `need_profile` (`runtime describe`) and with no profile named, none or several profiles
    /// mean an unauthenticated session: nothing is picked among several (CP-6-7), and the
    /// method needs no credentials. A named profile is always used (or its problem reported).
    fn open(cli: &Cli, need_profile: bool) -> Result<Self, Failure> {
        let dir = profile::profiles_dir();
        let chosen = match profile::choose(dir.as_deref(), cli.credential_profile.as_deref()) {
            Err(profile::ProfileError::Ambiguous(_)) if !need_profile && cli.credential_profile.is_none() => None,
            chosen => chosen.map_err(profile_failure)?,
        };
        if need_profile && chosen.is_none() {
            return Err(profile_failure(profile::ProfileError::None));
        }
        let (socket, default) = socket_for(cli, chosen.as_ref().map(|(_, p)| p));
        let mut client = BlockingClient::open(&socket, default).map_err(failure)?;
        if let Some((_, p)) = chosen {
            client.authenticate(&p).map_err(failure)?;
        }
        Ok(Session { client })
    }

    /// Calls method `M` with `params` as given and decodes its result into `M::Result`.
    fn call<M: CompanionMethod>(&mut self, params: Value, timeout: Duration) -> Result<Reply<M::Result>, Failure> {
        self.client.request::<M>(params, timeout).map_err(failure)
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
    let (socket, default) = socket_for(cli, None);
    let socket = std::path::absolute(&socket).unwrap_or(socket);
    let client = BlockingClient::open(&socket, default).map_err(failure)?;
    let mut session = Session { client };
    let scopes = args.scopes.iter().map(|s| Value::from(s.as_str())).collect::<Vec<_>>();
    // Scope names are checked by the runtime (an unknown one is INVALID_PARAMS with a pointer).
    let params = match serde_json::from_value::<Vec<Scope>>(Value::Array(scopes.clone())) {
        Ok(scopes) => params_of(&PairingParams { name: args.name.clone(), scopes }),
        Err(_) => {
            let mut p = Map::new();
            p.insert("name".into(), args.name.clone().into());
            p.insert("scopes".into(), Value::Array(scopes));
            Value::Object(p)
        }
    };
    let pairing = session.call::<method::PairingRequest>(params, PAIR_TIMEOUT)?.value;
    let client_id = pairing.client_id.as_str();
    let profile = CredentialProfile::from_pairing(&pairing, Some(socket));
    let path = profile::write(&dir, &args.profile, &profile, args.force).map_err(|e| {
        Failure::new(
            ErrorCode::InternalError,
            format!("paired as {client_id}, but the profile could not be written ({e}); revoke that client in the app"),
        )
        .retryable(false)
    })?;
    let mut out = Map::new();
    out.insert("profile".into(), args.profile.clone().into());
    out.insert("clientId".into(), client_id.into());
    out.insert("scopes".into(), params_of(&pairing.scopes));
    out.insert("label".into(), pairing.label.clone().into());
    out.insert("path".into(), path.display().to_string().into());
    Ok((Value::Object(out), Render::Pair))
}
