//! The internal representation of what the author wrote. Nodes borrow the `syn` tree, so every
//! later error and every `quote_spanned!` can point at the author's own tokens.
//!
//! Building it reports only shape errors (wrong item, tuple struct); rules live in `valid.rs`.

use crate::attr::{
    self, ActionAttrs, BlockAttrs, CapabilityAttrs, DeriveKind, ItemFieldAttrs, Kind, ParamAttrs, StrOrPath,
};
use crate::ctxt::Ctxt;
use crate::util::{self, unraw};
use bridge_rules::humanize;
use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::{
    Attribute, Data, DeriveInput, Field, Fields, FnArg, Ident, ImplItem, ImplItemFn, ItemImpl, ItemStruct, Pat,
    PatType, Path, Receiver, ReturnType, Type,
};

/// The runtime crate's path: `crate = …` or `::bridge_runtime`.
fn krate(path: Option<Path>) -> Path {
    path.unwrap_or_else(|| syn::parse_quote!(::bridge_runtime))
}

// ---------------------------------------------------------------------------------------------
// #[bridge_window]

pub(crate) struct Window<'a> {
    pub(crate) item: &'a ItemStruct,
    pub(crate) krate: Path,
    pub(crate) title: Option<StrOrPath>,
    pub(crate) summary: Option<StrOrPath>,
    pub(crate) view: Option<crate::attr::ViewArgs>,
    /// `shared_state`: re-rendered after every operation (issue #10 item 2).
    pub(crate) shared_state: bool,
    /// `undo`: copied before each agent operation, restored by `Ui::undo` (issue #20 item 3).
    pub(crate) undo: Option<Ident>,
    /// `user_only`: every action is the user's alone (issue #20 item 4).
    pub(crate) user_only: bool,
    pub(crate) fields: Vec<WindowField<'a>>,
}

/// One named field of a window struct.
pub(crate) struct WindowField<'a> {
    pub(crate) field: &'a Field,
    pub(crate) ident: &'a Ident,
    /// The field name without `r#`.
    pub(crate) name: String,
    pub(crate) attrs: BlockAttrs,
    /// Whether its `#[bridge(…)]` attributes parsed without errors (later rules stay quiet
    /// about a field whose attribute is already reported, so one mistake gives one message).
    pub(crate) attrs_ok: bool,
}

/// A declared block, resolved from a field's attributes.
pub(crate) struct Block<'a> {
    pub(crate) ident: &'a Ident,
    pub(crate) ty: &'a Type,
    pub(crate) kind: Kind,
    /// `id = "…"`, or the field name with `_` → `-`.
    pub(crate) id: String,
    pub(crate) label: String,
    pub(crate) sensitive: bool,
    pub(crate) max_rows: Option<usize>,
    pub(crate) ordered: bool,
    pub(crate) severity: Option<attr::Severity>,
}

impl<'a> Window<'a> {
    pub(crate) fn from_syn(cx: &Ctxt, item: &'a ItemStruct, args: attr::WindowArgs) -> Window<'a> {
        let fields = match &item.fields {
            Fields::Named(named) => named
                .named
                .iter()
                .filter_map(|field| {
                    let ident = field.ident.as_ref()?;
                    let before = cx.len();
                    let attrs = attr::block_attrs(cx, &field.attrs);
                    Some(WindowField { field, ident, name: unraw(ident), attrs, attrs_ok: cx.len() == before })
                })
                .collect(),
            _ => {
                cx.error_spanned_by(
                    item.struct_token,
                    "#[bridge_window] needs a struct with named fields: each field declares one block",
                );
                Vec::new()
            }
        };
        if let (Some(undo), Some(_)) = (&args.undo, &args.shared_state) {
            cx.error_spanned_by(
                undo,
                "`undo` cannot be combined with `shared_state`: restoring the struct would not restore the \
                 shared state its window reads",
            );
        }
        Window {
            item,
            krate: krate(args.krate),
            title: args.title,
            summary: args.summary,
            view: args.view,
            shared_state: args.shared_state.is_some(),
            undo: args.undo,
            user_only: args.user_only.is_some(),
            fields,
        }
    }

    /// The declared blocks in declaration order (skipped and undeclared fields left out).
    pub(crate) fn blocks(&self) -> Vec<Block<'a>> {
        self.fields.iter().filter_map(WindowField::block).collect()
    }

