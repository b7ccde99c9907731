//! The rules: what combinations of keys, fields, parameters and types are allowed. Each error
//! points at the author's offending tokens and says how to fix it.

use crate::ast::{Action, Actions, Capabilities, Capability, CheckReturn, Derived, Input, Output, Param, Window};
use crate::attr::{DeriveKind, Kind, StrOrPath};
use crate::ctxt::Ctxt;
use crate::template::{self, Piece};
use crate::util::{self, type_text, unraw};
use bridge_rules::{MAX_TIMEOUT_CAP_MS, TimeoutBoundsProblem};
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
    if let Some(lt) = w.item.generics.lifetimes().next() {
        cx.error_spanned_by(
            &lt.lifetime,
            format!(
                "window `{}` cannot borrow (`{}`): the bridge owns a window while it is open, so a window type is \
                 `'static`; own the data instead (`String`, `Vec<T>`, `Arc<T>`)",
                w.item.ident, lt.lifetime
            ),
        );
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
        Kind::Table => {
            if let Some(row) = util::generic_of(ty, "Vec").filter(|row| util::is_std_type(row)) {
                cx.error_spanned_by(
                    row,
                    format!(
                        "a table's rows are structs of your own with #[derive(BridgeRow)], whose fields are the \
                         columns, not `{}`; for a list of plain values use #[bridge(list)]",
                        type_text(row)
                    ),
                );
            }
        }
        Kind::Fields if util::is_std_type(ty) => cx.error_spanned_by(
            ty,
            format!(
                "a `fields` block is a struct of your own with #[derive(BridgeFields)], whose fields are the items, \
                 not `{}`; for a plain value use #[bridge(text)] (Display) or #[bridge(custom)] (Serialize)",
                type_text(ty)
            ),
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
    if let Some(lt) = borrowed_lifetime(&actions.item.self_ty) {
        cx.error_spanned_by(
            &lt,
            format!(
                "an action set cannot borrow (`{lt}`): the bridge owns its windows and the app, so their types are \
                 `'static`; own the data instead (`String`, `Vec<T>`, `Arc<T>`)"
            ),
        );
    }
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
    if let Err(problem) = bridge_rules::check_action_name(&a.name) {
        let hint = if a.attrs.name.is_none() { "; set `name = \"…\"` in #[bridge_action]" } else { "" };
        cx.error_spanned_by(&a.name_tokens, format!("{}{hint}", problem.message(&a.name)));
    }
    if let (Some(_), Some(d)) = (&a.attrs.read_only, &a.attrs.destructive) {
        cx.error_spanned_by(d, "an action cannot be both `read_only` and `destructive` (GB-5.6-1)");
    }
    if a.attrs.user_only.is_some() {
        let hints = [&a.attrs.read_only, &a.attrs.destructive, &a.attrs.idempotent, &a.attrs.open_world];
        if let Some(hint) = hints.into_iter().flatten().next() {
            cx.error_spanned_by(
                hint,
                format!(
                    "`{hint}` tells agents how a tool behaves, but a `user_only` action is never a tool: remove \
                     `{hint}` or `user_only`"
                ),
            );
        }
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
    signature(cx, &ACTION, sig);
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
    params(cx, &ACTION, &a.inputs);
    if let Output::Result { err: Some(err), .. } = &a.output {
        plain_error_type(cx, err);
    }
    if let Output::Value(ty) | Output::Result { ok: Some(ty), .. } = &a.output
        && matches!(ty, Type::ImplTrait(_))
    {
        cx.error_spanned_by(ty, "an action cannot return `impl Trait`: name a type (Serialize + JsonSchema)");
    }
    if let Output::Value(ty) | Output::Result { ok: Some(ty), .. } = &a.output
        && let Some(wide) = wide_integer(ty)
    {
        cx.error_spanned_by(
            &wide,
            format!(
                "an action cannot return a `{wide}`: a value beyond 64 bits cannot be encoded as a JSON number, and \
                 the failure would come after the action ran. Return it as a `String` (e.g. `n.to_string()`), or \
                 as a `u64`/`i64` if it always fits"
            ),
        );
    }
}

/// The first 128-bit integer type named anywhere in `ty` (`u128`, `Vec<i128>`,
/// `Option<(String, NonZeroU128)>`): serde_json cannot encode such a value beyond 64 bits.
fn wide_integer(ty: &Type) -> Option<proc_macro2::Ident> {
    fn scan(tokens: proc_macro2::TokenStream) -> Option<proc_macro2::Ident> {
        const WIDE: &[&str] = &["u128", "i128", "NonZeroU128", "NonZeroI128"];
        tokens.into_iter().find_map(|tt| match tt {
            proc_macro2::TokenTree::Group(g) => scan(g.stream()),
            proc_macro2::TokenTree::Ident(i) if WIDE.iter().any(|w| i == w) => Some(i),
            _ => None,
        })
    }
    scan(ty.to_token_stream())
}

/// `Result<T, String>` and friends: types the author cannot give a `From` impl for
/// `ActionError` (both are foreign), so say what to return instead of rustc's missing `From`.
fn plain_error_type(cx: &Ctxt, err: &Type) {
    let text = match err {
        Type::Reference(r) if util::last_segment(&r.elem).is_some_and(|s| s.ident == "str") => Some("&str"),
        _ => util::last_segment(err).and_then(|s| match s.ident.to_string().as_str() {
            "String" => Some("String"),
            "Box" => Some("Box<dyn Error>"),
            _ => None,
        }),
    };
    if let Some(text) = text {
        cx.error_spanned_by(
            err,
            format!(
                "an action fails with an `ActionError`, not a `{text}`: return `Result<T, ActionError>` and write \
                 `ActionError::field(\"param\", why)` (validation_failed naming a parameter) or \
                 `ActionError::not_available(why)` (action_not_available)"
            ),
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Methods whose parameters become one JSON object: GUI actions and companion capabilities. One
// set of rules, each surface in its own words.

/// A surface whose methods take JSON parameters: the words its errors use, and the rules about
/// `ActionContext` and reserved names that only GUI actions have.
struct Surface {
    /// The method, as a subject: "an action cannot be generic".
    method: &'static str,
    /// The parameters' noun: "action parameters must be plain names".
    noun: &'static str,
    /// A plain parameter, as the example of one.
    example: &'static str,
    /// The one JSON object the parameters form.
    object: &'static str,
    /// Why that object cannot be anything but an object.
    object_is: &'static str,
    /// The error at an `async fn`.
    not_async: &'static str,
    /// The error at an `unsafe fn`.
    not_unsafe: &'static str,
    /// Whether the method takes an `&mut ActionContext`.
    contexts: Contexts,
    /// Parameter names the runtime reads itself, and why.
    reserved: &'static [&'static str],
    reserved_for: &'static str,
}

/// How many `&mut ActionContext` parameters a method takes.
enum Contexts {
    /// At most one; `ActionContext` taken any other way is a mistaken context.
    AtMostOne,
    /// None.
    None,
}

const ACTION: Surface = Surface {
    method: "an action",
    noun: "action",
    example: "recipient: String",
    object: "argument object",
    object_is: "MCP inputSchema root is type: object",
    not_async: "`async fn` is not supported for actions: actions run on the UI thread and must return once the \
                change has taken effect (GB-5.4-1)",
    not_unsafe: "an `unsafe fn` cannot be an action",
    contexts: Contexts::AtMostOne,
    reserved: &["expectedVersion", "expected_version"],
    reserved_for: "for optimistic concurrency (GB-5.5): the runtime checks `expectedVersion` before the action \
                   runs; rename the parameter",
};

const CAPABILITY: Surface = Surface {
    method: "a capability method",
    noun: "capability",
    example: "text: String",
    object: "params object",
    object_is: "the capability's inputSchema is type: object",
    not_async: "a capability's params check cannot be `async`",
    not_unsafe: "an `unsafe fn` cannot declare a capability",
    contexts: Contexts::None,
    reserved: &[],
    reserved_for: "",
};

/// What such a method cannot be: `async`, `unsafe`, generic (each parameter needs one fixed
/// JSON Schema).
fn signature(cx: &Ctxt, s: &Surface, sig: &syn::Signature) {
    if let Some(asyncness) = &sig.asyncness {
        cx.error_spanned_by(asyncness, s.not_async);
    }
    if let syn::Safety::Unsafe(u) = &sig.safety {
        cx.error_spanned_by(u, s.not_unsafe);
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        cx.error_spanned_by(
            &sig.generics,
            format!("{} cannot be generic: each parameter needs one fixed JSON Schema", s.method),
        );
    }
}

/// The parameters: plain names of owned, nameable types, each one property of the object, or
/// one `#[bridge(args)]` struct that is the whole object; the context where the surface has one.
fn params(cx: &Ctxt, s: &Surface, inputs: &[Input]) {
    let mut context_seen = false;
    let args = crate::ast::args_param(inputs);
    for input in inputs {
        let p = match (input, &s.contexts) {
            (Input::Context(arg), Contexts::AtMostOne) => {
                if context_seen {
                    cx.error_spanned_by(arg, "an action takes at most one `&mut ActionContext` parameter");
                }
                context_seen = true;
                continue;
            }
            (Input::Context(arg), Contexts::None) => {
                cx.error_spanned_by(
                    arg,
                    "`ActionContext` belongs to GUI actions; a capability's params check takes only its parameters",
                );
                continue;
            }
            (Input::Param(p), _) => p,
        };
        if matches!(s.contexts, Contexts::AtMostOne) && util::mentions_action_context(p.ty) {
            cx.error_spanned_by(
                p.ty,
                "the action context is passed by mutable reference: write `cx: &mut ActionContext` \
                 (it is not a JSON parameter)",
            );
            continue;
        }
        let Some(ident) = p.ident else {
            cx.error_spanned_by(
                &p.arg.pat,
                format!(
                    "{} parameters must be plain names like `{}`: the name is the JSON property",
                    s.noun, s.example
                ),
            );
            continue;
        };
        if s.reserved.contains(&p.name.as_str()) {
            cx.error_spanned_by(
                p.attrs.rename.as_ref().map_or_else(|| ident.to_token_stream(), ToTokens::to_token_stream),
                format!("parameter `{}` is reserved {}", p.name, s.reserved_for),
            );
        }
        match p.ty {
            Type::Reference(_) => cx.error_spanned_by(
                p.ty,
                format!(
                    "{} parameters are deserialized from JSON and must be owned types (`String`, not `&str`)",
                    s.noun
                ),
            ),
            Type::ImplTrait(_) => {
                cx.error_spanned_by(p.ty, format!("{} parameters cannot be `impl Trait`: name a type", s.noun))
            }
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
                    format!(
                        "`{ty}` cannot be the whole {object} ({object_is}): take it as one named parameter \
                         instead, `{name}: {ty}` without #[bridge(args)], or use a struct with \
                         #[derive(BridgeArgs)]",
                        ty = type_text(p.ty),
                        object = s.object,
                        object_is = s.object_is,
                        name = p.name
                    ),
                );
            }
        } else if let Some(args) = args {
            cx.error_spanned_by(
                ident,
                format!(
                    "with #[bridge(args)] on `{}`, its struct is the whole {}: move `{}` into that struct",
                    args.name, s.object, p.name
                ),
            );
        }
    }
    param_attrs(cx, crate::ast::params(inputs));
}

/// Rules on the parameters' `#[serde(…)]` / `#[schemars(…)]`, the same in window and companion
/// mode: they have no effect on the `#[bridge(args)]` parameter (its struct's own derives read
/// and describe the object), and renamed JSON names stay unique.
fn param_attrs<'p, 'a: 'p>(cx: &Ctxt, params: impl Iterator<Item = &'p Param<'a>>) {
    let mut names: HashMap<&str, &Param> = HashMap::new();
    for p in params {
        if p.attrs.args.is_some() {
            if let Some(attr) = p.attrs.schemars.first() {
                cx.error_spanned_by(
                    attr,
                    "#[schemars(…)] on the #[bridge(args)] parameter has no effect: the struct's own derive makes \
                     the schema, so put it on the struct or its fields",
                );
            }
            if let Some(span) = p.attrs.sensitive {
                cx.error_at(
                    span,
                    "`sensitive` on the #[bridge(args)] parameter has no effect: the struct's own derive makes the \
                     schema, so make its secret fields `Secret<…>`",
                );
            }
            if let Some(attr) = &p.attrs.serde {
                cx.error_spanned_by(
                    attr,
                    "#[serde(…)] on the #[bridge(args)] parameter has no effect: the struct's own derive reads \
                     the object, so put it on the struct or its fields",
                );
            }
            continue;
        }
        if p.ident.is_none() || p.name.is_empty() {
            continue;
        }
        match names.get(p.name.as_str()) {
            Some(first) => {
                let first = first.ident.map(unraw).unwrap_or_default();
                cx.error_spanned_by(
                    p.attrs.rename.as_ref().map_or_else(|| p.arg.pat.to_token_stream(), ToTokens::to_token_stream),
                    format!(
                        "duplicate parameter name `{}`: parameter `{first}` already has it (each parameter is one \
                         JSON property)",
                        p.name
                    ),
                );
            }
            None => {
                names.insert(p.name.as_str(), p);
            }
        }
    }
}

/// The first lifetime other than `'static` written in `ty` (`Editor<'a>`, `Editor<'_>`).
fn borrowed_lifetime(ty: &Type) -> Option<syn::Lifetime> {
    fn scan(tokens: proc_macro2::TokenStream) -> Option<syn::Lifetime> {
        let mut iter = tokens.into_iter().peekable();
        while let Some(tt) = iter.next() {
            match tt {
                proc_macro2::TokenTree::Group(g) => {
                    if let Some(lt) = scan(g.stream()) {
                        return Some(lt);
                    }
                }
                proc_macro2::TokenTree::Punct(p) if p.as_char() == '\'' => {
                    if let Some(proc_macro2::TokenTree::Ident(ident)) = iter.peek()
                        && ident != "static"
                    {
                        return Some(syn::Lifetime { apostrophe: p.span(), ident: ident.clone() });
                    }
                }
                _ => {}
            }
        }
        None
    }
    scan(ty.to_token_stream())
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
        if d.kind == DeriveKind::Fields
            && !f.skip()
            && let Some(reference) = util::reference_in(&f.field.ty).map(type_text)
        {
            cx.error_spanned_by(
                &f.field.ty,
                format!(
                    "field `{}` borrows (`{reference}`), but a `fields` item is set from JSON \
                     (`FieldSet::set_field`), so it owns its value: use `String` rather than `&str`, `Vec<T>` \
                     rather than `&[T]` (or `Cow<'_, T>`)",
                    f.key
                ),
            );
        }
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

// ---------------------------------------------------------------------------------------------
// #[bridge_actions(companion)]: what the runtime's `CapabilityBuilder::build` would reject,
// reported at compile time at the author's tokens.

pub(crate) fn capabilities(cx: &Ctxt, caps: &Capabilities) {
    let generics = &caps.item.generics;
    if !generics.params.is_empty() || generics.where_clause.is_some() {
        cx.error_spanned_by(
            generics,
            "a capability set cannot be generic: its declarations are registered once, as `'static` data",
        );
    }
    let mut ids: HashMap<String, &syn::Ident> = HashMap::new();
    for c in &caps.capabilities {
        capability(cx, c);
        let Some(lit) = &c.attrs.id else { continue };
        if let Some(first) = ids.get(&lit.value()) {
            cx.error_spanned_by(
                lit,
                format!(
                    "duplicate capability id `{}`: method `{first}` already declares it; capability ids are \
                     unique in the registry (CP-2-15)",
                    lit.value()
                ),
            );
        } else {
            ids.insert(lit.value(), &c.method.sig.ident);
        }
    }
}

fn capability(cx: &Ctxt, c: &Capability) {
    let a = &c.attrs;
    let sig = &c.method.sig;
    let id = c.id();
    let what = if id.is_empty() { format!("capability `{}`", sig.ident) } else { format!("capability `{id}`") };
    if !c.attrs_ok {
        // Its attribute is already reported; a key it lost would only be reported again as missing.
        method_shape(cx, c);
        return;
    }

    match &a.id {
        None => cx.error_spanned_by(
            c.attr,
            format!("{what} needs a stable id: `id = \"notice.show\"` (or `vendor.<reverse-domain>.<name>`, CP-2-27)"),
        ),
        Some(lit) => {
            if let Err(problem) = bridge_rules::check_capability_id(&lit.value()) {
                let why = problem.explanation();
                cx.error_spanned_by(lit, format!("capability id `{}` {why} (CP-2-27)", lit.value()));
            }
        }
    }
    match &a.version {
        None => cx.error_spanned_by(
            c.attr,
            format!("{what} needs a version: `version = \"0.1.0\"` (a semantic version, CP-2-15, CP-7-1)"),
        ),
        Some(lit) if !bridge_rules::is_semver(&lit.value()) => cx.error_spanned_by(
            lit,
            format!("version `{}` is not a semantic version (MAJOR.MINOR.PATCH, e.g. \"0.1.0\")", lit.value()),
        ),
        Some(_) => {}
    }
    match &c.description {
        Some(d) if !d.is_empty() => {}
        _ => cx.error_spanned_by(
            &sig.ident,
            format!("{what} needs a description: add a doc comment (`/// …`) or `description = \"…\"` (CP-2-15)"),
        ),
    }
    let Some(kind) = &a.kind else {
        cx.error_spanned_by(
            c.attr,
            format!(
                "{what} needs a category: `kind = \"animation\"|\"notice\"|\"progress\"|\"interaction\"` (CP-2-17)"
            ),
        );
        // The remaining key rules all depend on the kind.
        method_shape(cx, c);
        return;
    };
    let interaction = a.interaction.as_ref().map(|i| i.value);
    if let Err(problem) = bridge_rules::check_interaction(kind.value, interaction) {
        // A missing type is reported at the kind, a wrong one at its own literal.
        let at = match &a.interaction {
            Some(i) => &i.lit,
            None => &kind.lit,
        };
        cx.error_spanned_by(at, problem.explanation());
    }
    let completion = match &a.completion {
        Some(comp) => {
            if let Err(problem) = bridge_rules::check_completion(kind.value, comp.value) {
                cx.error_spanned_by(&comp.lit, problem.explanation());
            }
            comp.value
        }
        None => bridge_rules::default_completion(kind.value),
    };
    if let Some((ms, lit)) = &a.display_ms
        && let Err(problem) = bridge_rules::check_display_ms(completion, Some(*ms))
    {
        cx.error_spanned_by(lit, problem.explanation());
    }
    if let Some(q) = &a.queue
        && let Err(problem) = bridge_rules::check_queue_mode(kind.value, q.value)
    {
        cx.error_spanned_by(&q.lit, problem.explanation());
    }
    if let Some(scopes) = &a.scopes {
        if scopes.written == 0 {
            cx.error_spanned_by(&scopes.tokens, "`scopes` cannot be empty: a capability needs a scope (CP-5-6)");
        }
        let mut seen: Vec<&str> = Vec::new();
        for s in &scopes.items {
            if seen.contains(&s.value) {
                cx.error_spanned_by(&s.lit, format!("duplicate scope \"{}\"", s.value));
            }
            seen.push(s.value);
        }
    }
    if let Some(t) = &a.timeout_ms {
        match (&t.min, &t.max) {
            (Some((min, min_lit)), Some((max, max_lit))) => match bridge_rules::check_timeout_bounds(*min, *max) {
                Ok(()) => {}
                Err(TimeoutBoundsProblem::ZeroMin) => {
                    cx.error_spanned_by(min_lit, "`timeout_ms(min = …)` must be at least 1")
                }
                Err(TimeoutBoundsProblem::MinAboveMax) => {
                    cx.error_spanned_by(max_lit, format!("`timeout_ms(max = {max})` is below `min = {min}`"))
                }
                Err(TimeoutBoundsProblem::AboveCap) => cx.error_spanned_by(
                    max_lit,
                    format!("`timeout_ms(max = …)` is at most {MAX_TIMEOUT_CAP_MS} (24 h, CP-4-12)"),
                ),
            },
            _ => cx.error_spanned_by(
                &t.key,
                "`timeout_ms` needs both bounds: `timeout_ms(min = 1000, max = 60000)` (milliseconds)",
            ),
        }
    }
    updatable(cx, c);
    if let Some(fb) = &a.fallback {
        fallback(cx, fb, &id);
    }
    if let Some(ty) = &a.output
        && !is_object_like(ty)
    {
        cx.error_spanned_by(
            ty,
            "the business result must be an object (the capability's outputSchema is type: object): use a struct, \
             e.g. `struct Answer { text: String }` (OQ-CP-18)",
        );
    }
    if let (Some(path), None) = (&a.check_result, &a.output) {
        cx.error_spanned_by(
            path,
            "`check_result` checks a business result, so it needs `output = Type` (the result's schema)",
        );
    }
    method_shape(cx, c);
}

/// `updatable = [...]` names top-level params (CP-2-11); checked here when they are plain
/// parameters, by `build()` when they are the fields of a `#[bridge(args)]` struct.
fn updatable(cx: &Ctxt, c: &Capability) {
    let Some(list) = &c.attrs.updatable else { return };
    let plain: Vec<&str> = c.params().filter(|p| p.attrs.args.is_none()).map(|p| p.name.as_str()).collect();
    let by_struct = c.args_param().is_some();
    let mut seen: Vec<String> = Vec::new();
    for lit in &list.items {
        let name = lit.value();
        if seen.contains(&name) {
            cx.error_spanned_by(lit, format!("duplicate updatable field `{name}`"));
        } else if !by_struct && !plain.contains(&name.as_str()) {
            let known = if plain.is_empty() {
                "it takes no parameters".to_owned()
            } else {
                format!("its parameters: {}", plain.iter().map(|p| format!("`{p}`")).collect::<Vec<_>>().join(", "))
            };
            cx.error_spanned_by(
                lit,
                format!(
                    "updatable field `{name}` is not a parameter of `{}`; `updatable` names the top-level input \
                     properties that requests.update may change (CP-2-11), {known}",
                    c.method.sig.ident
                ),
            );
        }
        seen.push(name);
    }
}

fn fallback(cx: &Ctxt, fb: &crate::attr::FallbackAttrs, id: &str) {
    match &fb.capability {
        None => cx
            .error_spanned_by(&fb.key, "`fallback` needs the alternative: `fallback(capability = \"notice.show\", …)`"),
        Some(lit) => {
            if let Err(problem) = bridge_rules::check_capability_id(&lit.value()) {
                let why = problem.explanation();
                cx.error_spanned_by(lit, format!("capability id `{}` {why} (CP-2-27)", lit.value()));
            } else if let Err(problem) = bridge_rules::check_fallback_target(id, &lit.value()) {
                cx.error_spanned_by(lit, problem.explanation());
            }
        }
    }
    match &fb.when {
        None => cx.error_spanned_by(
            &fb.key,
            "`fallback` needs the situations it applies in: `when = [\"character_unsupported\", \"reduced_motion\"]` \
             (CP-2-29)",
        ),
        Some(when) => {
            if let Err(problem) = bridge_rules::check_fallback_situation_count(when.written) {
                cx.error_spanned_by(&when.tokens, problem.explanation());
            }
            let mut seen: Vec<&str> = Vec::new();
            for w in &when.items {
                if let Err(problem) = bridge_rules::check_fallback_situation(w.value) {
                    cx.error_spanned_by(&w.lit, problem.explanation());
                } else if seen.contains(&w.value) {
                    cx.error_spanned_by(&w.lit, format!("duplicate situation \"{}\"", w.value));
                }
                seen.push(w.value);
            }
        }
    }
}

/// The method is a receiver-less declaration: parameters = `inputSchema`, body = semantic check.
fn method_shape(cx: &Ctxt, c: &Capability) {
    let sig = &c.method.sig;
    if let Some(r) = c.receiver {
        cx.error_spanned_by(
            r,
            "a capability method takes no `self`: it declares the capability, and its body is the semantic check \
             of the request params (CP-2-25), which runs without any instance",
        );
    }
    signature(cx, &CAPABILITY, sig);
    params(cx, &CAPABILITY, &c.inputs);
    match c.returns {
        CheckReturn::Unit if !c.method.block.stmts.is_empty() => cx.error_spanned_by(
            &c.method.block,
            "this body never runs: a capability method returning `()` declares no semantic check; leave the \
             body empty (`{}`) or return `Result<(), ActionError>` to check the params (CP-2-25)",
        ),
        CheckReturn::Other(ty) => cx.error_spanned_by(
            ty,
            "a capability method is its params check: return `()` (no check) or `Result<(), ActionError>`; \
             declare the business result with `output = Type`",
        ),
        _ => {}
    }
}

#[cfg(test)]
mod tests;
