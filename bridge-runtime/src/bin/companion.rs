//! `companion`: the desktop companion CLI (CP §6), feature `cli`. See
//! `bridge_runtime::companion::cli`. The companion listens on a Unix socket, so the CLI is
//! Unix-only.

#[cfg(unix)]
fn main() -> std::process::ExitCode {
    bridge_runtime::companion::cli::main()
}

#[cfg(not(unix))]
fn main() -> std::process::ExitCode {
    eprintln!("companion: the desktop companion listens on a Unix socket; this platform has none");
    std::process::ExitCode::FAILURE
}
