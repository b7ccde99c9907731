//! Stdio round-trip benchmark driver: starts MCP servers as child processes, initializes each,
//! then sends `tools/call` requests pipelined over its stdin (up to `--window` in flight) and
//! reports throughput, latency percentiles and the server's own CPU time per call (user +
//! system, from `/proc/<pid>/stat`, counted from the first call to the last response).
//!
//! ```text
//! cargo build --release --example order_editor --example rmcp_reference --example stdio_driver
//! # one server
//! target/release/examples/stdio_driver --server target/release/examples/order_editor --calls 20000 --window 32
//! # bridge against the hand-written rmcp reference, 5 interleaved rounds, medians and ratios
//! target/release/examples/stdio_driver --capture /tmp/fixture.json \
//!   --server target/release/examples/order_editor \
//!   --server "target/release/examples/rmcp_reference --fixture /tmp/fixture.json" \
//!   --tool w-A__edit_field --arguments '{"field":"recipient","value":"Alice {n}"}' --rounds 5
//! ```
//!
//! Each `--server` is a command line (split at spaces). With several, every round runs each
//! server once, in turn (interleaved, so machine noise hits all alike), and the summary gives
//! medians over rounds and each server's ratio to the first. `{n}` in `--arguments` becomes the
//! call's number, so every call really changes state. `--capture FILE` first asks the first
//! server for `tools/list` and `app://windows` and writes them to FILE (the reference server's
//! fixture). Replies are compared across servers: the first `--compare` responses (ids aside)
//! must be byte-identical, or the driver says where they differ.
//!
//! The driver speaks line-delimited JSON-RPC directly so that the figure measures the server,
//! not a client library.

use clap::Parser;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

#[derive(Parser, Debug)]
struct Args {
    /// A server command line (stdio transport); repeat to compare servers.
    #[arg(long, required = true)]
    server: Vec<String>,
    /// Extra arguments for every server.
    #[arg(long, allow_hyphen_values = true, num_args = 0..)]
    server_args: Vec<String>,
    /// Number of tools/call requests per run.
    #[arg(long, default_value_t = 20_000)]
    calls: usize,
    /// Requests in flight at once.
    #[arg(long, default_value_t = 32)]
    window: usize,
    /// Tool to call.
    #[arg(long, default_value = "w-C__load_rows")]
    tool: String,
    /// Its arguments (JSON object); `{n}` inside a string becomes the call number.
    #[arg(long, default_value = r#"{"offset": 0, "limit": 1}"#)]
    arguments: String,
    /// Rounds; each runs every server once.
    #[arg(long, default_value_t = 1)]
    rounds: usize,
    /// Write the first server's tools/list and app://windows to this file first.
    #[arg(long)]
    capture: Option<std::path::PathBuf>,
    /// Send `resources/read app://windows` instead of `tools/call` (`--tool`, `--arguments` unused).
    #[arg(long)]
    read: bool,
    /// How many responses of each server to compare byte for byte with the first server's.
    #[arg(long, default_value_t = 50)]
    compare: usize,
}

struct Server {
    child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
}

impl Server {
    async fn start(command: &str, extra: &[String]) -> Result<Self, Box<dyn std::error::Error>> {
        let mut parts = command.split_whitespace();
        let program = parts.next().ok_or("empty --server")?;
        let mut child = Command::new(program)
            .args(parts)
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let lines = BufReader::new(child.stdout.take().ok_or("no stdout")?).lines();
        let mut server = Server { child, stdin, lines };
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "stdio_driver", "version": "0"}}});
        server.request(init).await?;
        server.stdin.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n").await?;
        Ok(server)
    }

    /// Sends one request and returns its response (skipping notifications).
    async fn request(&mut self, req: Value) -> Result<Value, Box<dyn std::error::Error>> {
        self.stdin.write_all(format!("{req}\n").as_bytes()).await?;
        self.stdin.flush().await?;
        loop {
            let line = self.lines.next_line().await?.ok_or("server closed")?;
            let v: Value = serde_json::from_str(&line)?;
            if v["id"] == req["id"] {
                return Ok(v);
            }
        }
    }

    /// User + system CPU time of the server process so far.
    fn cpu(&self) -> Duration {
        let Some(pid) = self.child.id() else { return Duration::ZERO };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return Duration::ZERO };
        // Fields after the parenthesized command name: state is field 3; utime 14, stime 15.
        let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
        let f: Vec<&str> = rest.split_whitespace().collect();
        let ticks = |i: usize| f.get(i).and_then(|s| s.parse::<u64>().ok()).unwrap_or(0);
        // SAFETY: sysconf has no preconditions.
        let hz = unsafe { libc_sysconf_clk_tck() }.max(1);
        Duration::from_secs_f64((ticks(11) + ticks(12)) as f64 / hz as f64)
    }

    async fn stop(mut self) {
        drop(self.stdin);
        let _ = tokio::time::timeout(Duration::from_secs(2), self.child.wait()).await;
    }
}

unsafe extern "C" {
    fn sysconf(name: i32) -> i64;
}

/// `sysconf(_SC_CLK_TCK)`, clock ticks per second (`_SC_CLK_TCK` is 2 on Linux).
unsafe fn libc_sysconf_clk_tck() -> i64 {
    // SAFETY: forwarded to the caller.
    unsafe { sysconf(2) }
}

/// `{n}` → `n` in every string of `v`.
fn instantiate(v: &Value, n: u64) -> Value {
    match v {
        Value::String(s) if s.contains("{n}") => Value::String(s.replace("{n}", &n.to_string())),
        Value::Array(a) => Value::Array(a.iter().map(|x| instantiate(x, n)).collect()),
        Value::Object(o) => Value::Object(o.iter().map(|(k, x)| (k.clone(), instantiate(x, n))).collect()),
        other => other.clone(),
    }
}

