//! `#[bridge_actions]` → `impl BridgeActions` (specs, availability, invocation) plus one hidden
//! parameter struct per action, whose derived `JsonSchema` is the action's `inputSchema`.
//!
//! Arguments are read one parameter at a time (`ParamReader`), so every bad parameter is
//! reported with its name (GB-7.3-1), and a parameter type that is not `DeserializeOwned` is
//! reported at the author's type.

use super::{call_with_self, private, respan};
use crate::ast::{Action, Actions, Input, Output, Param};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned as _;

pub(crate) fn actions(a: &Actions) -> TokenStream {
    let p = private(&a.krate);
    let self_ty = &a.item.self_ty;
    let (impl_generics, _, where_clause) = a.item.generics.split_for_impl();

    let schemars_crate = format!("{p}::schemars").replace(' ', "");
    let mut structs = Vec::new();
    let mut specs = Vec::new();
    let mut available = Vec::new();
    let mut arms = Vec::new();
    for (i, action) in a.actions.iter().enumerate() {
        let params_ty = match action.args_param() {
            Some(args) => {
                let ty = args.ty;
                quote!(#ty)
            }
            None => {
                let name = format_ident!("__BridgeParams{}", i);
                structs.push(params_struct(action, &name, &p, &schemars_crate));
                quote!(#name)
            }
        };
        specs.push(spec(action, &params_ty, &p));
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
            impl #impl_generics #p::BridgeActions for #self_ty #where_clause {
                fn action_specs_for(__window_level: bool) -> ::std::vec::Vec<#p::ActionSpec> {
                    #specs
                }

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

/// `struct __BridgeParamsN { name: Type, … }` with `#[derive(JsonSchema)]`: the parameters
/// as an object schema, `additionalProperties: false`, doc/description on each property.
fn params_struct(action: &Action, name: &syn::Ident, p: &TokenStream, schemars_crate: &str) -> TokenStream {
    let fields = action.params().filter_map(|param| {
        let ident = param.ident?;
        let ty = param.ty;
        let doc = param.attrs.description.as_ref().map(|d| quote!(#[doc = #d]));
        Some(quote!(#doc #ident: #ty,))
    });
    quote! {
        #[derive(#p::schemars::JsonSchema)]
        #[schemars(crate = #schemars_crate, deny_unknown_fields)]
        #[allow(dead_code, non_camel_case_types)]
        struct #name { #(#fields)* }
    }
}

fn spec(action: &Action, params_ty: &TokenStream, p: &TokenStream) -> TokenStream {
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
    let params_span = action.args_param().map_or_else(Span::call_site, |a| a.ty.span());
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
/// `DeserializeOwned`).
fn take(param: &Param, local: &syn::Ident, p: &TokenStream) -> TokenStream {
    let ty = param.ty;
    let name = &param.name;
    let span = ty.span();
    let p = respan(p, span);
    let read = quote_spanned!(span=> #p::ParamReader::take::<#ty>(&mut __params, #name));
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
            let value = quote_spanned!(span=> #p::to_value::<#ty>(&__r));
            quote! {
                let __r = #call;
                #ok(#some(#value))
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
                    let v = quote_spanned!(span=> #p::to_value::<#ty>(&__r));
                    quote!(::core::result::Result::Ok(__r) => #ok(#some(#v)))
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
