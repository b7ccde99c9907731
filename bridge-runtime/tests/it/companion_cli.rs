//! The real `companion` binary against an in-process server (CP §6, OQ-CP-11, OQ-CP-19): pairing
//! into a 0600 profile, create → wait → completed, every exit code, machine mode's single JSON
//! value, profile choice, and the key never leaving the profile file.

use crate::support::companion as companion_support;
use crate::support::companion_socket as companion_socket_support;

use companion_socket_support::*;
use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    /// The single JSON value on stdout (CP-6-3): anything else fails the test.
    fn json(&self) -> Value {
        let mut values = serde_json::Deserializer::from_str(&self.stdout).into_iter::<Value>();
        let first = values
            .next()
            .unwrap_or_else(|| panic!("no JSON on stdout; stderr: {}", self.stderr))
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {:?}", self.stdout));
        assert!(values.next().is_none(), "more than one JSON value on stdout: {:?}", self.stdout);
        assert!(!self.stdout.contains("NaN") && !self.stdout.contains("Infinity"));
        assert!(!self.stdout.contains('\u{1b}'), "no colour codes in machine mode (CP-6-4)");
        first
    }

    fn error_code(&self) -> String {
        let v = self.json();
        let e = &v["error"];
        assert!(e["message"].is_string(), "{v}");
        assert!(e["retryable"].is_boolean(), "{v}");
        e["code"].as_str().unwrap_or_else(|| panic!("not an error: {v}")).to_owned()
    }
}

/// A CLI environment: its own config dir, no ambient socket settings.
struct Cli {
    config: PathBuf,
    socket: PathBuf,
    /// Every key issued so far: never allowed on stdout/stderr.
    keys: Vec<String>,
}

impl Cli {
    fn new(h: &Harness) -> Self {
        let config = h.dir.path().join("config");
        Cli { config, socket: h.socket.clone(), keys: Vec::new() }
    }

    fn profiles(&self) -> PathBuf {
        self.config.join("profiles")
    }

    async fn run(&self, args: &[&str]) -> Run {
        self.run_with_stdin(args, None).await
    }

    async fn run_with_stdin(&self, args: &[&str], stdin: Option<&str>) -> Run {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_companion"));
        cmd.args(args)
            .env("COMPANION_CONFIG_DIR", &self.config)
            .env("COMPANION_SOCKET", &self.socket)
            .env_remove("XDG_RUNTIME_DIR")
            .env_remove("XDG_CONFIG_HOME")
            .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = cmd.spawn().expect("spawn companion");
        if let Some(input) = stdin {
            use tokio::io::AsyncWriteExt;
            let mut pipe = child.stdin.take().unwrap();
            pipe.write_all(input.as_bytes()).await.unwrap();
        }
        let out = tokio::time::timeout(BOUND, child.wait_with_output()).await.expect("CLI finished").unwrap();
        let run = Run {
            code: out.status.code().expect("exit code"),
            stdout: String::from_utf8(out.stdout).expect("UTF-8 stdout (CP-6-5)"),
            stderr: String::from_utf8(out.stderr).expect("UTF-8 stderr"),
        };
        for key in &self.keys {
            assert!(!run.stdout.contains(key.as_str()) && !run.stderr.contains(key.as_str()), "key leaked: {args:?}");
        }
        run
    }

    /// `companion pair` as client "test agent PROFILE" (a paired name cannot be paired again),
    /// with the test playing the user who approves.
    async fn pair(&mut self, h: &mut Harness, profile: &str, scopes: &str) -> Value {
        let name = format!("test agent {profile}");
        let args = ["pair", "--name", &name, "--scopes", scopes, "--profile", profile, "--json"];
        let (run, _) = tokio::join!(self.run(&args), async {
            let (request, reply) = h.next_approval().await;
            assert_eq!(request.name, name);
            assert!(reply.approve_as_requested(&request));
        });
        assert_eq!(run.code, 0, "{} {}", run.stdout, run.stderr);
        let out = run.json();
        let stored = read_profile(&self.profiles().join(format!("{profile}.json")));
        let key = stored["key"].as_str().unwrap().to_owned();
        assert!(!run.stdout.contains(&key) && !run.stderr.contains(&key), "pair never prints the key");
        self.keys.push(key);
        out
    }

