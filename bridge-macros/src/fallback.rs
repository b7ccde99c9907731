//! Stub impls emitted next to the errors (thiserror's `fallback.rs`): the type still implements
//! the trait, so one mistake yields its own message and not a cascade of "trait not
//! implemented" errors wherever the type is used. The bodies never run: the build fails.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Generics, Ident, Path, Type};

pub(crate) fn window(krate: &Path, ident: &Ident, generics: &Generics) -> TokenStream {
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    quote! {
        #[allow(unused_qualifications)]
        impl #impl_generics #krate::__private::BridgeWindow for #ident #ty_generics #where_clause {
            fn window_meta() -> #krate::__private::WindowMeta {
                ::core::unreachable!()
            }
            fn render(&self) -> #krate::__private::Rendered {
                ::core::unreachable!()
            }
        }
    }
}

pub(crate) fn actions(krate: &Path, self_ty: &Type, generics: &Generics) -> TokenStream {
    let p = quote!(#krate::__private);
    let (impl_generics, _, where_clause) = generics.split_for_impl();
    quote! {
        #[allow(unused_qualifications)]
        impl #impl_generics #p::BridgeActions for #self_ty #where_clause {
            fn action_specs_for(_: bool) -> ::std::vec::Vec<#p::ActionSpec> {
                ::core::unreachable!()
            }
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
