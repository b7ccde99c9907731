//! Attribute parsing: `#[bridge_window(…)]`, `#[bridge(…)]` on fields and parameters,
//! `#[bridge_action(…)]` (a GUI action, or a capability in companion mode), and the derives'
//! `#[bridge(…)]`. Simple per-key rules (value type, duplicates, unknown keys) live here; rules
//! across keys and fields live in `valid.rs`.
//!
//! Every mistake is reported into the [`Ctxt`] and parsing goes on, so one build shows them all.

use crate::ctxt::Ctxt;
use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::meta::ParseNestedMeta;
use syn::parse::Parser as _;
use syn::{Attribute, Expr, Ident, Lit, LitBool, LitInt, LitStr, Meta, Path, Token, Type};

pub(crate) const BLOCK_KINDS: &[&str] = &bridge_rules::BLOCK_KINDS;
const BLOCK_OPTIONS: &[&str] = &["id", "label", "sensitive", "max_rows", "ordered", "severity"];
const WINDOW_KEYS: &[&str] = &["title", "summary", "view", "shared_state", "undo", "user_only", "crate"];
const VIEW_KEYS: &[&str] = &["file", "connect_domains", "resource_domains", "frame_domains", "base_uri_domains"];
const ACTIONS_KEYS: &[&str] = &["companion", "crate"];
const ACTION_KEYS: &[&str] =
    &["name", "title", "description", "read_only", "destructive", "idempotent", "open_world", "available", "user_only"];
/// The GUI-only keys of `#[bridge_action(…)]` (everything but `description`).
const GUI_ONLY_KEYS: &[&str] =
    &["name", "title", "read_only", "destructive", "idempotent", "open_world", "available", "user_only"];
const CAPABILITY_KEYS: &[&str] = &[
    "id",
    "version",
    "description",
    "kind",
    "interaction",
    "completion",
    "scopes",
    "updatable",
    "cancelable",
    "cancel_behavior",
    "queue",
    "timeout_ms",
    "display_ms",
    "output",
    "check_result",
    "fallback",
];
const TIMEOUT_KEYS: &[&str] = &["min", "max"];
const FALLBACK_KEYS: &[&str] = &["capability", "when", "map"];
/// Capability categories (CP-2-17), interaction types (CP-2-18), completions (CP-2-15),
/// scopes (CP-5-6), cancel behaviours, queue modes (CP-4-10) and fallback situations (CP-2-29):
/// the runtime's closed lists, spelled as on the wire.
pub(crate) const CAPABILITY_KINDS: &[&str] = &bridge_rules::CAPABILITY_KINDS;
pub(crate) const INTERACTIONS: &[&str] = &bridge_rules::INTERACTIONS;
pub(crate) const COMPLETIONS: &[&str] = &bridge_rules::COMPLETIONS;
pub(crate) const SCOPES: &[&str] = &bridge_rules::SCOPES;
pub(crate) const CANCEL_BEHAVIORS: &[&str] = &bridge_rules::CANCEL_BEHAVIORS;
pub(crate) const QUEUE_MODES: &[&str] = &bridge_rules::QUEUE_MODES;
pub(crate) const FALLBACK_REASONS: &[&str] = &bridge_rules::FALLBACK_REASONS;
const PARAM_KEYS: &[&str] = &["args", "description", "sensitive"];
const FIELDSET_KEYS: &[&str] = &["label", "sensitive", "skip"];
const ROW_KEYS: &[&str] = &["label", "skip"];
const CONTAINER_KEYS: &[&str] = &["crate"];

/// A value set at most once, remembering where (serde's `Attr<T>`).
pub(crate) struct Attr<'c, T> {
    cx: &'c Ctxt,
    name: &'static str,
    value: Option<T>,
}

impl<'c, T> Attr<'c, T> {
    pub(crate) fn none(cx: &'c Ctxt, name: &'static str) -> Self {
        Attr { cx, name, value: None }
    }

    /// Sets the value; a second `set` is reported at `obj` as a duplicate.
    pub(crate) fn set<A: ToTokens>(&mut self, obj: A, value: T) {
        if self.value.is_some() {
            self.cx.error_spanned_by(obj, format!("duplicate key `{}`", self.name));
        } else {
            self.value = Some(value);
        }
    }

    pub(crate) fn get(self) -> Option<T> {
        self.value
    }
}

/// How an `id`, `title`, … key was written, for error spans.
fn key(meta: &ParseNestedMeta) -> String {
    meta.path.to_token_stream().to_string().replace(' ', "")
}

fn one_of(keys: &[&str]) -> String {
    keys.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
}

fn unknown_key(cx: &Ctxt, meta: &ParseNestedMeta, what: &str, known: &[&str]) -> syn::Result<()> {
    cx.syn_error(meta.error(format_args!("unknown key `{}` in {what}; expected one of: {}", key(meta), one_of(known))));
    skip_value(meta)
}

/// Consumes `= value` or `(…)` after an unknown key so the keys after it are still checked.
fn skip_value(meta: &ParseNestedMeta) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        meta.value()?.parse::<Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.input.parse::<proc_macro2::TokenTree>()?;
    }
    Ok(())
}

/// Consumes everything up to the next top-level `,` (a value whose shape is unknown here,
/// such as `output = Vec<T>`).
fn skip_to_comma(meta: &ParseNestedMeta) -> syn::Result<()> {
    while !meta.input.is_empty() && !meta.input.peek(Token![,]) {
        meta.input.parse::<proc_macro2::TokenTree>()?;
    }
    Ok(())
}

/// A flag key such as `read_only`: takes no value.
fn flag(meta: &ParseNestedMeta) -> syn::Result<Ident> {
    if meta.input.peek(Token![=]) || meta.input.peek(syn::token::Paren) {
        let k = key(meta);
        return Err(meta.error(format_args!("`{k}` is a flag and takes no value: write just `{k}`")));
    }
    meta.path.get_ident().cloned().ok_or_else(|| meta.error("expected an identifier"))
}

