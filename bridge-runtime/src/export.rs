//! Build-time export of every machine-readable description, all generated from the one
//! [`Catalog`] (CP-2-12, CP-2-13): commit the files next to your app so reviewers see every
//! change to what agents are offered, and let a test fail when they fall behind the code.
//!
//! | file | content |
//! | --- | --- |
//! | `catalog.json` | the registry: windows, blocks, actions, app actions, capabilities, characters, styles ([`Catalog::document`]) |
//! | `catalog.yaml` | the same, as YAML (feature `yaml`) |
//! | `mcp-tools.json` | the GUI actions as MCP tool templates per window type ([`mcp_tools`]) |
//! | `capabilities.json` | exactly what `capabilities.list` returns to a client holding every scope ([`capabilities`]) |
//! | `openrpc.json` | the OpenRPC document of the companion API (`companion::openrpc::document`; feature `companion`) |
//!
//! Output is deterministic: object keys sorted at every level, two-space indentation, `\n` line
//! ends and a trailing newline, so committed copies diff cleanly. Only the files above ([`FILES`]:
//! those of the enabled features) are written or compared; anything else in the directory is
//! left alone.
//!
//! # Wiring it into your build
//!
//! Add one test that builds your catalog the way your app does and calls
//! [`assert_up_to_date`]:
//!
//! ```no_run
//! # fn build_my_catalog() -> bridge_runtime::Catalog { bridge_runtime::Catalog::new() }
//! #[test]
//! fn exported_catalog_is_up_to_date() {
//!     let catalog = build_my_catalog(); // e.g. `let (bridge, _owner) = app::build().build(); bridge.catalog()`
//!     bridge_runtime::export::assert_up_to_date(&catalog, concat!(env!("CARGO_MANIFEST_DIR"), "/catalog"));
//! }
//! ```
//!
//! `cargo test` then fails with a summary of what drifted (first differing line per file) when
//! an annotation, capability or schema changed without the export being refreshed. To refresh,
//! run the same test with `BRIDGE_EXPORT=1` (or `UPDATE_CATALOG=1`):
//!
//! ```text
//! BRIDGE_EXPORT=1 cargo test exported_catalog_is_up_to_date
//! ```
//!
//! and commit the result. [`write_all`] and [`check_all`] are the building blocks if you prefer
//! a `build.rs`, an xtask or a CLI flag instead.
//!
//! # What each tool costs an agent (feature `tokens`)
//!
//! An agent pays for every tool definition in tokens, on every turn. With the feature `tokens`,
//! [`tool_costs`] gives each tool's size as `tools/list` sends it, in bytes and in OpenAI's
//! `o200k_base` tokens, split into its description (your doc comment and what the library
//! adds), `inputSchema` and `outputSchema`; [`write_all`]'s report lists them too:
//!
//! ```
//! # #[cfg(feature = "tokens")] {
//! # let catalog = bridge_runtime::Catalog::new();
//! for cost in bridge_runtime::export::tool_costs(&catalog).expect("the o200k_base ranks load") {
//!     println!("{cost}"); // {winId}__submit: 478 tokens (1918 bytes; description 61, inputSchema 55, outputSchema 296)
//! }
//! # }
//! ```

use crate::catalog::{Catalog, Scope, ToolName};
#[cfg(feature = "companion")]
use crate::companion::openrpc;
use crate::gui::ToolEntry;
use crate::mcp::to_mcp_tool;
use serde_json::{Value, json};
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// `catalog.json`.
pub const CATALOG_JSON: &str = "catalog.json";
/// `catalog.yaml`.
pub const CATALOG_YAML: &str = "catalog.yaml";
/// `mcp-tools.json`.
pub const MCP_TOOLS_JSON: &str = "mcp-tools.json";
/// `capabilities.json`.
pub const CAPABILITIES_JSON: &str = "capabilities.json";
/// `openrpc.json`.
pub const OPENRPC_JSON: &str = "openrpc.json";

/// Every exported file of the enabled features, in the order they are written.
pub const FILES: &[&str] = &[
    CATALOG_JSON,
    #[cfg(feature = "yaml")]
    CATALOG_YAML,
    MCP_TOOLS_JSON,
    CAPABILITIES_JSON,
    #[cfg(feature = "companion")]
    OPENRPC_JSON,
];

