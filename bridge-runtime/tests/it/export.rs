//! Build-time export (`export`): the five files are generated from the one registry
//! (CP-2-12, CP-2-13), deterministic, and drift is detected without writing.

use crate::support::companion as companion_support;
use crate::support::mcp as mcp_support;

use bridge_runtime::catalog::Catalog;
use bridge_runtime::companion::openrpc;
use bridge_runtime::export::{self, DriftKind, FILES};
use companion_support::*;
use serde_json::{Value, json};
use std::path::Path;

fn read_json(dir: &Path, name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join(name)).unwrap()).unwrap()
}

/// The companion fixture's registry (capabilities, characters, styles), owned.
fn companion_catalog() -> Catalog {
    let mut c = Catalog::new();
    for spec in
        [notice_show(), progress_show(), interaction_choose(), interaction_text(), animation_celebrate(), vendor_wave()]
    {
        c.register_capability(spec).unwrap();
    }
    let shared = catalog();
    let shared = shared.read().unwrap();
    for ch in shared.characters() {
        c.register_character((**ch).clone()).unwrap();
    }
    for s in shared.styles() {
        c.register_style((**s).clone()).unwrap();
    }
    c
}

// CP-2-13: write_all writes the five files, each generated from the registry; a second run
// changes nothing; check_all then passes.
#[test]
fn write_then_check_round_trips() {
    let catalog = companion_catalog();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("nested/catalog");
    let report = export::write_all(&catalog, &out).unwrap();
    assert_eq!(report.written.len(), FILES.len());
    assert!(report.unchanged.is_empty());
    for name in FILES {
        assert!(out.join(name).is_file(), "{name}");
    }
    assert_eq!(export::check_all(&catalog, &out), Ok(()));
    let again = export::write_all(&catalog, &out).unwrap();
    assert!(again.written.is_empty());
    assert_eq!(again.unchanged.len(), FILES.len());

    // The files hold what the registry says.
    let doc = read_json(&out, "catalog.json");
    assert_eq!(doc["catalogRevision"], catalog.catalog_revision());
    assert_eq!(doc["capabilities"].as_array().unwrap().len(), 6);
    assert_eq!(doc["capabilities"][2], catalog.capability_descriptor("interaction.choose").unwrap());
    assert_eq!(
        doc["characters"][1],
        json!({"id": "cat", "name": "Cat", "capabilities": ["notice.show",
        "progress.show", "interaction.choose", "interaction.text", "vendor.com.example.wave"]})
    );
    assert_eq!(doc["styles"][1]["fallback"], "bubble");
    assert_eq!(doc["windows"], json!([]));
    let yaml: Value = serde_yaml::from_str(&std::fs::read_to_string(out.join("catalog.yaml")).unwrap()).unwrap();
    assert_eq!(yaml, doc, "catalog.yaml is catalog.json as YAML");
    assert_eq!(read_json(&out, "openrpc.json"), openrpc::document(&catalog));
    assert_eq!(read_json(&out, "mcp-tools.json")["windows"], json!([]));
}

// Determinism: sorted keys, two-space indentation, trailing newline; identical on every run.
#[test]
fn output_is_deterministic() {
    let a = export::render_all(&companion_catalog()).unwrap();
    let b = export::render_all(&companion_catalog()).unwrap();
    assert_eq!(a, b);
    let names: Vec<&str> = a.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, FILES);
    for (name, content) in &a {
        assert!(content.ends_with('\n') && !content.ends_with("\n\n"), "{name}");
        assert!(!content.contains('\r'), "{name}");
    }
    let catalog_json = &a[0].1;
    assert!(catalog_json.starts_with("{\n  \"capabilities\": ["), "{}", &catalog_json[..40]);
    let openrpc_json = &a[4].1;
    let keys: Vec<&str> = openrpc_json.lines().filter(|l| l.starts_with("  \"")).map(|l| l.trim()).collect();
    assert_eq!(
        keys.iter().map(|k| k.split('"').nth(1).unwrap()).collect::<Vec<_>>(),
        ["components", "info", "methods", "openrpc"]
    );
}