fn lit_str(meta: &ParseNestedMeta) -> syn::Result<LitStr> {
    let k = key(meta);
    let value = meta.value()?;
    match value.parse::<Expr>()? {
        Expr::Lit(syn::ExprLit { lit: Lit::Str(s), .. }) => Ok(s),
        other => Err(syn::Error::new_spanned(other, format!("`{k}` takes a string literal: `{k} = \"…\"`"))),
    }
}

/// `key = "literal"` or `key = path` (a method of the type).
pub(crate) enum StrOrPath {
    Lit(LitStr),
    Path(Path),
}

fn lit_or_path(meta: &ParseNestedMeta) -> syn::Result<StrOrPath> {
    let k = key(meta);
    let value = meta.value()?;
    match value.parse::<Expr>()? {
        Expr::Lit(syn::ExprLit { lit: Lit::Str(s), .. }) => Ok(StrOrPath::Lit(s)),
        Expr::Path(p) if p.qself.is_none() => Ok(StrOrPath::Path(p.path)),
        other => Err(syn::Error::new_spanned(
            other,
            format!("`{k}` takes a string literal or the name of a method: `{k} = \"…\"` or `{k} = my_method`"),
        )),
    }
}

fn path_value(meta: &ParseNestedMeta) -> syn::Result<Path> {
    let k = key(meta);
    let value = meta.value()?;
    match value.parse::<Expr>()? {
        Expr::Path(p) if p.qself.is_none() => Ok(p.path),
        Expr::Lit(syn::ExprLit { lit: Lit::Str(s), .. }) => s.parse::<Path>(),
        other => Err(syn::Error::new_spanned(other, format!("`{k}` takes a path: `{k} = my_fn`"))),
    }
}

fn parse_list(cx: &Ctxt, args: TokenStream, logic: impl FnMut(ParseNestedMeta) -> syn::Result<()>) {
    if let Err(e) = syn::meta::parser(logic).parse2(args) {
        cx.syn_error(e);
    }
}

fn parse_attr(cx: &Ctxt, attr: &Attribute, logic: impl FnMut(ParseNestedMeta) -> syn::Result<()>) {
    match &attr.meta {
        Meta::List(list) => parse_list(cx, list.tokens.clone(), logic),
        Meta::Path(p) => cx.error_spanned_by(attr, format!("expected `#[{}(…)]`", p.to_token_stream())),
        Meta::NameValue(nv) => cx.error_spanned_by(attr, format!("expected `#[{}(…)]`", nv.path.to_token_stream())),
    }
}

/// Whether `attr` is `#[bridge(…)]`.
pub(crate) fn is_bridge(attr: &Attribute) -> bool {
    attr.path().is_ident("bridge")
}

/// Whether `attr` is `#[schemars(…)]`.
pub(crate) fn is_schemars(attr: &Attribute) -> bool {
    attr.path().is_ident("schemars")
}

/// Whether `attr` is `#[serde(…)]`.
pub(crate) fn is_serde(attr: &Attribute) -> bool {
    attr.path().is_ident("serde")
}

/// Whether `attr` is `#[doc = "…"]` (a `///` comment).
pub(crate) fn is_doc(attr: &Attribute) -> bool {
    attr.path().is_ident("doc")
}

/// Whether `attr` is `#[bridge_action…]`, also written with a path (`bridge_runtime::bridge_action`).
pub(crate) fn is_bridge_action(attr: &Attribute) -> bool {
    attr.path().segments.last().is_some_and(|s| s.ident == "bridge_action")
}

