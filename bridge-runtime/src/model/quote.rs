//! Bounded, visible quoting: what an error message, a log line or a prompt echoes of a peer's
//! input. Text a peer chose may hide things (a zero-width space that makes `Clau\u{200b}de`
//! look like `Claude`, bidi overrides that reorder what follows, tag characters that carry
//! invisible text, escape sequences a terminal obeys); quoted, every such character is written
//! as a visible `\u{…}` escape, and the quote is cut at [`QUOTE_CHARS`].

use std::borrow::Cow;

/// Most characters of a peer's input an error message quotes (escapes counted as written);
/// longer input is cut there and marked with `…`, so a 100 KB tool name costs a 100-byte
/// message, not a 100 KB one.
pub(crate) const QUOTE_CHARS: usize = 80;

/// Unicode's `Default_Ignorable_Code_Point` property (DerivedCoreProperties.txt, Unicode 16):
/// characters that render as nothing, among them the zero-width space, joiners and marks
/// (U+200B–U+200F), the bidi controls, the word joiner and invisible operators
/// (U+2060–U+206F), variation selectors, the byte order mark and the tag characters.
pub(crate) fn default_ignorable(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}'..='\u{1160}' | '\u{17B4}'..='\u{17B5}'
        | '\u{180B}'..='\u{180F}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{206F}' | '\u{3164}' | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}' | '\u{FFA0}'
        | '\u{FFF0}'..='\u{FFF8}' | '\u{1BCA0}'..='\u{1BCA3}' | '\u{1D173}'..='\u{1D17A}'
        | '\u{E0000}'..='\u{E0FFF}')
}

/// Whether `c` is written as an escape when quoted: control characters (C0, DEL, C1), the line
/// and paragraph separators (U+2028, U+2029) and every default-ignorable code point.
fn hidden(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') || default_ignorable(c)
}

/// `s` with every control character, line/paragraph separator and default-ignorable code
/// point (zero-width characters, bidi controls, tag characters, …) written as a visible Rust-style
/// escape, `\u{200b}`; borrowed when there is none. Not cut to a length.
/// For showing text a peer chose (a client's name in a pairing prompt, a label) to a person as
/// what it is.
pub fn escape_invisible(s: &str) -> Cow<'_, str> {
    if !s.chars().any(hidden) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        push_visible(&mut out, c);
    }
    Cow::Owned(out)
}

fn push_visible(out: &mut String, c: char) {
    if hidden(c) {
        out.push_str(&format!("\\u{{{:04x}}}", c as u32));
    } else {
        out.push(c);
    }
}

/// `s` as an error message may quote it: hidden characters escaped as in
/// [`escape_invisible`], whole if that takes at most [`QUOTE_CHARS`] characters, else cut
/// before the first character (or escape) that would pass them, followed by `…`.
pub(crate) fn clip(s: &str) -> Cow<'_, str> {
    clip_to(s, QUOTE_CHARS)
}

/// Most characters of a validator's message about a peer's input (which may list the names
/// of unknown properties) an error echoes; see [`clip_to`].
pub(crate) const MESSAGE_CHARS: usize = 240;

/// [`clip`] with another bound: hidden characters escaped, cut before the first character (or
/// escape) that would pass `max_chars`, then `…`.
pub(crate) fn clip_to(s: &str, max_chars: usize) -> Cow<'_, str> {
    let plain = !s.chars().any(hidden);
    if plain && s.char_indices().nth(max_chars).is_none() {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(max_chars.min(s.len()) + 8);
    let mut kept = 0;
    let mut piece = String::new();
    for c in s.chars() {
        piece.clear();
        push_visible(&mut piece, c);
        let n = piece.chars().count();
        if kept + n > max_chars {
            out.push('…');
            return Cow::Owned(out);
        }
        out.push_str(&piece);
        kept += n;
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_input_is_quoted_whole_long_input_is_cut() {
        assert_eq!(clip("w-A__focus"), "w-A__focus");
        assert!(matches!(clip("Grüße"), Cow::Borrowed(_)));
        let long = "é".repeat(100_000);
        let quoted = clip(&long);
        assert_eq!(quoted.chars().count(), QUOTE_CHARS + 1);
        assert!(quoted.ends_with('…'));
    }

    // Invisible and control characters are shown, never passed on: a quoted name cannot pass
    // for another (`Clau\u{200b}de`), reorder the text after it, or move a terminal's cursor.
    #[test]
    fn hidden_characters_are_escaped_visibly() {
        assert_eq!(clip("Clau\u{200B}de"), "Clau\\u{200b}de");
        assert_eq!(clip("a\u{202E}b\u{2066}c"), "a\\u{202e}b\\u{2066}c");
        assert_eq!(clip("x\u{1b}[2Jy\n"), "x\\u{001b}[2Jy\\u{000a}");
        assert_eq!(clip("t\u{E0041}\u{FEFF}\u{2028}"), "t\\u{e0041}\\u{feff}\\u{2028}");
        assert_eq!(escape_invisible("Clau\u{200B}de\u{7f}"), "Clau\\u{200b}de\\u{007f}");
        assert!(matches!(escape_invisible("Claude"), Cow::Borrowed(_)));
        // The cap counts escapes as written, and never cuts one in half.
        let zw = "\u{200B}".repeat(1_000);
        let quoted = clip(&zw);
        assert!(quoted.chars().count() <= QUOTE_CHARS + 1, "{quoted}");
        assert!(quoted.ends_with("\\u{200b}…"), "{quoted}");
    }
}
