//! The committed fuzz corpora (`bridge-runtime/fuzz/corpus/<target>/`, issue #10) replayed on
//! stable through the same code the fuzz targets run: `bridge_runtime::__internals::jsonrpc` and the
//! targets' shared modules, included here by path. Every property a target checks is checked
//! again on every file (a panic names the file), and each corpus must still reach the paths it
//! was kept for. Fuzzing itself: `bridge-runtime/fuzz/README.md`.

use std::collections::BTreeSet;
use std::path::PathBuf;

#[path = "../../fuzz/src/schema.rs"]
mod schema;
#[path = "../../fuzz/src/tools.rs"]
mod tools;

/// Every file of `fuzz/corpus/<target>`, sorted, with its name.
fn corpus(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus").join(target);
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| {
            let path = entry.expect("corpus entry").path();
            let name = path.file_name().unwrap_or_default().to_string_lossy().into_owned();
            (name, std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
        })
        .collect();
    files.sort();
    assert!(files.len() >= 10, "{target}: only {} corpus files in {}", files.len(), dir.display());
    files
}

/// Runs `f` on one corpus file, naming the file if it panics.
fn replay<T>(target: &str, name: &str, data: &[u8], f: impl FnOnce(&[u8]) -> T) -> T {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(data))) {
        Ok(out) => out,
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("(no message)");
            panic!("fuzz/corpus/{target}/{name}: {msg}")
        }
    }
}

// CP-1-4, CP-8-1, OQ-CP-12, CP-4-18, CP-5-13: framing matches the line model under every limit
// and buffer size, every error response is well-formed and coded, decoded params are stable,
// and no error quotes a params value; the corpus reaches every method and every error class.
#[test]
fn fuzz_corpus_jsonrpc_framing_and_params_cp_1_4() {
    let mut decoded = BTreeSet::new();
    let mut total = bridge_runtime::__internals::JsonrpcReport::default();
    for (name, data) in corpus("jsonrpc") {
        let r = replay("jsonrpc", &name, &data, bridge_runtime::__internals::jsonrpc);
        decoded.extend(r.decoded);
        total.lines += r.lines;
        total.too_long |= r.too_long;
        total.rejected_messages += r.rejected_messages;
        total.batches += r.batches;
        total.invalid_entries += r.invalid_entries;
        total.unknown_methods += r.unknown_methods;
        total.invalid_params += r.invalid_params;
    }
    let all: BTreeSet<&str> = bridge_runtime::companion::protocol::Method::ALL.iter().map(|m| m.as_str()).collect();
    let missing: Vec<&&str> = all.difference(&decoded).collect();
    assert!(missing.is_empty(), "no corpus file decodes params of {missing:?}");
    assert!(total.too_long, "no corpus file has a line over the limit");
    for (what, n) in [
        ("whole-message errors", total.rejected_messages),
        ("batches", total.batches),
        ("invalid entries", total.invalid_entries),
        ("unknown methods", total.unknown_methods),
        ("invalid params", total.invalid_params),
    ] {
        assert!(n > 0, "no corpus file reaches {what}");
    }
}

// GB-7.4, GB-7.3-1, GB-4.5-2 (and the invariants `TestApp` checks on every step): arbitrary
// arguments through `Ui::call_tool` never panic, a rejected call leaves the snapshot, the tool
// list and the notifications unchanged, errors are coded, the secret never leaves; the corpus
// reaches success and every error code argument validation and dispatch produce.
#[test]
fn fuzz_corpus_tools_rejected_calls_change_nothing_gb_7_4() {
    let mut ok = BTreeSet::new();
    let mut rejected = BTreeSet::new();
    for (name, data) in corpus("tools") {
        let r = replay("tools", &name, &data, tools::run);
        ok.extend(r.ok.into_keys());
        rejected.extend(r.rejected.into_keys());
    }
    assert!(ok.len() >= 10, "the corpus reaches only {ok:?}");
    for code in ["validation_failed", "stale_state", "window_not_found", "blocked_by_modal", "action_not_available"] {
        assert!(rejected.contains(code), "no corpus call fails with {code}; seen {rejected:?}");
    }
}

// GB-5.2-3, CP-2-13 (the pipeline's rules): normalization of arbitrary schemas obeys every
// rule, keeps local references resolvable and is idempotent; field errors agree with the
// validator; the corpus reaches compiled schemas and both valid and invalid instances.
#[test]
fn fuzz_corpus_schema_pipeline_rules_and_idempotence_gb_5_2_3() {
    let mut total = schema::SchemaReport::default();
    for (name, data) in corpus("schema") {
        let r = replay("schema", &name, &data, schema::run);
        total.compiled += r.compiled;
        total.valid += r.valid;
        total.invalid += r.invalid;
    }
    assert!(total.compiled > 0 && total.valid > 0 && total.invalid > 0, "{total:?}");
}

// JSON-RPC 2.0 §4–5, MA-8-2, GB-7.4-3: the stdio pre-layer forwards only what rmcp reads (a
// call with the id rmcp reads), never answers a notification or a response, answers everything
// else with a well-formed, coded, bounded error; the corpus reaches every class.
#[test]
fn fuzz_corpus_prelayer_answers_ma_8_2() {
    let mut total = bridge_runtime::__internals::PrelayerReport::default();
    for (name, data) in corpus("prelayer") {
        let r = replay("prelayer", &name, &data, bridge_runtime::__internals::prelayer);
        total.lines += r.lines;
        total.forwarded += r.forwarded;
        total.calls += r.calls;
        total.replies += r.replies;
        total.refused_calls += r.refused_calls;
        total.unidentified += r.unidentified;
        total.silent += r.silent;
        total.oversized += r.oversized;
    }
    for (class, n) in [
        ("forwarded", total.forwarded),
        ("calls", total.calls),
        ("replies", total.replies),
        ("refused_calls", total.refused_calls),
        ("unidentified", total.unidentified),
        ("silent", total.silent),
        ("oversized", total.oversized),
    ] {
        assert!(n > 0, "the prelayer corpus no longer reaches {class}: {total:?}");
    }
}

// The HTTP transport's checks before a body is read (Host, Origin, bearer token): every corpus
// head keeps the properties `http_head` checks, and the corpus reaches a 403, a 400 (a
// malformed head: two Hosts, userinfo in Host, no Host), a 401 and an admission with each
// configured token.
#[test]
fn fuzz_corpus_http_head_checks_before_the_body() {
    let (mut forbidden, mut malformed, mut unauthorized, mut admitted) = (0, 0, 0, BTreeSet::new());
    for (name, data) in corpus("http_head") {
        let r = replay("http_head", &name, &data, bridge_runtime::__internals::http_head);
        forbidden += usize::from(r.forbidden && !r.malformed);
        malformed += usize::from(r.malformed);
        unauthorized += usize::from(r.unauthorized);
        admitted.extend(r.admitted_as);
    }
    assert!(
        forbidden > 0 && malformed > 0 && unauthorized > 0,
        "403s: {forbidden}, 400s: {malformed}, 401s: {unauthorized}"
    );
    assert_eq!(admitted, BTreeSet::from([0, 1]), "both configured tokens admitted");
}