/// The `///` doc comment of an item: lines joined, one leading space each removed, trimmed.
pub(crate) fn doc_comment(attrs: &[Attribute]) -> Option<String> {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| is_doc(a))
        .filter_map(|a| match &a.meta {
            Meta::NameValue(nv) => match &nv.value {
                Expr::Lit(syn::ExprLit { lit: Lit::Str(s), .. }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
        .flat_map(|s| s.split('\n').map(str::to_owned).collect::<Vec<_>>())
        .map(|l| l.strip_prefix(' ').map(str::to_owned).unwrap_or(l).trim_end().to_owned())
        .collect();
    let text = lines.join("\n").trim().to_owned();
    (!text.is_empty()).then_some(text)
}

// ---------------------------------------------------------------------------------------------
// #[bridge_window(title = …, summary = …, crate = …)]

pub(crate) struct WindowArgs {
    pub(crate) title: Option<StrOrPath>,
    pub(crate) summary: Option<StrOrPath>,
    pub(crate) view: Option<ViewArgs>,
    /// `shared_state`: `render`/availability read state outside the window (issue #10 item 2).
    pub(crate) shared_state: Option<Ident>,
    /// `undo`: the window's value is copied before each agent operation (issue #20 item 3).
    pub(crate) undo: Option<Ident>,
    /// `user_only`: every action of the window is the user's alone (issue #20 item 4).
    pub(crate) user_only: Option<Ident>,
    pub(crate) krate: Option<Path>,
}

/// `view = "file.html"` or `view(file = "…", connect_domains = […], resource_domains = […],
/// frame_domains = […], base_uri_domains = […])`: the window type's own MCP Apps view.
pub(crate) struct ViewArgs {
    /// The HTML file, relative to the crate root (`CARGO_MANIFEST_DIR`).
    pub(crate) file: LitStr,
    /// Its absolute path, once found.
    pub(crate) path: Option<String>,
    /// `connect_domains`, `resource_domains`, `frame_domains`, `base_uri_domains`, in the order
    /// of `bridge_rules::CSP_LISTS`; each entry an https:// origin (checked here).
    pub(crate) domains: [Vec<LitStr>; 4],
}

fn view_args(cx: &Ctxt, meta: &ParseNestedMeta) -> syn::Result<Option<ViewArgs>> {
    let usage = "`view` reads `view = \"views/window.html\"` or `view(file = \"views/window.html\", resource_domains = [\"https://cdn.example.com\"])`";
    let (file, domains) = if meta.input.peek(Token![=]) {
        (Some(lit_str(meta)?), Default::default())
    } else if meta.input.peek(syn::token::Paren) {
        let empty = {
            let fork = meta.input.fork();
            let content;
            syn::parenthesized!(content in fork);
            content.is_empty()
        };
        if empty {
            return Err(meta.error("`view()` needs the HTML file: `view(file = \"views/window.html\", …)`"));
        }
        let mut file = Attr::none(cx, "file");
        let mut lists: [Attr<'_, List<LitStr>>; 4] = [
            Attr::none(cx, "connect_domains"),
            Attr::none(cx, "resource_domains"),
            Attr::none(cx, "frame_domains"),
            Attr::none(cx, "base_uri_domains"),
        ];
        meta.parse_nested_meta(|inner| {
            match key(&inner).as_str() {
                "file" => file.set(&inner.path, lit_str(&inner)?),
                k @ ("connect_domains" | "resource_domains" | "frame_domains" | "base_uri_domains") => {
                    let i = VIEW_KEYS[1..].iter().position(|v| *v == k).unwrap_or_default();
                    let list = str_list(&inner)?;
                    for lit in &list.items {
                        if let Err(problem) = bridge_rules::check_csp_domain(&lit.value()) {
                            cx.error_spanned_by(
                                lit,
                                format!("`{}` in `{k}` {} (MA-9-2)", lit.value(), problem.reason()),
                            );
                        }
                    }
                    lists[i].set(&inner.path, list);
                }
                _ => unknown_key(cx, &inner, "view(…)", VIEW_KEYS)?,
            }
            Ok(())
        })?;
        let file = file.get();
        if file.is_none() {
            cx.syn_error(meta.error("`view(…)` needs the HTML file: `view(file = \"views/window.html\", …)`"));
        }
        (file, lists.map(|l| l.get().map(|l| l.items).unwrap_or_default()))
    } else {
        return Err(meta.error(usage));
    };
    let Some(file) = file else { return Ok(None) };
    let path = view_file(cx, &file);
    Ok(Some(ViewArgs { file, path, domains }))
}

/// The absolute path of a view file, if it exists under the crate root; a spanned error
/// otherwise.
fn view_file(cx: &Ctxt, file: &LitStr) -> Option<String> {
    let rel = file.value();
    if rel.is_empty() {
        cx.error_spanned_by(file, "`view` needs a file path, relative to the crate root");
        return None;
    }
    let root = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let path = std::path::Path::new(&root).join(&rel);
    match std::fs::read(&path) {
        Ok(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => {
            cx.error_spanned_by(file, format!("view file `{rel}` is empty; a view is an HTML document"));
            None
        }
        Ok(bytes) if std::str::from_utf8(&bytes).is_ok() => Some(path.to_string_lossy().into_owned()),
        Ok(_) => {
            cx.error_spanned_by(file, format!("view file `{rel}` is not UTF-8 text; a view is an HTML document"));
            None
        }
        Err(e) => {
            cx.error_spanned_by(
                file,
                format!("cannot read view file `{rel}` (the path is relative to the crate root, where its Cargo.toml is): {e}"),
            );
            None
        }
    }
}

pub(crate) fn window_args(cx: &Ctxt, args: TokenStream) -> WindowArgs {
    let mut title = Attr::none(cx, "title");
    let mut summary = Attr::none(cx, "summary");
    let mut view = Attr::none(cx, "view");
    let mut shared_state = Attr::none(cx, "shared_state");
    let mut undo = Attr::none(cx, "undo");
    let mut user_only = Attr::none(cx, "user_only");
    let mut krate = Attr::none(cx, "crate");
    parse_list(cx, args, |meta| {
        if meta.path.is_ident("title") {
            title.set(&meta.path, lit_or_path(&meta)?);
        } else if meta.path.is_ident("summary") {
            summary.set(&meta.path, lit_or_path(&meta)?);
        } else if meta.path.is_ident("view") {
            if let Some(v) = view_args(cx, &meta)? {
                view.set(&meta.path, v);
            }
        } else if meta.path.is_ident("shared_state") {
            shared_state.set(&meta.path, flag(&meta)?);
        } else if meta.path.is_ident("undo") {
            undo.set(&meta.path, flag(&meta)?);
        } else if meta.path.is_ident("user_only") {
            user_only.set(&meta.path, flag(&meta)?);
        } else if meta.path.is_ident("crate") {
            krate.set(&meta.path, path_value(&meta)?);
        } else {
            unknown_key(cx, &meta, "#[bridge_window(…)]", WINDOW_KEYS)?;
        }
        Ok(())
    });
    WindowArgs {
        title: title.get(),
        summary: summary.get(),
        view: view.get(),
        shared_state: shared_state.get(),
        undo: undo.get(),
        user_only: user_only.get(),
        krate: krate.get(),
    }
}

/// `#[bridge_actions(companion, crate = …)]`.
pub(crate) struct ActionsArgs {
    /// `companion`: the methods declare desktop-companion capabilities, not GUI actions.
    pub(crate) companion: Option<Ident>,
    pub(crate) krate: Option<Path>,
}

pub(crate) fn actions_args(cx: &Ctxt, args: TokenStream) -> ActionsArgs {
    let mut companion = Attr::none(cx, "companion");
    let mut krate = Attr::none(cx, "crate");
    parse_list(cx, args, |meta| {
        if meta.path.is_ident("crate") {
            krate.set(&meta.path, path_value(&meta)?);
        } else if meta.path.is_ident("companion") {
            companion.set(&meta.path, flag(&meta)?);
        } else {
            unknown_key(cx, &meta, "#[bridge_actions(…)]", ACTIONS_KEYS)?;
        }
        Ok(())
    });
    ActionsArgs { companion: companion.get(), krate: krate.get() }
}

// ---------------------------------------------------------------------------------------------
// #[bridge(kind, id = …, label = …, …)] on a window field

/// The seven block kinds (GB-4.4-5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Text,
    Fields,
    Table,
    List,
    Notice,
    Media,
    Custom,
}

impl Kind {
    fn from_str(s: &str) -> Option<Kind> {
        Some(match s {
            "text" => Kind::Text,
            "fields" => Kind::Fields,
            "table" => Kind::Table,
            "list" => Kind::List,
            "notice" => Kind::Notice,
            "media" => Kind::Media,
            "custom" => Kind::Custom,
            _ => return None,
        })
    }

    /// The kind's name, as written in the attribute and on the wire.
    pub(crate) fn name(self) -> &'static str {
        BLOCK_KINDS[self as usize]
    }
}

/// `severity = "…"` of a `notice` block (GB-4.4-10).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Severity {
    Info,
    Warn,
    Error,
    Success,
}

/// Everything `#[bridge(…)]` attributes said about one window field.
pub(crate) struct BlockAttrs {
    /// Whether the field has any `#[bridge]` attribute at all.
    pub(crate) present: bool,
    pub(crate) kind: Option<(Kind, Ident)>,
    pub(crate) skip: Option<Ident>,
    pub(crate) id: Option<LitStr>,
    pub(crate) label: Option<LitStr>,
    pub(crate) sensitive: Option<Ident>,
    pub(crate) max_rows: Option<(usize, LitInt)>,
    pub(crate) ordered: Option<Ident>,
    pub(crate) severity: Option<(Severity, LitStr)>,
    /// The tokens of the first `#[bridge]` attribute, for "needs a kind" errors.
    pub(crate) attr_tokens: Option<TokenStream>,
}

pub(crate) fn block_attrs(cx: &Ctxt, attrs: &[Attribute]) -> BlockAttrs {
    let mut kind: Attr<(Kind, Ident)> = Attr::none(cx, "kind");
    let mut skip = Attr::none(cx, "skip");
    let mut id = Attr::none(cx, "id");
    let mut label = Attr::none(cx, "label");
    let mut sensitive = Attr::none(cx, "sensitive");
    let mut max_rows = Attr::none(cx, "max_rows");
    let mut ordered = Attr::none(cx, "ordered");
    let mut severity = Attr::none(cx, "severity");
    let mut attr_tokens = None;
    let mut kinds: Vec<Ident> = Vec::new();
    for attr in attrs.iter().filter(|a| is_bridge(a)) {
        attr_tokens.get_or_insert_with(|| attr.to_token_stream());
        parse_attr(cx, attr, |meta| {
            let k = key(&meta);
            if let Some(kd) = Kind::from_str(&k) {
                let ident = flag(&meta)?;
                if kinds.contains(&ident) {
                    cx.error_spanned_by(&ident, format!("duplicate key `{ident}`"));
                } else if let Some(first) = kinds.first() {
                    cx.error_spanned_by(
                        &ident,
                        format!("a field is exactly one block: `{first}` and `{ident}` both given"),
                    );
                } else {
                    kind.set(&meta.path, (kd, ident.clone()));
                }
                kinds.push(ident);
            } else if k == "skip" {
                let ident = flag(&meta)?;
                skip.set(&meta.path, ident);
            } else if k == "id" {
                id.set(&meta.path, lit_str(&meta)?);
            } else if k == "label" {
                label.set(&meta.path, lit_str(&meta)?);
            } else if k == "sensitive" {
                let ident = flag(&meta)?;
                sensitive.set(&meta.path, ident);
            } else if k == "ordered" {
                let ident = flag(&meta)?;
                ordered.set(&meta.path, ident);
            } else if k == "max_rows" {
                let lit: LitInt = meta.value()?.parse()?;
                match lit.base10_parse::<usize>() {
                    Ok(n) if n > 0 => max_rows.set(&meta.path, (n, lit)),
                    _ => cx.error_spanned_by(&lit, "`max_rows` must be a positive integer"),
                }
            } else if k == "severity" {
                let lit = lit_str(&meta)?;
                let s = match lit.value().as_str() {
                    "info" => Some(Severity::Info),
                    "warn" => Some(Severity::Warn),
                    "error" => Some(Severity::Error),
                    "success" => Some(Severity::Success),
                    _ => None,
                };
                match s {
                    Some(s) => severity.set(&meta.path, (s, lit)),
                    None => cx.error_spanned_by(
                        &lit,
                        format!(
                            "unknown severity \"{}\"; expected one of \"info\", \"warn\", \"error\", \"success\" (GB-4.4-10)",
                            lit.value()
                        ),
                    ),
                }
            } else {
                let known: Vec<&str> =
                    BLOCK_KINDS.iter().chain(["skip"].iter()).chain(BLOCK_OPTIONS).copied().collect();
                unknown_key(cx, &meta, "#[bridge(…)]", &known)?;
            }
            Ok(())
        });
    }
    BlockAttrs {
        present: attr_tokens.is_some(),
        kind: kind.get(),
        skip: skip.get(),
        id: id.get(),
        label: label.get(),
        sensitive: sensitive.get(),
        max_rows: max_rows.get(),
        ordered: ordered.get(),
        severity: severity.get(),
        attr_tokens,
    }
}

// ---------------------------------------------------------------------------------------------
// #[bridge_action(…)]

/// Everything `#[bridge_action(…)]` said about one method.
pub(crate) struct ActionAttrs {
    pub(crate) name: Option<LitStr>,
    pub(crate) title: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) read_only: Option<Ident>,
    pub(crate) destructive: Option<Ident>,
    pub(crate) idempotent: Option<Ident>,
    pub(crate) open_world: Option<Ident>,
    pub(crate) available: Option<Path>,
    /// `user_only`: never a tool; only the user's path runs it (issue #20 item 4).
    pub(crate) user_only: Option<Ident>,
}

