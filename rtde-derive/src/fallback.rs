//! On any error: the errors, plus stub impls so that code using the recipe raises no
//! further errors, plus the type checks of the fields that did resolve, so that a wrong
//! Rust type shows in the same build as the derive's own errors.

use proc_macro2::TokenStream;
use quote::quote;

use crate::ast::Recipe;
use crate::check::Resolved;
use crate::expand::{allows, checked_type, direction_variant, private, type_check, view_ident};

pub(crate) fn expand(recipe: &Recipe<'_>, resolved: &Resolved, errors: &syn::Error) -> TokenStream {
    let errors = errors.to_compile_error();
    let p = private(recipe);
    let allows = allows();
    let recipe_impls = recipe_stubs(recipe, &p);
    let (view_struct, view_impls) = view_stubs(recipe, &p);
    let type_checks = type_checks(recipe, resolved, &p);

    quote! {
        #errors
        #view_struct

        #allows
        const _: () = {
            #recipe_impls
            #view_impls

            const _: () = {
                #(#type_checks)*
            };
        };
    }
}

/// The recipe traits, every method `unreachable!()`, with an empty spec.
fn recipe_stubs(recipe: &Recipe<'_>, p: &TokenStream) -> TokenStream {
    let ident = recipe.ident;
    let (impl_generics, ty_generics, where_clause) = recipe.original.generics.split_for_impl();
    let direction = direction_variant(recipe.attrs.direction);
    let direction_impl = direction_stub(recipe, p);
    quote! {
        impl #impl_generics #p::Recipe for #ident #ty_generics #where_clause {
            fn spec(&self) -> #p::RecipeSpec<'_> {
                #p::unreachable!()
            }
        }

        impl #impl_generics #p::StaticRecipe for #ident #ty_generics #where_clause {
            const SPEC: #p::RecipeSpec<'static> =
                #p::RecipeSpec::new(#p::Direction::#direction, &[], &[]);
            const PAYLOAD_SIZE: usize = 0;
            const MIN_CONTROLLER: [#p::Option<#p::ControllerVersion>; 3] =
                [#p::None, #p::None, #p::None];
        }

        impl #impl_generics #p::FromPayload for #ident #ty_generics #where_clause {
            fn from_payload(_: &[u8]) -> #p::Result<Self, #p::PayloadError> {
                #p::unreachable!()
            }
        }

        impl #impl_generics #p::ToPayload for #ident #ty_generics #where_clause {
            type Payload = [u8; 0];
            fn to_payload(&self) -> [u8; 0] {
                #p::unreachable!()
            }
        }

        #direction_impl
    }
}

/// `OutputRecipe` or `InputRecipe`, whichever the recipe declared.
fn direction_stub(recipe: &Recipe<'_>, p: &TokenStream) -> TokenStream {
    let ident = recipe.ident;
    let (impl_generics, ty_generics, where_clause) = recipe.original.generics.split_for_impl();
    match recipe.attrs.direction {
        rtde_fields::Direction::Output => quote! {
            impl #impl_generics #p::OutputRecipe for #ident #ty_generics #where_clause {
                fn decode_into(&mut self, _: &[u8]) -> #p::Result<(), #p::PayloadError> {
                    #p::unreachable!()
                }
            }
        },
        rtde_fields::Direction::Input => quote! {
            impl #impl_generics #p::InputRecipe for #ident #ty_generics #where_clause {
                fn encode_into(&self, _: &mut [u8]) -> #p::Result<usize, #p::PayloadError> {
                    #p::unreachable!()
                }
            }
        },
    }
}

/// The view's declaration and its impls, when the input has the shape for one, so that
/// code naming it still compiles; nothing otherwise.
fn view_stubs(recipe: &Recipe<'_>, p: &TokenStream) -> (TokenStream, TokenStream) {
    if !(recipe.has_named_fields() && recipe.original.generics.params.is_empty()) {
        return (TokenStream::new(), TokenStream::new());
    }
    let view = view_ident(recipe);
    let (vis, allows) = (recipe.vis, allows());
    let view_struct = quote! {
        #[doc = "Not generated: the recipe has errors."]
        #allows
        #vis struct #view<'a> {
            bytes: &'a [u8],
        }
    };
    (view_struct, view_impl_stubs(recipe, p))
}

/// `RecipeView`, `Part`, the accessors, and the traits a view has.
fn view_impl_stubs(recipe: &Recipe<'_>, p: &TokenStream) -> TokenStream {
    let ident = recipe.ident;
    let view = view_ident(recipe);
    let accessors = recipe.fields.iter().map(|f| {
        let (member, ty, field_vis) = (f.member, f.ty, &f.original.vis);
        quote! {
            #[doc = "Not generated: the recipe has errors."]
            #field_vis fn #member(&self) -> #ty {
                #p::unreachable!()
            }
        }
    });
    quote! {
        impl #p::RecipeView for #ident {
            type View<'a> = #view<'a>;
            fn view(_: &[u8]) -> #p::Result<#view<'_>, #p::PayloadError> {
                #p::unreachable!()
            }
        }
        impl #p::Part<0> for #ident {
            fn decode_part(_: &[u8; 0]) -> Self {
                #p::unreachable!()
            }
            fn encode_part(&self, _: &mut [u8; 0]) {
                #p::unreachable!()
            }
            fn view_part(_: &[u8; 0]) -> #view<'_> {
                #p::unreachable!()
            }
        }
        impl<'a> #view<'a> {
            #(#accessors)*
        }
        impl #p::Clone for #view<'_> {
            fn clone(&self) -> Self {
                *self
            }
        }
        impl #p::Copy for #view<'_> {}
        impl #p::AsRef<[u8]> for #view<'_> {
            fn as_ref(&self) -> &[u8] {
                self.bytes
            }
        }
    }
}

/// The type checks of the fields that resolved. A register run's elements are checked
/// against its first register, as the expansion does.
fn type_checks(recipe: &Recipe<'_>, resolved: &Resolved, p: &TokenStream) -> Vec<TokenStream> {
    recipe
        .fields
        .iter()
        .zip(resolved)
        .filter_map(|(f, entries)| {
            let entry = (*entries.first()?)?;
            Some(type_check(p, checked_type(f)?, entry))
        })
        .collect()
}
