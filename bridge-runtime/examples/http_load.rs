//! Load driver for "Bounded under load" (issue #10 item 4): starts the streamable HTTP server in
//! a child process (the test app of `tests/it/support/mcp.rs`), reads the child's idle RSS from
//! `/proc/PID/status`, fires initialize-only legacy (2025-11-25) POSTs at it over fresh loopback
//! connections, and reads its RSS again. Not a test: it prints figures for BENCHMARKS.md.
//!
//! ```sh
//! cargo run --release -p bridge-runtime --example http_load -- [POSTS] [CONCURRENCY] [MAX_SESSIONS]
//! ```
//!
//! Defaults: 10,000 POSTs, 16 at a time, the default session cap. Output: one line per phase
//! (`idle`, `after`, `settled` 2 s later) with `VmRSS` and `VmHWM` in KiB, then the answers'
//! HTTP statuses and the ratio `after / idle`.
//!
//! `http_load listen STREAMS [MAX_LISTEN_STREAMS]` instead opens STREAMS 2026-07-28
//! `subscriptions/listen` streams and holds them open while it reads the RSS.

// The package's `unreachable_pub` lint is for the library's API; here `pub` marks what the
// fixture modules share.
#![allow(unreachable_pub)]

/// The MCP tests' fixtures: the test app (`bridge()`).
#[path = "../tests/it/support/mcp.rs"]
mod mcp_support;

use bridge_runtime::mcp::{HttpOptions, serve_http_on_with};

/// The access token of the measured server; every POST sends it.
const TOKEN: &str = "http-load-token-0123456789abcdef";
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("serve") {
        serve(args.get(1).and_then(|s| s.parse().ok()), args.get(2).and_then(|s| s.parse().ok()));
    } else if args.first().map(String::as_str) == Some("listen") {
        let streams = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(256);
        listen(streams, args.get(2).cloned());
    } else {
        let posts = args.first().and_then(|s| s.parse().ok()).unwrap_or(10_000);
        let concurrency = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(16);
        drive(posts, concurrency, args.get(2).cloned());
    }
}

/// Child: serve the test app on an ephemeral loopback port, print `ADDR`, serve until killed.
fn serve(max_sessions: Option<usize>, max_listens: Option<usize>) {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    rt.block_on(async {
        let bridge = mcp_support::bridge();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        println!("{}", listener.local_addr().expect("addr"));
        let mut options = HttpOptions::default().token(TOKEN);
        if let Some(max) = max_sessions {
            options = options.max_sessions(max);
        }
        if let Some(max) = max_listens {
            options = options.max_listen_streams(max);
        }
        serve_http_on_with(bridge, listener, options).await.expect("serve");
    });
}

/// `VmRSS` and `VmHWM` of `pid`, KiB.
fn rss(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Starts the server child with `args` after `serve`; the child and its address.
fn spawn_server(args: &[String]) -> (std::process::Child, String) {
    let exe = std::env::current_exe().expect("current exe");
    let mut child = Command::new(exe).arg("serve").args(args).stdout(Stdio::piped()).spawn().expect("spawn server");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut line).expect("server address");
    (child, line.trim().to_owned())
}

