//! Bounded work per request: what a call with `n` unknown argument keys costs.
//!
//! - `validator_unknown_keys/{validate,caps_check,parse_reference}/n`: the JSON-Schema validator
//!   with its problem collection alone (caps off: every key reaches it; 20 problems listed), the
//!   caps' single pass over the same arguments, and, as the reference measured in the same run,
//!   `serde_json` parsing the same arguments from text; for n = 1k, 10k, 100k, 1M.
//! - `stdio_order_editor_unknown_keys/n`: end to end on the release Order Editor over stdio
//!   (`w-A__focus` with n unknown keys, the request written and the answer read as one line), up
//!   to the transport's 16 MiB line (1,200,000 keys), against `w-A__focus {}` as the reference.
//!   Needs `cargo build --release --example order_editor` first (or `BOUNDED_SERVER=<command>`);
//!   skipped without it.
//!
//! Run: `cargo bench -p bridge-runtime --bench bounded`. For instruction counts, one call
//! at a time: `BOUNDED_ONCE=validate:20000 valgrind --tool=callgrind <bench binary>`
//! (`validate`, `caps`, `parse`), or `BOUNDED_ONCE=e2e:20000 BOUNDED_SERVER="valgrind
//! --tool=callgrind target/release/examples/order_editor" <bench binary>` (the server's count,
//! minus a run with `e2e:0`, is the call's).

use bridge_runtime::__internals::schema::{field_errors, validator};
use bridge_runtime::catalog::{ActionHints, ActionSpec, ArgumentLimits};
use criterion::{BenchmarkId, Criterion, criterion_group};
use serde_json::{Map, Value, json};
use std::hint::black_box;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

#[derive(schemars::JsonSchema, serde::Deserialize)]
#[allow(dead_code)]
struct EditParams {
    field: String,
    value: String,
}

/// The `inputSchema` of a typical window action (two strings and `expectedVersion`).
fn schema() -> Value {
    let write = ActionHints { read_only: false, destructive: false, idempotent: true, open_world: false };
    let spec = ActionSpec::new("edit_field").hints(write).params::<EditParams>().finish(true);
    Value::Object((*spec.input_schema).clone())
}

/// `{"field": "recipient", "value": "x", "k0000000": 0, …}` with `n` unknown keys.
fn flood(n: usize) -> Map<String, Value> {
    let mut args = Map::new();
    args.insert("field".into(), json!("recipient"));
    args.insert("value".into(), json!("x"));
    for i in 0..n {
        args.insert(format!("k{i:07}"), json!(0));
    }
    args
}

fn validator_unknown_keys(c: &mut Criterion) {
    let doc = schema();
    let v = validator(&doc).expect("schema compiles");
    let limits = ArgumentLimits::default();
    let declared = doc["properties"].as_object().cloned();
    let mut group = c.benchmark_group("validator_unknown_keys");
    group.sample_size(10).measurement_time(Duration::from_secs(5));
    for n in [1_000usize, 10_000, 100_000, 1_000_000] {
        let args = flood(n);
        let text = serde_json::to_string(&args).unwrap();
        let instance = Value::Object(args.clone());
        group.bench_with_input(BenchmarkId::new("validate", n), &instance, |b, i| {
            b.iter(|| black_box(field_errors(&v, i, 20)))
        });
        group.bench_with_input(BenchmarkId::new("caps_check", n), &args, |b, a| {
            b.iter(|| black_box(limits.check(a, declared.as_ref())))
        });
        group.bench_with_input(BenchmarkId::new("parse_reference", n), &text, |b, t| {
            b.iter(|| black_box(serde_json::from_str::<Value>(t).unwrap()))
        });
    }
    group.finish();
}