// CP-2-4, CP-2-13: capabilities.json is exactly what capabilities.list returns to a client holding
// every scope: the same function, one page.
#[tokio::test(start_paused = true)]
async fn capabilities_json_is_what_capabilities_list_returns() {
    let f = start();
    let live = f.engine.call(&agent("a1"), "capabilities.list", json!({})).await.unwrap();
    let exported = export::capabilities(&f.catalog.read().unwrap());
    assert_eq!(exported, live);
    assert_eq!(exported["nextCursor"], Value::Null);
    assert_eq!(exported["capabilities"].as_array().unwrap().len(), 6);
}

// Drift detection: a changed, missing or extra-line file is reported with where it differs;
// nothing is written; a CRLF checkout of the same content is not drift.
#[test]
fn check_all_reports_drift_without_writing() {
    let catalog = companion_catalog();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    let missing = export::check_all(&catalog, out).unwrap_err();
    assert_eq!(missing.len(), FILES.len());
    assert!(missing.iter().all(|d| d.kind == DriftKind::Missing));
    assert!(!out.join("catalog.json").exists(), "check_all never writes");

    export::write_all(&catalog, out).unwrap();
    let path = out.join("capabilities.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let rev = catalog.catalog_revision();
    let stale = text.replacen(&format!("\"catalogRevision\": {rev}"), &format!("\"catalogRevision\": {}", rev - 1), 1);
    assert_ne!(stale, text);
    std::fs::write(&path, stale).unwrap();
    std::fs::remove_file(out.join("catalog.yaml")).unwrap();
    let openrpc_path = out.join("openrpc.json");
    let crlf = std::fs::read_to_string(&openrpc_path).unwrap().replace('\n', "\r\n");
    std::fs::write(&openrpc_path, crlf).unwrap();

    let drifts = export::check_all(&catalog, out).unwrap_err();
    assert_eq!(drifts.len(), 2, "{drifts:#?}");
    assert_eq!(drifts[0].path, out.join("catalog.yaml"));
    assert_eq!(drifts[0].kind, DriftKind::Missing);
    assert_eq!(drifts[1].path, path);
    let DriftKind::Changed { line, committed, generated, .. } = &drifts[1].kind else { panic!("{drifts:?}") };
    let expected_line = text.lines().position(|l| l.contains("\"catalogRevision\"")).unwrap() + 1;
    assert_eq!(*line, expected_line);
    assert_eq!(committed.as_deref().map(str::trim), Some(format!("\"catalogRevision\": {},", rev - 1).as_str()));
    assert_eq!(generated.as_deref().map(str::trim), Some(format!("\"catalogRevision\": {rev},").as_str()));
    let shown = drifts[1].to_string();
    assert!(
        shown.contains(&format!("capabilities.json: differs from the catalog from line {expected_line}")),
        "{shown}"
    );

    // A registry change is drift too.
    let mut grown = companion_catalog();
    grown
        .register_capability(
            bridge_runtime::catalog::CapabilitySpec::new(
                "notice.extra",
                bridge_runtime::catalog::CapabilityKind::Notice,
            )
            .version("0.1.0")
            .build()
            .unwrap(),
        )
        .unwrap();
    export::write_all(&catalog, out).unwrap();
    let drifts = export::check_all(&grown, out).unwrap_err();
    let names: Vec<String> =
        drifts.iter().map(|d| d.path.file_name().unwrap().to_string_lossy().into_owned()).collect();
    // mcp-tools.json describes only the GUI actions, so it alone is unaffected.
    assert_eq!(names, ["catalog.json", "catalog.yaml", "capabilities.json", "openrpc.json"]);
}

// assert_up_to_date: passes on fresh files, fails with a readable summary on drift.
#[test]
fn assert_up_to_date_fails_readably_on_drift() {
    if export::update_requested() {
        return; // in update mode it writes instead of asserting
    }
    let catalog = companion_catalog();
    let dir = tempfile::tempdir().unwrap();
    export::write_all(&catalog, dir.path()).unwrap();
    export::assert_up_to_date(&catalog, dir.path());
    std::fs::write(dir.path().join("mcp-tools.json"), "{}\n").unwrap();
    let err =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| export::assert_up_to_date(&catalog, dir.path())))
            .unwrap_err();
    let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("out of date") && msg.contains("mcp-tools.json") && msg.contains("BRIDGE_EXPORT=1"), "{msg}");
    assert!(msg.contains("(1 of 5 files)"), "{msg}");
}

