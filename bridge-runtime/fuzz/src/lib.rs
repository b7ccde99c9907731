//! The fuzz targets' shared code (issue #10): each target is one function over the input bytes
//! that panics when a property breaks, called by `fuzz_targets/<target>.rs` and by the corpus
//! replay test `bridge-runtime/tests/it/fuzz_corpus.rs` (which includes these files by
//! `#[path]`, so it runs on stable with no fuzzing toolchain).
//!
//! - `jsonrpc`: `bridge_runtime::__internals::jsonrpc` (crate-private code, behind the `fuzzing`
//!   feature);
//! - `tools`: [`tools::run`];
//! - `schema`: [`schema::run`].

pub mod schema;
pub mod tools;
