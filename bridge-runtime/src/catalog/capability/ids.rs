//! The id rules of capabilities, characters and styles (CP-2-27): `bridge_rules`' checks, the
//! same the macros run at compile time, as [`SpecError`]s.

use super::problem::SpecError;

/// Checks a capability id: `[a-z][a-z0-9_]*(\.[a-z0-9_]+)+`, at most
/// `bridge_rules::MAX_CAPABILITY_ID_LEN` (128) bytes; ids starting with `vendor.` must read
/// `vendor.<reverse-domain>.<name>` with at least two domain labels (CP-2-27).
///
/// Errors: `SpecError::InvalidId` with the reason (e.g. "longer than 128 bytes").
pub(crate) fn validate_capability_id(id: &str) -> Result<(), SpecError> {
    bridge_rules::check_capability_id(id)
        .map_err(|problem| SpecError::InvalidId { id: id.to_owned(), reason: problem.reason().to_owned() })
}

/// Checks a character or style id (`what` is `"character"` or `"style"`):
/// `[a-z][a-z0-9_]*(\.[a-z0-9_]+)*`, 1..=64 bytes.
///
/// Errors: `SpecError::InvalidId` naming the rule.
pub(crate) fn validate_simple_id(what: &'static str, id: &str) -> Result<(), SpecError> {
    bridge_rules::check_simple_id(id)
        .map_err(|problem| SpecError::InvalidId { id: id.to_owned(), reason: problem.reason(what) })
}
