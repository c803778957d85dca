//! Collects every error of one derive, so the user sees them all at once.

use std::cell::RefCell;
use std::fmt::Display;

use quote::ToTokens;

/// An error sink threaded through parsing and validation; [`Ctxt::check`] hands back the
/// combined errors. Dropping it unchecked is a bug, as in serde_derive.
#[derive(Debug, Default)]
pub struct Ctxt {
    errors: RefCell<Option<Vec<syn::Error>>>,
}

impl Ctxt {
    pub fn new() -> Self {
        Ctxt {
            errors: RefCell::new(Some(Vec::new())),
        }
    }

    /// An error spanned on the user's tokens.
    pub fn error_spanned_by<T: ToTokens, M: Display>(&self, tokens: T, message: M) {
        self.syn_error(syn::Error::new_spanned(tokens.into_token_stream(), message));
    }

    pub fn syn_error(&self, error: syn::Error) {
        self.errors
            .borrow_mut()
            .as_mut()
            .expect("Ctxt used after check")
            .push(error);
    }

    /// How many errors have been reported: to tell whether a part of the input reported any.
    pub fn error_count(&self) -> usize {
        self.errors.borrow().as_ref().map_or(0, Vec::len)
    }

    pub fn has_errors(&self) -> bool {
        self.errors
            .borrow()
            .as_ref()
            .is_some_and(|errors| !errors.is_empty())
    }

    /// All errors, combined into one `syn::Error`, or `Ok` when there were none.
    pub fn check(self) -> syn::Result<()> {
        let errors = self.errors.borrow_mut().take().expect("Ctxt checked twice");
        let mut errors = errors.into_iter();
        let Some(mut combined) = errors.next() else {
            return Ok(());
        };
        for rest in errors {
            combined.combine(rest);
        }
        Err(combined)
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        if !std::thread::panicking() && self.errors.borrow().is_some() {
            panic!("forgot to check for errors");
        }
    }
}
