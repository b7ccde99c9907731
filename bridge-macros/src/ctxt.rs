//! Error collection (after serde_derive's `internals/ctxt.rs`): every stage reports into one
//! [`Ctxt`], so an author sees all mistakes of one item in one build.

use proc_macro2::Span;
use quote::ToTokens;
use std::cell::RefCell;
use std::fmt::Display;

/// Collects errors; [`Ctxt::check`] turns them into one combined `syn::Error`.
///
/// Unlike serde's, dropping an unchecked `Ctxt` does not panic: a proc macro must never panic.
#[derive(Default)]
pub(crate) struct Ctxt {
    errors: RefCell<Vec<syn::Error>>,
}

impl Ctxt {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// An error spanning the tokens of `obj`.
    pub(crate) fn error_spanned_by<A: ToTokens, T: Display>(&self, obj: A, msg: T) {
        self.errors.borrow_mut().push(syn::Error::new_spanned(obj.into_token_stream(), msg));
    }

    /// An error at `span`.
    pub(crate) fn error_at<T: Display>(&self, span: Span, msg: T) {
        self.errors.borrow_mut().push(syn::Error::new(span, msg));
    }

    /// One of syn's parse errors.
    pub(crate) fn syn_error(&self, err: syn::Error) {
        self.errors.borrow_mut().push(err);
    }

    /// How many errors were reported so far (to tell whether one step added any).
    pub(crate) fn len(&self) -> usize {
        self.errors.borrow().len()
    }

    /// All errors combined, or `Ok` when there were none.
    pub(crate) fn check(self) -> syn::Result<()> {
        let mut errors = self.errors.into_inner().into_iter();
        let Some(mut combined) = errors.next() else {
            return Ok(());
        };
        for rest in errors {
            combined.combine(rest);
        }
        Err(combined)
    }
}
