//! Small helpers shared by the stages: names and syntactic type shapes.

use proc_macro2::Span;
use quote::ToTokens as _;
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

/// `ChooseParams` → `choose_params`, `HTTPSettings` → `http_settings` (a parameter name to
/// suggest for a type).
pub(crate) fn snake_case(name: &str) -> String {
    humanize_type(name).to_lowercase().replace(' ', "_")
}

/// Whether `ty` is written as a type of std or serde_json, which no author can derive on: a
/// primitive, `String`, `str`, `Option`, a std collection, `Cow`, `serde_json::Value`/`Map`/
/// `Number`, a tuple, array or slice, or a reference to one of these.
pub(crate) fn is_std_type(ty: &Type) -> bool {
    const STD: &[&str] = &[
        "u8",
        "u16",
        "u32",
        "u64",
        "u128",
        "usize",
        "i8",
        "i16",
        "i32",
        "i64",
        "i128",
        "isize",
        "f32",
        "f64",
        "bool",
        "char",
        "str",
        "String",
        "Option",
        "Vec",
        "VecDeque",
        "LinkedList",
        "BinaryHeap",
        "HashMap",
        "BTreeMap",
        "HashSet",
        "BTreeSet",
        "Cow",
    ];
    const SERDE_JSON: &[&str] = &["Value", "Map", "Number"];
    match ty {
        Type::Path(p) if p.qself.is_none() => {
            let segments = &p.path.segments;
            let Some(last) = segments.last() else { return false };
            STD.iter().any(|n| last.ident == n)
                || (segments.iter().any(|s| s.ident == "serde_json") && SERDE_JSON.iter().any(|n| last.ident == n))
        }
        Type::Tuple(_) | Type::Array(_) | Type::Slice(_) => true,
        Type::Reference(r) => is_std_type(&r.elem),
        Type::Paren(p) => is_std_type(&p.elem),
        Type::Group(g) => is_std_type(&g.elem),
        _ => false,
    }
}

/// Whether `ty` names `ident` anywhere (`T`, `Vec<T>`, `[u8; N]`).
pub(crate) fn mentions(ty: &Type, ident: &Ident) -> bool {
    fn scan(tokens: proc_macro2::TokenStream, ident: &Ident) -> bool {
        tokens.into_iter().any(|tt| match tt {
            proc_macro2::TokenTree::Ident(i) => i == *ident,
            proc_macro2::TokenTree::Group(g) => scan(g.stream(), ident),
            _ => false,
        })
    }
    scan(ty.to_token_stream(), ident)
}

/// The first reference written in `ty` (`&'a str` in `Option<&'a str>`).
pub(crate) fn reference_in(ty: &Type) -> Option<&Type> {
    match ty {
        Type::Reference(_) => Some(ty),
        Type::Paren(p) => reference_in(&p.elem),
        Type::Group(g) => reference_in(&g.elem),
        Type::Array(a) => reference_in(&a.elem),
        Type::Slice(s) => reference_in(&s.elem),
        Type::Tuple(t) => t.elems.iter().find_map(reference_in),
        Type::Path(p) => p.path.segments.iter().flat_map(type_args).find_map(reference_in),
        _ => None,
    }
}

