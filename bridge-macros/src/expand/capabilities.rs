//! `#[bridge_actions(companion)]` → `impl BridgeCapabilities`: one
//! `CapabilitySpec::new(id, kind)…build()?` per method, each key of `#[bridge_action(…)]` one
//! builder call. Its parameters are declared and read as an action's are (`params`): plain
//! parameters become a hidden struct whose derived `JsonSchema` is the `inputSchema`; a method
//! returning `Result` becomes the `check_params` hook and `check_result = path` the
//! `check_result` hook.

use super::params::{self, Surface};
use super::{private, respan};
use crate::ast::{Capabilities, Capability, CheckReturn};
use crate::attr::Choice;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::Path;
use syn::spanned::Spanned as _;

pub(crate) fn capabilities(c: &Capabilities) -> TokenStream {
    let p = private(&c.krate);
    let self_ty = &c.item.self_ty;
    let mut structs = Vec::new();
    let mut specs = Vec::new();
    let mut uses = Vec::new();
    for (i, cap) in c.capabilities.iter().enumerate() {
        let params_ty = if cap.params().next().is_some() {
            let params = params::declare(Surface::Capability, &cap.inputs, i, &c.item.generics, &p);
            structs.extend(params.item);
            uses.extend(params.check);
            Some(params.ty)
        } else {
            // The builder's empty object schema stays.
            None
        };
        specs.push(spec(cap, params_ty.as_ref(), &p));
        if matches!(cap.returns, CheckReturn::Unit) {
            // A declaration without check is never called; this keeps it from being dead code.
            let method = &cap.method.sig.ident;
            uses.push(quote!(let _ = Self::#method;));
        }
    }
    let specs = if specs.is_empty() { quote!(::std::vec::Vec::new()) } else { quote!(::std::vec![#(#specs),*]) };
    quote! {
        #[allow(unused_qualifications)]
        const _: () = {
            #(#structs)*

            #[automatically_derived]
            impl #p::BridgeCapabilities for #self_ty {
                fn capability_specs(
                ) -> ::core::result::Result<::std::vec::Vec<#p::CapabilitySpec>, #p::SpecError> {
                    #(#uses)*
                    ::core::result::Result::Ok(#specs)
                }
            }
        };
    }
}

/// `animation_end` → `AnimationEnd`: the runtime enum variant of a wire string.
fn variant(c: &Choice) -> syn::Ident {
    let camel: String = c
        .value
        .split('_')
        .map(|w| {
            let mut chars = w.chars();
            chars.next().map(|f| f.to_ascii_uppercase()).into_iter().chain(chars).collect::<String>()
        })
        .collect();
    syn::Ident::new(&camel, c.lit.span())
}

fn spec(cap: &Capability, params_ty: Option<&TokenStream>, p: &TokenStream) -> TokenStream {
    let a = &cap.attrs;
    let id = &a.id;
    let version = &a.version;
    let description = cap.description.clone().unwrap_or_default();
    let kind = a.kind.as_ref().map(variant);
    let enum_call = |method: &str, ty: &str, choice: &Option<Choice>| {
        choice.as_ref().map(|c| {
            let method = format_ident!("{}", method);
            let ty = format_ident!("{}", ty);
            let v = variant(c);
            quote!(.#method(#p::#ty::#v))
        })
    };
    let interaction = enum_call("interaction", "InteractionType", &a.interaction);
    let completion = enum_call("completion", "Completion", &a.completion);
    let cancel_behavior = enum_call("cancel_behavior", "CancelBehavior", &a.cancel_behavior);
    let scopes = a.scopes.as_ref().map(|s| {
        let scopes = s.items.iter().map(variant);
        quote!(.required_scopes([#(#p::Scope::#scopes),*]))
    });
    let updatable = a.updatable.as_ref().filter(|u| !u.items.is_empty()).map(|u| {
        let fields = &u.items;
        quote!(.updatable_fields([#(#fields),*]))
    });
    let cancelable = a.cancelable.as_ref().map(|b| quote!(.cancelable(#b)));
    let queue = a.queue.as_ref().map(|q| {
        let mode = variant(q);
        quote!(.queue_policy(#p::QueuePolicy { mode: #p::QueueMode::#mode, interrupts: false }))
    });
    let timeout = a.timeout_ms.as_ref().and_then(|t| {
        let (min, max) = (t.min.as_ref()?.0, t.max.as_ref()?.0);
        Some(quote!(.timeout_bounds_ms(#min, #max)))
    });
    let display_ms = a.display_ms.as_ref().map(|(ms, _)| quote!(.display_ms(#ms)));
    let fallback = a.fallback.as_ref().and_then(|fb| {
        let capability = fb.capability.as_ref()?;
        let when = fb.when.as_ref()?.items.iter().map(variant);
        let when = quote!([#(#p::FallbackReason::#when),*]);
        Some(match &fb.map {
            None => quote!(.fallback(#capability, #when)),
            Some(path) => {
                let map = self_path(path);
                quote!(.fallback_mapped(#capability, #when, #map))
            }
        })
    });
    let params = params_ty.map(|ty| quote!(.params::<#ty>()));
    let output = a.output.as_ref().map(|ty| quote_spanned!(ty.span()=> .output::<#ty>()));
    let check_params = check_params(cap, p);
    let check_result = check_result(cap, p);
    quote! {
        #p::CapabilitySpec::new(#id, #p::CapabilityKind::#kind)
            .version(#version)
            .description(#description)
            #interaction
            #completion
            #scopes
            #updatable
            #cancelable
            #cancel_behavior
            #queue
            #timeout
            #display_ms
            #fallback
            #params
            #output
            #check_params
            #check_result
            .build()?
    }
}

/// `name` → `Self::name`; a longer path as written. Spanned at the author's path, so a missing
/// or mistyped function is reported there.
fn self_path(path: &Path) -> TokenStream {
    match path.get_ident() {
        Some(ident) => quote_spanned!(path.span()=> Self::#ident),
        None => quote_spanned!(path.span()=> #path),
    }
}

/// `call`'s `Result<(), E>` as problems; the conversion is spanned at `err_span` (the author's
/// error type, which must be `Into<ActionError>`), so a failed bound is reported there.
fn check_call(call: &TokenStream, err_span: Span, p: &TokenStream) -> TokenStream {
    let into = {
        let p = respan(p, err_span);
        quote_spanned!(err_span=> #p::action_error(__e))
    };
    quote! {
        match #call {
            ::core::result::Result::Ok(()) => ::core::result::Result::Ok(()),
            ::core::result::Result::Err(__e) => ::core::result::Result::Err(#p::problems(#into)),
        }
    }
}

fn problems_ty(p: &TokenStream) -> TokenStream {
    quote!(::core::result::Result<(), ::std::vec::Vec<#p::FieldProblem>>)
}

/// `.check_params(|params| { read the parameters; call the method })` for a method returning
/// `Result` (CP-2-25); nothing for a declaration without check.
fn check_params(cap: &Capability, p: &TokenStream) -> Option<TokenStream> {
    let CheckReturn::Result { .. } = cap.returns else { return None };
    let (reads, locals) = params::read(Surface::Capability, &cap.inputs, p);
    let method = &cap.method.sig.ident;
    let err_span = match (&cap.returns, &cap.method.sig.output) {
        (CheckReturn::Result { err: Some(e) }, _) => e.span(),
        (_, syn::ReturnType::Type(_, ty)) => ty.span(),
        (_, syn::ReturnType::Default) => Span::call_site(),
    };
    let call = check_call(&quote!(Self::#method(#(#locals),*)), err_span, p);
    let out = problems_ty(p);
    Some(quote! {
        .check_params(|__params: &#p::serde_json::Value| -> #out {
            #reads
            #call
        })
    })
}

/// `.check_result(|params, result| path(&p0, …, &output))` (CP-2-23): the function takes the
/// method's parameters by reference, then the output.
fn check_result(cap: &Capability, p: &TokenStream) -> Option<TokenStream> {
    let path = cap.attrs.check_result.as_ref()?;
    let out_ty = cap.attrs.output.as_ref()?;
    let (reads, locals) = params::read(Surface::Capability, &cap.inputs, p);
    let read_out = {
        let span = out_ty.span();
        let p = respan(p, span);
        quote_spanned!(span=> #p::capability_output::<#out_ty>(__result))
    };
    let f = self_path(path);
    // The whole call at the author's path, so a signature mismatch is reported there alone.
    let span = path.span();
    let out = format_ident!("__out");
    let args = locals.iter().chain([&out]).map(|local| {
        let mut local = local.clone();
        local.set_span(span);
        quote_spanned!(span=> &#local)
    });
    let call = check_call(&quote_spanned!(span=> #f(#(#args),*)), span, p);
    let out = problems_ty(p);
    Some(quote! {
        .check_result(|__params: &#p::serde_json::Value, __result: &#p::serde_json::Value| -> #out {
            #reads
            let __out = #read_out?;
            #call
        })
    })
}
