//! The typed client of the companion's socket (CP-5-9, CP-5-10, CP-5-12, CP-5-14, CP-7-2): the
//! README's Rust program, run as written against a real server; a client that refuses impostor
//! sockets (another user's socket or directory, a world-writable directory, a listener running
//! as another user) before it sends anything, the key above all; the default socket directory
//! created and checked alike by the server and the client.
//!
//! Some checks need a process with other settings (environment, user): the test starts this test
//! binary again for one `child_…` test (ignored otherwise) and reads what it prints.

use crate::support::companion_socket as companion_socket_support;

use bridge_runtime::catalog::Scope;
use bridge_runtime::companion::protocol::method;
use bridge_runtime::companion::protocol::params::{CreateParams, NoParams};
use bridge_runtime::companion::{
    BlockingClient, Client, ClientError, CredentialProfile, ErrorCode, RequestState, bind_private, default_socket_path,
};
use companion_socket_support::*;
use serde_json::json;
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

/// The README's program, included as the file the README's block is kept equal to.
mod readme_client {
    include!("../../../examples/desk_companion/client.rs");

    /// The program's `main`.
    pub(super) fn run() -> Result<(), Box<dyn std::error::Error>> {
        main()
    }
}

/// `nobody`: the other user of these tests.
const NOBODY: u32 = 65534;

/// Whether this process runs as root (the owner of what it creates), and so can play `nobody`.
fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    let file = tempfile::NamedTempFile::new().unwrap();
    file.as_file().metadata().unwrap().uid() == 0
}

/// Runs test `name` of this binary in a child process with `env` (and as `uid`, if given);
/// returns its exit status and stdout.
async fn child(name: &str, env: &[(&str, &Path)], uid: Option<u32>) -> (bool, String) {
    let mut cmd = tokio::process::Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", &format!("companion_client::{name}"), "--ignored", "--nocapture", "--test-threads=1"])
        .env("BRIDGE_CHILD", name)
        .env_remove("XDG_RUNTIME_DIR")
        .env_remove("XDG_CONFIG_HOME")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for (k, v) in env {
        cmd.env(k, v);
    }
    if let Some(uid) = uid {
        cmd.uid(uid).gid(uid);
    }
    let out = tokio::time::timeout(BOUND, cmd.output()).await.expect("the child finished").expect("start the child");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stdout.contains("1 passed"), "child {name} did not run its test:\n{stdout}\n{stderr}");
    (out.status.success(), stdout)
}

/// Whether this process is the child running test `name`.
fn in_child(name: &str) -> bool {
    std::env::var("BRIDGE_CHILD").is_ok_and(|n| n == name)
}

/// The README's fenced block under `### From a Rust program`.
fn readme_block() -> String {
    let readme = include_str!("../../../README.md");
    let section = readme.split("### From a Rust program").nth(1).expect("the README's Rust client section");
    let start = section.find("```rust").expect("a rust block");
    let body = &section[start..];
    let body = &body[body.find('\n').unwrap() + 1..];
    body[..body.find("```").unwrap()].to_owned()
}

// CP-5-9: the README's program is the file the test runs, byte for byte (after the file's
// comment header), and it shows no key.
#[test]
fn the_readme_program_is_the_one_tested() {
    let file = include_str!("../../../examples/desk_companion/client.rs");
    let code: String = file.split_once("\n\n").map(|(_, rest)| rest.to_owned()).unwrap_or_default();
    assert!(file.lines().take_while(|l| !l.is_empty()).all(|l| l.starts_with("//")), "only a comment header");
    assert_eq!(code, readme_block(), "README.md and examples/desk_companion/client.rs differ");
    assert!(
        !code.contains("ck_") && !code.contains("\"key\"") && !code.contains("key:"),
        "no key in the program (CP-5-9)"
    );
}

// CP-5-10, CP-7-2, CP-8-1, CP-2-9: the README's program, run as written in its own process with
// a profile `companion pair` wrote, creates a notice and waits until it is completed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readme_program_creates_a_request_and_waits_for_it() {
    let mut h = start().await;
    let config = h.dir.path().join("config");
    let pair = tokio::process::Command::new(env!("CARGO_BIN_EXE_companion"))
        .args(["--json", "pair", "--name", "Build bot", "--scopes", "notify", "--profile", "build-bot"])
        .env("COMPANION_CONFIG_DIR", &config)
        .env("COMPANION_SOCKET", &h.socket)
        .stdin(Stdio::null())
        .output();
    let approve = async {
        let (request, reply) = h.next_approval().await;
        assert!(reply.approve_as_requested(&request));
    };
    let (paired, ()) = tokio::join!(pair, approve);
    assert!(paired.unwrap().status.success());

    let (ok, stdout) = child("child_readme_program", &[("COMPANION_CONFIG_DIR", &config)], None).await;
    assert!(ok, "{stdout}");
    // What it printed (the test harness may print on the same line first).
    let line = stdout.lines().find_map(|l| l.find("req_").map(|i| &l[i..])).unwrap_or_else(|| panic!("{stdout}"));
    assert!(line.ends_with(" ended completed"), "{line}");
}