pub(crate) fn action_attrs(cx: &Ctxt, attr: &Attribute) -> ActionAttrs {
    let mut name = Attr::none(cx, "name");
    let mut title = Attr::none(cx, "title");
    let mut description = Attr::none(cx, "description");
    let mut read_only = Attr::none(cx, "read_only");
    let mut destructive = Attr::none(cx, "destructive");
    let mut idempotent = Attr::none(cx, "idempotent");
    let mut open_world = Attr::none(cx, "open_world");
    let mut available = Attr::none(cx, "available");
    let mut user_only = Attr::none(cx, "user_only");
    let logic = |meta: ParseNestedMeta| {
        match key(&meta).as_str() {
            "name" => name.set(&meta.path, lit_str(&meta)?),
            "title" => title.set(&meta.path, lit_str(&meta)?),
            "description" => description.set(&meta.path, lit_str(&meta)?),
            "read_only" => read_only.set(&meta.path, flag(&meta)?),
            "destructive" => destructive.set(&meta.path, flag(&meta)?),
            "idempotent" => idempotent.set(&meta.path, flag(&meta)?),
            "open_world" => open_world.set(&meta.path, flag(&meta)?),
            "available" => available.set(&meta.path, path_value(&meta)?),
            "user_only" => user_only.set(&meta.path, flag(&meta)?),
            k if CAPABILITY_KEYS.contains(&k) => {
                cx.syn_error(meta.error(format_args!(
                    "`{k}` declares a desktop-companion capability, not a GUI action: capabilities live in \
                     their own impl block marked #[bridge_actions(companion)]"
                )));
                skip_to_comma(&meta)?;
            }
            _ => unknown_key(cx, &meta, "#[bridge_action(…)]", ACTION_KEYS)?,
        }
        Ok(())
    };
    match &attr.meta {
        Meta::Path(_) => {}
        Meta::List(list) => parse_list(cx, list.tokens.clone(), logic),
        Meta::NameValue(_) => cx.error_spanned_by(attr, "expected `#[bridge_action]` or `#[bridge_action(…)]`"),
    }
    ActionAttrs {
        name: name.get(),
        title: title.get(),
        description: description.get(),
        read_only: read_only.get(),
        destructive: destructive.get(),
        idempotent: idempotent.get(),
        open_world: open_world.get(),
        available: available.get(),
        user_only: user_only.get(),
    }
}

