//! Compile-fail cases: each `tests/ui/<mistake>.rs` holds one mistake an app author can make
//! and its `.stderr` the one message they get, at their own tokens. Pinned to the toolchain in
//! use (rustc 1.95): regenerate with `TRYBUILD=overwrite cargo test -p bridge-macros-ui --test
//! trybuild` and review. Built against bridge-runtime's default features only (this package's
//! dev-dependencies), so the cases compile no SQLite, axum or clap.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
