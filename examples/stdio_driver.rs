//! Stdio round-trip benchmark driver: starts an MCP server as a child process, initializes it,
//! then sends `tools/call` requests pipelined over its stdin (up to `--window` in flight) and
//! reports throughput and latency percentiles.
//!
//! ```text
//! cargo build --release --example order_editor --example stdio_driver
//! target/release/examples/stdio_driver --server target/release/examples/order_editor --calls 20000 --window 32
//! ```
//!
//! The driver speaks line-delimited JSON-RPC directly so that the figure measures the server,
//! not a client library.

use clap::Parser;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;

#[derive(Parser, Debug)]
struct Args {
    /// The server binary (stdio transport).
    #[arg(long)]
    server: String,
    /// Extra arguments for the server.
    #[arg(long, allow_hyphen_values = true, num_args = 0..)]
    server_args: Vec<String>,
    /// Number of tools/call requests.
    #[arg(long, default_value_t = 20_000)]
    calls: usize,
    /// Requests in flight at once.
    #[arg(long, default_value_t = 32)]
    window: usize,
    /// Tool to call.
    #[arg(long, default_value = "w-C__load_rows")]
    tool: String,
    /// Its arguments (JSON object).
    #[arg(long, default_value = r#"{"offset": 0, "limit": 1}"#)]
    arguments: String,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let arguments: Value = serde_json::from_str(&args.arguments)?;
    let mut child = Command::new(&args.server)
        .args(&args.server_args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let mut lines = BufReader::new(child.stdout.take().ok_or("no stdout")?).lines();

    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "stdio_driver", "version": "0"}}});
    stdin.write_all(format!("{init}\n").as_bytes()).await?;
    loop {
        let line = lines.next_line().await?.ok_or("server closed during initialize")?;
        let v: Value = serde_json::from_str(&line)?;
        if v["id"] == 0 {
            break;
        }
    }
    stdin.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n").await?;

    let mut sent_at: HashMap<u64, Instant> = HashMap::new();
    let mut latencies: Vec<Duration> = Vec::with_capacity(args.calls);
    let (mut next_id, mut done, mut errors) = (1u64, 0usize, 0usize);
    let start = Instant::now();
    while done < args.calls {
        while sent_at.len() < args.window && (next_id as usize) <= args.calls {
            let req = json!({"jsonrpc": "2.0", "id": next_id, "method": "tools/call",
                             "params": {"name": args.tool, "arguments": arguments}});
            stdin.write_all(format!("{req}\n").as_bytes()).await?;
            sent_at.insert(next_id, Instant::now());
            next_id += 1;
        }
        stdin.flush().await?;
        let line = lines.next_line().await?.ok_or("server closed")?;
        let v: Value = serde_json::from_str(&line)?;
        let Some(id) = v["id"].as_u64() else { continue };
        if let Some(t) = sent_at.remove(&id) {
            latencies.push(t.elapsed());
            done += 1;
            if v.get("error").is_some() || v["result"]["isError"] == true {
                errors += 1;
            }
        }
    }
    let elapsed = start.elapsed();
    latencies.sort();
    let pct = |p: f64| latencies[((latencies.len() as f64 * p) as usize).min(latencies.len() - 1)];
    println!(
        "{} calls of {} in {:.3} s, window {}: {:.0} calls/s; latency p50 {:?} p99 {:?} max {:?}; errors {}",
        args.calls,
        args.tool,
        elapsed.as_secs_f64(),
        args.window,
        args.calls as f64 / elapsed.as_secs_f64(),
        pct(0.50),
        pct(0.99),
        latencies[latencies.len() - 1],
        errors
    );
    drop(stdin);
    let _ = tokio::time::timeout(Duration::from_secs(2), child.wait()).await;
    Ok(())
}