// ---------------------------------------------------------------------------------------------
// #[bridge_action(…)] in a #[bridge_actions(companion)] impl: a capability declaration

/// A string value from a closed list (`kind = "notice"`), with its literal for errors.
pub(crate) struct Choice {
    pub(crate) value: &'static str,
    pub(crate) lit: LitStr,
}

/// A `key = [ … ]` list, with the tokens of the whole list for errors.
pub(crate) struct List<T> {
    /// The valid items (unknown values of a closed list are reported and left out).
    pub(crate) items: Vec<T>,
    /// How many items were written.
    pub(crate) written: usize,
    pub(crate) tokens: TokenStream,
}

/// `timeout_ms(min = …, max = …)`.
pub(crate) struct TimeoutMs {
    pub(crate) min: Option<(u64, LitInt)>,
    pub(crate) max: Option<(u64, LitInt)>,
    /// `timeout_ms`, for "needs min and max" errors.
    pub(crate) key: Path,
}

/// `fallback(capability = "…", when = […], map = path)`.
pub(crate) struct FallbackAttrs {
    pub(crate) capability: Option<LitStr>,
    pub(crate) when: Option<List<Choice>>,
    pub(crate) map: Option<Path>,
    /// `fallback`, for "needs …" errors.
    pub(crate) key: Path,
}

/// Everything `#[bridge_action(…)]` said about one capability method.
pub(crate) struct CapabilityAttrs {
    pub(crate) id: Option<LitStr>,
    pub(crate) version: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) kind: Option<Choice>,
    pub(crate) interaction: Option<Choice>,
    pub(crate) completion: Option<Choice>,
    pub(crate) scopes: Option<List<Choice>>,
    pub(crate) updatable: Option<List<LitStr>>,
    pub(crate) cancelable: Option<LitBool>,
    pub(crate) cancel_behavior: Option<Choice>,
    pub(crate) queue: Option<Choice>,
    pub(crate) timeout_ms: Option<TimeoutMs>,
    pub(crate) display_ms: Option<(u64, LitInt)>,
    pub(crate) output: Option<Type>,
    pub(crate) check_result: Option<Path>,
    pub(crate) fallback: Option<FallbackAttrs>,
}

/// `what` names the list in errors ("kind"), `source` the requirement it comes from.
fn choice_of(cx: &Ctxt, lit: LitStr, what: &str, allowed: &'static [&'static str], source: &str) -> Option<Choice> {
    let value = lit.value();
    match allowed.iter().find(|a| **a == value) {
        Some(a) => Some(Choice { value: a, lit }),
        None => {
            let expected = allowed.iter().map(|a| format!("\"{a}\"")).collect::<Vec<_>>().join(", ");
            cx.error_spanned_by(&lit, format!("unknown {what} \"{value}\"; expected one of {expected} ({source})"));
            None
        }
    }
}

/// `key = "…"` from a closed list; an unknown value is reported and yields `None`.
fn choice(
    cx: &Ctxt,
    meta: &ParseNestedMeta,
    what: &str,
    allowed: &'static [&'static str],
    source: &str,
) -> syn::Result<Option<Choice>> {
    Ok(choice_of(cx, lit_str(meta)?, what, allowed, source))
}

