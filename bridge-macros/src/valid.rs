//! The rules: what combinations of keys, fields, parameters and types are allowed. Each error
//! points at the author's offending tokens and says how to fix it.

use crate::ast::{Action, Actions, Derived, Input, Output, Window};
use crate::attr::{Kind, StrOrPath};
use crate::ctxt::Ctxt;
use crate::template::{self, Piece};
use crate::util;
use proc_macro2::Span;
use quote::ToTokens;
use std::collections::HashMap;
use syn::{ReceiverKind, Type};

// ---------------------------------------------------------------------------------------------
// #[bridge_window]

pub(crate) fn window(cx: &Ctxt, w: &Window) {
    match &w.title {
        None => cx.error_at(
            Span::call_site(),
            "#[bridge_window] needs a title: #[bridge_window(title = \"Order Editor\")] or `title = method_name`",
        ),
        Some(StrOrPath::Lit(lit)) if lit.value().trim().is_empty() => {
            cx.error_spanned_by(lit, "the window title cannot be empty (GB-4.2-5)")
        }
        Some(_) => {}
    }
    for f in &w.fields {
        field(cx, f);
    }
    duplicate_ids(cx, w);
    if let Some(StrOrPath::Lit(lit)) = &w.summary {
        summary(cx, w, lit);
    }
}

fn field(cx: &Ctxt, f: &crate::ast::WindowField) {
    let a = &f.attrs;
    if !a.present {
        cx.error_spanned_by(
            f.ident,
            format!(
                "field `{}` is not declared: add #[bridge(text|fields|table|list|notice|media|custom)] or #[bridge(skip)]",
                f.name
            ),
        );
        return;
    }
    if !f.attrs_ok {
        return;
    }
    if let Some(skip) = &a.skip {
        if a.kind.is_some()
            || a.id.is_some()
            || a.label.is_some()
            || a.sensitive.is_some()
            || a.max_rows.is_some()
            || a.ordered.is_some()
            || a.severity.is_some()
        {
            cx.error_spanned_by(skip, "`skip` takes no other keys: the field is not shown at all");
        }
        return;
    }
    let Some((kind, _)) = &a.kind else {
        cx.error_spanned_by(
            &a.attr_tokens,
            format!(
                "field `{}` needs a block kind: one of text, fields, table, list, notice, media, custom (or skip)",
                f.name
            ),
        );
        return;
    };
    let kind = *kind;
    if let Some(s) = &a.sensitive
        && kind != Kind::Fields
    {
        cx.error_spanned_by(
            s,
            "`sensitive` can only be set on a `fields` block (GB-4.5, OQ-GB-10); wrap the value in `Secret<T>` \
             or use a BridgeFields struct with #[bridge(sensitive)]",
        );
    }
    if let Some((_, lit)) = &a.max_rows
        && !matches!(kind, Kind::Table | Kind::List)
    {
        cx.error_spanned_by(lit, "`max_rows` applies only to `table` and `list` blocks");
    }
    if let Some(o) = &a.ordered
        && kind != Kind::List
    {
        cx.error_spanned_by(o, "`ordered` applies only to `list` blocks");
    }
    if let Some((_, lit)) = &a.severity
        && kind != Kind::Notice
    {
        cx.error_spanned_by(lit, "`severity` applies only to `notice` blocks");
    }
    if let Some(id) = &a.id
        && id.value().trim().is_empty()
    {
        cx.error_spanned_by(id, "a block id cannot be empty");
    }
    let ty = &f.field.ty;
    match kind {
        Kind::Table if util::generic_of(ty, "Vec").is_none() => cx.error_spanned_by(
            ty,
            "`table` needs a `Vec<Row>` field, where Row has #[derive(BridgeRow)] (or implements TableRow)",
        ),
        Kind::List if util::generic_of(ty, "Vec").is_none() && !matches!(ty, Type::Array(_)) => {
            cx.error_spanned_by(ty, "`list` needs a `Vec<T>` field (T: Serialize)")
        }
        _ => {}
    }
}

