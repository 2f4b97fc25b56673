//! The borrowed view type: its declaration, its accessors (each field decoded from the
//! view's bytes on each call) and the traits a view has.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use super::{
    Layout, PartLayout, Placed, Size, allows, decode_field, part_size, payload_local, view_ident,
};
use crate::ast::{Field, Recipe};

/// The view type's declaration, outside the `const _` block so that users can name it.
pub(super) fn view_struct(recipe: &Recipe<'_>, n: &TokenStream, size: &Size) -> TokenStream {
    let (ident, vis) = (recipe.ident, recipe.vis);
    let view = view_ident(recipe);
    // With flattened parts, the size is the compiler's to add up, so the doc cannot say it.
    let view_doc = if size.parts.is_empty() {
        format!(
            "A borrowed view of a [`{ident}`] data package: {} bytes of payload, each field \
             decoded when its accessor is called. Made by `RecipeView::view`.",
            size.bytes
        )
    } else {
        format!(
            "A borrowed view of a [`{ident}`] data package: each field decoded when its \
             accessor is called. Made by `RecipeView::view`."
        )
    };
    let allows = allows();
    quote! {
        #[doc = #view_doc]
        #allows
        #vis struct #view<'a> {
            bytes: &'a [u8; #n],
        }
    }
}

/// `RecipeView`, the view's accessors, and the traits a borrowed view has.
pub(super) fn view_impls(
    recipe: &Recipe<'_>,
    p: &TokenStream,
    n: &TokenStream,
    accessors: &[TokenStream],
) -> TokenStream {
    let ident = recipe.ident;
    let view = view_ident(recipe);
    let view_name = view.to_string();
    let payload = payload_local();
    let formatter = Ident::new("__rtde_f", Span::mixed_site());
    quote! {
        #[automatically_derived]
        impl #p::RecipeView for #ident {
            type View<'a> = #view<'a>;
            #[inline]
            fn view(#payload: &[u8]) -> #p::Result<#view<'_>, #p::PayloadError> {
                #p::Ok(#view {
                    bytes: #p::payload::<#n>(#payload)?,
                })
            }
        }

        impl<'a> #view<'a> {
            #(#accessors)*
        }

        #[automatically_derived]
        impl #p::Clone for #view<'_> {
            #[inline]
            fn clone(&self) -> Self {
                *self
            }
        }

        #[automatically_derived]
        impl #p::Copy for #view<'_> {}

        #[automatically_derived]
        impl #p::AsRef<[u8]> for #view<'_> {
            #[inline]
            fn as_ref(&self) -> &[u8] {
                self.bytes
            }
        }

        #[automatically_derived]
        impl #p::fmt::Debug for #view<'_> {
            fn fmt(&self, #formatter: &mut #p::fmt::Formatter<'_>) -> #p::fmt::Result {
                #formatter.debug_struct(#view_name).finish_non_exhaustive()
            }
        }
    }
}

/// The view's accessors, one per field, in field order.
pub(super) fn accessors(
    p: &TokenStream,
    fields: &[Placed<'_>],
    n: &TokenStream,
) -> Vec<TokenStream> {
    fields
        .iter()
        .filter_map(|(field, ls, pl)| match pl {
            Some(pl) => Some(part_accessor(p, field, pl, n)),
            None => field_accessor(p, field, ls, n),
        })
        .collect()
}

/// A flattened part's accessor: the part's own view of its bytes.
fn part_accessor(
    p: &TokenStream,
    field: &Field<'_>,
    pl: &PartLayout<'_>,
    n: &TokenStream,
) -> TokenStream {
    let (member, ty, field_vis) = (field.member, field.ty, &field.original.vis);
    let size = part_size(p, ty);
    let offset = pl.offset.tokens();
    let doc = format!(
        "The flattened `{}` part, as its own view.",
        quote::ToTokens::to_token_stream(ty)
    );
    let view_ty = quote_spanned!(ty.span()=> <#ty as #p::RecipeView>::View<'a>);
    quote! {
        #[doc = #doc]
        #[inline]
        #[must_use]
        #field_vis fn #member(&self) -> #view_ty {
            <#ty as #p::Part<{ #size }>>::view_part(
                #p::part_bytes::<#offset, { #size }, #n>(self.bytes),
            )
        }
    }
}

/// A field's accessor: its value, decoded from the view's bytes on each call. `None` for a
/// field of no variables, which has nothing to read.
fn field_accessor(
    p: &TokenStream,
    field: &Field<'_>,
    ls: &[Layout<'_>],
    n: &TokenStream,
) -> Option<TokenStream> {
    let (first, last) = (ls.first()?, ls.last()?);
    let member = field.member;
    let field_vis = &field.original.vis;
    let ty = field.ty;
    let name = match &field.attrs.registers {
        Some(_) => format!("{}`..=`{}", first.entry.name(), last.entry.name()),
        None => first.entry.name().to_owned(),
    };
    // After a flattened part, the offsets are the compiler's to add up.
    let doc = if first.offset.parts.is_empty() {
        format!(
            "`{name}` ({}, payload bytes {}..{}), decoded on each call.",
            first.entry.wire_type(),
            first.offset.bytes,
            last.offset.bytes + last.size
        )
    } else {
        format!(
            "`{name}` ({}), decoded on each call.",
            first.entry.wire_type()
        )
    };
    let body = decode_field(p, (ls, None), n, &quote!(self.bytes));
    Some(quote! {
        #[doc = #doc]
        #[inline]
        #[must_use]
        #field_vis fn #member(&self) -> #ty {
            #body
        }
    })
}
