//! Bounded quoting: what an error message echoes of a peer's input.

use std::borrow::Cow;

/// Most characters of a peer's input an error message quotes; longer input is cut there and
/// marked with `…`, so a 100 KB tool name costs a 100-byte message, not a 100 KB one.
pub(crate) const QUOTE_CHARS: usize = 80;

/// `s` as an error message may quote it: whole if it has at most [`QUOTE_CHARS`] characters,
/// else its first `QUOTE_CHARS` characters followed by `…`.
pub(crate) fn clip(s: &str) -> Cow<'_, str> {
    match s.char_indices().nth(QUOTE_CHARS) {
        None => Cow::Borrowed(s),
        Some((end, _)) => Cow::Owned(format!("{}…", &s[..end])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_input_is_quoted_whole_long_input_is_cut() {
        assert_eq!(clip("w-A__focus"), "w-A__focus");
        let long = "é".repeat(100_000);
        let quoted = clip(&long);
        assert_eq!(quoted.chars().count(), QUOTE_CHARS + 1);
        assert!(quoted.ends_with('…'));
    }
}