fn duplicate_ids(cx: &Ctxt, w: &Window) {
    let mut seen: HashMap<String, &str> = HashMap::new();
    for f in &w.fields {
        let Some(block) = f.block() else { continue };
        if let Some(first) = seen.get(&block.id) {
            cx.error_spanned_by(
                f.id_tokens(),
                format!(
                    "duplicate block id `{}`: field `{first}` already uses it; block ids are unique within a \
                     window (GB-10.3-1), set `id = \"…\"`",
                    block.id
                ),
            );
        } else {
            seen.insert(block.id, &f.name);
        }
    }
}

fn summary(cx: &Ctxt, w: &Window, lit: &syn::LitStr) {
    let pieces = match template::parse(&lit.value()) {
        Ok(p) => p,
        Err(e) => return cx.error_spanned_by(lit, e),
    };
    for piece in &pieces {
        let Piece::Hole { path, source, .. } = piece else {
            continue;
        };
        if path.iter().any(|seg| util::member(seg, lit.span()).is_none()) {
            cx.error_spanned_by(lit, format!("summary placeholder `{source}` is not a field path"));
            continue;
        }
        match w.field(&path[0]) {
            None => {
                let known: Vec<String> = w.fields.iter().map(|f| format!("`{}`", f.name)).collect();
                cx.error_spanned_by(
                    lit,
                    format!(
                        "summary placeholder `{source}` names no field of `{}`; fields: {}",
                        w.item.ident,
                        known.join(", ")
                    ),
                );
            }
            Some(f) if f.is_sensitive() => cx.error_spanned_by(
                lit,
                format!(
                    "summary placeholder `{source}` would leak `{}`, a sensitive `fields` block (GB-4.5-2): \
                     sensitive values never appear in the summary",
                    f.name
                ),
            ),
            Some(_) => {}
        }
    }
}

// ---------------------------------------------------------------------------------------------
// #[bridge_actions]

pub(crate) fn actions(cx: &Ctxt, actions: &Actions) {
    let mut names: HashMap<&str, &syn::Ident> = HashMap::new();
    for a in &actions.actions {
        action(cx, a);
        if let Some(first) = names.get(a.name.as_str()) {
            cx.error_spanned_by(
                &a.name_tokens,
                format!(
                    "duplicate action name `{}`: method `{first}` already uses it; action names are unique per impl \
                     (the tool is `{{winId}}__{}`)",
                    a.name, a.name
                ),
            );
        } else {
            names.insert(&a.name, &a.method.sig.ident);
        }
    }
}

fn action(cx: &Ctxt, a: &Action) {
    let sig = &a.method.sig;
    if !util::is_valid_action_name(&a.name) {
        let hint = if a.attrs.name.is_none() { "; set `name = \"…\"` in #[bridge_action]" } else { "" };
        let msg = if a.name.len() > 48 {
            format!(
                "action name `{}` is {} characters long; at most 48 are allowed, so that `{{winId}}__{{action}}` \
                 fits MCP's 64-character tool names{hint}",
                a.name,
                a.name.len()
            )
        } else {
            format!("action name `{}` must match ^[A-Za-z0-9_-]{{1,48}}$ (GB-5.2-2){hint}", a.name)
        };
        cx.error_spanned_by(&a.name_tokens, msg);
    }
    if let (Some(_), Some(d)) = (&a.attrs.read_only, &a.attrs.destructive) {
        cx.error_spanned_by(d, "an action cannot be both `read_only` and `destructive` (GB-5.6-1)");
    }
    match &a.description {
        Some(d) if !d.is_empty() => {}
        _ => cx.error_spanned_by(
            &sig.ident,
            format!("action `{}` needs a description: add a doc comment (`/// …`) or `description = \"…\"`", a.name),
        ),
    }
    if let Some(t) = &a.attrs.title
        && t.value().trim().is_empty()
    {
        cx.error_spanned_by(t, "an action title cannot be empty");
    }
    if let Some(asyncness) = &sig.asyncness {
        cx.error_spanned_by(
            asyncness,
            "`async fn` is not supported for actions: actions run on the UI thread and must return once the \
             change has taken effect (GB-5.4-1)",
        );
    }
    if let syn::Safety::Unsafe(u) = &sig.safety {
        cx.error_spanned_by(u, "an `unsafe fn` cannot be an action");
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        cx.error_spanned_by(&sig.generics, "an action cannot be generic: each parameter needs one fixed JSON Schema");
    }
    match a.receiver {
        None => cx.error_spanned_by(
            &sig.ident,
            "an action must be a method taking `&mut self` or `&self` (its window or app)",
        ),
        Some(r) if !matches!(r.kind, ReceiverKind::Reference(..)) => {
            cx.error_spanned_by(r, "an action must take `&mut self` or `&self`")
        }
        Some(_) => {}
    }
    inputs(cx, a);
    if let Output::Value(ty) | Output::Result { ok: Some(ty), .. } = &a.output
        && matches!(ty, Type::ImplTrait(_))
    {
        cx.error_spanned_by(ty, "an action cannot return `impl Trait`: name a type (Serialize + JsonSchema)");
    }
}

