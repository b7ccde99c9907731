//! The schema zoo: a fixture app whose actions take and return the ordinary Rust types app
//! authors write (optional and defaulted fields, documented and undocumented unit enums, the
//! three serde enum representations, recursive structs, `serde_json::Value`, maps, integers
//! of every width, a tuple struct, flatten, `Uuid`), plus a companion capability with recursive
//! params and result. Real MCP clients (tests/ts, tests/python/test_schema_zoo.py) list and
//! call every tool with the cases in tests/schema_zoo_cases.json, validating each result
//! against the tool's `outputSchema`.
//!
//! ```text
//! cargo run --example schema_zoo                           # MCP over stdio; the window is "zoo", tools zoo__*
//! cargo run --example schema_zoo -- --http 127.0.0.1:8766  # streamable HTTP at /mcp (loopback, bearer token)
//! cargo run --example schema_zoo -- --http localhost:8766    # the same (localhost binds 127.0.0.1)
//! ```
//!
//! Over HTTP the companion tool follows the companion's HTTP profile (CP-5-16): loopback, the
//! bearer token ($BRIDGE_MCP_TOKEN, else generated and printed), the Origin rule. There is no
//! opt-out: `--no-token` is accepted only to be refused at start-up, as the library refuses
//! `HttpOptions::no_token` on a server that carries the companion's tools.

mod app;
mod outline;
#[path = "../shared/serve_flags.rs"]
mod serve_flags;
mod types;
mod zoo;

#[tokio::main]
async fn main() {
    serve_flags::init_logging();
    let server = app::server().unwrap_or_else(|e| {
        eprintln!("schema_zoo: {e}");
        std::process::exit(1);
    });
    let args: Vec<String> = std::env::args().skip(1).collect();
    let served = match args.as_slice() {
        [] => bridge_runtime::mcp::serve_stdio(server).await,
        [flag, addr, rest @ ..] if flag == "--http" && rest.iter().all(|a| a == "--no-token") => {
            let addr = serve_flags::parse_http_addr(addr).unwrap_or_else(|e| {
                eprintln!("schema_zoo: --http {e}");
                std::process::exit(2);
            });
            let mut options = bridge_runtime::mcp::HttpOptions::default();
            if !rest.is_empty() {
                // Refused by serve_http_on_with (ServeError::CompanionWithoutToken): the zoo
                // carries the companion's tools, whose HTTP profile needs the token.
                options = options.no_token();
            }
            // Bound before it says so, so a busy port is the only message.
            let listener = tokio::net::TcpListener::bind(addr).await.unwrap_or_else(|e| {
                eprintln!("schema_zoo: cannot listen on {addr}: {e}");
                std::process::exit(1);
            });
            eprintln!("schema_zoo: serving MCP at http://{addr}/mcp (Ctrl-C to stop)");
            // Stopping drops the server: its connections close, a generated token's file goes.
            tokio::select! {
                served = bridge_runtime::mcp::serve_http_on_with(server, listener, options) => served,
                () = serve_flags::stop_signal() => Ok(()),
            }
        }
        _ => {
            eprintln!(
                "usage: schema_zoo [--http 127.0.0.1:PORT|localhost:PORT] \
                 (no --no-token: the companion's tools over HTTP need the token)"
            );
            std::process::exit(2);
        }
    };
    if let Err(e) = served {
        eprintln!("schema_zoo: {e}");
        std::process::exit(1);
    }
}
