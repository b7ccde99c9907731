//! `#[derive(BridgeFields)]` → `impl FieldSet`; `#[derive(BridgeRow)]` → `impl TableRow`;
//! `#[derive(BridgeArgs)]` → `impl BridgeArgs`.

use super::{private, respan};
use crate::ast::Derived;
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned as _;

pub(crate) fn fields(d: &Derived) -> TokenStream {
    let p = private(&d.krate);
    let ident = &d.input.ident;
    let (impl_generics, ty_generics, where_clause) = d.input.generics.split_for_impl();
    let shown: Vec<_> = d.fields.iter().filter(|f| !f.skip()).collect();

    let sensitive_keys = shown.iter().filter(|f| f.sensitive()).map(|f| &f.key);
    let specs = shown.iter().map(|f| {
        let (key, label, sensitive) = (&f.key, &f.label, f.sensitive());
        quote!(#p::FieldSpec { key: #key, label: ::std::string::String::from(#label), sensitive: #sensitive })
    });
    // A sensitive item is built from its label alone: the value is never read (GB-4.5-2).
    let items = shown.iter().map(|f| {
        let (member, label) = (f.ident, &f.label);
        if f.sensitive() {
            quote!(#p::FieldItem::redacted(#label))
        } else {
            let span = f.field.ty.span();
            let p = respan(&p, span);
            let value = quote_spanned!(span=> #p::to_value(&self.#member));
            quote!(#p::FieldItem::new(#label, #value))
        }
    });
    let setters = shown.iter().map(|f| {
        let (member, key, label, sensitive) = (f.ident, &f.key, &f.label, f.sensitive());
        let span = f.field.ty.span();
        let p = respan(&p, span);
        let set = quote_spanned!(span=> #p::set_value(&mut self.#member, __value, #label, #sensitive));
        quote! {
            if __name.eq_ignore_ascii_case(#key) || __name.eq_ignore_ascii_case(#label) {
                return #set;
            }
        }
    });
    let known = shown.iter().map(|f| format!("`{}`", f.label)).collect::<Vec<_>>().join(", ");
    let vec = |items: Vec<TokenStream>| {
        if items.is_empty() { quote!(::std::vec::Vec::new()) } else { quote!(::std::vec![#(#items),*]) }
    };
    let specs = vec(specs.collect());
    let items = vec(items.collect());

    quote! {
        #[allow(unused_qualifications)]
        const _: () = {
            #[automatically_derived]
            impl #impl_generics #p::FieldSet for #ident #ty_generics #where_clause {
                const SENSITIVE_KEYS: &'static [&'static str] = &[#(#sensitive_keys),*];

                fn field_specs() -> ::std::vec::Vec<#p::FieldSpec> {
                    #specs
                }

                fn field_items(&self) -> ::std::vec::Vec<#p::FieldItem> {
                    #items
                }

                fn set_field(
                    &mut self,
                    __name: &str,
                    __value: #p::serde_json::Value,
                ) -> ::core::result::Result<(), ::std::string::String> {
                    #(#setters)*
                    let _ = __value;
                    ::core::result::Result::Err(::std::format!("unknown field '{}'; fields: {}", __name, #known))
                }
            }
        };
    }
}

pub(crate) fn row(d: &Derived) -> TokenStream {
    let p = private(&d.krate);
    let ident = &d.input.ident;
    let (impl_generics, ty_generics, where_clause) = d.input.generics.split_for_impl();
    let shown: Vec<_> = d.fields.iter().filter(|f| !f.skip()).collect();
    let columns: Vec<TokenStream> = shown
        .iter()
        .map(|f| {
            let label = &f.label;
            quote!(::std::string::String::from(#label))
        })
        .collect();
    let cells: Vec<TokenStream> = shown
        .iter()
        .map(|f| {
            let member = f.ident;
            let span = f.field.ty.span();
            let p = respan(&p, span);
            quote_spanned!(span=> #p::to_value(&self.#member))
        })
        .collect();
    let (columns, cells) = if shown.is_empty() {
        (quote!(::std::vec::Vec::new()), quote!(::std::vec::Vec::new()))
    } else {
        (quote!(::std::vec![#(#columns),*]), quote!(::std::vec![#(#cells),*]))
    };
    quote! {
        #[allow(unused_qualifications)]
        const _: () = {
            #[automatically_derived]
            impl #impl_generics #p::TableRow for #ident #ty_generics #where_clause {
                fn columns() -> ::std::vec::Vec<::std::string::String> {
                    #columns
                }

                fn cells(&self) -> ::std::vec::Vec<#p::serde_json::Value> {
                    #cells
                }
            }
        };
    }
}

/// The marker impl; the shape (a struct with named fields) is checked in `ast`.
pub(crate) fn args(d: &Derived) -> TokenStream {
    let p = private(&d.krate);
    let ident = &d.input.ident;
    let (impl_generics, ty_generics, where_clause) = d.input.generics.split_for_impl();
    quote! {
        #[automatically_derived]
        #[allow(unused_qualifications)]
        impl #impl_generics #p::BridgeArgs for #ident #ty_generics #where_clause {}
    }
}
