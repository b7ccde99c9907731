//! `#[bridge_window]` → `impl DescribeWindow` (`window_meta`, the view, shared state: what the
//! catalog reads) and `impl BridgeWindow` (`render`).

use super::{call_with_self, inferred_bound, private, respan, where_clause};
use crate::ast::{Block, Window};
use crate::attr::{Kind, Severity, StrOrPath};
use crate::template::{self, Piece};
use crate::util::{self, humanize_type, unraw};
use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::LitStr;
use syn::spanned::Spanned as _;

pub(crate) fn window(w: &Window) -> TokenStream {
    let p = private(&w.krate);
    let ident = &w.item.ident;
    let (impl_generics, ty_generics, _) = w.item.generics.split_for_impl();
    let inferred: Vec<TokenStream> = w
        .blocks()
        .iter()
        .filter_map(|b| block_bound(b, &p).and_then(|(ty, b)| inferred_bound(&w.item.generics, ty, &b)))
        .collect();
    let where_clause = where_clause(&w.item.generics, &inferred);
    let type_name = unraw(ident);
    // A generic window type is one catalog entry per instantiation: `Editor<Doc>`.
    let type_name_value = if w.item.generics.params.is_empty() {
        quote!(::std::string::String::from(#type_name))
    } else {
        quote!(#p::window_type_name::<Self>())
    };
    let blocks = w.blocks();

    let (meta_title, title) = match &w.title {
        Some(StrOrPath::Lit(lit)) => (lit.value(), quote!(::std::string::String::from(#lit))),
        Some(StrOrPath::Path(path)) => {
            let call = call_with_self(path);
            let span = path.span();
            let p = respan(&p, span);
            (humanize_type(&type_name), quote_spanned!(span=> #p::title_text(#call)))
        }
        None => (humanize_type(&type_name), quote!(::std::string::String::new())),
    };
    let summary = match &w.summary {
        None => quote!(::core::option::Option::None),
        Some(StrOrPath::Path(path)) => {
            let call = call_with_self(path);
            let span = path.span();
            let p = respan(&p, span);
            quote_spanned!(span=> #p::SummaryText::summary_text(#call))
        }
        Some(StrOrPath::Lit(lit)) => summary_template(w, lit),
    };
    let checks = if w.item.generics.params.is_empty() { nested_sensitive_checks(w, &p) } else { Vec::new() };

    let view = window_view(w, &p);
    let shared_state = w.shared_state.then(|| {
        quote!(
            fn reads_shared_state() -> bool {
                true
            }
        )
    });
    let user_only = w.user_only.then(|| {
        quote!(
            fn user_only() -> bool {
                true
            }
        )
    });
    // The `Clone` bound is checked at the `undo` key, so a type without it is told there.
    let undo = w.undo.as_ref().map(|key| {
        let span = key.span();
        quote_spanned! {span=>
            fn undo_copy(&self) -> ::core::option::Option<::std::boxed::Box<dyn ::core::any::Any + ::core::marker::Send>> {
                ::core::option::Option::Some(::std::boxed::Box::new(<Self as ::core::clone::Clone>::clone(self)))
            }

            fn undo_restore(&mut self, copy: ::std::boxed::Box<dyn ::core::any::Any + ::core::marker::Send>) -> bool {
                match copy.downcast::<Self>() {
                    ::core::result::Result::Ok(copy) => {
                        *self = *copy;
                        true
                    }
                    ::core::result::Result::Err(_) => false,
                }
            }
        }
    });
    let specs = blocks.iter().map(|b| block_spec(b, &p));
    let renders: Vec<TokenStream> = blocks.iter().map(|b| render_block(b, &p)).collect();
    let blocks_init = if renders.is_empty() {
        quote!(let __blocks: ::std::vec::Vec<#p::Block> = ::std::vec::Vec::new();)
    } else {
        quote! {
            let mut __blocks: ::std::vec::Vec<#p::Block> = ::std::vec::Vec::new();
            #(#renders)*
        }
    };

    quote! {
        #[allow(unused_qualifications)]
        const _: () = {
            #(#checks)*

            #[automatically_derived]
            impl #impl_generics #p::DescribeWindow for #ident #ty_generics #where_clause {
                fn window_meta() -> #p::WindowMeta {
                    #p::WindowMeta {
                        type_name: #type_name_value,
                        title: ::std::string::String::from(#meta_title),
                        blocks: ::std::vec![#(#specs),*],
                    }
                }

                #view

                #shared_state

                #user_only
            }

            #[automatically_derived]
            impl #impl_generics #p::BridgeWindow for #ident #ty_generics #where_clause {
                fn render(&self) -> #p::Rendered {
                    #blocks_init
                    #p::Rendered { title: #title, summary: #summary, blocks: __blocks }
                }

                #undo
            }
        };
    }
}

/// `fn window_view()` for `view = "…"`: the file through `include_str!` (so editing it rebuilds
/// the crate) and the CSP lists the attribute checked.
fn window_view(w: &Window, p: &TokenStream) -> TokenStream {
    let Some(view) = &w.view else { return TokenStream::new() };
    let Some(path) = &view.path else { return TokenStream::new() };
    let file = &view.file;
    let cow = quote!(::std::borrow::Cow::Borrowed);
    let [connect, resource, frame, base_uri] = view.domains.clone();
    quote! {
        fn window_view() -> ::core::option::Option<#p::WindowView> {
            ::core::option::Option::Some(#p::WindowView {
                html: #cow(::core::include_str!(#path)),
                file: ::core::option::Option::Some(#cow(#file)),
                csp: #p::ViewCsp {
                    connect_domains: ::std::vec![#(#cow(#connect)),*],
                    resource_domains: ::std::vec![#(#cow(#resource)),*],
                    frame_domains: ::std::vec![#(#cow(#frame)),*],
                    base_uri_domains: ::std::vec![#(#cow(#base_uri)),*],
                },
            })
        }
    }
}

/// The type `render_block` puts a bound on, and that bound (for a generic field, inferred into
/// the impl's where clause).
fn block_bound<'a>(b: &Block<'a>, p: &TokenStream) -> Option<(&'a syn::Type, TokenStream)> {
    let ty = b.ty;
    Some(match b.kind {
        Kind::Text => (ty, quote!(#p::TextValue)),
        Kind::Fields => (ty, quote!(#p::FieldSet)),
        Kind::Table => (util::generic_of(ty, "Vec")?, quote!(#p::TableRow)),
        Kind::List => match ty {
            syn::Type::Array(a) => (&*a.elem, quote!(#p::serde::Serialize)),
            _ => (util::generic_of(ty, "Vec")?, quote!(#p::serde::Serialize)),
        },
        Kind::Notice if b.severity.is_some() => (ty, quote!(#p::IntoTexts)),
        Kind::Notice => (ty, quote!(#p::IntoNotices)),
        Kind::Media => (ty, quote!(#p::IntoMedia)),
        Kind::Custom => (ty, quote!(#p::serde::Serialize)),
    })
}

fn kind_variant(kind: Kind) -> Ident {
    let name = kind.name();
    let mut c = name.chars();
    let variant: String = c.next().map(|f| f.to_ascii_uppercase()).into_iter().chain(c).collect();
    format_ident!("{}", variant)
}

fn block_spec(b: &Block, p: &TokenStream) -> TokenStream {
    let Block { id, label, sensitive, .. } = b;
    let kind = kind_variant(b.kind);
    let max_rows = match b.max_rows {
        Some(n) => quote!(::core::option::Option::Some(#n)),
        None => quote!(::core::option::Option::None),
    };
    quote! {
        #p::BlockSpec {
            id: ::std::string::String::from(#id),
            kind: #p::BlockKind::#kind,
            label: ::std::string::String::from(#label),
            max_rows: #max_rows,
            sensitive: #sensitive,
        }
    }
}

/// One statement adding this block's 0..n blocks to `__blocks`. Spanned at the field's type,
/// so "`X` cannot be shown in a `text` block" and friends point at the author's field.
fn render_block(b: &Block, p: &TokenStream) -> TokenStream {
    let Block { ident, ty, id, .. } = b;
    let span = ty.span();
    let p = &respan(p, span);
    // The whole expression at the type, so a failed bound underlines just the type.
    let mut f = (*ident).clone();
    f.set_span(span);
    let max = match b.max_rows {
        Some(n) => quote!(::core::option::Option::Some(#n)),
        None => quote!(::core::option::Option::None),
    };
    match b.kind {
        Kind::Text => quote_spanned!(span=> __blocks.push(#p::text(#id, &self.#f));),
        // A sensitive `fields` block is built from the type's labels alone: the value is never
        // read, so it cannot leak (GB-4.5-2).
        Kind::Fields if b.sensitive => quote_spanned!(span=> __blocks.push(#p::redacted_fields::<#ty>(#id));),
        Kind::Fields => quote_spanned!(span=> __blocks.push(#p::fields(#id, &self.#f, false));),
        Kind::Table => {
            let row = util::generic_of(ty, "Vec").unwrap_or(ty);
            let span = row.span();
            let p = &respan(p, span);
            quote_spanned!(span=> __blocks.push(#p::table::<#row>(#id, &self.#f, #max));)
        }
        Kind::List => {
            let ordered = b.ordered;
            quote_spanned!(span=> __blocks.push(#p::list(#id, &self.#f, #ordered, #max));)
        }
        Kind::Notice => match b.severity {
            None => quote_spanned!(span=> __blocks.extend(#p::notices(#id, &self.#f));),
            Some(s) => {
                let s = format_ident!(
                    "{}",
                    match s {
                        Severity::Info => "Info",
                        Severity::Warn => "Warn",
                        Severity::Error => "Error",
                        Severity::Success => "Success",
                    }
                );
                quote_spanned!(span=> __blocks.extend(#p::notice_texts(#id, #p::Severity::#s, &self.#f));)
            }
        },
        Kind::Media => quote_spanned!(span=> __blocks.extend(#p::media(#id, &self.#f));),
        Kind::Custom => quote_spanned!(span=> __blocks.push(#p::custom(#id, &self.#f));),
    }
}

/// `summary = "Editing order {order_no}"` → `Some(format!("Editing order {}", &self.order_no))`,
/// the format string spanned at the author's literal (a bad `:spec` is reported there).
fn summary_template(w: &Window, lit: &LitStr) -> TokenStream {
    let span = lit.span();
    let Ok(pieces) = template::parse(&lit.value()) else {
        return quote!(::core::option::Option::None);
    };
    let mut args = Vec::new();
    for piece in &pieces {
        if let Piece::Hole { path, .. } = piece {
            let first = w.field(&path[0]).map(|f| syn::Member::Named(f.ident.clone()));
            let members: Vec<syn::Member> =
                first.into_iter().chain(path[1..].iter().filter_map(|seg| util::member(seg, span))).collect();
            args.push(quote_spanned!(span=> &self #(.#members)*));
        }
    }
    if args.is_empty() {
        let text: String = pieces
            .iter()
            .map(|p| match p {
                Piece::Text(t) => t.as_str(),
                Piece::Hole { .. } => "",
            })
            .collect();
        return quote_spanned!(span=> ::core::option::Option::Some(::std::string::String::from(#text)));
    }
    let fmt = LitStr::new(&template::format_string(&pieces), span);
    quote_spanned!(span=> ::core::option::Option::Some(::std::format!(#fmt, #(#args),*)))
}

/// `{form.password}` where `form` is a `fields` block and `password` is one of its sensitive
/// items: a compile-time assertion against `FieldSet::SENSITIVE_KEYS`, spanned at the summary.
fn nested_sensitive_checks(w: &Window, p: &TokenStream) -> Vec<TokenStream> {
    let Some(StrOrPath::Lit(lit)) = &w.summary else {
        return Vec::new();
    };
    let Ok(pieces) = template::parse(&lit.value()) else {
        return Vec::new();
    };
    let span: Span = lit.span();
    pieces
        .iter()
        .filter_map(|piece| {
            let Piece::Hole { path, source, .. } = piece else {
                return None;
            };
            let field = w.field(&path[0])?;
            let block = field.block()?;
            if block.kind != Kind::Fields || path.len() < 2 {
                return None;
            }
            let ty = block.ty;
            let key = &path[1];
            let msg =
                format!("summary placeholder `{source}` would leak a sensitive field of `{}` (GB-4.5-2)", field.name)
                    .replace('{', "{{")
                    .replace('}', "}}");
            Some(quote_spanned! {span=>
                const _: () = ::core::assert!(
                    !#p::is_sensitive_key(<#ty as #p::FieldSet>::SENSITIVE_KEYS, #key),
                    #msg
                );
            })
        })
        .collect()
}