    fn write_file(&self, name: &str, v: &Value) -> PathBuf {
        let path = self.config.parent().unwrap().join(name);
        std::fs::write(&path, serde_json::to_vec(v).unwrap()).unwrap();
        path
    }
}

fn read_profile(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).expect("profile file")).expect("profile JSON")
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The user answers request `id` once it awaits them (bounded).
async fn user_answers(engine: &bridge_runtime::companion::Engine, id: &str, answer: Value) {
    tokio::time::timeout(BOUND, async {
        while engine.user_responded(id, answer.clone()).is_err() {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the request reached awaiting_user");
}

async fn create_id(cli: &Cli, file: &Path) -> String {
    let r = cli.run(&["requests", "create", "--file", s(file), "--json"]).await;
    assert_eq!(r.code, 0, "{} {}", r.stdout, r.stderr);
    r.json()["requestId"].as_str().unwrap().to_owned()
}

// CP-6-1, CP-5-10, CP-6-15, CP-6-8: pair (user approves in the app) → a 0600 profile holding
// the credentials; create → wait → completed with the user's answer, every output one JSON value.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pair_create_wait_completed() {
    let mut h = start().await;
    let mut cli = Cli::new(&h);
    let out = cli.pair(&mut h, "agent", "discover,interact,notify").await;
    assert_eq!(out["profile"], "agent");
    assert!(out["clientId"].as_str().unwrap().starts_with("cl_"));
    assert_eq!(out["scopes"], json!(["discover", "notify", "interact"]));
    assert!(out.get("key").is_none());
    let path = cli.profiles().join("agent.json");
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600, "CP-5-5");
    let stored = read_profile(&path);
    assert_eq!(stored["clientId"], out["clientId"]);
    assert_eq!(stored["socket"], s(&h.socket));

    let d = cli.run(&["runtime", "describe", "--json"]).await;
    assert_eq!(d.code, 0);
    assert_eq!(d.json()["authorization"]["clientId"], out["clientId"]);
    let caps = cli.run(&["capabilities", "list", "--json"]).await;
    assert_eq!(caps.code, 0);
    // CP-2-4: only what this profile's scopes allow (no `animate`, so no animations).
    let ids: Vec<Value> = caps.json()["capabilities"].as_array().unwrap().iter().map(|c| c["id"].clone()).collect();
    assert_eq!(
        ids,
        [json!("notice.show"), json!("progress.show"), json!("interaction.choose"), json!("interaction.text")]
    );
    let one = cli.run(&["capabilities", "describe", "interaction.choose", "--json"]).await;
    assert_eq!(one.json()["id"], "interaction.choose");
    assert_eq!(cli.run(&["characters", "list", "--json"]).await.json()["current"], "robot");
    assert!(cli.run(&["styles", "list", "--json"]).await.json()["styles"].is_array());

    let file = cli.write_file("request.json", &choose_request());
    let created = cli.run(&["requests", "create", "--file", s(&file), "--json"]).await;
    assert_eq!(created.code, 0, "CP-6-15: accepted only");
    let snap = created.json();
    let id = snap["requestId"].as_str().unwrap().to_owned();
    assert!(["queued", "running"].contains(&snap["state"].as_str().unwrap()));

    let got = cli.run(&["requests", "get", &id, "--json"]).await;
    assert_eq!(got.code, 0, "get of a non-terminal request is 0 (OQ-CP-11)");

    let waiting = {
        let id = id.clone();
        let cli = &cli;
        async move { cli.run(&["requests", "wait", &id, "--json", "--wait-ms", "20000"]).await }
    };
    let engine = h.engine.clone();
    let answer = async {
        h.expect_show(&id).await;
        // The presenter displayed it (awaiting_user); the user picks "yes".
        user_answers(&engine, &id, json!({"selectedId": "yes"})).await;
    };
    let (done, ()) = tokio::join!(waiting, answer);
    assert_eq!(done.code, 0, "{}", done.stderr);
    let done = done.json();
    assert_eq!(done["state"], "completed");
    assert_eq!(done["result"], json!({"selectedId": "yes"}));

    // Plain mode: short text, nothing on stdout but the rendering.
    let text = cli.run(&["requests", "get", &id]).await;
    assert_eq!(text.code, 0);
    assert!(text.stdout.contains("state: completed"), "{}", text.stdout);
    assert!(serde_json::from_str::<Value>(&text.stdout).is_err());
}

// CP-6-9 / OQ-CP-11: parameter errors → 2, in machine mode as one JSON error value.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_2_for_parameter_errors() {
    let mut h = start().await;
    let mut cli = Cli::new(&h);
    cli.pair(&mut h, "agent", "discover,interact,notify").await;

    let bad =
        cli.write_file("bad.json", &json!({"capability": "interaction.choose", "params": {}, "timeoutMs": 60000}));
    let r = cli.run(&["requests", "create", "--file", s(&bad), "--json"]).await;
    assert_eq!(r.code, 2);
    assert_eq!(r.error_code(), "INVALID_PARAMS");
    assert!(r.json()["error"]["problems"].is_array());

    let unknown = cli.write_file("unknown.json", &json!({"capability": "nope.nope", "params": {}, "timeoutMs": 60000}));
    let r = cli.run(&["requests", "create", "--file", s(&unknown), "--json"]).await;
    assert_eq!((r.code, r.error_code().as_str()), (2, "UNSUPPORTED_CAPABILITY"));

    // Usage errors: machine mode still prints exactly one JSON value.
    let r = cli.run(&["requests", "create", "--json"]).await;
    assert_eq!((r.code, r.error_code().as_str()), (2, "USAGE_ERROR"));
    let r = cli.run(&["requests", "get"]).await;
    assert_eq!(r.code, 2);
    assert!(r.stdout.is_empty());

    // CP-5-9 / CP-6-2: no way to pass a key on the command line or in the request file.
    let r = cli.run(&["requests", "get", "req_x", "--key", "ck_00", "--json"]).await;
    assert_eq!((r.code, r.error_code().as_str()), (2, "USAGE_ERROR"));
    let mut with_key = choose_request();
    with_key["key"] = json!("ck_secret");
    let f = cli.write_file("with-key.json", &with_key);
    let r = cli.run(&["requests", "create", "--file", s(&f), "--json"]).await;
    assert_eq!((r.code, r.error_code().as_str()), (2, "INVALID_PARAMS"));
    assert!(!r.stdout.contains("ck_secret"));

    // REVISION_CONFLICT through requests update (OQ-CP-19).
    let progress = companion_support::create_body("progress.show", json!({"label": "Build", "value": 0.1}), 60_000);
    let f = cli.write_file("progress.json", &progress);
    let id = create_id(&cli, &f).await;
    let current = cli.run(&["requests", "get", &id, "--json"]).await.json()["revision"].as_u64().unwrap();
    let up = cli.write_file("update.json", &json!({"expectedRevision": current, "params": {"value": 0.5}}));
    let r = cli.run(&["requests", "update", &id, "--file", s(&up), "--json"]).await;
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert_eq!(r.json()["requestId"], id.as_str(), "CP-3-26: same request");
    let r = cli.run(&["requests", "update", &id, "--file", s(&up), "--json"]).await;
    assert_eq!((r.code, r.error_code().as_str()), (2, "REVISION_CONFLICT"));
    assert!(r.json()["error"]["currentRevision"].is_u64());
    // From stdin too.
    let body = json!({"expectedRevision": current + 1, "params": {"value": 0.7}}).to_string();
    let r = cli.run_with_stdin(&["requests", "update", &id, "--file", "-", "--json"], Some(&body)).await;
    assert_eq!(r.code, 0, "{}", r.stdout);
}