/// Environment variables that make [`assert_up_to_date`] rewrite instead of compare; any value
/// other than empty, `0` or `false` counts.
pub const UPDATE_ENV_VARS: [&str; 2] = ["BRIDGE_EXPORT", "UPDATE_CATALOG"];

/// Placeholder for the run-time window id in `mcp-tools.json` tool names: `{winId}__{action}`.
pub const WINDOW_ID_PLACEHOLDER: &str = "{winId}";

/// Placeholder for the action in the tool-name shapes of `mcp-tools.json`.
const ACTION_PLACEHOLDER: &str = "{action}";

/// What [`write_all`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportReport {
    /// The directory written to.
    pub dir: PathBuf,
    /// Files whose content changed (or that did not exist), in [`FILES`] order.
    pub written: Vec<PathBuf>,
    /// Files that already held the generated content and were not touched.
    pub unchanged: Vec<PathBuf>,
    /// What each tool costs an agent ([`tool_costs`]; feature `tokens`).
    #[cfg(feature = "tokens")]
    pub tool_costs: Vec<ToolCost>,
}

impl fmt::Display for ExportReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} written, {} unchanged", self.dir.display(), self.written.len(), self.unchanged.len())?;
        for p in &self.written {
            write!(f, "\n  wrote {}", p.display())?;
        }
        #[cfg(feature = "tokens")]
        for cost in &self.tool_costs {
            write!(f, "\n  {cost}")?;
        }
        Ok(())
    }
}

/// One exported file that does not match what the catalog generates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drift {
    /// The file's path.
    pub path: PathBuf,
    /// How it differs.
    pub kind: DriftKind,
}

/// How a file differs from the generated content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DriftKind {
    /// The file does not exist.
    Missing,
    /// The file exists but holds something else.
    Changed {
        /// 1-based number of the first line that differs.
        line: usize,
        /// That line in the committed file (`None` past its end), at most 160 characters.
        committed: Option<String>,
        /// That line as generated (`None` past its end), at most 160 characters.
        generated: Option<String>,
        /// Line counts (committed, generated).
        lines: (usize, usize),
    },
    /// The file could not be read (permissions, not UTF-8).
    Unreadable(String),
    /// The content could not be generated.
    Render(String),
}

impl fmt::Display for Drift {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.path.display();
        match &self.kind {
            DriftKind::Missing => write!(f, "{path}: missing"),
            DriftKind::Unreadable(e) => write!(f, "{path}: unreadable: {e}"),
            DriftKind::Render(e) => write!(f, "{path}: could not be generated: {e}"),
            DriftKind::Changed { line, committed, generated, lines } => {
                write!(
                    f,
                    "{path}: differs from the catalog from line {line} on ({} lines committed, {} generated)",
                    lines.0, lines.1
                )?;
                write!(f, "\n    committed: {}", committed.as_deref().unwrap_or("<end of file>"))?;
                write!(f, "\n    generated: {}", generated.as_deref().unwrap_or("<end of file>"))
            }
        }
    }
}

/// Every exported file's name and content, in [`FILES`] order, deterministic (see module docs).
///
/// Errors: only if YAML serialization fails (`io::ErrorKind::Other`).
pub fn render_all(catalog: &Catalog) -> io::Result<Vec<(&'static str, String)>> {
    let doc = crate::model::json::sorted_keys(serde_json::to_value(catalog.document()).map_err(io::Error::other)?);
    Ok(vec![
        (CATALOG_JSON, canonical_json(&doc)),
        #[cfg(feature = "yaml")]
        (CATALOG_YAML, with_trailing_newline(serde_yaml::to_string(&doc).map_err(io::Error::other)?)),
        (MCP_TOOLS_JSON, canonical_json(&mcp_tools(catalog))),
        (CAPABILITIES_JSON, canonical_json(&capabilities(catalog))),
        #[cfg(feature = "companion")]
        (OPENRPC_JSON, canonical_json(&openrpc::document(catalog))),
    ])
}