#[test]
#[ignore = "run by the_readme_program_creates_a_request_and_waits_for_it in a child process"]
fn child_readme_program() {
    if in_child("child_readme_program") {
        readme_client::run().expect("the README's program");
    }
}

// ---------------------------------------------------------------------------------------------
// Impostors (CP-5-12, CP-5-14)

/// A profile with real-looking credentials for `socket`, saved under `config`.
fn profile_for(config: &Path, socket: &Path) -> CredentialProfile {
    let dir = config.join("profiles");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("victim.json");
    let body = json!({"socket": socket, "clientId": format!("cl_{}", "1".repeat(32)), "key": format!("ck_{}", "7".repeat(64))});
    std::fs::write(&path, serde_json::to_vec(&body).unwrap()).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    // Read back through the CLI's own rules, as a program would load it.
    serde_json::from_value(body).unwrap()
}

/// Binds a listener at `path` (in a directory that exists), not accepting anything yet.
fn listener_at(path: &Path) -> std::os::unix::net::UnixListener {
    let l = std::os::unix::net::UnixListener::bind(path).unwrap();
    l.set_nonblocking(true).unwrap();
    l
}

/// Asserts that nobody connected to `listener`, or that whoever did sent nothing.
fn received_nothing(listener: &std::os::unix::net::UnixListener) {
    match listener.accept() {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        Err(e) => panic!("accept: {e}"),
        Ok((mut stream, _)) => {
            stream.set_nonblocking(false).unwrap();
            stream.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
            let mut got = Vec::new();
            let _ = stream.read_to_end(&mut got);
            assert!(got.is_empty(), "the impostor received {:?}", String::from_utf8_lossy(&got));
        }
    }
}

fn untrusted(e: ClientError) -> String {
    match e {
        ClientError::Untrusted(m) => {
            assert!(m.contains("nothing was sent"), "{m}");
            m
        }
        other => panic!("expected Untrusted, got {other:?}"),
    }
}

// CP-5-12, CP-5-14, CP-5-9: a socket in a world-writable directory (where anyone could have put
// it), and a socket or directory of another user, are refused before anything is sent: the
// impostor gets no connection, let alone the profile's key; the CLI refuses alike (exit 4).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn impostor_sockets_get_nothing_cp_5_12() {
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("config");

    let open = tmp.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let socket = open.join("companion.sock");
    let impostor = listener_at(&socket);
    let profile = profile_for(&config, &socket);
    let why = untrusted(Client::connect_with(&profile).await.unwrap_err());
    assert!(why.contains("writable by group or others"), "{why}");
    untrusted(Client::connect(&socket).await.unwrap_err());
    let cli = tokio::process::Command::new(env!("CARGO_BIN_EXE_companion"))
        .args(["--json", "--credential-profile", "victim", "characters", "list"])
        .env("COMPANION_CONFIG_DIR", &config)
        .env_remove("COMPANION_SOCKET")
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    assert_eq!(cli.status.code(), Some(4), "{}", String::from_utf8_lossy(&cli.stdout));
    let out: serde_json::Value = serde_json::from_slice(&cli.stdout).unwrap();
    assert_eq!(out["error"]["code"], "CONNECTION_FAILED");
    assert_eq!(out["error"]["retryable"], false, "trying again reaches the same untrusted socket");
    received_nothing(&impostor);

    // A socket of ours that others may write to is refused too (the server makes its own 0600).
    let private = tmp.path().join("private");
    std::fs::create_dir(&private).unwrap();
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();
    let socket = private.join("open.sock");
    let impostor = listener_at(&socket);
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o777)).unwrap();
    untrusted(Client::connect_with(&profile_for(&config, &socket)).await.unwrap_err());
    received_nothing(&impostor);

    if !is_root() {
        eprintln!("SKIPPED: another user's socket and directory need root to make; CI runs as root");
        return;
    }
    // Another user's socket, and another user's directory.
    let socket = private.join("theirs.sock");
    let impostor = listener_at(&socket);
    std::os::unix::fs::chown(&socket, Some(NOBODY), Some(NOBODY)).unwrap();
    let why = untrusted(Client::connect_with(&profile_for(&config, &socket)).await.unwrap_err());
    assert!(why.contains("belongs to another user"), "{why}");
    received_nothing(&impostor);

    let theirs = tmp.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o700)).unwrap();
    let socket = theirs.join("companion.sock");
    let impostor = listener_at(&socket);
    std::os::unix::fs::chown(&theirs, Some(NOBODY), Some(NOBODY)).unwrap();
    let why = untrusted(Client::connect_with(&profile_for(&config, &socket)).await.unwrap_err());
    assert!(why.contains("belongs to another user"), "{why}");
    received_nothing(&impostor);
}