    /// The field named `name` (as written, without `r#`).
    pub(crate) fn field(&self, name: &str) -> Option<&WindowField<'a>> {
        self.fields.iter().find(|f| f.name == name)
    }
}

impl<'a> WindowField<'a> {
    /// The block this field declares, if it declares one.
    pub(crate) fn block(&self) -> Option<Block<'a>> {
        let a = &self.attrs;
        if a.skip.is_some() {
            return None;
        }
        let (kind, _) = a.kind.as_ref()?;
        Some(Block {
            ident: self.ident,
            ty: &self.field.ty,
            kind: *kind,
            id: a.id.as_ref().map_or_else(|| self.name.replace('_', "-"), syn::LitStr::value),
            label: a.label.as_ref().map_or_else(|| humanize(&self.name), syn::LitStr::value),
            sensitive: a.sensitive.is_some(),
            max_rows: a.max_rows.as_ref().map(|(n, _)| *n),
            ordered: a.ordered.is_some(),
            severity: a.severity.as_ref().map(|(s, _)| *s),
        })
    }

    /// Tokens to point at for this field's block id (the `id = "…"` literal, else the field).
    pub(crate) fn id_tokens(&self) -> TokenStream {
        match &self.attrs.id {
            Some(lit) => lit.to_token_stream(),
            None => self.ident.to_token_stream(),
        }
    }

    /// Whether this field is a `fields` block marked `sensitive`.
    pub(crate) fn is_sensitive(&self) -> bool {
        self.attrs.sensitive.is_some() && self.attrs.skip.is_none()
    }
}

// ---------------------------------------------------------------------------------------------
// #[bridge_actions] / #[bridge_action]

pub(crate) struct Actions<'a> {
    pub(crate) item: &'a ItemImpl,
    pub(crate) krate: Path,
    pub(crate) actions: Vec<Action<'a>>,
}

pub(crate) struct Action<'a> {
    pub(crate) method: &'a ImplItemFn,
    pub(crate) attrs: ActionAttrs,
    /// `name = "…"`, or the method name.
    pub(crate) name: String,
    /// Where the name came from, for errors.
    pub(crate) name_tokens: TokenStream,
    /// `description = "…"`, or the doc comment.
    pub(crate) description: Option<String>,
    pub(crate) receiver: Option<&'a Receiver>,
    /// The typed inputs in order.
    pub(crate) inputs: Vec<Input<'a>>,
    pub(crate) output: Output<'a>,
}

/// A typed input of an action method.
// `Param` outgrows `Context` past clippy's threshold when proc-macro2's `span-locations` is on
// (Tauri's macros turn it on in a workspace build with the Tauri plugin); a method has a few
// inputs, so boxing would buy nothing.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Input<'a> {
    /// `cx: &mut ActionContext`: passed through.
    Context(&'a PatType),
    /// A JSON parameter (or, with `#[bridge(args)]`, the whole argument object).
    Param(Param<'a>),
}

pub(crate) struct Param<'a> {
    pub(crate) arg: &'a PatType,
    /// The binding, when the pattern is a plain identifier.
    pub(crate) ident: Option<&'a Ident>,
    /// The JSON property name: `#[serde(rename = "…")]`, else the identifier without `r#`.
    pub(crate) name: String,
    pub(crate) ty: &'a Type,
    pub(crate) attrs: ParamAttrs,
}

/// What an action returns.
pub(crate) enum Output<'a> {
    /// Nothing, or `()`: ToolResult without `result`.
    Unit,
    /// `T`: `result` is `T` serialized.
    Value(&'a Type),
    /// `Result<T, E>` (by the last path segment; `E` may be omitted by an alias):
    /// `Ok(T)` as above, `Err(e)` → `ActionError::from(e)`. `ok` is `None` for `()`.
    Result { ok: Option<&'a Type>, err: Option<&'a Type> },
}

