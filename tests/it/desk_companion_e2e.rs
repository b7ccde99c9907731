//! The README's companion walk-through, as a new user runs it: start the desk companion, pair
//! the CLI (approved at the companion's own terminal), create a choice, answer it at the
//! terminal, wait for the result. Real example binary, real `companion` CLI, real socket.
//! CP-5-11 (pairing confirmed by the user in the app), CP-6-3 (one JSON value on stdout),
//! CP-6-8 (exit 0), CP-6-15 (wait reports the state), CP-3-13 (completed only by the user's pick).

use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

fn bin_dir() -> PathBuf {
    // target/debug/deps/it-… → target/debug
    let exe = std::env::current_exe().unwrap();
    exe.parent().and_then(|p| p.parent()).unwrap().to_path_buf()
}

struct Companion {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Companion {
    fn expect_line(&self, needle: &str) -> String {
        loop {
            let line =
                self.lines.recv_timeout(Duration::from_secs(30)).unwrap_or_else(|_| panic!("no line with {needle:?}"));
            if line.contains(needle) {
                return line;
            }
        }
    }
    fn type_line(&mut self, line: &str) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }
}

impl Drop for Companion {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn cli(dir: &std::path::Path, args: &[&str]) -> (i32, Value) {
    let out = Command::new(bin_dir().join("companion"))
        .args(args)
        .env("COMPANION_CONFIG_DIR", dir.join("cfg"))
        .env("COMPANION_SOCKET", dir.join("run/companion.sock"))
        .output()
        .expect("run the companion CLI: `cargo build --workspace --bins --examples` first (./test.sh does)");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("stdout is not one JSON value ({e}): {stdout}"));
    (out.status.code().unwrap_or(-1), value)
}

/// Starts the example in a fresh directory `desk-e2e-<pid>-<tag>` (socket, data, CLI config),
/// once it says it is ready.
fn start_companion(tag: &str) -> (PathBuf, Companion) {
    let (dir, companion) = spawn_companion(tag);
    companion.expect_line("Type /help");
    (dir, companion)
}

