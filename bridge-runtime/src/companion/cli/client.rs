//! A small blocking JSON-RPC client over the Unix socket, one call at a time.

use crate::companion::jsonrpc::{self, RpcError};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

/// Largest response line accepted, bytes.
const MAX_RESPONSE_BYTES: u64 = 64 << 20;

/// Why a call did not produce a result.
#[derive(Debug)]
pub(super) enum CallError {
    /// The connection failed, closed, or timed out (exit 4).
    Transport(String),
    /// The server answered with an error.
    Rpc(RpcError),
    /// The server's answer was not a JSON-RPC response (exit 5, `INTERNAL_ERROR`).
    Protocol(String),
}

/// A connection to the runtime.
pub(super) struct Client {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
    next_id: u64,
}

impl Client {
    /// Connects to the socket at `path`.
    pub(super) fn connect(path: &Path) -> Result<Self, String> {
        let stream = UnixStream::connect(path).map_err(|e| format!("cannot connect to {}: {e}", path.display()))?;
        let writer = stream.try_clone().map_err(|e| e.to_string())?;
        Ok(Self { reader: BufReader::new(stream), writer, next_id: 1 })
    }

    /// Calls `method` and waits at most `timeout` for its response.
    pub(super) fn call(&mut self, method: &str, params: Value, timeout: Duration) -> Result<Value, CallError> {
        let id = self.next_id;
        self.next_id += 1;
        let mut line = serde_json::to_vec(&jsonrpc::request(id, method, params))
            .map_err(|e| CallError::Protocol(e.to_string()))?;
        line.push(b'\n');
        self.writer.write_all(&line).map_err(|e| CallError::Transport(format!("cannot send: {e}")))?;
        let timeout = timeout.max(Duration::from_millis(1));
        self.reader.get_ref().set_read_timeout(Some(timeout)).map_err(|e| CallError::Transport(e.to_string()))?;
        loop {
            let mut buf = Vec::new();
            let n = (&mut self.reader)
                .take(MAX_RESPONSE_BYTES)
                .read_until(b'\n', &mut buf)
                .map_err(|e| CallError::Transport(format!("no answer from the runtime: {e}")))?;
            if n == 0 {
                return Err(CallError::Transport("the runtime closed the connection".into()));
            }
            if buf.last() != Some(&b'\n') && n as u64 >= MAX_RESPONSE_BYTES {
                return Err(CallError::Protocol("the response is too large".into()));
            }
            let value: Value =
                serde_json::from_slice(&buf).map_err(|_| CallError::Protocol("the response is not JSON".into()))?;
            let Some((rid, outcome)) = jsonrpc::parse_response(value) else {
                return Err(CallError::Protocol("the response is not a JSON-RPC 2.0 response".into()));
            };
            if rid == id {
                return outcome.map_err(CallError::Rpc);
            }
            if rid.is_null() {
                // A connection-level error (timeout, size, too many connections).
                return outcome.map_err(CallError::Rpc);
            }
        }
    }
}