impl<'a> Actions<'a> {
    pub(crate) fn from_syn(cx: &Ctxt, item: &'a ItemImpl, krate_path: Option<Path>) -> Actions<'a> {
        if let Some((path, _)) = &item.trait_ {
            cx.error_spanned_by(
                path,
                "#[bridge_actions] goes on an inherent `impl Type { … }` block, not on a trait impl",
            );
        }
        let actions = marked_methods(cx, item).map(|(method, first)| Action::from_syn(cx, method, first)).collect();
        Actions { item, krate: krate(krate_path), actions }
    }
}

impl<'a> Action<'a> {
    fn from_syn(cx: &Ctxt, method: &'a ImplItemFn, attr: &'a Attribute) -> Action<'a> {
        let attrs = attr::action_attrs(cx, attr);
        let (name, name_tokens) = match &attrs.name {
            Some(lit) => (lit.value(), lit.to_token_stream()),
            None => (unraw(&method.sig.ident), method.sig.ident.to_token_stream()),
        };
        let description = attrs
            .description
            .as_ref()
            .map(|d| d.value().trim().to_owned())
            .or_else(|| attr::doc_comment(&method.attrs));
        let (receiver, inputs) = inputs(cx, method);
        let output = match &method.sig.output {
            ReturnType::Default => Output::Unit,
            ReturnType::Type(_, ty) if util::is_unit(ty) => Output::Unit,
            ReturnType::Type(_, ty) => match util::last_segment(ty) {
                Some(seg) if seg.ident == "Result" => {
                    let args = util::type_args(seg);
                    match args.first() {
                        Some(ok) => {
                            Output::Result { ok: (!util::is_unit(ok)).then_some(*ok), err: args.get(1).copied() }
                        }
                        None => Output::Value(ty),
                    }
                }
                _ => Output::Value(ty),
            },
        };
        Action { method, attrs, name, name_tokens, description, receiver, inputs, output }
    }

    /// The JSON parameters (everything but the context).
    pub(crate) fn params(&self) -> impl Iterator<Item = &Param<'a>> {
        params(&self.inputs)
    }
}

/// A method's receiver and typed inputs, in order.
fn inputs<'a>(cx: &Ctxt, method: &'a ImplItemFn) -> (Option<&'a Receiver>, Vec<Input<'a>>) {
    let mut receiver = None;
    let mut inputs = Vec::new();
    for input in &method.sig.inputs {
        match input {
            FnArg::Receiver(r) => receiver = Some(r),
            FnArg::Typed(arg) if util::is_action_context(&arg.ty) => inputs.push(Input::Context(arg)),
            FnArg::Typed(arg) => {
                let ident = match &*arg.pat {
                    Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => Some(&p.ident),
                    _ => None,
                };
                let attrs = attr::param_attrs(cx, &arg.attrs);
                let name = match &attrs.rename {
                    Some(lit) => lit.value(),
                    None => ident.map(unraw).unwrap_or_default(),
                };
                inputs.push(Input::Param(Param { arg, ident, name, ty: &arg.ty, attrs }));
            }
        }
    }
    (receiver, inputs)
}

/// The JSON parameters of `inputs` (everything but a context).
pub(crate) fn params<'i, 'a>(inputs: &'i [Input<'a>]) -> impl Iterator<Item = &'i Param<'a>> {
    inputs.iter().filter_map(|i| match i {
        Input::Param(p) => Some(p),
        Input::Context(_) => None,
    })
}

/// The `#[bridge(args)]` parameter of `inputs`, if any (the first, if several).
pub(crate) fn args_param<'i, 'a>(inputs: &'i [Input<'a>]) -> Option<&'i Param<'a>> {
    params(inputs).find(|p| p.attrs.args.is_some())
}

// ---------------------------------------------------------------------------------------------
// #[bridge_actions(companion)]: desktop-companion capabilities

pub(crate) struct Capabilities<'a> {
    pub(crate) item: &'a ItemImpl,
    pub(crate) krate: Path,
    pub(crate) capabilities: Vec<Capability<'a>>,
}

/// One `#[bridge_action(…)]` method of a companion impl: a capability declaration whose body
/// is the semantic params check (CP-2-25).
pub(crate) struct Capability<'a> {
    pub(crate) method: &'a ImplItemFn,
    /// The `#[bridge_action(…)]` attribute, for "missing key" errors.
    pub(crate) attr: &'a Attribute,
    pub(crate) attrs: CapabilityAttrs,
    /// Whether the attribute parsed without errors (later rules stay quiet about a capability
    /// whose attribute is already reported, so one mistake gives one message).
    pub(crate) attrs_ok: bool,
    /// `description = "…"`, or the doc comment.
    pub(crate) description: Option<String>,
    pub(crate) receiver: Option<&'a Receiver>,
    pub(crate) inputs: Vec<Input<'a>>,
    pub(crate) returns: CheckReturn<'a>,
}