/// Writes the files into `dir` (created if missing). A file that already holds the
/// generated content is not rewritten (its timestamp stays).
///
/// Errors: the directory cannot be created, a file cannot be written, or rendering failed.
pub fn write_all(catalog: &Catalog, dir: &Path) -> io::Result<ExportReport> {
    let files = render_all(catalog)?;
    std::fs::create_dir_all(dir)?;
    let mut report = ExportReport {
        dir: dir.to_owned(),
        written: Vec::new(),
        unchanged: Vec::new(),
        #[cfg(feature = "tokens")]
        tool_costs: tool_costs(catalog)?,
    };
    for (name, content) in files {
        let path = dir.join(name);
        match std::fs::read_to_string(&path) {
            Ok(existing) if existing == content => report.unchanged.push(path),
            _ => {
                std::fs::write(&path, content)?;
                report.written.push(path);
            }
        }
    }
    Ok(report)
}

/// Compares the files in `dir` with what `catalog` generates, without writing. `Ok` when
/// all match (CRLF line ends, as a Windows checkout may have them, count as `\n`); otherwise one
/// [`Drift`] per file that is missing, unreadable or different.
pub fn check_all(catalog: &Catalog, dir: &Path) -> Result<(), Vec<Drift>> {
    let files = match render_all(catalog) {
        Ok(files) => files,
        Err(e) => {
            let kind = DriftKind::Render(e.to_string());
            return Err(FILES.iter().map(|n| Drift { path: dir.join(n), kind: kind.clone() }).collect());
        }
    };
    let mut drifts = Vec::new();
    for (name, generated) in files {
        let path = dir.join(name);
        let kind = match std::fs::read_to_string(&path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Some(DriftKind::Missing),
            Err(e) => Some(DriftKind::Unreadable(e.to_string())),
            Ok(committed) => {
                let committed = committed.replace("\r\n", "\n");
                (committed != generated).then(|| first_difference(&committed, &generated))
            }
        };
        if let Some(kind) = kind {
            drifts.push(Drift { path, kind });
        }
    }
    if drifts.is_empty() { Ok(()) } else { Err(drifts) }
}

/// Test helper for app authors (see module docs): with `BRIDGE_EXPORT` or `UPDATE_CATALOG` set,
/// (re)writes the files into `dir` and reports what changed on stderr; otherwise checks them
/// with [`check_all`].
///
/// # Panics
///
/// It is an assertion: it panics when the files are out of date (the message lists each drift
/// and how to refresh) or, in update mode, when they cannot be written.
pub fn assert_up_to_date(catalog: &Catalog, dir: impl AsRef<Path>) {
    let dir = dir.as_ref();
    if update_requested() {
        match write_all(catalog, dir) {
            Ok(report) => eprintln!("bridge export: {report}"),
            Err(e) => panic!("bridge export: cannot write {}: {e}", dir.display()),
        }
        return;
    }
    if let Err(drifts) = check_all(catalog, dir) {
        let list: Vec<String> = drifts.iter().map(|d| format!("  {d}")).collect();
        panic!(
            "the exported catalog in {} is out of date with the code ({} of {} files):\n{}\n\
             Regenerate it by running this test with BRIDGE_EXPORT=1 (or UPDATE_CATALOG=1), review the diff, and commit it.",
            dir.display(),
            drifts.len(),
            FILES.len(),
            list.join("\n")
        );
    }
}

/// Whether one of [`UPDATE_ENV_VARS`] asks for a rewrite.
pub fn update_requested() -> bool {
    UPDATE_ENV_VARS.iter().any(|var| {
        std::env::var(var).is_ok_and(|v| !matches!(v.trim().to_ascii_lowercase().as_str(), "" | "0" | "false"))
    })
}