/// Opens `streams` listen streams and holds them while reading the server's RSS.
fn listen(streams: usize, max_listens: Option<String>) {
    let max = max_listens.unwrap_or_else(|| streams.to_string());
    let (mut child, addr) = spawn_server(&["128".to_owned(), max]);
    let pid = child.id();
    std::thread::sleep(Duration::from_secs(1));
    let idle = rss(pid);
    println!("idle:    VmRSS {} KiB, VmHWM {} KiB", idle.0, idle.1);
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    rt.block_on(async {
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"http-load","version":"1.0.0"}}}}"#;
        let mut held = Vec::new();
        let mut statuses = BTreeMap::new();
        for _ in 0..streams {
            let request = format!(
                "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json, text/event-stream\r\n\
                 Content-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\n\
                 Authorization: Bearer {TOKEN}\r\nMcp-Method: subscriptions/listen\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            );
            let Ok(mut stream) = tokio::net::TcpStream::connect(&addr).await else { continue };
            let _ = stream.write_all(request.as_bytes()).await;
            let mut buf = [0u8; 256];
            let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf)).await.ok().and_then(Result::ok);
            let head = String::from_utf8_lossy(&buf[..n.unwrap_or(0)]).into_owned();
            let status: u16 = head.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
            *statuses.entry(status).or_insert(0) += 1;
            held.push(stream);
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
        let after = rss(pid);
        println!("after:   VmRSS {} KiB, VmHWM {} KiB ({streams} listen streams held)", after.0, after.1);
        println!("statuses: {statuses:?}");
        println!("per stream: {:.1} KiB", (after.0 as f64 - idle.0 as f64) / streams as f64);
        drop(held);
    });
    let _ = child.kill();
    let _ = child.wait();
}

fn drive(posts: usize, concurrency: usize, max_sessions: Option<String>) {
    let (mut child, addr) = spawn_server(&max_sessions.into_iter().collect::<Vec<_>>());
    let pid = child.id();
    std::thread::sleep(Duration::from_secs(1));
    let idle = rss(pid);
    println!("idle:    VmRSS {} KiB, VmHWM {} KiB", idle.0, idle.1);

    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    // One session first: the HTTP stack, rmcp and the catalog initialise lazily.
    rt.block_on(initialize(&addr));
    std::thread::sleep(Duration::from_millis(500));
    let warm = rss(pid);
    println!("warm:    VmRSS {} KiB, VmHWM {} KiB (after 1 initialize)", warm.0, warm.1);
    let started = Instant::now();
    let statuses = rt.block_on(fire(&addr, posts, concurrency));
    let elapsed = started.elapsed();
    let after = rss(pid);
    println!("after:   VmRSS {} KiB, VmHWM {} KiB ({posts} POSTs in {:.1} s)", after.0, after.1, elapsed.as_secs_f64());
    std::thread::sleep(Duration::from_secs(2));
    let settled = rss(pid);
    println!("settled: VmRSS {} KiB, VmHWM {} KiB", settled.0, settled.1);
    println!("statuses: {statuses:?}");
    println!(
        "ratio after/idle: {:.2}, after/warm: {:.2}",
        after.0 as f64 / idle.0 as f64,
        after.0 as f64 / warm.0 as f64
    );
    let _ = child.kill();
    let _ = child.wait();
}

/// `posts` initialize POSTs, `concurrency` at a time; counts of each HTTP status.
async fn fire(addr: &str, posts: usize, concurrency: usize) -> BTreeMap<u16, usize> {
    let next = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..concurrency {
        let next = next.clone();
        let addr = addr.to_owned();
        tasks.push(tokio::spawn(async move {
            let mut seen = BTreeMap::new();
            while next.fetch_add(1, Ordering::Relaxed) < posts {
                *seen.entry(initialize(&addr).await).or_insert(0) += 1;
            }
            seen
        }));
    }
    let mut statuses = BTreeMap::new();
    for task in tasks {
        for (status, n) in task.await.expect("driver task") {
            *statuses.entry(status).or_insert(0) += n;
        }
    }
    statuses
}

/// One legacy `initialize` over a fresh connection (`Connection: close`); the HTTP status, or 0
/// when the exchange failed.
async fn initialize(addr: &str) -> u16 {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"http-load","version":"1.0.0"}}}"#;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nAccept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\nAuthorization: Bearer {TOKEN}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let Ok(mut stream) = tokio::net::TcpStream::connect(addr).await else { return 0 };
    if stream.write_all(request.as_bytes()).await.is_err() {
        return 0;
    }
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(30), stream.read_to_end(&mut answer)).await;
    let head = String::from_utf8_lossy(&answer[..answer.len().min(32)]).into_owned();
    head.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0)
}
