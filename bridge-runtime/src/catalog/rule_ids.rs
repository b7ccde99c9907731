//! Requirement IDs out of text a model reads.
//!
//! The Rust docs of the wire types cite the spec rules they implement (`(GB-7.4-8)`,
//! `(CP-3-17; see OQ-CP-6)`); to a model such a citation is noise that costs tokens. The schemas
//! of every MCP tool ([`strip_schema`]: a window or app action's, when its spec is finished; a
//! `companion__…` tool's) and every tool description go through [`strip_rule_ids`]; the Rust
//! docs keep their citations, and so do the companion protocol's own surfaces (`rpc.discover`,
//! capability descriptors), which programs read.

use serde_json::{Map, Value};
use std::borrow::Cow;

/// [`strip_rule_ids`] on every `description` and `title` of `schema` and its subschemas.
pub(crate) fn strip_schema(schema: &mut Map<String, Value>) {
    for key in ["description", "title"] {
        if let Some(Value::String(text)) = schema.get_mut(key)
            && let Cow::Owned(stripped) = strip_rule_ids(text)
        {
            *text = stripped;
        }
    }
    super::schema::for_each_subschema(schema, &mut |child| {
        if let Value::Object(c) = child {
            strip_schema(c);
        }
    });
}

/// The spec documents whose rule IDs are stripped.
const PREFIXES: [&str; 4] = ["GB", "CP", "MA", "OQ"];

/// Most IDs removed from one text; a text with more keeps the rest (bounded work).
const MAX_REMOVED: usize = 64;

/// `s` without its requirement IDs (`GB-7.4-8`, `OQ-GB-18`, `GB-B-4`, `MA-13-2`): each ID goes
/// together with the `see ` before it and the list separator (`, `, `; `, ` and `) that joined
/// it to the text around it; a parenthesis left empty goes with the space before it, so
/// `"name (GB-7.3-1)."` becomes `"name."` and `"(one, CP-3-1)"` becomes `"(one)"`. Borrowed
/// when `s` cites nothing.
pub(crate) fn strip_rule_ids(s: &str) -> Cow<'_, str> {
    if find_id(s).is_none() {
        return Cow::Borrowed(s);
    }
    let mut out = s.to_owned();
    for _ in 0..MAX_REMOVED {
        let Some((start, end)) = find_id(&out) else { break };
        let (mut a, mut b) = (start, end);
        if out[..a].ends_with("see ") {
            a -= "see ".len();
        }
        let before = &out[..a];
        if let Some(sep) = [", ", "; ", " and "].into_iter().find(|sep| before.ends_with(sep)) {
            a -= sep.len();
        } else if let Some(sep) = [", ", "; ", " and "].into_iter().find(|sep| out[b..].starts_with(sep)) {
            b += sep.len();
        }
        if a == 0 {
            b += out[b..].len() - out[b..].trim_start().len();
        }
        out.replace_range(a..b, "");
        // An emptied parenthesis goes, with the white space before it.
        if out[..a].ends_with('(') && out[a..].starts_with(')') {
            let open = a - 1;
            let lead = out[..open].len() - out[..open].trim_end().len();
            out.replace_range(open - lead..a + 1, "");
        }
    }
    Cow::Owned(out)
}

/// Byte range of the first requirement ID in `s`: a prefix at a word start, an optional
/// letter group (`-GB`, `-B`), then one or more `-` + digits-and-dots groups (a trailing `.`
/// is sentence punctuation, not part of the ID), ending at a word end.
fn find_id(s: &str) -> Option<(usize, usize)> {
    let bytes = s.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut from = 0;
    while let Some(off) = s[from..].find('-') {
        let dash = from + off;
        from = dash + 1;
        let Some(start) = dash.checked_sub(2) else { continue };
        if !PREFIXES.iter().any(|p| p.as_bytes() == &bytes[start..dash]) || (start > 0 && word(bytes[start - 1])) {
            continue;
        }
        let mut i = dash;
        // Optional letter group: `OQ-GB-18`, `GB-B-4`.
        let letters = bytes[i + 1..].iter().take_while(|b| b.is_ascii_uppercase()).count();
        if letters > 0 && bytes.get(i + 1 + letters) == Some(&b'-') {
            i += 1 + letters;
        }
        let mut groups = 0;
        while bytes.get(i) == Some(&b'-') && bytes.get(i + 1).is_some_and(u8::is_ascii_digit) {
            i += 1;
            while bytes
                .get(i)
                .is_some_and(|b| b.is_ascii_digit() || *b == b'.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit))
            {
                i += 1;
            }
            groups += 1;
        }
        if groups == 0 || bytes.get(i).is_some_and(|b| word(*b)) {
            continue;
        }
        return Some((start, i));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::strip_rule_ids;

    #[test]
    fn citations_go_with_their_separators() {
        let cases = [
            ("the tool parameter's name (GB-7.3-1).", "the tool parameter's name."),
            (
                "Ids of the windows this call opened (GB-5.4-5); omitted when none.",
                "Ids of the windows this call opened; omitted when none.",
            ),
            ("why (CP-2-29, OQ-CP-4). Closed list.", "why. Closed list."),
            (
                "(the caller's choice or the user's current one, CP-3-1).",
                "(the caller's choice or the user's current one).",
            ),
            ("queueing included (CP-3-17); never moves\n(CP-3-18).", "queueing included; never moves."),
            ("optional (level inferred; see OQ-GB-18)", "optional (level inferred)"),
            ("GB-B-4 and GB-6-6 say so", "say so"),
            ("see MA-13-13 (see OQ-X-1)", ""),
        ];
        for (input, want) in cases {
            assert_eq!(strip_rule_ids(input), want, "{input:?}");
        }
    }

    #[test]
    fn other_text_is_borrowed_unchanged() {
        for s in ["The GB error code", "GB-x", "XGB-1", "GB-1a", "CP-", "a-b (GB)", "über-GB-1x", "€-1 ü-GB", ""] {
            assert!(matches!(strip_rule_ids(s), std::borrow::Cow::Borrowed(_)), "{s:?}");
        }
    }
}