struct Run {
    rate: f64,
    cpu_per_call: Duration,
    p50: Duration,
    p99: Duration,
    max: Duration,
    errors: usize,
    replies: Vec<String>,
}

async fn run(args: &Args, command: &str, arguments: &Value) -> Result<Run, Box<dyn std::error::Error>> {
    let mut server = Server::start(command, &args.server_args).await?;
    let mut sent_at: HashMap<u64, Instant> = HashMap::new();
    let mut latencies: Vec<Duration> = Vec::with_capacity(args.calls);
    let mut replies = Vec::new();
    let (mut next_id, mut done, mut errors) = (1u64, 0usize, 0usize);
    let cpu0 = server.cpu();
    let start = Instant::now();
    while done < args.calls {
        while sent_at.len() < args.window.max(1) && (next_id as usize) <= args.calls {
            let req = if args.read {
                json!({"jsonrpc": "2.0", "id": next_id, "method": "resources/read", "params": {"uri": "app://windows"}})
            } else {
                json!({"jsonrpc": "2.0", "id": next_id, "method": "tools/call",
                       "params": {"name": args.tool, "arguments": instantiate(arguments, next_id)}})
            };
            server.stdin.write_all(format!("{req}\n").as_bytes()).await?;
            sent_at.insert(next_id, Instant::now());
            next_id += 1;
        }
        server.stdin.flush().await?;
        let line = server.lines.next_line().await?.ok_or("server closed")?;
        let mut v: Value = serde_json::from_str(&line)?;
        let Some(id) = v["id"].as_u64() else { continue };
        if let Some(t) = sent_at.remove(&id) {
            latencies.push(t.elapsed());
            done += 1;
            if v.get("error").is_some() || v["result"]["isError"] == true {
                errors += 1;
            }
            if replies.len() < args.compare && id as usize <= args.compare {
                v["id"] = Value::Null;
                replies.push(format!("{id}: {v}"));
            }
        }
    }
    let elapsed = start.elapsed();
    let cpu = server.cpu().saturating_sub(cpu0);
    server.stop().await;
    latencies.sort();
    let pct = |p: f64| latencies[((latencies.len() as f64 * p) as usize).min(latencies.len() - 1)];
    replies.sort();
    Ok(Run {
        rate: args.calls as f64 / elapsed.as_secs_f64(),
        cpu_per_call: cpu / args.calls as u32,
        p50: pct(0.50),
        p99: pct(0.99),
        max: latencies[latencies.len() - 1],
        errors,
        replies,
    })
}

async fn capture(command: &str, extra: &[String], to: &std::path::Path) -> Result<(), Box<dyn std::error::Error>> {
    let mut server = Server::start(command, extra).await?;
    let tools = server.request(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})).await?;
    let read = server
        .request(json!({"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": "app://windows"}}))
        .await?;
    let text = read["result"]["contents"][0]["text"].as_str().ok_or("no app://windows text")?;
    let fixture = json!({
        "tools": tools["result"]["tools"],
        "serverInfo": tools["result"]["_meta"]["io.modelcontextprotocol/serverInfo"],
        "snapshot": serde_json::from_str::<Value>(text)?,
    });
    std::fs::write(to, serde_json::to_vec_pretty(&fixture)?)?;
    server.stop().await;
    Ok(())
}

fn median<T: Copy + PartialOrd>(mut v: Vec<T>) -> T {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    v[v.len() / 2]
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let arguments: Value = serde_json::from_str(&args.arguments)?;
    if let Some(to) = &args.capture {
        capture(&args.server[0], &args.server_args, to).await?;
    }
    let mut runs: Vec<Vec<Run>> = args.server.iter().map(|_| Vec::new()).collect();
    for round in 0..args.rounds.max(1) {
        for (i, command) in args.server.iter().enumerate() {
            let r = run(&args, command, &arguments).await?;
            println!(
                "round {round} server {i}: {} calls of {} in flight {}: {:.0} calls/s, {:.1} µs CPU/call; \
                 latency p50 {:?} p99 {:?} max {:?}; errors {}",
                args.calls,
                if args.read { "resources/read" } else { &args.tool },
                args.window,
                r.rate,
                r.cpu_per_call.as_secs_f64() * 1e6,
                r.p50,
                r.p99,
                r.max,
                r.errors
            );
            runs[i].push(r);
        }
    }
    let base_rate = median(runs[0].iter().map(|r| r.rate).collect());
    let base_cpu = median(runs[0].iter().map(|r| r.cpu_per_call.as_secs_f64()).collect());
    for (i, rs) in runs.iter().enumerate() {
        let rate = median(rs.iter().map(|r| r.rate).collect());
        let cpu = median(rs.iter().map(|r| r.cpu_per_call.as_secs_f64()).collect());
        println!(
            "median server {i} ({}): {rate:.0} calls/s ({:.2}× server 0), {:.1} µs CPU/call ({:.2}× server 0)",
            args.server[i],
            rate / base_rate,
            cpu * 1e6,
            cpu / base_cpu
        );
        if i > 0 {
            let (ours, theirs) = (&runs[0][0].replies, &rs[0].replies);
            match ours.iter().zip(theirs).find(|(a, b)| a != b) {
                None if ours.len() == theirs.len() => println!("  replies: the first {} are identical", ours.len()),
                None => println!("  replies: {} vs {} compared", ours.len(), theirs.len()),
                Some((a, b)) => println!("  replies DIFFER:\n    server 0: {a}\n    server {i}: {b}"),
            }
        }
    }
    Ok(())
}
