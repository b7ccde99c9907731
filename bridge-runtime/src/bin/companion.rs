//! `companion`: the desktop companion CLI (CP §6). See [`bridge_runtime::companion::cli`].

fn main() -> std::process::ExitCode {
    bridge_runtime::companion::cli::main()
}