// CP-6-9, CP-6-16: a request file over the 1 MiB limit is refused as such (exit 2, USAGE_ERROR, the
// file's name, size and the limit), never cut at the limit and misreported as invalid JSON; from a
// file or from stdin, for `create` and `update`. A file of exactly 1 MiB is still read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_files_over_1_mib_are_refused_as_too_large() {
    const LIMIT: usize = 1 << 20;
    let mut h = start().await;
    let mut cli = Cli::new(&h);
    cli.pair(&mut h, "agent", "discover,interact,notify").await;

    let mut big = choose_request();
    big["params"]["prompt"] = json!("x".repeat(LIMIT + 4096));
    let f = cli.write_file("big.json", &big);
    let size = std::fs::metadata(&f).unwrap().len();
    for args in [
        ["requests", "create", "--file", s(&f), "--json"].as_slice(),
        &["requests", "update", "req_x", "--file", s(&f), "--json"],
    ] {
        let r = cli.run(args).await;
        assert_eq!((r.code, r.error_code().as_str()), (2, "USAGE_ERROR"), "{args:?}: {}", r.stdout);
        let message = r.json()["error"]["message"].as_str().unwrap().to_owned();
        assert!(message.contains(s(&f)), "names the file: {message}");
        assert!(message.contains(&size.to_string()), "gives its size: {message}");
        assert!(message.contains("1 MiB") && message.contains("1048576"), "gives the limit: {message}");
        assert!(!message.contains("JSON"), "not a JSON error: {message}");
    }
    // Plain mode: the same on stderr.
    let r = cli.run(&["requests", "create", "--file", s(&f)]).await;
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("USAGE_ERROR") && r.stderr.contains("1 MiB"), "{}", r.stderr);

    // From stdin: one byte over is refused (the size beyond the limit is unknown there).
    let body = format!("{{\"capability\": \"{}\"}}", "x".repeat(LIMIT));
    let body = &body[..LIMIT + 1];
    for args in [
        ["requests", "create", "--file", "-", "--json"].as_slice(),
        &["requests", "update", "req_x", "--file", "-", "--json"],
    ] {
        let r = cli.run_with_stdin(args, Some(body)).await;
        assert_eq!((r.code, r.error_code().as_str()), (2, "USAGE_ERROR"), "{args:?}: {}", r.stdout);
        let message = r.json()["error"]["message"].as_str().unwrap().to_owned();
        assert!(message.contains("standard input") && message.contains("1 MiB"), "{message}");
    }

    // Exactly at the limit: read whole (here: not JSON, so INVALID_PARAMS, not "too large").
    let at_limit = cli.config.parent().unwrap().join("at-limit.json");
    std::fs::write(&at_limit, format!("{{{}", " ".repeat(LIMIT - 1))).unwrap();
    let r = cli.run(&["requests", "create", "--file", s(&at_limit), "--json"]).await;
    assert_eq!((r.code, r.error_code().as_str()), (2, "INVALID_PARAMS"), "{}", r.stdout);
    assert!(r.json()["error"]["message"].as_str().unwrap().contains("not valid JSON"));
}