/// The GUI action catalog as MCP tool templates (`mcp-tools.json`), each tool exactly as
/// `tools/list` lists it at run time (GB-5.2-3, GB-5.5-1, GB-5.6-1, GB-12.3-4), with the
/// window id left as the placeholder [`WINDOW_ID_PLACEHOLDER`].
///
/// Shape: `{"windowToolName": "{winId}__{action}", "appToolName": "app__{action}",
/// "windows": [{"typeName", "title", "conditionalActions": [name], "tools": [Tool]}],
/// "app": {"typeName", "conditionalActions", "tools"} | null}`. At run time a window's tools
/// are listed only while it is operable, and a conditional action only while available; a
/// `user_only` action is never a tool, so it is not here.
pub fn mcp_tools(catalog: &Catalog) -> Value {
    fn tool(entry: ToolEntry) -> Value {
        serde_json::to_value(to_mcp_tool(&entry)).unwrap_or(Value::Null)
    }
    fn conditional(actions: &[std::sync::Arc<crate::ActionSpec>]) -> Vec<&str> {
        actions.iter().filter(|a| a.conditional).map(|a| a.name.as_str()).collect()
    }
    let windows: Vec<Value> = catalog
        .windows()
        .iter()
        .map(|w| {
            let tools: Vec<Value> = w
                .actions
                .iter()
                .filter(|a| !a.user_only)
                .map(|a| tool(ToolEntry::window(WINDOW_ID_PLACEHOLDER, &w.meta.title, w, a)))
                .collect();
            json!({
                "typeName": w.meta.type_name,
                "title": w.meta.title,
                "conditionalActions": conditional(&w.actions),
                "tools": tools,
            })
        })
        .collect();
    let app = catalog.app().map(|app| {
        let tools: Vec<Value> = app.actions.iter().filter(|a| !a.user_only).map(|a| tool(ToolEntry::app(a))).collect();
        json!({"typeName": app.type_name, "conditionalActions": conditional(&app.actions), "tools": tools})
    });
    json!({
        "windowToolName": ToolName::window(WINDOW_ID_PLACEHOLDER, ACTION_PLACEHOLDER).to_string(),
        "appToolName": ToolName::app(ACTION_PLACEHOLDER).to_string(),
        "windows": windows,
        "app": app,
    })
}

/// What one tool costs an agent that lists it (feature `tokens`): the tool exactly as
/// `tools/list` sends it to a client without the MCP Apps extension (compact JSON; a window
/// tool's name and title hold [`WINDOW_ID_PLACEHOLDER`] and the window type's title), in bytes
/// and in OpenAI's `o200k_base` tokens, with the tokens of its parts.
#[cfg(feature = "tokens")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokens")))]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCost {
    /// The tool's name as listed: `{winId}__{action}` or `app__{action}`.
    pub name: String,
    /// The window type's title; `None` for an app-level tool.
    pub window: Option<String>,
    /// UTF-8 bytes of the tool's compact JSON.
    pub bytes: usize,
    /// `o200k_base` tokens of the same.
    pub tokens: usize,
    /// Tokens of its `description` text alone: the action's doc comment and what the library
    /// adds.
    pub description_tokens: usize,
    /// Tokens of its `inputSchema` (compact JSON).
    pub input_schema_tokens: usize,
    /// Tokens of its `outputSchema` (compact JSON); 0 without one.
    pub output_schema_tokens: usize,
}

#[cfg(feature = "tokens")]
impl fmt::Display for ToolCost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} tokens ({} bytes; description {}, inputSchema {}, outputSchema {})",
            self.name,
            self.tokens,
            self.bytes,
            self.description_tokens,
            self.input_schema_tokens,
            self.output_schema_tokens
        )
    }
}

/// Tokens of `text` in OpenAI's `o200k_base` encoding (GPT-4o and later), special-token text
/// counted as ordinary text (feature `tokens`).
///
/// Errors: the encoding's ranks (shipped inside tiktoken-rs) fail to load
/// (`io::ErrorKind::Other`); loaded once per process.
#[cfg(feature = "tokens")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokens")))]
pub fn count_tokens(text: &str) -> io::Result<usize> {
    static BPE: std::sync::OnceLock<Result<tiktoken_rs::CoreBPE, String>> = std::sync::OnceLock::new();
    match BPE.get_or_init(|| tiktoken_rs::o200k_base().map_err(|e| e.to_string())) {
        Ok(bpe) => Ok(bpe.encode_ordinary(text).len()),
        Err(e) => Err(io::Error::other(format!("the o200k_base encoding failed to load: {e}"))),
    }
}

