//! The id rules of capabilities, characters and styles (CP-2-27).

use super::problem::SpecError;

/// Longest accepted capability id, in bytes.
pub const MAX_CAPABILITY_ID_LEN: usize = 128;

/// Checks a capability id: `[a-z][a-z0-9_]*(\.[a-z0-9_]+)+`, at most
/// [`MAX_CAPABILITY_ID_LEN`] bytes; ids starting with `vendor.` must read
/// `vendor.<reverse-domain>.<name>` with at least two domain labels (CP-2-27).
pub fn validate_capability_id(id: &str) -> Result<(), SpecError> {
    let bad = |reason: &str| Err(SpecError::InvalidId { id: id.to_owned(), reason: reason.to_owned() });
    if id.len() > MAX_CAPABILITY_ID_LEN {
        return bad("longer than 128 bytes");
    }
    let segments: Vec<&str> = id.split('.').collect();
    if segments.len() < 2 {
        return bad("needs at least two dot-separated segments, e.g. `notice.show`");
    }
    if !is_dotted_id(id) {
        return bad("must match [a-z][a-z0-9_]*(\\.[a-z0-9_]+)+");
    }
    if segments[0] == "vendor" && segments.len() < 4 {
        return bad("vendor ids read vendor.<reverse-domain>.<name> with at least two domain labels");
    }
    Ok(())
}

/// Checks a character or style id: `[a-z][a-z0-9_]*(\.[a-z0-9_]+)*`, 1..=64 bytes.
pub fn validate_simple_id(what: &'static str, id: &str) -> Result<(), SpecError> {
    if id.is_empty() || id.len() > 64 || !is_dotted_id(id) {
        return Err(SpecError::InvalidId {
            id: id.to_owned(),
            reason: format!("{what} ids must match [a-z][a-z0-9_]*(\\.[a-z0-9_]+)* and be at most 64 bytes"),
        });
    }
    Ok(())
}

fn is_dotted_id(id: &str) -> bool {
    let mut segments = id.split('.');
    let first = segments.next().unwrap_or_default();
    let lower_digit_us = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_';
    first.starts_with(|c: char| c.is_ascii_lowercase())
        && first.chars().all(lower_digit_us)
        && segments.all(|s| !s.is_empty() && s.chars().all(lower_digit_us))
}