/// `key = ["…", …]`.
fn str_list(meta: &ParseNestedMeta) -> syn::Result<List<LitStr>> {
    let k = key(meta);
    let value = meta.value()?;
    let msg = format!("`{k}` takes a list of string literals: `{k} = [\"…\", \"…\"]`");
    let Expr::Array(array) = value.parse::<Expr>()? else {
        return Err(meta.error(msg));
    };
    let mut items = Vec::new();
    for elem in &array.elems {
        match elem {
            Expr::Lit(syn::ExprLit { lit: Lit::Str(s), .. }) => items.push(s.clone()),
            other => return Err(syn::Error::new_spanned(other, msg)),
        }
    }
    Ok(List { written: items.len(), items, tokens: array.to_token_stream() })
}

/// `key = ["…", …]` from a closed list; unknown values are reported and left out.
fn choice_list(
    cx: &Ctxt,
    meta: &ParseNestedMeta,
    what: &str,
    allowed: &'static [&'static str],
    source: &str,
) -> syn::Result<List<Choice>> {
    let list = str_list(meta)?;
    let items = list.items.into_iter().filter_map(|lit| choice_of(cx, lit, what, allowed, source)).collect();
    Ok(List { items, written: list.written, tokens: list.tokens })
}

/// `key = N` in milliseconds.
fn millis(meta: &ParseNestedMeta) -> syn::Result<(u64, LitInt)> {
    let k = key(meta);
    let lit: LitInt = meta
        .value()?
        .parse()
        .map_err(|e| syn::Error::new(e.span(), format!("`{k}` takes an integer number of milliseconds")))?;
    let n = lit.base10_parse::<u64>().map_err(|_| {
        syn::Error::new(lit.span(), format!("`{k}` takes a whole number of milliseconds, 0 or more (got `{lit}`)"))
    })?;
    Ok((n, lit))
}

/// `cancelable` or `cancelable = true|false`.
fn bool_value(meta: &ParseNestedMeta) -> syn::Result<LitBool> {
    if !meta.input.peek(Token![=]) {
        let ident = flag(meta)?;
        return Ok(LitBool::new(true, ident.span()));
    }
    let k = key(meta);
    meta.value()?.parse::<LitBool>().map_err(|e| syn::Error::new(e.span(), format!("`{k}` takes `true` or `false`")))
}

/// A closed-list value that is not on the list was reported by `choice` and is not set, so the
/// later rules stay quiet about it.
fn set_choice(attr: &mut Attr<Choice>, path: &Path, c: Option<Choice>) {
    if let Some(c) = c {
        attr.set(path, c);
    }
}

pub(crate) fn capability_attrs(cx: &Ctxt, attr: &Attribute) -> CapabilityAttrs {
    let mut id = Attr::none(cx, "id");
    let mut version = Attr::none(cx, "version");
    let mut description = Attr::none(cx, "description");
    let mut kind = Attr::none(cx, "kind");
    let mut interaction = Attr::none(cx, "interaction");
    let mut completion = Attr::none(cx, "completion");
    let mut scopes = Attr::none(cx, "scopes");
    let mut updatable = Attr::none(cx, "updatable");
    let mut cancelable = Attr::none(cx, "cancelable");
    let mut cancel_behavior = Attr::none(cx, "cancel_behavior");
    let mut queue = Attr::none(cx, "queue");
    let mut timeout_ms = Attr::none(cx, "timeout_ms");
    let mut display_ms = Attr::none(cx, "display_ms");
    let mut output = Attr::none(cx, "output");
    let mut check_result = Attr::none(cx, "check_result");
    let mut fallback = Attr::none(cx, "fallback");
    let logic = |meta: ParseNestedMeta| {
        match key(&meta).as_str() {
            "id" => id.set(&meta.path, lit_str(&meta)?),
            "version" => version.set(&meta.path, lit_str(&meta)?),
            "description" => description.set(&meta.path, lit_str(&meta)?),
            "kind" => set_choice(&mut kind, &meta.path, choice(cx, &meta, "kind", CAPABILITY_KINDS, "CP-2-17")?),
            "interaction" => set_choice(
                &mut interaction,
                &meta.path,
                choice(cx, &meta, "interaction type", INTERACTIONS, "CP-2-18")?,
            ),
            "completion" => {
                set_choice(&mut completion, &meta.path, choice(cx, &meta, "completion", COMPLETIONS, "CP-2-15")?)
            }
            "scopes" => scopes.set(&meta.path, choice_list(cx, &meta, "scope", SCOPES, "CP-5-6")?),
            "updatable" => updatable.set(&meta.path, str_list(&meta)?),
            "cancelable" => cancelable.set(&meta.path, bool_value(&meta)?),
            "cancel_behavior" => set_choice(
                &mut cancel_behavior,
                &meta.path,
                choice(cx, &meta, "cancel behavior", CANCEL_BEHAVIORS, "CP-2-15")?,
            ),
            "queue" => set_choice(&mut queue, &meta.path, choice(cx, &meta, "queue mode", QUEUE_MODES, "CP-4-10")?),
            "display_ms" => display_ms.set(&meta.path, millis(&meta)?),
            "timeout_ms" => {
                let mut min = Attr::none(cx, "min");
                let mut max = Attr::none(cx, "max");
                if !meta.input.peek(syn::token::Paren) {
                    return Err(meta.error("`timeout_ms` reads `timeout_ms(min = 1000, max = 60000)`"));
                }
                meta.parse_nested_meta(|inner| {
                    match key(&inner).as_str() {
                        "min" => min.set(&inner.path, millis(&inner)?),
                        "max" => max.set(&inner.path, millis(&inner)?),
                        _ => unknown_key(cx, &inner, "timeout_ms(…)", TIMEOUT_KEYS)?,
                    }
                    Ok(())
                })?;
                timeout_ms.set(&meta.path, TimeoutMs { min: min.get(), max: max.get(), key: meta.path.clone() });
            }
            "output" => output.set(&meta.path, meta.value()?.parse::<Type>()?),
            "check_result" => check_result.set(&meta.path, path_value(&meta)?),
            "fallback" => {
                let mut capability = Attr::none(cx, "capability");
                let mut when = Attr::none(cx, "when");
                let mut map = Attr::none(cx, "map");
                if !meta.input.peek(syn::token::Paren) {
                    return Err(meta.error(
                        "`fallback` reads `fallback(capability = \"notice.show\", when = [\"reduced_motion\"])`",
                    ));
                }
                meta.parse_nested_meta(|inner| {
                    match key(&inner).as_str() {
                        "capability" => capability.set(&inner.path, lit_str(&inner)?),
                        "when" => when.set(
                            &inner.path,
                            choice_list(cx, &inner, "fallback situation", FALLBACK_REASONS, "CP-2-29")?,
                        ),
                        "map" => map.set(&inner.path, path_value(&inner)?),
                        _ => unknown_key(cx, &inner, "fallback(…)", FALLBACK_KEYS)?,
                    }
                    Ok(())
                })?;
                fallback.set(
                    &meta.path,
                    FallbackAttrs {
                        capability: capability.get(),
                        when: when.get(),
                        map: map.get(),
                        key: meta.path.clone(),
                    },
                );
            }
            k if GUI_ONLY_KEYS.contains(&k) => {
                cx.syn_error(meta.error(format_args!(
                    "`{k}` is a GUI action key; this impl is #[bridge_actions(companion)], whose methods declare \
                     desktop-companion capabilities (keys: {})",
                    one_of(CAPABILITY_KEYS)
                )));
                skip_to_comma(&meta)?;
            }
            _ => unknown_key(cx, &meta, "#[bridge_action(…)] of a capability", CAPABILITY_KEYS)?,
        }
        Ok(())
    };
    match &attr.meta {
        Meta::List(list) => parse_list(cx, list.tokens.clone(), logic),
        Meta::Path(_) => {}
        Meta::NameValue(_) => cx.error_spanned_by(attr, "expected `#[bridge_action(id = \"…\", …)]`"),
    }
    CapabilityAttrs {
        id: id.get(),
        version: version.get(),
        description: description.get(),
        kind: kind.get(),
        interaction: interaction.get(),
        completion: completion.get(),
        scopes: scopes.get(),
        updatable: updatable.get(),
        cancelable: cancelable.get(),
        cancel_behavior: cancel_behavior.get(),
        queue: queue.get(),
        timeout_ms: timeout_ms.get(),
        display_ms: display_ms.get(),
        output: output.get(),
        check_result: check_result.get(),
        fallback: fallback.get(),
    }
}