// GB-5.2-3, GB-5.5-1, GB-5.6-1, GB-12.3-4: mcp-tools.json holds each window type's tools as
// templates; with the placeholder replaced by a real window id, a template is byte for byte the
// tool a live MCP client lists.
#[tokio::test]
async fn mcp_tool_templates_match_the_live_tools_list() {
    let bridge = mcp_support::bridge();
    let templates = export::mcp_tools(&bridge.catalog());
    assert_eq!(templates["windowToolName"], "{winId}__{action}");
    assert_eq!(templates["appToolName"], "app__{action}");
    let (client, _rec) = mcp_support::legacy_client(&bridge).await;
    let live = client.list_all_tools().await.unwrap();
    assert!(live.len() >= 3);
    let mut candidates: Vec<Value> = templates["app"]["tools"].as_array().unwrap().clone();
    for w in templates["windows"].as_array().unwrap() {
        candidates.extend(w["tools"].as_array().unwrap().iter().cloned());
    }
    for tool in live {
        let live_json = serde_json::to_value(&tool).unwrap();
        let (win, _) = tool.name.split_once("__").unwrap();
        let found = candidates.iter().any(|t| {
            let text = serde_json::to_string(t).unwrap().replace("{winId}", win);
            serde_json::from_str::<Value>(&text).unwrap() == live_json
        });
        assert!(found, "no template for {}: {live_json:#}", tool.name);
    }
    let editor = templates["windows"].as_array().unwrap().iter().find(|w| w["typeName"] == "Editor").unwrap();
    assert_eq!(editor["conditionalActions"], json!(["submit"]));
}

// The author sees each tool's cost (feature `tokens`): one entry per tool of `mcp-tools.json`,
// in its order, sized as the compact JSON `tools/list` sends; the parts are counted apart.
#[test]
fn tool_costs_list_every_tool_with_its_parts() {
    let bridge = mcp_support::bridge();
    let catalog = bridge.catalog();
    let costs = export::tool_costs(&catalog).unwrap();
    let templates = export::mcp_tools(&catalog);
    let mut expected = Vec::new();
    for w in templates["windows"].as_array().unwrap() {
        for t in w["tools"].as_array().unwrap() {
            expected.push((t.clone(), w["title"].as_str().map(str::to_owned)));
        }
    }
    for t in templates["app"]["tools"].as_array().unwrap() {
        expected.push((t.clone(), None));
    }
    assert_eq!(costs.len(), expected.len());
    for (cost, (tool, window)) in costs.iter().zip(&expected) {
        assert_eq!(cost.name, tool["name"].as_str().unwrap());
        assert_eq!(&cost.window, window, "{}", cost.name);
        // Key order aside, the same compact JSON.
        assert_eq!(cost.bytes, serde_json::to_string(tool).unwrap().len(), "{}", cost.name);
        let description = tool["description"].as_str().unwrap();
        assert_eq!(cost.description_tokens, export::count_tokens(description).unwrap(), "{}", cost.name);
        assert!(cost.input_schema_tokens > 0 && cost.output_schema_tokens > 0, "{cost}");
        assert!(
            cost.tokens > cost.description_tokens + cost.input_schema_tokens + cost.output_schema_tokens,
            "the whole costs more than its parts: {cost}"
        );
        assert!(cost.to_string().starts_with(&format!("{}: {} tokens ({} bytes;", cost.name, cost.tokens, cost.bytes)));
    }
    assert!(costs.iter().any(|c| c.name == "{winId}__submit" && c.window.as_deref() == Some("Order Editor")));
    // write_all's report lists them, one line each.
    let dir = tempfile::tempdir().unwrap();
    let report = export::write_all(&catalog, dir.path()).unwrap();
    assert_eq!(report.tool_costs, costs);
    let shown = report.to_string();
    for cost in &costs {
        assert!(shown.contains(&format!("\n  {cost}")), "{shown}");
    }
}

// `count_tokens` is OpenAI's o200k_base, special-token text counted as ordinary text: the counts
// js-tiktoken 1.0.21 gives (`getEncoding("o200k_base").encode(text, [], [])`).
#[test]
fn count_tokens_is_o200k_base() {
    assert_eq!(export::count_tokens("").unwrap(), 0);
    assert_eq!(export::count_tokens("Set the order's recipient").unwrap(), 5);
    assert_eq!(export::count_tokens(r#"{"type":"text"}"#).unwrap(), 5);
    assert_eq!(export::count_tokens("<|endoftext|> 注文 (GB-7.4-8)").unwrap(), 18);
}
