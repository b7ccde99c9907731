//! Tauri's build step: reads tauri.conf.json and capabilities/, checks the icons, lets
//! `tauri::generate_context!` embed the page (dist/), and declares the app's own commands to
//! Tauri's permission system (`allow-set-user-confirms`, `allow-user-confirms`: with an app
//! manifest, a command no capability allows is refused). No tauri-cli and no npm step.

/// The app's own commands (main.rs), as the page invokes them.
const COMMANDS: &[&str] = &["set_user_confirms", "user_confirms"];

fn main() {
    let attributes = tauri_build::Attributes::new().app_manifest(tauri_build::AppManifest::new().commands(COMMANDS));
    if let Err(e) = tauri_build::try_build(attributes) {
        eprintln!("tauri-build: {e:#}");
        std::process::exit(1);
    }
}