// CP-5-14: a listener run by another user is refused by its credentials (SO_PEERCRED /
// getpeereid), even when its socket file sits in a private directory of ours and is ours: the
// client connects, sees the peer's user, and closes without sending a byte.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn impostor_listener_of_another_user_gets_nothing_cp_5_14() {
    if !is_root() {
        eprintln!("SKIPPED: playing another user (nobody) needs root; CI runs as root");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    // nobody may pass through to its own directory, nothing more.
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o711)).unwrap();
    let theirs = tmp.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    std::os::unix::fs::chown(&theirs, Some(NOBODY), Some(NOBODY)).unwrap();
    let ours = tmp.path().join("ours");
    std::fs::create_dir(&ours).unwrap();
    std::fs::set_permissions(&ours, std::fs::Permissions::from_mode(0o700)).unwrap();

    let listening = theirs.join("companion.sock");
    let report = theirs.join("received");
    let impostor = tokio::spawn({
        let dir = theirs.clone();
        async move { child("child_impostor_listener", &[("BRIDGE_IMPOSTOR_DIR", &dir)], Some(NOBODY)).await }
    });
    // Once it listens, its socket moves into our private directory and becomes ours.
    tokio::time::timeout(BOUND, async {
        while !listening.exists() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the impostor listens");
    let socket = ours.join("companion.sock");
    std::fs::rename(&listening, &socket).unwrap();
    std::os::unix::fs::chown(&socket, Some(0), Some(0)).unwrap();
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600)).unwrap();

    let config = tmp.path().join("config");
    let why = untrusted(Client::connect_with(&profile_for(&config, &socket)).await.unwrap_err());
    assert!(why.contains("runs as another user (uid 65534)"), "{why}");
    let (ok, stdout) = impostor.await.unwrap();
    assert!(ok, "{stdout}");
    assert_eq!(std::fs::read_to_string(&report).unwrap(), "received 0 bytes");
}

#[test]
#[ignore = "run as nobody by impostor_listener_of_another_user_gets_nothing_cp_5_14"]
fn child_impostor_listener() {
    if !in_child("child_impostor_listener") {
        return;
    }
    let dir = PathBuf::from(std::env::var_os("BRIDGE_IMPOSTOR_DIR").unwrap());
    let listener = std::os::unix::net::UnixListener::bind(dir.join("companion.sock")).unwrap();
    let (mut stream, _) = listener.accept().unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut got = Vec::new();
    let _ = stream.read_to_end(&mut got);
    let mut report = std::fs::File::create(dir.join("received")).unwrap();
    write!(report, "received {} bytes", got.len()).unwrap();
}

// ---------------------------------------------------------------------------------------------
// The default socket (CP-5-12)

// CP-5-12: without XDG_RUNTIME_DIR the default socket is in a directory of the user's own under
// the temp directory; the client and the server create it (0700) and check it the same way, and
// both refuse it when another user made it first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_socket_directory_is_created_and_checked_alike_cp_5_12() {
    let tmp = tempfile::tempdir().unwrap();
    let (ok, stdout) = child("child_default_directory", &[("TMPDIR", tmp.path())], None).await;
    assert!(ok, "{stdout}");
    if is_root() {
        let foreign = tempfile::tempdir().unwrap();
        let dir = foreign.path().join("bridge-companion-0");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::os::unix::fs::chown(&dir, Some(NOBODY), Some(NOBODY)).unwrap();
        let (ok, stdout) = child("child_foreign_default_directory", &[("TMPDIR", foreign.path())], None).await;
        assert!(ok, "{stdout}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "run by the_default_socket_directory_is_created_and_checked_alike_cp_5_12 in a child process"]
async fn child_default_directory() {
    if !in_child("child_default_directory") {
        return;
    }
    let tmp = PathBuf::from(std::env::var_os("TMPDIR").unwrap());
    let path = default_socket_path();
    assert_eq!(path.parent().unwrap().parent().unwrap(), tmp);
    let dir = path.parent().unwrap().to_owned();
    assert!(dir.file_name().unwrap().to_str().unwrap().starts_with("bridge-companion-"));
    // The client makes the directory (and finds no server there).
    match Client::connect_default().await.unwrap_err() {
        ClientError::Connection(m) => assert!(m.contains("cannot connect"), "{m}"),
        other => panic!("expected no server, got {other:?}"),
    }
    assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700);
    // A directory open to others is refused by both, and left as it is.
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    untrusted(Client::connect_default().await.unwrap_err());
    assert_eq!(bind_private(&path).unwrap_err().kind(), std::io::ErrorKind::PermissionDenied);
    assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o755);
    // Made private again, the server binds there and the client reaches it.
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let _listener = bind_private(&path).expect("the server binds in the default directory");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "run by the_default_socket_directory_is_created_and_checked_alike_cp_5_12 in a child process"]
async fn child_foreign_default_directory() {
    if !in_child("child_foreign_default_directory") {
        return;
    }
    let path = default_socket_path();
    let why = untrusted(Client::connect_default().await.unwrap_err());
    assert!(why.contains("belongs to another user"), "{why}");
    assert_eq!(bind_private(&path).unwrap_err().kind(), std::io::ErrorKind::PermissionDenied);
    assert!(!path.exists(), "nothing was made in another user's directory");
}

