//! The author's item as re-emitted: the inert `#[bridge(…)]` attributes and the parameter
//! attributes that went to the generated params struct (`///`, `#[schemars(…)]`,
//! `#[serde(…)]`) removed (rustc knows none of them on a parameter), `#[bridge_action(…)]`
//! reduced to a checked marker.

use crate::attr;
use syn::{FnArg, ImplItem, ImplItemFn, ItemImpl, ItemStruct, Meta, MetaList};

/// The argument `#[bridge_actions]` leaves in each `#[bridge_action]` it has read, telling the
/// attribute that it sits in a `#[bridge_actions]` impl. Keeping the attribute (rather than
/// removing it) keeps the author's `use …::bridge_action;` used.
pub(crate) const CHECKED: &str = "__bridge_actions_checked";

/// The struct without `#[bridge(…)]` on its fields.
pub(crate) fn window(item: &ItemStruct) -> ItemStruct {
    let mut item = item.clone();
    for field in item.fields.iter_mut() {
        field.attrs.retain(|a| !attr::is_bridge(a));
    }
    item
}

/// The impl with `#[bridge_action(…)]` reduced to `#[bridge_action(__bridge_actions_checked)]`
/// and the parameters' attributes removed ([`params`]).
pub(crate) fn actions(item: &ItemImpl) -> ItemImpl {
    let mut item = item.clone();
    for impl_item in item.items.iter_mut() {
        if let ImplItem::Fn(method) = impl_item
            && method.attrs.iter().any(attr::is_bridge_action)
        {
            for a in method.attrs.iter_mut().filter(|a| attr::is_bridge_action(a)) {
                let path = a.path().clone();
                let marker = proc_macro2::Ident::new(CHECKED, proc_macro2::Span::call_site());
                a.meta = Meta::List(MetaList {
                    path,
                    delimiter: syn::MacroDelimiter::Paren(syn::token::Paren::default()),
                    tokens: quote::quote!(#marker),
                });
            }
            params(method);
        }
    }
    item
}

/// [`actions`], plus for each capability method the lints its fixed shape would trip allowed:
/// parameters by value (the params are deserialized per call), and unused parameters of an
/// empty body (a declaration without semantic check).
pub(crate) fn capabilities(item: &ItemImpl) -> ItemImpl {
    let mut item = actions(item);
    for impl_item in item.items.iter_mut() {
        if let ImplItem::Fn(method) = impl_item
            && method.attrs.iter().any(attr::is_bridge_action)
        {
            method.attrs.push(syn::parse_quote!(#[allow(clippy::needless_pass_by_value)]));
            if method.block.stmts.is_empty() {
                method.attrs.push(syn::parse_quote!(#[allow(unused_variables)]));
            }
        }
    }
    item
}

/// `#[bridge(…)]`, `///`, `#[schemars(…)]` and `#[serde(…)]` removed from a method's
/// parameters, the same in window and companion mode.
pub(crate) fn params(method: &mut ImplItemFn) {
    for input in method.sig.inputs.iter_mut() {
        if let FnArg::Typed(arg) = input {
            arg.attrs
                .retain(|a| !attr::is_bridge(a) && !attr::is_doc(a) && !attr::is_schemars(a) && !attr::is_serde(a));
        }
    }
}
