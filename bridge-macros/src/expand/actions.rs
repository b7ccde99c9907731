//! `#[bridge_actions]` → `impl DescribeActions` (the specs: what the catalog reads) and
//! `impl BridgeActions` (availability, invocation), plus one hidden parameter struct per action,
//! whose derived `JsonSchema` is the action's `inputSchema`.
//!
//! Arguments are read one parameter at a time (`ParamReader`), so every bad parameter is
//! reported with its name (GB-7.3-1), and a parameter type that is not `DeserializeOwned` is
//! reported at the author's type.

use super::{call_with_self, inferred_bound, is_option, private, respan, schema_field, where_clause};
use crate::ast::{Action, Actions, Input, Output, Param};
use crate::util::mentions;
use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::spanned::Spanned as _;

pub(crate) fn actions(a: &Actions) -> TokenStream {
    let p = private(&a.krate);
    let self_ty = &a.item.self_ty;
    let generics = &a.item.generics;
    let (impl_generics, _, _) = generics.split_for_impl();
    let where_clause = where_clause(generics, &inferred_bounds(a, &p));

    let schemars_crate = format!("{p}::schemars").replace(' ', "");
    let mut structs = Vec::new();
    let mut specs = Vec::new();
    let mut available = Vec::new();
    let mut arms = Vec::new();
    let mut args_checks = Vec::new();
    for (i, action) in a.actions.iter().enumerate() {
        let (params_ty, params_span) = match action.args_param() {
            Some(args) => {
                let ty = args.ty;
                args_checks.push(require_args(ty, &p));
                (quote!(#ty), ty.span())
            }
            None => {
                let name = format_ident!("__BridgeParams{}", i);
                let (item, ty, span) = params_struct(a, action, &name, &p, &schemars_crate);
                structs.push(item);
                (ty, span)
            }
        };
        specs.push(spec(action, &params_ty, params_span, &p));
        if let Some(path) = &action.attrs.available {
            let name = &action.name;
            let call = call_with_self(path);
            available.push(quote!(#name => #call,));
        }
        arms.push(invoke_arm(action, &p));
    }

    let specs = if specs.is_empty() { quote!(::std::vec::Vec::new()) } else { quote!(::std::vec![#(#specs),*]) };
    let available = if available.is_empty() {
        quote! {
            let _ = __action;
            true
        }
    } else {
        quote! {
            match __action {
                #(#available)*
                _ => true,
            }
        }
    };
    let unknown = quote! {
        ::core::result::Result::Err(#p::ActionError::not_available(::std::format!(
            "No action named '{}'", __action
        )))
    };
    let invoke = if arms.is_empty() {
        quote! {
            let _ = (__args, __cx);
            #unknown
        }
    } else {
        quote! {
            match __action {
                #(#arms)*
                _ => {
                    let _ = (__args, __cx);
                    #unknown
                }
            }
        }
    };

    quote! {
        #[allow(unused_qualifications)]
        const _: () = {
            #(#structs)*

            #[automatically_derived]
            impl #impl_generics #p::DescribeActions for #self_ty #where_clause {
                fn action_specs_for(__window_level: bool) -> ::std::vec::Vec<#p::ActionSpec> {
                    #(#args_checks)*
                    #specs
                }
            }

            #[automatically_derived]
            impl #impl_generics #p::BridgeActions for #self_ty #where_clause {
                fn action_available(&self, __action: &str) -> bool {
                    #available
                }

                fn invoke_action(
                    &mut self,
                    __action: &str,
                    __args: #p::serde_json::Map<::std::string::String, #p::serde_json::Value>,
                    __cx: &mut #p::ActionContext<'_>,
                ) -> ::core::result::Result<::core::option::Option<#p::serde_json::Value>, #p::ActionError> {
                    #invoke
                }
            }
        };
    }
}

/// What the generated code needs of the author's types that name a type parameter of a
/// generic impl (`doc: T` in `impl<T> Editor<T>`): parameters are `DeserializeOwned +
/// JsonSchema` (and `Default` with `#[serde(default)]`), a `#[bridge(args)]` type also
/// `BridgeArgs`, results `Serialize + JsonSchema`.
fn inferred_bounds(a: &Actions, p: &TokenStream) -> Vec<TokenStream> {
    let generics = &a.item.generics;
    let de = quote!(#p::serde::de::DeserializeOwned);
    let schema = quote!(#p::schemars::JsonSchema);
    let mut bounds = Vec::new();
    for action in &a.actions {
        for param in action.params() {
            let bound = if param.attrs.args.is_some() {
                quote!(#p::BridgeArgs + #de + #schema)
            } else if param.attrs.default.is_some() && !is_option(param.ty) {
                quote!(#de + ::core::default::Default + #schema)
            } else {
                quote!(#de + #schema)
            };
            bounds.extend(inferred_bound(generics, param.ty, &bound));
        }
        if let Output::Value(ty) | Output::Result { ok: Some(ty), .. } = &action.output {
            bounds.extend(inferred_bound(generics, ty, &quote!(#p::serde::Serialize + #schema)));
        }
    }
    bounds
}

/// `require_args::<P>();` spanned at the author's `#[bridge(args)]` type `P`, so that a `P`
/// without `BridgeArgs` (an enum, a tuple struct, …) is reported there.
pub(super) fn require_args(ty: &syn::Type, p: &TokenStream) -> TokenStream {
    let span = ty.span();
    let p = respan(p, span);
    quote_spanned!(span=> #p::require_args::<#ty>();)
}

/// `struct __BridgeParamsN<…> { name: Type, … }` with `#[derive(JsonSchema)]`: the parameters
/// as an object schema, `additionalProperties: false`, doc/description on each property, and
/// each parameter's `#[schemars(…)]` / `#[serde(rename, default)]` (as in companion mode).
/// Generic over the impl's type and const parameters its fields name (`doc: T` in
/// `impl<T> Editor<T>`), so each instantiation has its own schema; returns the struct and the
/// type to name it by (`__BridgeParamsN<T>`) with the span of the first parameter type naming a
/// generic parameter, where a missing `T: JsonSchema` is then reported.
fn params_struct(
    a: &Actions,
    action: &Action,
    name: &syn::Ident,
    p: &TokenStream,
    schemars_crate: &str,
) -> (TokenStream, TokenStream, Span) {
    let fields: Vec<TokenStream> =
        action.params().filter_map(|param| Some(schema_field(param, param.ident?, false))).collect();
    let names = |param: &Param, g: &syn::GenericParam| generic_ident(g).is_some_and(|i| mentions(param.ty, i));
    let used: Vec<&syn::GenericParam> =
        a.item.generics.params.iter().filter(|g| action.params().any(|param| names(param, g))).collect();
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
        let predicates: Vec<String> = action
            .params()
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
    let span = action.params().find(|param| generic(param)).map_or_else(Span::call_site, |param| param.ty.span());
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

/// `params_span`: where an unmet bound of the params type is reported (the author's type).
fn spec(action: &Action, params_ty: &TokenStream, params_span: Span, p: &TokenStream) -> TokenStream {
    let name = &action.name;
    let description = action.description.clone().unwrap_or_default();
    let title = action.attrs.title.as_ref().map(|t| quote!(.title(#t)));
    let read_only = action.attrs.read_only.is_some();
    let destructive = action.attrs.destructive.is_some();
    let idempotent = action.attrs.idempotent.is_some();
    let open_world = action.attrs.open_world.is_some();
    let conditional = action.attrs.available.is_some();
    let returns = match &action.output {
        Output::Value(ty) | Output::Result { ok: Some(ty), .. } => {
            let span = ty.span();
            Some(quote_spanned!(span=> .returns::<#ty>()))
        }
        Output::Unit | Output::Result { ok: None, .. } => None,
    };
    let params = quote_spanned!(params_span=> .params::<#params_ty>());
    quote! {
        #p::ActionSpec::new(#name)
            #title
            .description(#description)
            .hints(#p::ActionHints {
                read_only: #read_only,
                destructive: #destructive,
                idempotent: #idempotent,
                open_world: #open_world,
            })
            .conditional(#conditional)
            #params
            #returns
            .finish(__window_level)
    }
}

/// `"name" => { read the parameters; call the method; convert its return }`.
fn invoke_arm(action: &Action, p: &TokenStream) -> TokenStream {
    let name = &action.name;
    let method = &action.method.sig.ident;
    let locals: Vec<syn::Ident> = (0..action.params().count()).map(|i| format_ident!("__p{}", i)).collect();
    let mut next = locals.iter();
    let call_args: Vec<TokenStream> = action
        .inputs
        .iter()
        .map(|input| match input {
            Input::Context(_) => quote!(__cx),
            Input::Param(_) => {
                let local = next.next();
                quote!(#local)
            }
        })
        .collect();
    let call = quote!(self.#method(#(#call_args),*));
    let ret = convert(action, &call, p);

    if let Some(args) = action.args_param() {
        let ty = args.ty;
        let span = ty.span();
        let p = respan(p, span);
        let read = quote_spanned!(span=> #p::ParamReader::whole::<#ty>(__args));
        let local = &locals[0];
        return quote! {
            #name => {
                let #local = #read?;
                #ret
            }
        };
    }
    if locals.is_empty() {
        return quote! {
            #name => {
                #p::ParamReader::new(__args).finish()?;
                #ret
            }
        };
    }
    let takes = action.params().zip(&locals).map(|(param, local)| take(param, local, p));
    quote! {
        #name => {
            let mut __params = #p::ParamReader::new(__args);
            #(#takes)*
            match (__params.finish(), #(#locals),*) {
                (::core::result::Result::Ok(()), #(::core::option::Option::Some(#locals)),*) => { #ret }
                (::core::result::Result::Err(__e), ..) => ::core::result::Result::Err(__e),
                // `finish` is `Ok` only when every parameter was read.
                _ => ::core::result::Result::Err(#p::ActionError::fields(::std::vec::Vec::new())),
            }
        }
    }
}

/// `let __pN = ParamReader::take::<T>(&mut __params, "name");`, spanned at `T` (it must be
/// `DeserializeOwned`, and `Default` with `#[serde(default)]`). `name` is the JSON name, as in
/// the schema.
fn take(param: &Param, local: &syn::Ident, p: &TokenStream) -> TokenStream {
    let ty = param.ty;
    let name = &param.name;
    let span = ty.span();
    let p = respan(p, span);
    let read = if param.attrs.default.is_some() && !is_option(ty) {
        quote_spanned!(span=> #p::ParamReader::take_or_default::<#ty>(&mut __params, #name))
    } else {
        quote_spanned!(span=> #p::ParamReader::take::<#ty>(&mut __params, #name))
    };
    quote!(let #local = #read;)
}

/// The method's return value as `Result<Option<Value>, ActionError>`.
fn convert(action: &Action, call: &TokenStream, p: &TokenStream) -> TokenStream {
    let ok = quote!(::core::result::Result::Ok);
    let some = quote!(::core::option::Option::Some);
    let none = quote!(::core::option::Option::None);
    match &action.output {
        Output::Unit => quote! {
            #call;
            #ok(#none)
        },
        Output::Value(ty) => {
            let span = ty.span();
            let p = respan(p, span);
            let value = quote_spanned!(span=> #p::result_value::<#ty>(&__r));
            quote! {
                let __r = #call;
                #value.map(#some)
            }
        }
        Output::Result { ok: ok_ty, err } => {
            let err_span = match (err, &action.method.sig.output) {
                (Some(e), _) => e.span(),
                (None, syn::ReturnType::Type(_, ty)) => ty.span(),
                (None, syn::ReturnType::Default) => Span::call_site(),
            };
            let into = {
                let p = respan(p, err_span);
                quote_spanned!(err_span=> #p::action_error(__e))
            };
            let ok_arm = match ok_ty {
                Some(ty) => {
                    let span = ty.span();
                    let p = respan(p, span);
                    let v = quote_spanned!(span=> #p::result_value::<#ty>(&__r));
                    quote!(::core::result::Result::Ok(__r) => #v.map(#some))
                }
                None => quote!(::core::result::Result::Ok(()) => #ok(#none)),
            };
            quote! {
                match #call {
                    #ok_arm,
                    ::core::result::Result::Err(__e) => ::core::result::Result::Err(#into),
                }
            }
        }
    }
}