// ---------------------------------------------------------------------------------------------
// Calls

// CP-5-2, CP-5-5, CP-5-11, CP-2-1, CP-3-20, CP-6-15: pair (the user approves), save the
// credentials as a profile, connect with it, call methods with their types, wait through the
// `unchanged` marker; connection methods go through pair/authenticate only; a runtime error
// keeps its code.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pair_call_and_wait_with_types() {
    let mut h = start().await;
    let mut client = Client::connect(&h.socket).await.unwrap();
    assert_eq!(client.runtime().unwrap().protocol_version, "0.1", "CP-7-2: negotiated on connect");
    let approve = async {
        let (request, reply) = h.next_approval().await;
        assert_eq!(request.name, "typed client");
        assert!(reply.approve_as_requested(&request));
    };
    let (pairing, ()) = tokio::join!(client.pair("typed client", &[Scope::Discover, Scope::Interact]), approve);
    let pairing = pairing.unwrap();
    let profile = CredentialProfile::from_pairing(&pairing, Some(h.socket.clone()));
    assert!(!format!("{profile:?}").contains(&pairing.key), "Debug never shows the key");

    let mut client = Client::connect_with(&profile).await.unwrap();
    assert_eq!(client.session().unwrap().client_id, pairing.client_id);
    let characters = client.call::<method::CharactersList>(NoParams {}).await.unwrap();
    assert_eq!(characters.current.as_deref(), Some("robot"));

    let mut choose = CreateParams::new("interaction.choose", 60_000);
    choose.params = companion_socket_support::choose_request()["params"].as_object().cloned().unwrap();
    let request = client.call::<method::RequestsCreate>(choose).await.unwrap();
    // Shown, awaiting the user: the wait ends on the marker and returns the full snapshot.
    let id = request.request_id.clone();
    tokio::time::timeout(BOUND, async {
        loop {
            let s = client.call::<method::RequestsGet>(bridge_runtime::companion::protocol::params::RequestRef {
                request_id: id.clone(),
            });
            if s.await.unwrap().state == RequestState::AwaitingUser {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .unwrap();
    let pending = client.wait(&id, Duration::from_millis(300)).await.unwrap();
    assert_eq!((pending.state, pending.request_id.as_str()), (RequestState::AwaitingUser, id.as_str()));
    let engine = h.engine.clone();
    let answer = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        engine.user_responded(&request.request_id, json!({"selectedId": "yes"})).unwrap();
    });
    let done = client.wait(&id, Duration::from_secs(10)).await.unwrap();
    answer.await.unwrap();
    assert_eq!(done.state, RequestState::Completed);
    assert_eq!(done.result, Some(json!({"selectedId": "yes"})));

    // A runtime error keeps its code; a connection method is not a `call`.
    let e = client.call::<method::CapabilitiesDescribe>(serde_json::from_value(json!({"capability": "nope"})).unwrap());
    assert_eq!(e.await.unwrap_err().code(), Some(ErrorCode::UnsupportedCapability));
    let e = client
        .call::<method::SessionAuthenticate>(serde_json::from_value(json!({"clientId": "cl_x", "key": "k"})).unwrap());
    assert!(matches!(e.await.unwrap_err(), ClientError::Usage(_)));
}

// The blocking client is the same client on a runtime of its own; inside an async runtime it
// says to use `Client` instead of blocking.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_blocking_client_works_outside_async_code() {
    let mut h = start().await;
    let creds = h.pair("blocking", &["discover"]).await;
    let profile: CredentialProfile =
        serde_json::from_value(json!({"socket": h.socket, "clientId": creds.client_id, "key": creds.key})).unwrap();
    assert!(matches!(BlockingClient::connect(&h.socket).unwrap_err(), ClientError::Usage(_)));
    // A thread of its own, outside the test's runtime.
    let thread = std::thread::spawn(move || {
        let mut client = BlockingClient::connect_with(&profile).unwrap();
        client.call::<method::StylesList>(NoParams {}).unwrap()
    });
    let styles = tokio::task::spawn_blocking(move || thread.join().unwrap()).await.unwrap();
    assert_eq!(styles.styles.len(), 2);
}
