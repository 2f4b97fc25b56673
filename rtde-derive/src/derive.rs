//! The phases in order: parse, check, then the generated code or every error plus a stub.
//! Its own module so that `expand` and `fallback` are two leaves that never import each other.

use proc_macro2::TokenStream;
use rtde_fields::Field as Entry;
use syn::DeriveInput;

use crate::ast::Recipe;
use crate::ctxt::Ctxt;
use crate::{check, expand, fallback};

/// The derive: the generated code, or every error plus a stub.
pub(crate) fn derive(input: &DeriveInput) -> TokenStream {
    let cx = Ctxt::new();
    let mut recipe = Recipe::from_ast(&cx, input);
    let resolved = check::check(&cx, &mut recipe);
    match cx.check() {
        Ok(()) => {
            let entries: Vec<Vec<&'static Entry>> = resolved
                .into_iter()
                .map(|es| es.into_iter().flatten().collect())
                .collect();
            expand::expand(&recipe, &entries)
        }
        Err(errors) => fallback::expand(&recipe, &resolved, &errors),
    }
}