// ---------------------------------------------------------------------------------------------
// #[bridge(args)] / #[bridge(description = "…")] / `///` / #[serde(…)] / #[schemars(…)] on an
// action or capability parameter

pub(crate) struct ParamAttrs {
    pub(crate) args: Option<Ident>,
    pub(crate) description: Option<String>,
    /// `#[bridge(sensitive)]`: the property's schema says `"writeOnly": true`, as a `Secret<…>`
    /// parameter's does by itself, so the journal masks its value.
    pub(crate) sensitive: Option<proc_macro2::Span>,
    /// `#[schemars(…)]` attributes, forwarded to the property's schema
    /// (`length(min = 1, max = 200)`, `range(…)`, …).
    pub(crate) schemars: Vec<Attribute>,
    /// `#[serde(rename = "…")]`: the JSON property name (in the schema, where the argument is
    /// read, in `updatable`), instead of the parameter's name.
    pub(crate) rename: Option<LitStr>,
    /// `#[serde(default)]`: the property is optional and a missing argument is `T::default()`.
    pub(crate) default: Option<Ident>,
    /// The tokens of the first `#[serde(…)]` attribute, for "has no effect" errors.
    pub(crate) serde: Option<TokenStream>,
    /// Whether `#[schemars(…)]` gives the schema's type (`with = "…"`, `schema_with = …`).
    pub(crate) schemars_with: bool,
}

pub(crate) fn param_attrs(cx: &Ctxt, attrs: &[Attribute]) -> ParamAttrs {
    let mut args = Attr::none(cx, "args");
    let mut description: Attr<String> = Attr::none(cx, "description");
    let mut sensitive = Attr::none(cx, "sensitive");
    for attr in attrs.iter().filter(|a| is_bridge(a)) {
        parse_attr(cx, attr, |meta| {
            match key(&meta).as_str() {
                "args" => args.set(&meta.path, flag(&meta)?),
                "sensitive" => sensitive.set(&meta.path, flag(&meta)?),
                "description" => {
                    let path = meta.path.clone();
                    description.set(&path, lit_str(&meta)?.value());
                }
                _ => unknown_key(cx, &meta, "#[bridge(…)] on a parameter", PARAM_KEYS)?,
            }
            Ok(())
        });
    }
    let (rename, default) = param_serde(cx, attrs);
    let schemars_with = param_schemars(cx, attrs);
    let description = description.get().or_else(|| doc_comment(attrs));
    let schemars = attrs.iter().filter(|a| is_schemars(a)).cloned().collect();
    let serde = attrs.iter().find(|a| is_serde(a)).map(ToTokens::to_token_stream);
    ParamAttrs {
        args: args.get(),
        description,
        sensitive: sensitive.get().map(|i: Ident| i.span()),
        schemars,
        rename,
        default,
        serde,
        schemars_with,
    }
}

