//! Small helpers shared by the stages: names and syntactic type shapes.

use proc_macro2::Span;
use syn::ext::IdentExt as _;
use syn::{GenericArgument, Ident, Index, Member, PathArguments, PathSegment, Type};

/// The identifier as the author wrote it, without `r#`.
pub(crate) fn unraw(ident: &Ident) -> String {
    ident.unraw().to_string()
}

/// `report_rows` → `Report rows` (the runtime's `gui::humanize`, at compile time).
pub(crate) fn humanize(name: &str) -> String {
    let spaced = name.replace(['_', '-'], " ");
    let mut c = spaced.trim().chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// `OrderEditor` → `Order editor`, `HTTPSettings` → `HTTP settings`.
pub(crate) fn humanize_type(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    for (i, &c) in chars.iter().enumerate() {
        let boundary = i > 0
            && c.is_uppercase()
            && (chars[i - 1].is_lowercase()
                || chars[i - 1].is_ascii_digit()
                || chars.get(i + 1).is_some_and(|n| n.is_lowercase()) && chars[i - 1].is_uppercase());
        if (boundary || c == '_') && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        if c != '_' {
            word.push(c);
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let acronym = w.chars().count() > 1 && w.chars().all(|c| !c.is_lowercase());
            if i == 0 || acronym { w.clone() } else { w.to_lowercase() }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A field-access member from a summary path segment: `0` → `.0`, `type` → `.r#type`.
/// `None` when the text cannot name a field.
pub(crate) fn member(seg: &str, span: Span) -> Option<Member> {
    if !seg.is_empty() && seg.bytes().all(|b| b.is_ascii_digit()) {
        return seg.parse::<u32>().ok().map(|index| Member::Unnamed(Index { index, span }));
    }
    let mut ident = syn::parse_str::<Ident>(seg).or_else(|_| syn::parse_str::<Ident>(&format!("r#{seg}"))).ok()?;
    ident.set_span(span);
    Some(Member::Named(ident))
}

/// The last path segment of a plain path type (`a::b::Vec<T>` → `Vec<T>`), through parentheses.
pub(crate) fn last_segment(ty: &Type) -> Option<&PathSegment> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last(),
        Type::Paren(p) => last_segment(&p.elem),
        Type::Group(g) => last_segment(&g.elem),
        _ => None,
    }
}

/// The type arguments of a segment, in order (`Result<T, E>` → `[T, E]`).
pub(crate) fn type_args(seg: &PathSegment) -> Vec<&Type> {
    match &seg.arguments {
        PathArguments::AngleBracketed(a) => a
            .args
            .iter()
            .filter_map(|arg| match arg {
                GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// `T` when `ty` is `…::Name<T>`.
pub(crate) fn generic_of<'a>(ty: &'a Type, name: &str) -> Option<&'a Type> {
    let seg = last_segment(ty)?;
    if seg.ident != name {
        return None;
    }
    match type_args(seg).as_slice() {
        [t] => Some(t),
        _ => None,
    }
}

/// Whether `ty` is the unit type `()`.
pub(crate) fn is_unit(ty: &Type) -> bool {
    match ty {
        Type::Tuple(t) => t.elems.is_empty(),
        Type::Paren(p) => is_unit(&p.elem),
        Type::Group(g) => is_unit(&g.elem),
        _ => false,
    }
}

/// Whether `ty` is `&mut …::ActionContext<…>`.
pub(crate) fn is_action_context(ty: &Type) -> bool {
    match ty {
        Type::Reference(r) if r.mutability.is_some() => {
            last_segment(&r.elem).is_some_and(|s| s.ident == "ActionContext")
        }
        Type::Paren(p) => is_action_context(&p.elem),
        Type::Group(g) => is_action_context(&g.elem),
        _ => false,
    }
}

/// Whether an action name is `[A-Za-z0-9_-]{1,48}` (GB-5.2-2; 14-char window handle + `__` +
/// 48 = 64, MCP's tool-name limit).
pub(crate) fn is_valid_action_name(name: &str) -> bool {
    (1..=48).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn humanizes() {
        assert_eq!(humanize("report_rows"), "Report rows");
        assert_eq!(humanize_type("OrderEditor"), "Order editor");
        assert_eq!(humanize_type("HTTPSettings"), "HTTP settings");
        assert_eq!(humanize_type("Window2Pane"), "Window2 pane");
        assert!(is_valid_action_name("edit_field-2"));
        assert!(!is_valid_action_name("edit field"));
        assert!(!is_valid_action_name(&"a".repeat(49)));
    }
}