// CP-6-3, CP-6-9, CP-6-16: command-line mistakes in machine mode → exit 2 and one JSON error with a
// real one-line message: a group without its subcommand names the group and its subcommands (not
// the group's help text); unknown arguments, missing and invalid values say what is wrong.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_errors_have_one_line_messages() {
    let h = start().await;
    let cli = Cli::new(&h);
    let usage = |r: &Run| -> String {
        assert_eq!((r.code, r.error_code().as_str()), (2, "USAGE_ERROR"), "{}", r.stdout);
        let message = r.json()["error"]["message"].as_str().unwrap().to_owned();
        assert!(!message.is_empty() && !message.contains('\n'), "one line: {message:?}");
        assert!(!message.starts_with("error:"), "{message}");
        message
    };

    let m = usage(&cli.run(&["--json", "capabilities"]).await);
    assert!(m.contains("`companion capabilities` needs a subcommand: list, describe"), "{m}");
    assert!(!m.contains("The capabilities"), "not the about text: {m}");
    let m = usage(&cli.run(&["--socket", "/nowhere.sock", "requests", "--json"]).await);
    assert!(m.contains("`companion requests` needs a subcommand: create, get, wait, cancel, update"), "{m}");
    let m = usage(&cli.run(&["--json"]).await);
    assert!(m.contains("`companion` needs a subcommand: runtime, characters, capabilities"), "{m}");
    assert!(!m.contains("help,") && !m.ends_with("help"), "{m}");
    // Plain mode: the message first on stderr, nothing on stdout.
    let r = cli.run(&["styles"]).await;
    assert_eq!(r.code, 2);
    assert!(r.stdout.is_empty());
    assert!(r.stderr.starts_with("error: `companion styles` needs a subcommand: list"), "{}", r.stderr);

    // Unknown argument, unknown subcommand, missing value, invalid value, missing argument.
    let m = usage(&cli.run(&["requests", "get", "req_x", "--key", "ck_00", "--json"]).await);
    assert!(m.contains("unexpected argument '--key'"), "{m}");
    let m = usage(&cli.run(&["--json", "capabilities", "frobnicate"]).await);
    assert!(m.contains("'frobnicate'"), "{m}");
    let m = usage(&cli.run(&["--json", "requests", "create", "--file"]).await);
    assert!(m.contains("a value is required for '--file <FILE>'"), "{m}");
    let m = usage(&cli.run(&["--json", "requests", "wait", "req_x", "--wait-ms", "soon"]).await);
    assert!(m.contains("invalid value 'soon' for '--wait-ms <MS>'"), "{m}");
    let m = usage(&cli.run(&["--json", "requests", "create"]).await);
    assert!(m.contains("required arguments were not provided") && m.contains("--file <FILE>"), "{m}");
}