fn inputs(cx: &Ctxt, a: &Action) {
    let mut context_seen = false;
    let args = a.args_param();
    for input in &a.inputs {
        let p = match input {
            Input::Context(arg) => {
                if context_seen {
                    cx.error_spanned_by(arg, "an action takes at most one `&mut ActionContext` parameter");
                }
                context_seen = true;
                continue;
            }
            Input::Param(p) => p,
        };
        let Some(ident) = p.ident else {
            cx.error_spanned_by(
                &p.arg.pat,
                "action parameters must be plain names like `recipient: String`: the name is the JSON property",
            );
            continue;
        };
        if p.name == "expectedVersion" || p.name == "expected_version" {
            cx.error_spanned_by(
                ident,
                format!(
                    "parameter `{}` is reserved for optimistic concurrency (GB-5.5): the runtime checks \
                     `expectedVersion` before the action runs; rename the parameter",
                    p.name
                ),
            );
        }
        match p.ty {
            Type::Reference(_) => cx.error_spanned_by(
                p.ty,
                "action parameters are deserialized from JSON and must be owned types (`String`, not `&str`)",
            ),
            Type::ImplTrait(_) => cx.error_spanned_by(p.ty, "action parameters cannot be `impl Trait`: name a type"),
            _ => {}
        }
        if p.attrs.args.is_some() {
            if let Some(first) = args
                && !std::ptr::eq(first, p)
            {
                cx.error_spanned_by(&p.attrs.args, "only one parameter can be #[bridge(args)]");
            } else if !is_object_like(p.ty) {
                cx.error_spanned_by(
                    p.ty,
                    "the arguments root must be an object (MCP inputSchema root is type: object): use a struct",
                );
            }
        } else if let Some(args) = args {
            cx.error_spanned_by(
                ident,
                format!(
                    "with #[bridge(args)] on `{}`, its struct is the whole argument object: move `{}` into that struct",
                    args.name, p.name
                ),
            );
        }
    }
}

/// Rejects the types that can never have an object schema; anything else may be a struct.
fn is_object_like(ty: &Type) -> bool {
    const NOT_OBJECTS: &[&str] = &[
        "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize", "f32", "f64", "bool",
        "char", "String", "str", "Vec", "VecDeque", "HashSet", "BTreeSet", "Option",
    ];
    match ty {
        Type::Path(_) => util::last_segment(ty).is_none_or(|s| !NOT_OBJECTS.iter().any(|n| s.ident == n)),
        Type::Paren(p) => is_object_like(&p.elem),
        Type::Group(g) => is_object_like(&g.elem),
        _ => false,
    }
}

// ---------------------------------------------------------------------------------------------
// derives

pub(crate) fn derived(cx: &Ctxt, d: &Derived) {
    for f in &d.fields {
        if let Some(skip) = &f.attrs.skip
            && (f.attrs.label.is_some() || f.attrs.sensitive.is_some())
        {
            cx.error_spanned_by(skip, "`skip` takes no other keys: the field is left out");
        }
        if let Some(l) = &f.attrs.label
            && l.value().trim().is_empty()
        {
            cx.error_spanned_by(l, "a label cannot be empty");
        }
    }
    let mut seen: HashMap<String, &str> = HashMap::new();
    for f in d.fields.iter().filter(|f| !f.skip()) {
        let lower = f.label.to_ascii_lowercase();
        if let Some(first) = seen.get(&lower) {
            let tokens = f.attrs.label.as_ref().map_or_else(|| f.ident.to_token_stream(), ToTokens::to_token_stream);
            cx.error_spanned_by(tokens, format!("duplicate label `{}`: field `{first}` already uses it", f.label));
        } else {
            seen.insert(lower, &f.key);
        }
    }
}
