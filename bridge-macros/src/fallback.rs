//! Stub impls emitted next to the errors (thiserror's `fallback.rs`): the type still implements
//! the trait, so one mistake yields its own message and not a cascade of "trait not
//! implemented" errors wherever the type is used. The bodies never run: the build fails.

use crate::expand::where_clause;
use proc_macro2::{Group, TokenStream, TokenTree};
use quote::{ToTokens, quote};
use syn::{GenericParam, Generics, Ident, Path, Type};

/// `generics` without lifetime parameters, and the names of those lifetimes. A window or action
/// set cannot borrow (that mistake is reported on its own); its stub is for the `'static`
/// instantiation, so that it still meets the traits' `Send + 'static` and adds no error.
fn owned(generics: &Generics) -> (Generics, Vec<String>) {
    let lifetimes = generics.lifetimes().map(|l| l.lifetime.ident.to_string()).collect();
    let mut owned = generics.clone();
    owned.params = owned.params.into_iter().filter(|p| !matches!(p, GenericParam::Lifetime(_))).collect();
    (owned, lifetimes)
}

/// `tokens` with each of the `lifetimes` and `'_` replaced by `'static`.
fn to_static(tokens: TokenStream, lifetimes: &[String]) -> TokenStream {
    let mut out = Vec::new();
    let mut apostrophe = false;
    for tt in tokens {
        let tt = match tt {
            TokenTree::Group(g) => {
                let mut group = Group::new(g.delimiter(), to_static(g.stream(), lifetimes));
                group.set_span(g.span());
                TokenTree::Group(group)
            }
            TokenTree::Ident(i) if apostrophe && (i == "_" || lifetimes.iter().any(|l| i == l)) => {
                TokenTree::Ident(Ident::new("static", i.span()))
            }
            other => other,
        };
        apostrophe = matches!(&tt, TokenTree::Punct(p) if p.as_char() == '\'');
        out.push(tt);
    }
    out.into_iter().collect()
}

pub(crate) fn window(krate: &Path, ident: &Ident, generics: &Generics) -> TokenStream {
    let (owned, lifetimes) = owned(generics);
    let (impl_generics, _, _) = owned.split_for_impl();
    let where_clause = where_clause(&owned, &[]);
    let (_, ty_generics, _) = generics.split_for_impl();
    let stub = quote! {
        #[allow(unused_qualifications)]
        impl #impl_generics #krate::__private::DescribeWindow for #ident #ty_generics #where_clause {
            fn window_meta() -> #krate::__private::WindowMeta {
                ::core::unreachable!()
            }
        }
        #[allow(unused_qualifications)]
        impl #impl_generics #krate::__private::BridgeWindow for #ident #ty_generics #where_clause {
            fn render(&self) -> #krate::__private::Rendered {
                ::core::unreachable!()
            }
        }
    };
    to_static(stub, &lifetimes)
}

pub(crate) fn actions(krate: &Path, self_ty: &Type, generics: &Generics) -> TokenStream {
    let p = quote!(#krate::__private);
    let (owned, lifetimes) = owned(generics);
    let (impl_generics, _, _) = owned.split_for_impl();
    // Not the whole stub: its own `ActionContext<'_>` stays as the trait declares it.
    let impl_generics = to_static(impl_generics.to_token_stream(), &lifetimes);
    let where_clause = to_static(where_clause(&owned, &[]), &lifetimes);
    let self_ty = to_static(self_ty.to_token_stream(), &lifetimes);
    quote! {
        #[allow(unused_qualifications)]
        impl #impl_generics #p::DescribeActions for #self_ty #where_clause {
            fn action_specs_for(_: bool) -> ::std::vec::Vec<#p::ActionSpec> {
                ::core::unreachable!()
            }
        }
        #[allow(unused_qualifications)]
        impl #impl_generics #p::BridgeActions for #self_ty #where_clause {
            fn action_available(&self, _: &str) -> bool {
                ::core::unreachable!()
            }
            fn invoke_action(
                &mut self,
                _: &str,
                _: #p::serde_json::Map<::std::string::String, #p::serde_json::Value>,
                _: &mut #p::ActionContext<'_>,
            ) -> ::core::result::Result<::core::option::Option<#p::serde_json::Value>, #p::ActionError> {
                ::core::unreachable!()
            }
        }
    }
}

pub(crate) fn fields(krate: &Path, ident: &Ident, generics: &Generics) -> TokenStream {
    let p = quote!(#krate::__private);
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    quote! {
        #[allow(unused_qualifications)]
        impl #impl_generics #p::FieldSet for #ident #ty_generics #where_clause {
            fn field_specs() -> ::std::vec::Vec<#p::FieldSpec> {
                ::core::unreachable!()
            }
            fn field_items(&self) -> ::std::vec::Vec<#p::FieldItem> {
                ::core::unreachable!()
            }
            fn set_field(
                &mut self,
                _: &str,
                _: #p::serde_json::Value,
            ) -> ::core::result::Result<(), ::std::string::String> {
                ::core::unreachable!()
            }
        }
    }
}

pub(crate) fn row(krate: &Path, ident: &Ident, generics: &Generics) -> TokenStream {
    let p = quote!(#krate::__private);
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    quote! {
        #[allow(unused_qualifications)]
        impl #impl_generics #p::TableRow for #ident #ty_generics #where_clause {
            fn columns() -> ::std::vec::Vec<::std::string::String> {
                ::core::unreachable!()
            }
            fn cells(&self) -> ::std::vec::Vec<#p::serde_json::Value> {
                ::core::unreachable!()
            }
        }
    }
}

pub(crate) fn capabilities(krate: &Path, self_ty: &Type, generics: &Generics) -> TokenStream {
    let p = quote!(#krate::__private);
    let (impl_generics, _, where_clause) = generics.split_for_impl();
    quote! {
        #[allow(unused_qualifications)]
        impl #impl_generics #p::BridgeCapabilities for #self_ty #where_clause {
            fn capability_specs(
            ) -> ::core::result::Result<::std::vec::Vec<#p::CapabilitySpec>, #p::SpecError> {
                ::core::unreachable!()
            }
        }
    }
}