// CP-6-10, CP-6-7, CP-5-10: authentication/permission/profile problems → 3; never an implicit
// pick among several profiles; a profile readable by others is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_3_for_auth_and_profile_problems() {
    let mut h = start().await;
    let mut cli = Cli::new(&h);

    let r = cli.run(&["characters", "list", "--json"]).await;
    assert_eq!((r.code, r.error_code().as_str()), (3, "PROFILE_ERROR"), "no profile");
    // runtime describe needs none.
    let r = cli.run(&["runtime", "describe", "--json"]).await;
    assert_eq!(r.code, 0);
    assert_eq!(r.json()["authorization"]["authenticated"], false);

    cli.pair(&mut h, "notifier", "notify").await;
    let r = cli.run(&["characters", "list", "--json"]).await;
    assert_eq!((r.code, r.error_code().as_str()), (3, "FORBIDDEN"), "missing discover scope");
    assert_eq!(r.json()["error"]["requiredScopes"], json!(["discover"]));

    cli.pair(&mut h, "admin", "discover,animate,notify,interact").await;
    let r = cli.run(&["characters", "list", "--json"]).await;
    assert_eq!((r.code, r.error_code().as_str()), (3, "PROFILE_ERROR"), "ambiguous: two profiles, none named");
    assert!(r.json()["error"]["message"].as_str().unwrap().contains("--credential-profile"));
    // runtime describe needs no profile: with several and none named it asks unauthenticated
    // (nothing picked among them, CP-6-7); a named one is still used.
    let r = cli.run(&["--json", "runtime", "describe"]).await;
    assert_eq!(r.code, 0, "{} {}", r.stdout, r.stderr);
    assert_eq!(r.json()["authorization"]["authenticated"], false);
    let r = cli.run(&["--json", "runtime", "describe", "--socket", s(&cli.socket)]).await;
    assert_eq!((r.code, r.json()["authorization"]["authenticated"].clone()), (0, json!(false)));
    let r = cli.run(&["--json", "--credential-profile", "admin", "runtime", "describe"]).await;
    assert_eq!(r.code, 0, "{} {}", r.stdout, r.stderr);
    assert_eq!(r.json()["authorization"]["authenticated"], true);
    let r = cli.run(&["--json", "--credential-profile", "nobody", "runtime", "describe"]).await;
    assert_eq!((r.code, r.error_code().as_str()), (3, "PROFILE_ERROR"), "a named profile that is missing");
    let r = cli.run(&["characters", "list", "--json", "--credential-profile", "admin"]).await;
    assert_eq!(r.code, 0);
    let r = cli.run(&["--credential-profile", "nobody", "characters", "list", "--json"]).await;
    assert_eq!((r.code, r.error_code().as_str()), (3, "PROFILE_ERROR"));
    let r = cli.run(&["--credential-profile", "../admin", "characters", "list", "--json"]).await;
    assert_eq!(r.code, 2, "not a profile name");

    let admin = cli.profiles().join("admin.json");
    std::fs::set_permissions(&admin, std::fs::Permissions::from_mode(0o644)).unwrap();
    let r = cli.run(&["characters", "list", "--json", "--credential-profile", "admin"]).await;
    assert_eq!((r.code, r.error_code().as_str()), (3, "PROFILE_ERROR"), "world-readable profile refused");
    std::fs::set_permissions(&admin, std::fs::Permissions::from_mode(0o600)).unwrap();

    // A wrong key.
    let mut stored = read_profile(&admin);
    stored["key"] = json!("ck_0000000000000000000000000000000000000000000000000000000000000000");
    std::fs::write(&admin, serde_json::to_vec(&stored).unwrap()).unwrap();
    let r = cli.run(&["characters", "list", "--json", "--credential-profile", "admin"]).await;
    assert_eq!((r.code, r.error_code().as_str()), (3, "UNAUTHENTICATED"));
}

