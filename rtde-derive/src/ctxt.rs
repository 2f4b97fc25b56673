//! Collects every error of one derive, so that all of a struct's mistakes show in one build.

use std::cell::RefCell;
use std::fmt::Display;

use quote::ToTokens;

/// An error collector; [`Ctxt::check`] must be called before it is dropped.
pub(crate) struct Ctxt {
    // `None` once checked: dropping an unchecked context with errors in it is a bug in the
    // derive (the errors would be lost), caught by the drop bomb below.
    errors: RefCell<Option<Vec<syn::Error>>>,
}

impl Ctxt {
    pub(crate) fn new() -> Self {
        Ctxt {
            errors: RefCell::new(Some(Vec::new())),
        }
    }

    /// Records an error spanning `tokens`.
    pub(crate) fn error_spanned_by<T: ToTokens, M: Display>(&self, tokens: T, message: M) {
        self.syn_error(syn::Error::new_spanned(tokens.into_token_stream(), message));
    }

    /// Records a parse error.
    pub(crate) fn syn_error(&self, error: syn::Error) {
        if let Some(errors) = self.errors.borrow_mut().as_mut() {
            errors.push(error);
        }
    }

    /// All errors combined into one, or `Ok` when there were none.
    pub(crate) fn check(self) -> Result<(), syn::Error> {
        let errors = self.errors.borrow_mut().take().unwrap_or_default();
        let mut iter = errors.into_iter();
        match iter.next() {
            None => Ok(()),
            Some(mut combined) => {
                for rest in iter {
                    combined.combine(rest);
                }
                Err(combined)
            }
        }
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        if !std::thread::panicking() && self.errors.borrow().as_ref().is_some_and(|e| !e.is_empty())
        {
            panic!("rtde-derive bug: errors were collected but never reported");
        }
    }
}
