//! The Order Editor's token budget: what an agent reads before acting, counted in OpenAI's
//! `o200k_base` tokens on the bytes the real example sends over stdio (the benchmark
//! `examples/token_budget` counts everything else; BENCHMARKS.md, "Tokens an agent reads").
//! Token counts are deterministic, so the figures measured are pinned as upper bounds: more
//! tokens is a regression, fewer means the pin can come down.

#[path = "../../examples/token_budget/wire.rs"]
#[allow(dead_code)]
mod wire;

use wire::{Case, Cost, Wire};

/// Upper bounds, in `o200k_base` tokens, for the Order Editor over stdio (a 2025-11-25 session,
/// no MCP Apps extension: the case the benchmark's baseline was measured in).
struct Budget {
    /// The `tools/list` result (9 tools).
    tools_list: usize,
    /// The text of `app://windows` (2 windows).
    windows: usize,
}

/// The one place the pins live.
const BUDGET: Budget = Budget { tools_list: 1_566, windows: 424 };

fn examples_dir() -> std::path::PathBuf {
    if let Some(dir) = std::env::var_os("BRIDGE_EXAMPLES_DIR") {
        return dir.into();
    }
    // target/debug/deps/it-… → target/debug/examples
    let exe = std::env::current_exe().unwrap();
    exe.parent().and_then(|p| p.parent()).unwrap().join("examples")
}

// GB-3-1 (stdio), GB-12.3-4 (the tools and their schemas), GB-12.2-1 (app://windows): what the Order Editor
// sends stays within its token budget.
#[tokio::test]
async fn order_editor_stays_within_its_token_budget() {
    let case = Case { modern: false, ui: false };
    let mut w = Wire::spawn(&examples_dir().join("order_editor"), &[], case).await.expect("order_editor over stdio");
    let list = w.tools_list().await.expect("tools/list");
    let windows = w.windows().await.expect("app://windows");
    w.close().await;
    assert_eq!(wire::tools(&list).len(), 9, "the Order Editor lists 9 tools: {list}");
    assert_eq!(wire::windows(&windows).len(), 2, "two windows open: {windows}");
    for (what, text, budget) in [("tools/list", &list, BUDGET.tools_list), ("app://windows", &windows, BUDGET.windows)]
    {
        let cost = Cost::of(text);
        assert!(
            cost.tokens <= budget,
            "{what} costs {} tokens ({} bytes), over its budget of {budget}",
            cost.tokens,
            cost.bytes
        );
    }
}