/// What a capability method returns.
pub(crate) enum CheckReturn<'a> {
    /// Nothing: no semantic check (the body must be empty; it never runs).
    Unit,
    /// `Result<(), E>`: the semantic check; `Err(e)` → `ActionError::from(e)` → problems.
    Result { err: Option<&'a Type> },
    /// Anything else (an error).
    Other(&'a Type),
}

impl<'a> Capabilities<'a> {
    pub(crate) fn from_syn(cx: &Ctxt, item: &'a ItemImpl, krate_path: Option<Path>) -> Capabilities<'a> {
        if let Some((path, _)) = &item.trait_ {
            cx.error_spanned_by(
                path,
                "#[bridge_actions(companion)] goes on an inherent `impl Type { … }` block, not on a trait impl",
            );
        }
        let capabilities =
            marked_methods(cx, item).map(|(method, first)| Capability::from_syn(cx, method, first)).collect();
        Capabilities { item, krate: krate(krate_path), capabilities }
    }
}

impl<'a> Capability<'a> {
    fn from_syn(cx: &Ctxt, method: &'a ImplItemFn, attr: &'a Attribute) -> Capability<'a> {
        let before = cx.len();
        let attrs = attr::capability_attrs(cx, attr);
        let attrs_ok = cx.len() == before;
        let description = attrs
            .description
            .as_ref()
            .map(|d| d.value().trim().to_owned())
            .or_else(|| attr::doc_comment(&method.attrs));
        let (receiver, inputs) = inputs(cx, method);
        let returns = match &method.sig.output {
            ReturnType::Default => CheckReturn::Unit,
            ReturnType::Type(_, ty) if util::is_unit(ty) => CheckReturn::Unit,
            ReturnType::Type(_, ty) => match util::last_segment(ty) {
                Some(seg) if seg.ident == "Result" => match util::type_args(seg).as_slice() {
                    [ok] if util::is_unit(ok) => CheckReturn::Result { err: None },
                    [ok, err] if util::is_unit(ok) => CheckReturn::Result { err: Some(err) },
                    _ => CheckReturn::Other(ty),
                },
                _ => CheckReturn::Other(ty),
            },
        };
        Capability { method, attr, attrs, attrs_ok, description, receiver, inputs, returns }
    }

    /// The capability id as written (`""` when missing).
    pub(crate) fn id(&self) -> String {
        self.attrs.id.as_ref().map(syn::LitStr::value).unwrap_or_default()
    }

    /// The JSON parameters.
    pub(crate) fn params(&self) -> impl Iterator<Item = &Param<'a>> {
        params(&self.inputs)
    }

    /// The `#[bridge(args)]` parameter, if any.
    pub(crate) fn args_param(&self) -> Option<&Param<'a>> {
        args_param(&self.inputs)
    }
}

// ---------------------------------------------------------------------------------------------
// #[derive(BridgeFields)] / #[derive(BridgeRow)]

pub(crate) struct Derived<'a> {
    pub(crate) input: &'a DeriveInput,
    pub(crate) kind: DeriveKind,
    pub(crate) krate: Path,
    pub(crate) fields: Vec<DerivedField<'a>>,
}

pub(crate) struct DerivedField<'a> {
    pub(crate) field: &'a Field,
    pub(crate) ident: &'a Ident,
    /// The Rust field name without `r#` (`FieldSpec::key`).
    pub(crate) key: String,
    pub(crate) label: String,
    pub(crate) attrs: ItemFieldAttrs,
}

impl DerivedField<'_> {
    /// `#[bridge(sensitive)]`, or a field of type `Secret<…>`: its value is never read and the
    /// item says `"sensitive": true` (GB-4.5-2) whether or not the author remembered the flag.
    pub(crate) fn sensitive(&self) -> bool {
        self.attrs.sensitive.is_some() || util::last_segment(&self.field.ty).is_some_and(|s| s.ident == "Secret")
    }
    pub(crate) fn skip(&self) -> bool {
        self.attrs.skip.is_some()
    }
}

