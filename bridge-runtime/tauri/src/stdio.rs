//! MCP over stdio for a Tauri app an MCP host starts ([`Options::stdio`](crate::Options::stdio)).
//!
//! The MCP stream is the process's stdin and stdout as the host passed them, and nothing else
//! may write there: a web view's helper processes (WebKitGTK's web and network processes) inherit
//! the app's descriptors and may print to fd 1. So, in the plugin's setup, before Tauri creates
//! the first web view:
//! - the original stdin and stdout are duplicated to private descriptors, closed on `exec`
//!   (`F_DUPFD_CLOEXEC`), so no child process inherits the MCP stream;
//! - fd 1 is pointed at stderr, so whatever the app or a child prints goes to the host's log;
//! - fd 0 is pointed at `/dev/null`, so no child reads the host's requests.
//!
//! The MCP server then reads and writes the private descriptors.

use crate::Error;
use std::fs::File;

/// The MCP stream, taken from fds 0 and 1 (see the module docs): (requests, answers).
#[cfg(unix)]
pub(crate) fn take_stdio() -> Result<(File, File), Error> {
    use std::os::fd::FromRawFd;
    let stdio = |what: &str, e: std::io::Error| Error::Stdio(format!("{what}: {e}"));
    // SAFETY: plain descriptor calls on fds 0, 1 and 2 and on descriptors this function opens;
    // each new descriptor is owned by exactly one `File`.
    unsafe {
        let input = libc::fcntl(0, libc::F_DUPFD_CLOEXEC, 3);
        if input < 0 {
            return Err(stdio("duplicating stdin", std::io::Error::last_os_error()));
        }
        let input = File::from_raw_fd(input);
        let output = libc::fcntl(1, libc::F_DUPFD_CLOEXEC, 3);
        if output < 0 {
            return Err(stdio("duplicating stdout", std::io::Error::last_os_error()));
        }
        let output = File::from_raw_fd(output);
        if libc::dup2(2, 1) < 0 {
            return Err(stdio("pointing stdout at stderr", std::io::Error::last_os_error()));
        }
        let null = std::fs::OpenOptions::new().read(true).open("/dev/null").map_err(|e| stdio("/dev/null", e))?;
        if libc::dup2(std::os::fd::AsRawFd::as_raw_fd(&null), 0) < 0 {
            return Err(stdio("pointing stdin at /dev/null", std::io::Error::last_os_error()));
        }
        Ok((input, output))
    }
}

/// Elsewhere the stream is the process's own stdin and stdout, unmoved: nothing else may
/// write to stdout.
#[cfg(not(unix))]
pub(crate) fn take_stdio() -> Result<(File, File), Error> {
    Err(Error::Stdio("MCP over stdio is offered on Unix only".into()))
}
