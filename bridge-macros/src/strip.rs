//! The author's item as re-emitted: the inert `#[bridge(…)]` and parameter doc attributes
//! removed (rustc knows neither), `#[bridge_action(…)]` reduced to a checked marker.

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
/// and `#[bridge(…)]` / `///` removed from action parameters.
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

/// [`actions`], plus for each capability method: `#[schemars(…)]` removed from its parameters
/// (forwarded to the generated schema), and the lints its fixed shape would trip allowed:
/// parameters by value (the params are deserialized per call), and unused parameters of an
/// empty body (a declaration without semantic check).
pub(crate) fn capabilities(item: &ItemImpl) -> ItemImpl {
    let mut item = actions(item);
    for impl_item in item.items.iter_mut() {
        if let ImplItem::Fn(method) = impl_item
            && method.attrs.iter().any(attr::is_bridge_action)
        {
            for input in method.sig.inputs.iter_mut() {
                if let FnArg::Typed(arg) = input {
                    arg.attrs.retain(|a| !attr::is_schemars(a));
                }
            }
            method.attrs.push(syn::parse_quote!(#[allow(clippy::needless_pass_by_value)]));
            if method.block.stmts.is_empty() {
                method.attrs.push(syn::parse_quote!(#[allow(unused_variables)]));
            }
        }
    }
    item
}

/// `#[bridge(…)]` and `///` removed from a method's parameters.
pub(crate) fn params(method: &mut ImplItemFn) {
    for input in method.sig.inputs.iter_mut() {
        if let FnArg::Typed(arg) = input {
            arg.attrs.retain(|a| !attr::is_bridge(a) && !attr::is_doc(a));
        }
    }
}