/// `ty` as the author would write it (`Vec<String>`, not `Vec < String >`), for messages.
pub(crate) fn type_text(ty: &Type) -> String {
    ty.to_token_stream()
        .to_string()
        .replace(" < ", "<")
        .replace("< ", "<")
        .replace(" >", ">")
        .replace(" ,", ",")
        .replace("& ", "&")
        .replace(" :: ", "::")
        .replace(":: ", "::")
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

/// Whether `ty` names `ActionContext` in any other form (`ActionContext`, `&ActionContext`,
/// `Box<ActionContext>`…): a context taken the wrong way, not a JSON parameter.
pub(crate) fn mentions_action_context(ty: &Type) -> bool {
    match ty {
        Type::Reference(r) => mentions_action_context(&r.elem),
        Type::Paren(p) => mentions_action_context(&p.elem),
        Type::Group(g) => mentions_action_context(&g.elem),
        _ => last_segment(ty).is_some_and(|s| s.ident == "ActionContext"),
    }
}

/// Whether an action name is `[A-Za-z0-9_-]{1,48}` (GB-5.2-2; 14-char window handle + `__` +
/// 48 = 64, MCP's tool-name limit).
pub(crate) fn is_valid_action_name(name: &str) -> bool {
    (1..=48).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The runtime's capability id rule at compile time (`catalog::capability::validate_capability_id`,
/// CP-2-27): `[a-z][a-z0-9_]*(\.[a-z0-9_]+)+`, at most 128 bytes; `vendor.` ids read
/// `vendor.<reverse-domain>.<name>` with at least two domain labels. `Err` says what is wrong.
pub(crate) fn check_capability_id(id: &str) -> Result<(), &'static str> {
    let segments: Vec<&str> = id.split('.').collect();
    let word = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if id.len() > 128 {
        Err("is longer than 128 bytes")
    } else if segments.len() < 2 {
        Err("needs at least two dot-separated segments, e.g. `notice.show`")
    } else if !segments[0].starts_with(|c: char| c.is_ascii_lowercase()) || !segments.iter().all(|s| word(s)) {
        Err("must match [a-z][a-z0-9_]*(\\.[a-z0-9_]+)+ (lowercase letters, digits, `_`, dot-separated)")
    } else if segments[0] == "vendor" && segments.len() < 4 {
        Err("is a vendor id and must read vendor.<reverse-domain>.<name> with at least two domain labels, \
             e.g. `vendor.com.example.wave`")
    } else {
        Ok(())
    }
}

/// Whether `v` is a semantic version (semver 2.0.0, as the `semver` crate the runtime uses
/// parses it): `MAJOR.MINOR.PATCH`, no leading zeros, optional `-pre.release` and `+build`.
pub(crate) fn is_semver(v: &str) -> bool {
    let (rest, build) = match v.split_once('+') {
        Some((r, b)) => (r, Some(b)),
        None => (v, None),
    };
    let (core, pre) = match rest.split_once('-') {
        Some((c, p)) => (c, Some(p)),
        None => (rest, None),
    };
    let numeric = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'));
    let ident = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts.iter().all(|p| numeric(p) && p.parse::<u64>().is_ok())
        && pre.is_none_or(|p| {
            p.split('.').all(|id| ident(id) && (!id.bytes().all(|b| b.is_ascii_digit()) || numeric(id)))
        })
        && build.is_none_or(|b| b.split('.').all(ident))
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
        assert_eq!(snake_case("ChooseParams"), "choose_params");
        assert_eq!(snake_case("HTTPSettings"), "http_settings");
        assert_eq!(snake_case("Shape"), "shape");
    }

    #[test]
    fn std_types() {
        let ty = |s: &str| syn::parse_str::<Type>(s).ok();
        for std in [
            "String",
            "&'static str",
            "u32",
            "Option<Row>",
            "Vec<u8>",
            "(String, u32)",
            "[u8; 4]",
            "std::collections::HashMap<String, String>",
            "serde_json::Value",
            "::serde_json::Map<String, V>",
        ] {
            assert!(ty(std).is_some_and(|t| is_std_type(&t)), "{std}");
        }
        for own in ["Row", "crate::Row", "Value", "Box<Row>", "T"] {
            assert!(ty(own).is_some_and(|t| !is_std_type(&t)), "{own}");
        }
        for (written, shown) in [
            ("Vec < String >", "Vec<String>"),
            ("std :: collections :: HashMap<String , u32>", "std::collections::HashMap<String, u32>"),
            ("& 'static str", "&'static str"),
        ] {
            assert_eq!(ty(written).map(|t| type_text(&t)).as_deref(), Some(shown));
        }
        let reference = ty("Option<Vec<&'a str>>");
        let found = reference.as_ref().and_then(reference_in).map(type_text);
        assert_eq!(found.as_deref(), Some("&'a str"));
        assert!(ty("Cow<'a, str>").as_ref().and_then(reference_in).is_none());
    }

    #[test]
    fn capability_ids() {
        assert!(check_capability_id("notice.show").is_ok());
        assert!(check_capability_id("vendor.com.example.wave").is_ok());
        assert!(check_capability_id("a1.b_2.c").is_ok());
        assert!(check_capability_id("vendor.example.wave").is_err());
        assert!(check_capability_id("notice").is_err());
        assert!(check_capability_id("Notice.show").is_err());
        assert!(check_capability_id("1notice.show").is_err());
        assert!(check_capability_id("notice..show").is_err());
        assert!(check_capability_id("notice.show-x").is_err());
        assert!(check_capability_id(&format!("a.{}", "b".repeat(127))).is_err());
    }

    #[test]
    fn semver() {
        for ok in ["0.1.0", "1.2.3", "10.20.30", "1.0.0-alpha.1", "1.0.0-0.3.7", "1.0.0+build.5", "1.0.0-rc-1+x"] {
            assert!(is_semver(ok), "{ok}");
        }
        for bad in ["0.1", "1", "01.0.0", "1.0.0-", "1.0.0-01", "1.0.0+", "v1.0.0", "1.0.0-a..b", "1.0.x", ""] {
            assert!(!is_semver(bad), "{bad}");
        }
    }
}
