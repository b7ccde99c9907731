//! Small helpers shared by the stages: names and syntactic type shapes.

use proc_macro2::Span;
use quote::ToTokens as _;
use syn::ext::IdentExt as _;
use syn::{GenericArgument, Ident, Index, Member, PathArguments, PathSegment, Type};

/// The identifier as the author wrote it, without `r#`.
pub(crate) fn unraw(ident: &Ident) -> String {
    ident.unraw().to_string()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn humanizes() {
        assert_eq!(humanize_type("OrderEditor"), "Order editor");
        assert_eq!(humanize_type("HTTPSettings"), "HTTP settings");
        assert_eq!(humanize_type("Window2Pane"), "Window2 pane");
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
}
