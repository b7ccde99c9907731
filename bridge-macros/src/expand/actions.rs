//! `#[bridge_actions]` → `impl DescribeActions` (the specs: what the catalog reads) and
//! `impl BridgeActions` (availability, invocation), plus one hidden parameter struct per action,
//! whose derived `JsonSchema` is the action's `inputSchema`; the parameters are declared and read
//! as a capability's are (`params`).

use super::params::{self, Surface};
use super::{call_with_self, inferred_bound, is_option, private, respan, where_clause};
use crate::ast::{Action, Actions, Input, Output};
use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned as _;

pub(crate) fn actions(a: &Actions) -> TokenStream {
    let p = private(&a.krate);
    let self_ty = &a.item.self_ty;
    let generics = &a.item.generics;
    let (impl_generics, _, _) = generics.split_for_impl();
    let where_clause = where_clause(generics, &inferred_bounds(a, &p));

    let mut structs = Vec::new();
    let mut specs = Vec::new();
    let mut available = Vec::new();
    let mut arms = Vec::new();
    let mut args_checks = Vec::new();
    for (i, action) in a.actions.iter().enumerate() {
        let params = params::declare(Surface::Action, &action.inputs, i, generics, &p);
        structs.extend(params.item);
        args_checks.extend(params.check);
        specs.push(spec(action, &params.ty, params.span, &p));
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
    let user_only = action.attrs.user_only.as_ref().map(|_| quote!(.user_only(true)));
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
            #user_only
            #params
            #returns
            .finish(__window_level)
    }
}

/// `"name" => { read the parameters; call the method; convert its return }`.
fn invoke_arm(action: &Action, p: &TokenStream) -> TokenStream {
    let name = &action.name;
    let method = &action.method.sig.ident;
    let (reads, locals) = params::read(Surface::Action, &action.inputs, p);
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
    quote! {
        #name => {
            #reads
            #ret
        }
    }
}

/// The method's return value as `Result<Option<Value>, ActionError>`.
fn convert(action: &Action, call: &TokenStream, p: &TokenStream) -> TokenStream {
    let ok = quote!(::core::result::Result::Ok);
    let none = quote!(::core::option::Option::None);
    match &action.output {
        Output::Unit => quote! {
            #call;
            #ok(#none)
        },
        Output::Value(ty) => {
            let span = ty.span();
            let p = respan(p, span);
            let value = quote_spanned!(span=> #p::result_value::<#ty>(&__r, __cx));
            quote! {
                let __r = #call;
                #ok(#value)
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
                    let v = quote_spanned!(span=> #p::result_value::<#ty>(&__r, __cx));
                    quote!(::core::result::Result::Ok(__r) => #ok(#v))
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