/// A stdio MCP server child, initialized.
struct Server {
    child: Child,
    /// `None` once closed (the server then exits).
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Server {
    fn start(command: &str) -> Option<Self> {
        let mut parts = command.split_whitespace();
        let mut child = Command::new(parts.next()?)
            .args(parts)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let stdin = child.stdin.take()?;
        let stdout = BufReader::new(child.stdout.take()?);
        let mut s = Server { child, stdin: Some(stdin), stdout, next_id: 1 };
        let init = json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}});
        s.request("initialize", &init.to_string());
        writeln!(s.stdin.as_mut()?, r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#).ok()?;
        Some(s)
    }

    /// Sends one request whose `params` are the JSON text `params`; returns the answer line.
    fn request(&mut self, method: &str, params: &str) -> String {
        let id = self.next_id;
        self.next_id += 1;
        let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#);
        let stdin = self.stdin.as_mut().expect("open");
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
        let mut answer = String::new();
        loop {
            answer.clear();
            assert!(self.stdout.read_line(&mut answer).unwrap() > 0, "the server closed stdout");
            if answer.contains(&format!(r#""id":{id}"#)) {
                return answer;
            }
        }
    }

    /// `tools/call w-A__focus` with `n` unknown keys, as JSON text.
    fn call_params(n: usize) -> String {
        let args = if n == 0 { Map::new() } else { flood(n) };
        json!({"name": "w-A__focus", "arguments": args}).to_string()
    }
}

impl Drop for Server {
    /// Closes stdin so the server exits by itself (callgrind then writes its counts); kills it
    /// if it has not within 30 s.
    fn drop(&mut self) {
        self.stdin = None;
        for _ in 0..300 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn server_command() -> Option<String> {
    std::env::var("BOUNDED_SERVER").ok().or_else(|| {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent()?.to_owned();
        let target = std::env::var_os("CARGO_TARGET_DIR").map(Into::into).unwrap_or_else(|| root.join("target"));
        let exe: std::path::PathBuf = target.join("release/examples/order_editor");
        exe.exists().then(|| exe.display().to_string())
    })
}

fn stdio_order_editor(c: &mut Criterion) {
    let Some(command) = server_command() else {
        eprintln!("stdio_order_editor_unknown_keys: skipped (build the release order_editor example first)");
        return;
    };
    let Some(mut server) = Server::start(&command) else {
        eprintln!("stdio_order_editor_unknown_keys: skipped ({command} did not start)");
        return;
    };
    let mut group = c.benchmark_group("stdio_order_editor_unknown_keys");
    group.sample_size(10).measurement_time(Duration::from_secs(5));
    for n in [0usize, 20_000, 40_000, 80_000, 160_000, 1_200_000] {
        let params = Server::call_params(n);
        assert!(params.len() < 16 << 20, "within the transport's line limit");
        let answer = server.request("tools/call", &params);
        let expected = if n == 0 { "\"isError\":false" } else { "validation_failed" };
        assert!(answer.contains(expected), "n = {n}: {}", &answer[..answer.len().min(300)]);
        group.bench_with_input(BenchmarkId::from_parameter(n), &params, |b, p| {
            b.iter(|| black_box(server.request("tools/call", p)))
        });
    }
    group.finish();
}

/// `BOUNDED_ONCE=what:n`: one run of one measured operation, for callgrind.
fn once(spec: &str) {
    let (what, n) = spec.split_once(':').expect("BOUNDED_ONCE=what:n");
    let n: usize = n.parse().expect("a number of keys");
    match what {
        "e2e" => {
            let command = server_command().expect("BOUNDED_SERVER or the release order_editor");
            let mut server = Server::start(&command).expect("server starts");
            let answer = server.request("tools/call", &Server::call_params(n));
            println!("{}", &answer[..answer.len().min(300)]);
            drop(server);
        }
        "validate" | "caps" | "parse" => {
            let doc = schema();
            let v = validator(&doc).expect("schema compiles");
            let args = flood(n);
            let text = serde_json::to_string(&args).unwrap();
            match what {
                "validate" => println!("{}", field_errors(&v, &Value::Object(args), 20).omitted),
                "caps" => println!("{}", ArgumentLimits::default().check(&args, doc["properties"].as_object()).keys),
                _ => println!("{}", serde_json::from_str::<Value>(&text).unwrap().as_object().unwrap().len()),
            }
        }
        other => panic!("unknown BOUNDED_ONCE {other}"),
    }
}

criterion_group!(benches, validator_unknown_keys, stdio_order_editor);

fn main() {
    if let Ok(spec) = std::env::var("BOUNDED_ONCE") {
        once(&spec);
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