// CP-6-11: cannot connect → 4 (retryable); plain mode reports it on stderr only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_4_when_the_runtime_is_not_there() {
    let h = start().await;
    let cli = Cli::new(&h);
    let missing = h.dir.path().join("run").join("nothing.sock");
    let r = cli.run(&["runtime", "describe", "--json", "--socket", s(&missing)]).await;
    assert_eq!((r.code, r.error_code().as_str()), (4, "CONNECTION_FAILED"));
    assert_eq!(r.json()["error"]["retryable"], true);
    let r = cli.run(&["runtime", "describe", "--socket", s(&missing)]).await;
    assert_eq!(r.code, 4);
    assert!(r.stdout.is_empty());
    assert!(r.stderr.contains("CONNECTION_FAILED"));
}

// CP-6-12, CP-6-13, CP-6-14, CP-6-16 / OQ-CP-11: NOT_FOUND and `failed` → 5; `cancelled`/`expired`
// → 6 (a successful cancel itself → 0); a wait that ends while the request runs → 7, with state.
// Exits that come from a request's state print one error value with a stable code, a message and
// `retryable`, and the snapshot under `request`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_5_6_7_follow_the_request() {
    let mut h = start().await;
    let mut cli = Cli::new(&h);
    cli.pair(&mut h, "agent", "discover,interact,notify").await;

    let r = cli.run(&["requests", "get", "req_00000000000000000000000000000000", "--json"]).await;
    assert_eq!((r.code, r.error_code().as_str()), (5, "NOT_FOUND"));

    let f = cli.write_file("choose.json", &choose_request());

    // 7: still awaiting the user when the wait ends; the output has the state (CP-6-15).
    let id = create_id(&cli, &f).await;
    h.expect_show(&id).await;
    let r = cli.run(&["requests", "wait", &id, "--wait-ms", "300", "--json"]).await;
    assert_eq!((r.code, r.error_code().as_str()), (7, "REQUEST_PENDING"), "{}", r.stdout);
    assert_eq!(r.json()["error"]["retryable"], true);
    assert!(!r.json()["error"]["message"].as_str().unwrap().is_empty());
    assert_eq!(r.json()["request"]["state"], "awaiting_user");
    // The full snapshot (README: these errors carry the request's snapshot), not the `unchanged`
    // marker of requests.wait.
    let pending = r.json()["request"].clone();
    assert!(pending.get("unchanged").is_none(), "{pending}");
    assert_eq!(pending["requestId"], id.as_str());
    assert_eq!(pending["capability"], "interaction.choose");
    assert!(pending["revision"].is_u64() && pending.get("character").is_some(), "{pending}");
    let got = cli.run(&["requests", "get", &id, "--json"]).await.json();
    assert_eq!(pending, got, "the same snapshot requests get shows");
    // Plain mode: the snapshot on stdout, the error on stderr.
    let r = cli.run(&["requests", "wait", &id, "--wait-ms", "100"]).await;
    assert_eq!(r.code, 7);
    assert!(r.stdout.contains("state: awaiting_user") && r.stdout.contains("capability: interaction.choose"));
    assert!(!r.stdout.contains("no change before the wait ended"), "{}", r.stdout);
    assert!(r.stderr.contains("REQUEST_PENDING"), "{}", r.stderr);
    // With --after-revision: the first change is enough.
    let r = cli.run(&["requests", "wait", &id, "--after-revision", "1", "--json"]).await;
    assert_eq!(r.code, 0);
    assert_eq!(r.json()["state"], "awaiting_user");

    // cancel → 0, then the cancelled request → 6.
    let r = cli.run(&["requests", "cancel", &id, "--json"]).await;
    assert_eq!(r.code, 0);
    assert_eq!(r.json()["state"], "cancelled");
    let r = cli.run(&["requests", "get", &id, "--json"]).await;
    assert_eq!((r.code, r.error_code().as_str()), (6, "REQUEST_CANCELLED"));
    assert_eq!(r.json()["error"]["retryable"], false);
    assert_eq!(r.json()["request"]["terminalReason"], "client_cancelled");
    let r = cli.run(&["requests", "wait", &id, "--json"]).await;
    assert_eq!((r.code, r.json()["request"]["state"].clone()), (6, json!("cancelled")));
    assert_eq!(r.error_code(), "REQUEST_CANCELLED");

    // failed → 5.
    let id = create_id(&cli, &f).await;
    h.expect_show(&id).await;
    h.engine.presentation_failed(&id).unwrap();
    let r = cli.run(&["requests", "get", &id, "--json"]).await;
    assert_eq!((r.code, r.json()["request"]["state"].clone()), (5, json!("failed")));
    assert_eq!(r.error_code(), "REQUEST_FAILED");
    assert_eq!(r.json()["error"]["retryable"], false);

    // expired → 6: the deadline passes while the user has not answered.
    let short = cli.write_file(
        "short.json",
        &companion_support::create_body("interaction.choose", companion_support::choose_params(), 1_000),
    );
    let id = create_id(&cli, &short).await;
    let r = cli.run(&["requests", "wait", &id, "--wait-ms", "20000", "--json"]).await;
    assert_eq!((r.code, r.error_code().as_str()), (6, "REQUEST_EXPIRED"), "{}", r.stdout);
    assert_eq!(r.json()["request"]["state"], "expired");

    // RUNTIME_UNAVAILABLE → 5 (retryable).
    h.engine.set_visible(false);
    let r = cli.run(&["requests", "create", "--file", s(&f), "--json"]).await;
    assert_eq!((r.code, r.error_code().as_str()), (5, "RUNTIME_UNAVAILABLE"));
    assert_eq!(r.json()["error"]["retryable"], true);
}