impl<'a> Derived<'a> {
    pub(crate) fn from_syn(cx: &Ctxt, input: &'a DeriveInput, kind: DeriveKind) -> Derived<'a> {
        let krate = krate(attr::container_attrs(cx, &input.attrs));
        let what = match kind {
            DeriveKind::Fields => "#[derive(BridgeFields)] needs a struct with named fields (one item per field)",
            DeriveKind::Row => "#[derive(BridgeRow)] needs a struct with named fields (one column per field)",
            DeriveKind::Args => {
                // A marker: only the shape matters; the fields are serde's and schemars'.
                args_shape(cx, input);
                for field in input_fields(input) {
                    let _ = attr::item_field_attrs(cx, &field.attrs, kind);
                }
                return Derived { input, kind, krate, fields: Vec::new() };
            }
        };
        let fields = match &input.data {
            Data::Struct(s) => match &s.fields {
                Fields::Named(named) => named
                    .named
                    .iter()
                    .filter_map(|field| {
                        let ident = field.ident.as_ref()?;
                        let attrs = attr::item_field_attrs(cx, &field.attrs, kind);
                        let key = unraw(ident);
                        let label = attrs.label.as_ref().map_or_else(|| humanize(&key), syn::LitStr::value);
                        Some(DerivedField { field, ident, key, label, attrs })
                    })
                    .collect(),
                _ => {
                    cx.error_spanned_by(&input.ident, what);
                    Vec::new()
                }
            },
            Data::Enum(e) => {
                cx.error_spanned_by(e.enum_token, what);
                Vec::new()
            }
            Data::Union(u) => {
                cx.error_spanned_by(u.union_token, what);
                Vec::new()
            }
        };
        Derived { input, kind, krate, fields }
    }
}

/// `#[derive(BridgeArgs)]` on anything but a struct with named fields: one error at the item,
/// with the hint to take the type as one named parameter instead.
fn args_shape(cx: &Ctxt, input: &DeriveInput) {
    let ident = &input.ident;
    let instead = format!(
        "take it as one named parameter instead, e.g. `{}: {ident}` without #[bridge(args)]",
        util::snake_case(&unraw(ident))
    );
    let whole = "#[derive(BridgeArgs)] needs a struct with named fields, each one property of the argument object \
                 (MCP inputSchema root is type: object)";
    match &input.data {
        Data::Struct(s) => match &s.fields {
            Fields::Named(_) => {}
            Fields::Unnamed(_) => cx.error_spanned_by(
                ident,
                format!("`{ident}` is a tuple struct, whose JSON is an array: {whole}; name its fields, or {instead}"),
            ),
            Fields::Unit => cx.error_spanned_by(
                ident,
                format!(
                    "`{ident}` is a unit struct, whose JSON is `null`: {whole}; for an action without arguments \
                     leave out the parameter, or {instead}"
                ),
            ),
        },
        Data::Enum(e) => cx.error_spanned_by(
            {
                let token = e.enum_token;
                quote::quote!(#token #ident)
            },
            format!("`{ident}` is an enum, not an object with fixed properties: {whole}; {instead}"),
        ),
        Data::Union(u) => {
            let token = u.union_token;
            cx.error_spanned_by(quote::quote!(#token #ident), format!("`{ident}` is a union: {whole}"));
        }
    }
}

/// The fields of a derive input's struct (none for an enum or union).
fn input_fields(input: &DeriveInput) -> impl Iterator<Item = &Field> {
    match &input.data {
        Data::Struct(s) => Some(s.fields.iter()),
        _ => None,
    }
    .into_iter()
    .flatten()
}

/// The methods of `item` marked `#[bridge_action]`, each with its first mark; a second mark on
/// one method is reported.
fn marked_methods<'a, 'c>(
    cx: &'c Ctxt,
    item: &'a ItemImpl,
) -> impl Iterator<Item = (&'a ImplItemFn, &'a Attribute)> + 'c
where
    'a: 'c,
{
    item.items.iter().filter_map(move |impl_item| {
        let ImplItem::Fn(method) = impl_item else { return None };
        let mut marks = method.attrs.iter().filter(|a| attr::is_bridge_action(a));
        let first = marks.next()?;
        for extra in marks {
            cx.error_spanned_by(extra, "duplicate #[bridge_action] on one method");
        }
        Some((method, first))
    })
}