/// Starts the example in a fresh directory `desk-e2e-<pid>-<tag>`, its output from the first line.
fn spawn_companion(tag: &str) -> (PathBuf, Companion) {
    let dir = std::env::temp_dir().join(format!("desk-e2e-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut child = Command::new(bin_dir().join("examples/desk_companion"))
        .arg("--socket")
        .arg(dir.join("run/companion.sock"))
        .arg("--data")
        .arg(dir.join("data"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start the desk_companion example: `cargo build --workspace --bins --examples` first (./test.sh does)");
    let (tx, lines) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    (dir, Companion { child, lines })
}

/// Runs `companion pair` for `name` (profile `profile`) on its own thread.
fn pair_in_background(dir: &std::path::Path, name: &str, profile: &str) -> std::thread::JoinHandle<(i32, Value)> {
    let (dir, name, profile) = (dir.to_owned(), name.to_owned(), profile.to_owned());
    std::thread::spawn(move || {
        cli(
            &dir,
            &["--json", "pair", "--name", &name, "--scopes", "discover,notify,interact,animate", "--profile", &profile],
        )
    })
}

// CP-5-11: the pairing prompt never shares the input line with a client's question. A client asks
// a text question, asks to pair a second client, and withdraws the question just as the user
// types "yes" as the answer: the "yes" must not approve the pairing (old main asked
// "Approve? [y/N]" on the same line as the questions, so it did). Pairings are decided only by
// `/approve N` / `/deny N`.
#[test]
fn an_answer_meant_for_a_question_never_approves_a_pairing() {
    let (dir, mut companion) = start_companion("line");
    let pairing = pair_in_background(&dir, "Build bot", "bot");
    companion.expect_line("asks to pair");
    companion.type_line("/approve 1");
    let (code, paired) = pairing.join().unwrap();
    assert_eq!(code, 0, "{paired}");

    let question = dir.join("text.json");
    std::fs::write(
        &question,
        r#"{"capability":"interaction.text","params":{"prompt":"Keep the nightly build? (yes/no)"},"timeoutMs":60000}"#,
    )
    .unwrap();
    let (code, created) = cli(&dir, &["--json", "requests", "create", "--file", question.to_str().unwrap()]);
    assert_eq!(code, 0, "{created}");
    let id = created["requestId"].as_str().unwrap().to_owned();
    companion.expect_line("type your answer");

    let intruder = pair_in_background(&dir, "Intruder", "intruder");
    let (code, cancelled) = cli(&dir, &["--json", "requests", "cancel", &id]);
    assert_eq!(code, 0, "{cancelled}");
    companion.expect_line("asks to pair");
    // The user answers the question they saw.
    companion.type_line("yes");
    companion.type_line("/deny 2");
    let (code, refused) = intruder.join().unwrap();
    assert_ne!(code, 0, "the intruder was paired by an answer meant for a question: {refused}");
    assert!(refused.to_string().contains("FORBIDDEN"), "{refused}");
    companion.type_line("/clients");
    companion.expect_line("Build bot  [");
    drop(companion);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn pair_create_answer_wait() {
    let (dir, mut companion) = start_companion("walk");

    // Pairing waits for the person at the companion's terminal.
    let pairing = pair_in_background(&dir, "Build bot", "bot");
    // CP-4-17: retention is explained before the user approves the pairing.
    let prompt = companion.expect_line("asks to pair");
    assert!(prompt.contains("kept at least 24 hours"), "{prompt}");
    assert!(prompt.contains("/approve 1"), "approved only by an explicit command: {prompt}");
    companion.type_line("/approve 1");
    let (code, paired) = pairing.join().unwrap();
    assert_eq!(code, 0, "{paired}");
    assert!(paired.get("key").is_none(), "the key is never printed: {paired}");

    let (code, caps) = cli(&dir, &["--json", "capabilities", "list"]);
    assert_eq!(code, 0);
    let ids: Vec<&str> = caps["capabilities"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert!(ids.contains(&"interaction.choose") && ids.contains(&"vendor.com.example.desk.tail_swish"), "{ids:?}");

    let request = dir.join("choose.json");
    std::fs::write(
        &request,
        r#"{"capability":"interaction.choose","params":{"title":"Deploy now?","options":[{"id":"yes","label":"Yes"},{"id":"no","label":"No"}]},"timeoutMs":60000}"#,
    )
    .unwrap();
    let (code, created) = cli(&dir, &["--json", "requests", "create", "--file", request.to_str().unwrap()]);
    assert_eq!(code, 0, "{created}");
    let id = created["requestId"].as_str().unwrap().to_owned();
    // CP-3-6: acceptance is not display, and certainly not an answer.
    assert!(created["result"].is_null());
    assert!(matches!(created["state"].as_str(), Some("queued" | "running")), "{created}");
    companion.expect_line("Deploy now?");
    companion.expect_line("type a number");
    companion.type_line("1");
    let (code, done) = cli(&dir, &["--json", "requests", "wait", &id, "--wait-ms", "20000"]);
    assert_eq!(code, 0, "{done}");
    assert_eq!(done["state"], "completed");
    assert_eq!(done["result"]["selectedId"], "yes");

    // CP-6-6, OQ-CP-20: a client's text is shown as plain text: escape sequences and newlines are
    // displayed escaped, never interpreted by the user's terminal.
    let notice = dir.join("notice.json");
    std::fs::write(&notice, r#"{"capability":"notice.show","params":{"text":"A\u001b[2J\nB"},"timeoutMs":10000}"#)
        .unwrap();
    let (code, created) = cli(&dir, &["--json", "requests", "create", "--file", notice.to_str().unwrap()]);
    assert_eq!(code, 0, "{created}");
    let shown = companion.expect_line("— from Build bot");
    assert!(shown.contains(r"A\u{001b}[2J\u{000a}B"), "{shown:?}");
    assert!(!shown.contains('\u{1b}'), "{shown:?}");

    // The user's own controls work even while a client's question is open.
    let (code, _) = cli(&dir, &["--json", "requests", "create", "--file", request.to_str().unwrap()]);
    assert_eq!(code, 0);
    companion.expect_line("type a number");
    companion.type_line("/clients");
    companion.expect_line("Build bot  [");
    drop(companion);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every path under `dir` with its size and modification time, sorted.
fn tree(dir: &std::path::Path) -> Vec<(PathBuf, u64, Option<std::time::SystemTime>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_owned()];
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries.map_while(Result::ok) {
            let md = std::fs::symlink_metadata(e.path()).unwrap();
            if md.is_dir() {
                todo.push(e.path());
            }
            out.push((e.path(), md.len(), md.modified().ok()));
        }
    }
    out.sort();
    out
}

// CP-5-12, CP-4-20: a second desk companion on a socket that is in use fails before it creates
// or changes anything: no data directory, no database, no socket file touched. (Old main created
// its data directory and opened the databases first, then found the socket in use.)
#[test]
fn a_failed_second_start_changes_nothing() {
    let (dir, companion) = start_companion("twice");
    let before = tree(&dir);
    for data in [dir.join("data2"), dir.join("data")] {
        let out = Command::new(bin_dir().join("examples/desk_companion"))
            .arg("--socket")
            .arg(dir.join("run/companion.sock"))
            .arg("--data")
            .arg(&data)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("another server is listening"), "{stderr}");
        assert_eq!(tree(&dir), before, "the failed start changed the file system ({})", data.display());
    }
    drop(companion);
    let _ = std::fs::remove_dir_all(&dir);
}

// CP-5-11, CP-6-6: a client's self-reported name is shown with its invisible characters escaped
// (`Clau\u{200b}de` cannot pass for "Claude"); a prompt whose client stopped waiting is taken off
// the user's view at once, not at the next unrelated event; the startup hint lists every scope;
// `/close` with no open question says so. (Old main: the zero-width space was printed raw, the
// withdrawn prompt stayed until something else happened, the hint lacked `animate`, `/close`
// said "Unknown command".)
#[test]
fn prompts_show_names_visibly_and_go_when_withdrawn() {
    let (dir, mut companion) = spawn_companion("hint");
    let hint = companion.expect_line("Pair a client with");
    assert!(hint.contains("--scopes discover,animate,notify,interact"), "{hint}");
    companion.expect_line("Type /help");
    companion.type_line("/close");
    companion.expect_line("No open question");

    let mut pair = Command::new(bin_dir().join("companion"))
        .args(["--json", "pair", "--name", "Clau\u{200B}de", "--scopes", "notify", "--profile", "fake"])
        .env("COMPANION_CONFIG_DIR", dir.join("cfg"))
        .env("COMPANION_SOCKET", dir.join("run/companion.sock"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let prompt = companion.expect_line("asks to pair");
    assert!(prompt.contains(r#""Clau\u{200b}de""#), "{prompt:?}");
    assert!(!prompt.contains('\u{200B}'), "{prompt:?}");
    let _ = pair.kill();
    let _ = pair.wait();
    let gone = companion.expect_line("withdrawn");
    assert!(gone.contains("pairing request 1"), "{gone}");
    drop(companion);
    let _ = std::fs::remove_dir_all(&dir);
}

// CP-4-22: `/revoke` withdraws the client's open questions from the desk for good: after
// "Revoked", the question is not asked again, and the next plain line is not taken as its answer;
// the client's pending `requests wait` is answered UNAUTHENTICATED (exit 3). (Old main re-asked
// the withdrawn question right after printing "Revoked".)
#[test]
fn revoking_a_client_withdraws_its_questions_for_good() {
    let (dir, mut companion) = start_companion("revoke");
    let pairing = pair_in_background(&dir, "Build bot", "bot");
    companion.expect_line("asks to pair");
    companion.type_line("/approve 1");
    let (code, paired) = pairing.join().unwrap();
    assert_eq!(code, 0, "{paired}");
    companion.type_line("/clients");
    let listed = companion.expect_line("Build bot  [");
    let client_id = listed.split_whitespace().next().unwrap().to_owned();

    let question = dir.join("text.json");
    std::fs::write(
        &question,
        r#"{"capability":"interaction.text","params":{"prompt":"Ship the release?"},"timeoutMs":60000}"#,
    )
    .unwrap();
    let (code, created) = cli(&dir, &["--json", "requests", "create", "--file", question.to_str().unwrap()]);
    assert_eq!(code, 0, "{created}");
    let id = created["requestId"].as_str().unwrap().to_owned();
    companion.expect_line("Ship the release?");
    companion.expect_line("type your answer");
    let waiter = {
        let (dir, id) = (dir.clone(), id.clone());
        std::thread::spawn(move || cli(&dir, &["--json", "requests", "wait", &id, "--wait-ms", "60000"]))
    };
    // Whether the wait is already running or starts after the revocation, it ends UNAUTHENTICATED.
    companion.type_line(&format!("/revoke {client_id}"));
    companion.expect_line(&format!("Revoked {client_id}"));
    companion.type_line("yes");
    companion.type_line("/motion normal");
    let mut after = Vec::new();
    loop {
        let line = companion.lines.recv_timeout(Duration::from_secs(30)).expect("the marker line");
        if line.contains("Reduced motion: false") {
            break;
        }
        after.push(line);
    }
    assert!(
        !after.iter().any(|l| l.contains("type your answer")),
        "the withdrawn question was asked again: {after:#?}"
    );
    assert!(
        after.iter().any(|l| l.contains("Unknown command yes")),
        "\"yes\" answered a withdrawn question: {after:#?}"
    );
    let (code, waited) = waiter.join().unwrap();
    assert_eq!(code, 3, "{waited}");
    assert!(waited.to_string().contains("UNAUTHENTICATED"), "{waited}");
    drop(companion);
    let _ = std::fs::remove_dir_all(&dir);
}