/// What each tool of the catalog costs an agent ([`ToolCost`]), window types in catalog order
/// then app-level actions, each in declaration order: the same tools as [`mcp_tools`] (feature
/// `tokens`). A long doc comment shows here as the author's choice.
///
/// Errors: as [`count_tokens`].
#[cfg(feature = "tokens")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokens")))]
pub fn tool_costs(catalog: &Catalog) -> io::Result<Vec<ToolCost>> {
    let mut entries: Vec<(Option<&str>, ToolEntry)> = Vec::new();
    for w in catalog.windows() {
        for a in w.actions.iter().filter(|a| !a.user_only) {
            entries.push((Some(&w.meta.title), ToolEntry::window(WINDOW_ID_PLACEHOLDER, &w.meta.title, w, a)));
        }
    }
    if let Some(app) = catalog.app() {
        entries.extend(app.actions.iter().filter(|a| !a.user_only).map(|a| (None, ToolEntry::app(a))));
    }
    entries
        .into_iter()
        .map(|(window, entry)| {
            let tool = to_mcp_tool(&entry);
            let json = serde_json::to_string(&tool).map_err(io::Error::other)?;
            let input = serde_json::to_string(&*tool.input_schema).map_err(io::Error::other)?;
            let output = match tool.output_schema.as_deref() {
                Some(schema) => count_tokens(&serde_json::to_string(schema).map_err(io::Error::other)?)?,
                None => 0,
            };
            Ok(ToolCost {
                name: tool.name.to_string(),
                window: window.map(str::to_owned),
                bytes: json.len(),
                tokens: count_tokens(&json)?,
                description_tokens: count_tokens(tool.description.as_deref().unwrap_or_default())?,
                input_schema_tokens: count_tokens(&input)?,
                output_schema_tokens: output,
            })
        })
        .collect()
}

/// `capabilities.json`: the `capabilities.list` result for a client holding every scope, one
/// page, computed by the same function the engine answers with ([`Catalog::capabilities_page`],
/// CP-2-4): `{"catalogRevision", "capabilities": [descriptor], "nextCursor": null}`.
pub fn capabilities(catalog: &Catalog) -> Value {
    let all_scopes = |c: &crate::catalog::CapabilitySpec| c.required_scopes().iter().all(|s| Scope::ALL.contains(s));
    catalog.capabilities_page(all_scopes, None, None).unwrap_or(Value::Null)
}

/// `value` as exported: keys sorted at every level, pretty-printed, trailing newline.
fn canonical_json(value: &Value) -> String {
    with_trailing_newline(crate::model::json::canonical_json(value, true))
}

fn with_trailing_newline(mut text: String) -> String {
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

fn first_difference(committed: &str, generated: &str) -> DriftKind {
    let (a, b): (Vec<&str>, Vec<&str>) = (committed.lines().collect(), generated.lines().collect());
    let i = a.iter().zip(&b).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
    let clip = |s: &&str| s.chars().take(160).collect::<String>();
    DriftKind::Changed {
        line: i + 1,
        committed: a.get(i).map(clip),
        generated: b.get(i).map(clip),
        lines: (a.len(), b.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorted_orders_keys_at_every_level() {
        let v = json!({"b": 1, "a": {"d": [{"z": 1, "y": 2}], "c": 3}});
        assert_eq!(
            canonical_json(&v),
            "{\n  \"a\": {\n    \"c\": 3,\n    \"d\": [\n      {\n        \"y\": 2,\n        \"z\": 1\n      }\n    ]\n  },\n  \"b\": 1\n}\n"
        );
    }

    #[test]
    fn first_difference_points_at_the_line() {
        let d = first_difference("a\nb\nc\n", "a\nB\nc\n");
        assert_eq!(
            d,
            DriftKind::Changed { line: 2, committed: Some("b".into()), generated: Some("B".into()), lines: (3, 3) }
        );
        let d = first_difference("a\n", "a\nb\n");
        assert_eq!(d, DriftKind::Changed { line: 2, committed: None, generated: Some("b".into()), lines: (1, 2) });
    }
}
