//! The parameters of a method whose parameters become one JSON object, the same for a GUI
//! action (its tool arguments) and a companion capability (its request params): the type whose
//! derived `JsonSchema` is the `inputSchema`, and the code that reads them at run time
//! (`ParamReader`), one parameter at a time so that every bad one is reported with its name
//! (GB-7.3-1, CP-2-25), each read spanned at the author's type, where a type that is not
//! `DeserializeOwned` (or `Default`, with `#[serde(default)]`) is then reported.

use super::{is_option, respan};
use crate::ast::{self, Input, Param};
use crate::util::mentions;
use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::spanned::Spanned as _;

/// The surface a method belongs to, for what its parameter code differs in.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Surface {
    /// A GUI action: reads its arguments `__args` (a `Map`, moved).
    Action,
    /// A capability: reads a copy of its params `__params` (a `&Value`), which have no nulls
    /// (CP-2-22): an `Option<T>` parameter may be absent but not `null`.
    Capability,
}

impl Surface {
    /// A reader over the method's arguments (`__args`) or params (`__params`).
    fn reader(self, p: &TokenStream) -> TokenStream {
        match self {
            Surface::Action => quote!(#p::ParamReader::new(#p::Surface::Action, __args)),
            Surface::Capability => quote!(#p::ParamReader::of(#p::Surface::Capability, __params)),
        }
    }

    /// The error the method reports its parameters' problems as (a runtime `SurfaceError`).
    fn error(self, p: &TokenStream) -> TokenStream {
        match self {
            Surface::Action => quote!(#p::ActionError),
            Surface::Capability => quote!(::std::vec::Vec<#p::FieldProblem>),
        }
    }
}

/// The type whose `JsonSchema` is a method's `inputSchema`, and the code that declares it.
pub(super) struct Declared {
    /// The generated params struct, for the enclosing `const _` block.
    pub(super) item: Option<TokenStream>,
    /// `require_args::<P>();` at the author's `#[bridge(args)]` type `P`, so that a `P` without
    /// `BridgeArgs` (an enum, a tuple struct, …) is reported there.
    pub(super) check: Option<TokenStream>,
    /// The type, as the spec names it.
    pub(super) ty: TokenStream,
    /// Where an unmet bound of the type is reported (the author's type).
    pub(super) span: Span,
}

/// The `inputSchema` type of the `index`-th method of an impl with `generics`: its
/// `#[bridge(args)]` type, or a generated struct `__BridgeParamsN` of its parameters.
pub(super) fn declare(
    surface: Surface,
    inputs: &[Input],
    index: usize,
    generics: &syn::Generics,
    p: &TokenStream,
) -> Declared {
    if let Some(args) = ast::args_param(inputs) {
        let ty = args.ty;
        let span = ty.span();
        let check = {
            let p = respan(p, span);
            quote_spanned!(span=> #p::require_args::<#ty>();)
        };
        return Declared { item: None, check: Some(check), ty: quote_spanned!(span=> #ty), span };
    }
    let params: Vec<&Param> = ast::params(inputs).collect();
    let name = format_ident!("__BridgeParams{}", index);
    let (item, ty, span) = params_struct(surface, &params, &name, generics, p);
    Declared { item: Some(item), check: None, ty, span }
}

/// `struct __BridgeParamsN<…> { name: Type, … }` with `#[derive(JsonSchema)]`: the parameters
/// as an object schema, `additionalProperties: false`, doc/description on each property, and
/// each parameter's `#[schemars(…)]` / `#[serde(rename, default)]`. Generic over the impl's
/// type and const parameters its fields name (`doc: T` in `impl<T> Editor<T>`), so each
/// instantiation has its own schema; returns the struct and the type to name it by
/// (`__BridgeParamsN<T>`) with the span of the first parameter type naming a generic parameter,
/// where a missing `T: JsonSchema` is then reported.
fn params_struct(
    surface: Surface,
    params: &[&Param],
    name: &syn::Ident,
    generics: &syn::Generics,
    p: &TokenStream,
) -> (TokenStream, TokenStream, Span) {
    let schemars_crate = format!("{p}::schemars").replace(' ', "");
    let fields: Vec<TokenStream> =
        params.iter().filter_map(|param| Some(schema_field(surface, param, param.ident?))).collect();
    let names = |param: &Param, g: &syn::GenericParam| generic_ident(g).is_some_and(|i| mentions(param.ty, i));
    let used: Vec<&syn::GenericParam> =
        generics.params.iter().filter(|g| params.iter().any(|param| names(param, g))).collect();
    let generic = |param: &Param| used.iter().any(|g| names(param, g));
    // The struct declares the parameters without the impl's bounds.
    let decls = used.iter().map(|g| match g {
        syn::GenericParam::Const(c) => {
            let (ident, ty) = (&c.ident, &c.ty);
            quote!(const #ident: #ty)
        }
        other => generic_ident(other).to_token_stream(),
    });
    let args = used.iter().map(|g| generic_ident(g));
    let (decls, args) =
        if used.is_empty() { (quote!(), quote!()) } else { (quote!(<#(#decls),*>), quote!(<#(#args),*>)) };
    // The derive's bounds are the fields' (`Vec<T>: JsonSchema`), which the impl's inferred
    // bounds provide; its default, `T: JsonSchema`, would not follow from them.
    let bound = (!used.is_empty()).then(|| {
        let predicates: Vec<String> = params
            .iter()
            .filter(|param| !param.attrs.schemars_with && generic(param))
            .map(|param| format!("{}: {schemars_crate}::JsonSchema", param.ty.to_token_stream()))
            .collect();
        let bound = syn::LitStr::new(&predicates.join(", "), Span::call_site());
        quote!(#[schemars(bound = #bound)])
    });
    let item = quote! {
        #[derive(#p::schemars::JsonSchema)]
        #[schemars(crate = #schemars_crate, deny_unknown_fields)]
        #bound
        #[allow(dead_code, non_camel_case_types)]
        struct #name #decls { #(#fields)* }
    };
    let span = params.iter().find(|param| generic(param)).map_or_else(Span::call_site, |param| param.ty.span());
    let mut name = name.clone();
    name.set_span(span);
    (item, quote_spanned!(span=> #name #args), span)
}

fn generic_ident(g: &syn::GenericParam) -> Option<&syn::Ident> {
    match g {
        syn::GenericParam::Type(t) => Some(&t.ident),
        syn::GenericParam::Const(c) => Some(&c.ident),
        syn::GenericParam::Lifetime(_) => None,
    }
}

/// A parameter's field of the generated params struct: its doc as the description, its
/// `#[schemars(…)]` as written, `#[serde(rename = "…")]`. An optional property
/// (`#[serde(default)]`, and for a capability `Option<T>`; an explicit `null` counts as absent,
/// the runtime drops it before validation) is declared `Option<T>` with the schema of `T`, so
/// that schemars marks it optional without computing a default value (the reader supplies
/// `T::default()`, and its bound is reported once, at the author's type).
fn schema_field(surface: Surface, param: &Param, ident: &syn::Ident) -> TokenStream {
    let ty = param.ty;
    let span = ty.span();
    // Generated attributes are spanned at the type: the derive reports a missing
    // `JsonSchema` at the field's first token.
    let doc = param.attrs.description.as_ref().map(|d| quote_spanned!(span=> #[doc = #d]));
    let schemars = &param.attrs.schemars;
    let sensitive =
        param.attrs.sensitive.as_ref().map(|_| quote_spanned!(span=> #[schemars(extend("writeOnly" = true))]));
    let rename = param.attrs.rename.as_ref().map(|lit| quote_spanned!(lit.span()=> #[serde(rename = #lit)]));
    let inner = match crate::util::generic_of(ty, "Option") {
        Some(inner) if surface == Surface::Capability => Some(inner),
        Some(_) => None,
        None if param.attrs.default.is_some() => Some(ty),
        None => None,
    };
    let Some(inner) = inner else {
        return quote!(#doc #(#schemars)* #sensitive #rename #ident: #ty,);
    };
    let with = (!param.attrs.schemars_with).then(|| {
        let with = syn::LitStr::new(&inner.to_token_stream().to_string(), inner.span());
        quote_spanned!(span=> #[schemars(with = #with)])
    });
    quote_spanned! {span=>
        #doc
        #[serde(default, skip_serializing_if = "::core::option::Option::is_none")]
        #with
        #(#schemars)*
        #sensitive
        #rename
        #ident: ::core::option::Option<#inner>,
    }
}

/// Statements that read a method's parameters, binding `__p0`, `__p1`, … in order; on a
/// problem they return it as the surface's error (`?`): `validation_failed` for an action,
/// problems for a capability's check. A `#[bridge(args)]` parameter is the whole object.
pub(super) fn read(surface: Surface, inputs: &[Input], p: &TokenStream) -> (TokenStream, Vec<syn::Ident>) {
    let params: Vec<&Param> = ast::params(inputs).collect();
    let locals: Vec<syn::Ident> = (0..params.len()).map(|i| format_ident!("__p{}", i)).collect();
    let (reader, error) = (surface.reader(p), surface.error(p));
    if let Some(args) = ast::args_param(inputs) {
        let ty = args.ty;
        let span = ty.span();
        let whole = {
            let p = respan(p, span);
            quote_spanned!(span=> #p::ParamReader::whole::<#ty, #error>(#reader))
        };
        return (quote!(let __p0 = #whole?;), locals);
    }
    let finish = quote!(#p::ParamReader::finish::<#error>);
    if params.is_empty() {
        return (quote!(#finish(#reader)?;), locals);
    }
    let takes = params.iter().zip(&locals).map(|(param, local)| take(param, local, p));
    let some = quote!(::core::option::Option::Some);
    let reads = quote! {
        let mut __reader = #reader;
        #(#takes)*
        // A parameter is `None` only when its problem was recorded.
        let (#(#some(#locals),)*) = (#(#locals,)*) else {
            return ::core::result::Result::Err(#p::ParamReader::fail::<#error>(__reader));
        };
        #finish(__reader)?;
    };
    (reads, locals)
}

/// `let __pN = ParamReader::take::<T>(&mut __reader, "name");`, spanned at `T`. `name` is the
/// JSON name, as in the schema.
fn take(param: &Param, local: &syn::Ident, p: &TokenStream) -> TokenStream {
    let ty = param.ty;
    let name = &param.name;
    let span = ty.span();
    let p = respan(p, span);
    let read = if param.attrs.default.is_some() && !is_option(ty) {
        quote_spanned!(span=> #p::ParamReader::take_or_default::<#ty>(&mut __reader, #name))
    } else {
        quote_spanned!(span=> #p::ParamReader::take::<#ty>(&mut __reader, #name))
    };
    quote!(let #local = #read;)
}
