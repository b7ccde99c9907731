//! The drivers (parse → `ast` → `valid` → code or `fallback`) and the code generation.
//!
//! Generated paths are absolute (`::core`, `::std`, the runtime through `<crate>::__private`),
//! output is wrapped in `const _: () = { … };`, and expressions that put a bound on an
//! author's type are spanned at that type, so rustc's errors point there.

mod actions;
mod capabilities;
mod derive;
mod params;
mod window;

use crate::ast::{Actions, Capabilities, Derived, Window};
use crate::attr::{self, DeriveKind};
use crate::ctxt::Ctxt;
use crate::{fallback, strip, valid};
use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::spanned::Spanned as _;
use syn::{DeriveInput, Generics, Item, Path};

/// `#[bridge_window(…)] struct …`.
pub(crate) fn bridge_window(args: TokenStream, input: TokenStream) -> TokenStream {
    let item = match syn::parse2::<Item>(input.clone()) {
        Ok(Item::Struct(item)) => item,
        Ok(other) => return with_error(other, "#[bridge_window] goes on a struct with named fields"),
        Err(e) => return with_error(input, e),
    };
    let cx = Ctxt::new();
    let args = attr::window_args(&cx, args);
    let w = Window::from_syn(&cx, &item, args);
    valid::window(&cx, &w);
    let stripped = strip::window(&item);
    let generated = match cx.check() {
        Ok(()) => window::window(&w),
        Err(e) => {
            let stub = fallback::window(&w.krate, &item.ident, &item.generics);
            let e = e.into_compile_error();
            quote!(#e #stub)
        }
    };
    quote!(#stripped #generated)
}

/// `#[bridge_actions(…)] impl … { #[bridge_action(…)] fn …}`.
pub(crate) fn bridge_actions(args: TokenStream, input: TokenStream) -> TokenStream {
    let item = match syn::parse2::<Item>(input.clone()) {
        Ok(Item::Impl(item)) => item,
        Ok(other) => return with_error(other, "#[bridge_actions] goes on an `impl Type { … }` block"),
        Err(e) => return with_error(input, e),
    };
    let cx = Ctxt::new();
    let args = attr::actions_args(&cx, args);
    if args.companion.is_some() {
        return companion(cx, &item, args.krate);
    }
    let a = Actions::from_syn(&cx, &item, args.krate);
    valid::actions(&cx, &a);
    let stripped = strip::actions(&item);
    let generated = match cx.check() {
        Ok(()) => actions::actions(&a),
        Err(e) => {
            let stub = fallback::actions(&a.krate, &item.self_ty, &item.generics);
            let e = e.into_compile_error();
            quote!(#e #stub)
        }
    };
    quote!(#stripped #generated)
}

/// `#[bridge_actions(companion)] impl … { #[bridge_action(id = …, …)] fn …}`.
fn companion(cx: Ctxt, item: &syn::ItemImpl, krate: Option<Path>) -> TokenStream {
    let c = Capabilities::from_syn(&cx, item, krate);
    valid::capabilities(&cx, &c);
    let stripped = strip::capabilities(item);
    let generated = match cx.check() {
        Ok(()) => capabilities::capabilities(&c),
        Err(e) => {
            let stub = fallback::capabilities(&c.krate, &item.self_ty, &item.generics);
            let e = e.into_compile_error();
            quote!(#e #stub)
        }
    };
    quote!(#stripped #generated)
}

/// `#[bridge_action]`: a no-op inside a `#[bridge_actions]` impl (which has read it and left
/// its marker), an error anywhere else.
pub(crate) fn bridge_action(args: TokenStream, input: TokenStream) -> TokenStream {
    let mut tokens = args.clone().into_iter();
    if let (Some(proc_macro2::TokenTree::Ident(marker)), None) = (tokens.next(), tokens.next())
        && marker == strip::CHECKED
    {
        return input;
    }
    let span = args.clone().into_iter().next().map_or_else(Span::call_site, |t| t.span());
    let e = syn::Error::new(
        span,
        "#[bridge_action] only works on a method inside a #[bridge_actions] impl block: \
         put #[bridge_actions] on the enclosing `impl`",
    )
    .into_compile_error();
    // Re-emit the method without our parameter attributes, so this stays the only error.
    let item = match syn::parse2::<syn::ImplItemFn>(input.clone()) {
        Ok(mut method) => {
            strip::params(&mut method);
            method.into_token_stream()
        }
        Err(_) => input,
    };
    quote!(#e #item)
}

/// `#[derive(BridgeFields)]`.
pub(crate) fn derive_fields(input: &DeriveInput) -> TokenStream {
    derive(input, DeriveKind::Fields)
}

/// `#[derive(BridgeRow)]`.
pub(crate) fn derive_row(input: &DeriveInput) -> TokenStream {
    derive(input, DeriveKind::Row)
}

/// `#[derive(BridgeArgs)]`.
pub(crate) fn derive_args(input: &DeriveInput) -> TokenStream {
    derive(input, DeriveKind::Args)
}

fn derive(input: &DeriveInput, kind: DeriveKind) -> TokenStream {
    let cx = Ctxt::new();
    let d = Derived::from_syn(&cx, input, kind);
    valid::derived(&cx, &d);
    match (cx.check(), kind) {
        (Ok(()), DeriveKind::Fields) => derive::fields(&d),
        (Ok(()), DeriveKind::Row) => derive::row(&d),
        (Ok(()), DeriveKind::Args) => derive::args(&d),
        (Err(e), _) => {
            let stub = match kind {
                DeriveKind::Fields => fallback::fields(&d.krate, &input.ident, &input.generics),
                DeriveKind::Row => fallback::row(&d.krate, &input.ident, &input.generics),
                // The marker impl is the whole derive; it stays, so uses report nothing more.
                DeriveKind::Args => derive::args(&d),
            };
            let e = e.into_compile_error();
            quote!(#e #stub)
        }
    }
}

/// The item unchanged, plus an error spanning it.
fn with_error(item: impl ToTokens, msg: impl std::fmt::Display) -> TokenStream {
    let item = item.into_token_stream();
    let e = syn::Error::new_spanned(&item, msg).into_compile_error();
    quote!(#e #item)
}

/// The where clause of a generated impl: the author's predicates; `T: Send + 'static` for each
/// type parameter, since the bridge owns windows and action sets (`BridgeWindow` and
/// `BridgeActions` are `Send + 'static`), so a generic one is registered per owned
/// instantiation; and `inferred`, the bounds the generated code needs of the author's types
/// that name a type parameter (as serde infers `T: Serialize`), so the author need not repeat
/// them and an instantiation that lacks one is reported where it is registered.
pub(crate) fn where_clause(generics: &Generics, inferred: &[TokenStream]) -> TokenStream {
    let existing = generics.where_clause.iter().flat_map(|w| w.predicates.iter()).map(ToTokens::to_token_stream);
    let owned = generics.type_params().map(|t| {
        let ident = &t.ident;
        quote!(#ident: ::core::marker::Send + 'static)
    });
    let all: Vec<TokenStream> = existing.chain(owned).chain(inferred.iter().cloned()).collect();
    if all.is_empty() { TokenStream::new() } else { quote!(where #(#all),*) }
}

/// `ty: bounds`, spanned at the author's type, if `ty` names one of `generics`' type parameters.
fn inferred_bound(generics: &Generics, ty: &syn::Type, bounds: &TokenStream) -> Option<TokenStream> {
    if !generics.type_params().any(|t| crate::util::mentions(ty, &t.ident)) {
        return None;
    }
    let span = ty.span();
    let bounds = respan(bounds, span);
    Some(quote_spanned!(span=> #ty: #bounds))
}

/// Whether a parameter's type is written `Option<…>` (optional: absent reads as `None`).
fn is_option(ty: &syn::Type) -> bool {
    crate::util::generic_of(ty, "Option").is_some()
}

/// `<crate>::__private`.
fn private(krate: &Path) -> TokenStream {
    quote!(#krate::__private)
}

/// `tokens` with every span set to `span`: for the runtime path inside a `quote_spanned!`
/// expression, so a failed bound is reported at the author's type alone (no extra label at the
/// attribute).
fn respan(tokens: &TokenStream, span: Span) -> TokenStream {
    tokens
        .clone()
        .into_iter()
        .map(|mut tt| {
            if let proc_macro2::TokenTree::Group(g) = &tt {
                let mut group = proc_macro2::Group::new(g.delimiter(), respan(&g.stream(), span));
                group.set_span(span);
                tt = proc_macro2::TokenTree::Group(group);
            } else {
                tt.set_span(span);
            }
            tt
        })
        .collect()
}

/// A call of a method named by an attribute (`title = my_title` → `Self::my_title(self)`,
/// `available = module::f` → `module::f(self)`), spanned at the author's path so that a missing
/// or mistyped method is reported there (it may live in another `impl` block, so the macro
/// cannot check it itself).
fn call_with_self(path: &Path) -> TokenStream {
    let span = path.span();
    match path.get_ident() {
        Some(ident) => quote_spanned!(span=> Self::#ident(self)),
        None => quote_spanned!(span=> #path(self)),
    }
}