/// `#[serde(rename = "…", default)]` on a parameter. These two keep the schema, the JSON
/// property name and the way the argument is read in agreement; other serde keys (`alias`,
/// `flatten`, `with`, …) would need a deserializer per parameter, so they are an error
/// pointing to a `#[bridge(args)]` struct, where serde applies in full.
fn param_serde(cx: &Ctxt, attrs: &[Attribute]) -> (Option<LitStr>, Option<Ident>) {
    let mut rename = Attr::none(cx, "rename");
    let mut default = Attr::none(cx, "default");
    for attr in attrs.iter().filter(|a| is_serde(a)) {
        parse_attr(cx, attr, |meta| {
            match key(&meta).as_str() {
                "rename" if meta.input.peek(syn::token::Paren) => {
                    return Err(
                        meta.error("a parameter is only deserialized, so it has one name: `#[serde(rename = \"…\")]`")
                    );
                }
                "rename" => {
                    let lit = lit_str(&meta)?;
                    if lit.value().is_empty() {
                        cx.error_spanned_by(&lit, "a parameter's JSON name cannot be empty");
                    } else {
                        rename.set(&meta.path, lit);
                    }
                }
                "default" if meta.input.peek(Token![=]) => {
                    cx.syn_error(meta.error(
                        "`default = \"…\"` is not supported on a parameter: write `#[serde(default)]` (a missing \
                         argument is the type's `Default::default()`), or take an `Option<T>` and choose the value \
                         in the method",
                    ));
                    skip_value(&meta)?;
                }
                "default" => default.set(&meta.path, flag(&meta)?),
                k => {
                    cx.syn_error(meta.error(format_args!(
                        "`#[serde({k})]` is not supported on a parameter, which takes only `rename = \"…\"` (its \
                         JSON name) and `default` (optional; missing = `Default::default()`); for more, take a \
                         #[bridge(args)] struct, where serde's attributes apply in full"
                    )));
                    skip_value(&meta)?;
                }
            }
            Ok(())
        });
    }
    (rename.get(), default.get())
}

/// `#[schemars(…)]` on a parameter is forwarded to its property's schema; keys that would make
/// the schema disagree with how the argument is read are reported here. Anything else is left to
/// schemars' own derive, which reports its own syntax errors. Returns whether a key gives the
/// schema's type (`with`, `schema_with`).
fn param_schemars(cx: &Ctxt, attrs: &[Attribute]) -> bool {
    let mut with = false;
    for attr in attrs.iter().filter(|a| is_schemars(a)) {
        let Meta::List(list) = &attr.meta else { continue };
        let scan = syn::meta::parser(|meta| {
            match key(&meta).as_str() {
                k @ ("rename" | "default") => cx.syn_error(meta.error(format_args!(
                    "`#[schemars({k})]` would change the schema only, not where the argument is read: write \
                     `#[serde({k}{})]`, which changes both",
                    if k == "rename" { " = \"…\"" } else { "" }
                ))),
                k @ ("skip" | "skip_deserializing" | "flatten") => cx.syn_error(meta.error(format_args!(
                    "`#[schemars({k})]` does not apply to a parameter: each parameter is exactly one property"
                ))),
                "with" | "schema_with" => with = true,
                _ => {}
            }
            skip_value(&meta)
        });
        let _ = scan.parse2(list.tokens.clone());
    }
    with
}

// ---------------------------------------------------------------------------------------------
// #[derive(BridgeFields)] / #[derive(BridgeRow)]

/// Which derive is reading its attributes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum DeriveKind {
    Fields,
    Row,
    Args,
}

pub(crate) struct ItemFieldAttrs {
    pub(crate) label: Option<LitStr>,
    pub(crate) sensitive: Option<Ident>,
    pub(crate) skip: Option<Ident>,
}

pub(crate) fn item_field_attrs(cx: &Ctxt, attrs: &[Attribute], derive: DeriveKind) -> ItemFieldAttrs {
    let mut label = Attr::none(cx, "label");
    let mut sensitive = Attr::none(cx, "sensitive");
    let mut skip = Attr::none(cx, "skip");
    for attr in attrs.iter().filter(|a| is_bridge(a)) {
        if derive == DeriveKind::Args {
            cx.error_spanned_by(
                attr,
                "#[derive(BridgeArgs)] takes no field keys: the fields' own #[serde(…)] and #[schemars(…)] \
                 attributes shape the argument object",
            );
            continue;
        }
        parse_attr(cx, attr, |meta| {
            match (key(&meta).as_str(), derive) {
                ("label", _) => label.set(&meta.path, lit_str(&meta)?),
                ("skip", _) => skip.set(&meta.path, flag(&meta)?),
                ("sensitive", DeriveKind::Fields) => sensitive.set(&meta.path, flag(&meta)?),
                ("sensitive", DeriveKind::Row) => {
                    cx.syn_error(meta.error(
                        "`sensitive` is not available on table columns (GB-4.5, OQ-GB-10): \
                         store the value as `Secret<T>`, which renders as \"••••••\"",
                    ));
                    skip_value(&meta)?;
                }
                (_, DeriveKind::Fields) => unknown_key(cx, &meta, "#[bridge(…)]", FIELDSET_KEYS)?,
                (_, DeriveKind::Row | DeriveKind::Args) => unknown_key(cx, &meta, "#[bridge(…)]", ROW_KEYS)?,
            }
            Ok(())
        });
    }
    ItemFieldAttrs { label: label.get(), sensitive: sensitive.get(), skip: skip.get() }
}

/// `#[bridge(crate = path)]` on a derived struct.
pub(crate) fn container_attrs(cx: &Ctxt, attrs: &[Attribute]) -> Option<Path> {
    let mut krate = Attr::none(cx, "crate");
    for attr in attrs.iter().filter(|a| is_bridge(a)) {
        parse_attr(cx, attr, |meta| {
            if meta.path.is_ident("crate") {
                krate.set(&meta.path, path_value(&meta)?);
            } else {
                unknown_key(cx, &meta, "#[bridge(…)] on the struct", CONTAINER_KEYS)?;
            }
            Ok(())
        });
    }
    krate.get()
}