// CP-6-6 / OQ-CP-20: plain mode shows content as plain text: markup stays literal text and
// terminal control characters are escaped, never interpreted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_mode_never_interprets_content() {
    let mut h = start().await;
    let mut cli = Cli::new(&h);
    cli.pair(&mut h, "agent", "interact").await;
    let body = companion_support::create_body("interaction.text", json!({"prompt": "Name?"}), 60_000);
    let f = cli.write_file("text.json", &body);
    let id = create_id(&cli, &f).await;
    h.expect_show(&id).await;
    let evil = "\u{1b}[31m<b onclick=x>hi</b>\u{7}";
    user_answers(&h.engine, &id, json!({"text": evil})).await;
    let r = cli.run(&["requests", "get", &id]).await;
    assert_eq!(r.code, 0);
    assert!(!r.stdout.contains('\u{1b}') && !r.stdout.contains('\u{7}'), "{:?}", r.stdout);
    assert!(r.stdout.contains("<b onclick=x>hi</b>"), "markup is shown as text: {}", r.stdout);
    // Machine mode keeps the value exactly (JSON-escaped).
    let r = cli.run(&["requests", "get", &id, "--json"]).await;
    assert_eq!(r.json()["result"]["text"], evil);
}

// `pair` refuses to overwrite a profile, and the profile never reaches stdout, stderr or argv.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pair_keeps_existing_profiles_and_the_key_private() {
    let mut h = start().await;
    let mut cli = Cli::new(&h);
    cli.pair(&mut h, "agent", "notify").await;
    let before = std::fs::read(cli.profiles().join("agent.json")).unwrap();
    let r = cli.run(&["pair", "--name", "again", "--scopes", "notify", "--profile", "agent", "--json"]).await;
    assert_eq!((r.code, r.error_code().as_str()), (2, "USAGE_ERROR"));
    assert!(h.approvals.try_recv().is_err(), "nobody was asked");
    assert_eq!(std::fs::read(cli.profiles().join("agent.json")).unwrap(), before);
    // Plain-mode pairing: profile name and client id, no key.
    let args = ["pair", "--name", "test agent", "--scopes", "notify", "--profile", "second"];
    let (r, _) = tokio::join!(cli.run(&args), async {
        let (request, reply) = h.next_approval().await;
        reply.approve_as_requested(&request);
    });
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("second") && r.stdout.contains("cl_"), "{}", r.stdout);
    let key = read_profile(&cli.profiles().join("second.json"))["key"].as_str().unwrap().to_owned();
    assert!(!r.stdout.contains(&key) && !r.stderr.contains(&key));
    // A denied pairing writes nothing and exits 3.
    let args = ["pair", "--name", "third agent", "--scopes", "notify", "--profile", "third", "--json"];
    let (r, _) = tokio::join!(cli.run(&args), async {
        let (_, reply) = h.next_approval().await;
        reply.deny();
    });
    assert_eq!((r.code, r.error_code().as_str()), (3, "FORBIDDEN"));
    assert!(!cli.profiles().join("third.json").exists());
}
