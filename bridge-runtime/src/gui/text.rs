//! Text the window model writes: tool titles and descriptions (GB-5.2-3), and the one-line
//! form of window titles and summaries (GB-4.2-5, GB-4.2-9).

use crate::catalog::ActionSpec;
use crate::gui::window::Rendered;
use std::borrow::Cow;

// `edit_field` → `Edit field`: the rule the macros use for default labels, too.
use bridge_rules::humanize;

/// A tool's human-readable title: `Edit field · Order Editor (window w-A)` for a window's
/// (`window` = its title and id), `Edit field · app` for an app-level one (GB-5.2-3).
pub(crate) fn tool_title(action: &ActionSpec, window: Option<(&str, &str)>) -> String {
    let name = action.title.clone().unwrap_or_else(|| humanize(&action.name));
    match window {
        Some((title, id)) => format!("{name} · {title} (window {id})"),
        None => format!("{name} · app"),
    }
}

/// A tool's description: the action's doc comment (else its humanized name) plus which window
/// it acts on (GB-5.2-3).
pub(crate) fn tool_description(action: &ActionSpec, window: Option<(&str, &str)>) -> String {
    let base = if action.description.is_empty() { humanize(&action.name) } else { action.description.clone() };
    match window {
        Some((title, id)) => format!("{base}\n\nActs on the \"{title}\" window (id {id})."),
        None => format!("{base}\n\nApp-level action."),
    }
}

/// A window's `title` and `summary` stay one line whatever the app's data holds (GB-4.2-5,
/// GB-4.2-9). Each run of line breaks and other control characters becomes one space, and bidi
/// embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069) are removed, so a title
/// cannot reorder the text around it. Blocks are data and stay as they are.
pub(crate) fn one_line_title_and_summary(mut r: Rendered) -> Rendered {
    if let Cow::Owned(t) = one_line(&r.title) {
        r.title = t;
    }
    if let Some(s) = &r.summary
        && let Cow::Owned(t) = one_line(s)
    {
        r.summary = Some(t);
    }
    r
}

/// `s` as one line (see [`one_line_title_and_summary`]); borrowed when nothing changes.
fn one_line(s: &str) -> Cow<'_, str> {
    let bidi = |c: char| matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}');
    let breaks = |c: char| c.is_control() || matches!(c, '\u{2028}' | '\u{2029}');
    // Printable ASCII (the common case) needs no character decoding.
    if s.bytes().all(|b| (0x20..0x7f).contains(&b)) || !s.chars().any(|c| bidi(c) || breaks(c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut in_break = false;
    for c in s.chars() {
        if bidi(c) {
            continue;
        }
        if breaks(c) {
            in_break = true;
            continue;
        }
        if in_break && !out.is_empty() && !out.ends_with(' ') && c != ' ' {
            out.push(' ');
        }
        in_break = false;
        out.push(c);
    }
    Cow::Owned(out)
}
