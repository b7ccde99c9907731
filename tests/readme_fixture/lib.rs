//! The workspace README's Rust code blocks as doctests of the root package, so the quick start
//! and the other examples cannot rot. The published crates cannot include the README (it lies
//! outside them); bridge-runtime tests its own crate README the same way.

#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
