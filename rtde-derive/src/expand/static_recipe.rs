//! `impl StaticRecipe`, and the checks across flattened parts that only the compiler can
//! make: each rule its own function, opened by the rule it states.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote, quote_spanned};
use rtde_fields::{Field as Entry, WireType};
use syn::Type;
use syn::spanned::Spanned;

use super::{Placed, direction_variant};
use crate::ast::{Field, Recipe};
use crate::attr;

/// `impl StaticRecipe`: the names, types and versions as literals, or, with flattened parts,
/// concatenated at compile time with the parts' own, next to the checks across the parts
/// that only the compiler can make (the macro cannot see a part's fields).
pub(super) fn static_consts(
    recipe: &Recipe<'_>,
    p: &TokenStream,
    fields: &[Placed<'_>],
    entries: &[&'static Entry],
    mins: [TokenStream; 3],
    n: &TokenStream,
) -> TokenStream {
    let ident = recipe.ident;
    let direction = direction_variant(recipe.attrs.direction);
    let parts: Vec<&Field<'_>> = fields
        .iter()
        .filter(|(_, _, pl)| pl.is_some())
        .map(|(f, _, _)| *f)
        .collect();
    if parts.is_empty() {
        return literal_static_consts(recipe, p, entries, mins, n);
    }

    let (name_parts, type_parts) = spec_lists(p, fields);
    let mut checks = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        checks.extend(part_checks(recipe, p, part, &parts[..i], entries));
    }
    checks.extend(recipe_checks(recipe, p));
    let part_types = parts.iter().map(|f| {
        let ty = f.ty;
        quote_spanned!(ty.span()=> <#ty as #p::StaticRecipe>::MIN_CONTROLLER)
    });

    quote! {
        const __RTDE_FIELDS: usize = #p::total_len::<&str>(&[#(#name_parts),*]);
        const __RTDE_NAMES: [&str; __RTDE_FIELDS] = #p::concat(&[#(#name_parts),*], "");
        const __RTDE_TYPES: [#p::WireType; __RTDE_FIELDS] =
            #p::concat(&[#(#type_parts),*], #p::WireType::Bool);

        #[automatically_derived]
        impl #p::StaticRecipe for #ident {
            const SPEC: #p::RecipeSpec<'static> = #p::RecipeSpec::new(
                #p::Direction::#direction,
                &__RTDE_NAMES,
                &__RTDE_TYPES,
            );
            const PAYLOAD_SIZE: usize = #n;
            const MIN_CONTROLLER: [#p::Option<#p::ControllerVersion>; 3] =
                #p::min_controller_of(&[[#(#mins),*], #(#part_types),*]);
        }

        #(#checks)*
    }
}

/// `impl StaticRecipe` of a recipe without flattened parts: every list a literal.
fn literal_static_consts(
    recipe: &Recipe<'_>,
    p: &TokenStream,
    entries: &[&'static Entry],
    mins: [TokenStream; 3],
    n: &TokenStream,
) -> TokenStream {
    let ident = recipe.ident;
    let direction = direction_variant(recipe.attrs.direction);
    let names = entries.iter().map(|e| e.name());
    let variants = entries.iter().map(|e| wire_variant(e.wire_type()));
    quote! {
        #[automatically_derived]
        impl #p::StaticRecipe for #ident {
            const SPEC: #p::RecipeSpec<'static> = #p::RecipeSpec::new(
                #p::Direction::#direction,
                &[#(#names),*],
                &[#(#p::WireType::#variants),*],
            );
            const PAYLOAD_SIZE: usize = #n;
            const MIN_CONTROLLER: [#p::Option<#p::ControllerVersion>; 3] = [#(#mins),*];
        }
    }
}

/// The slices whose concatenation is the recipe's names, and its types, in field order: a
/// run of own fields as a literal, then a part's from its spec, and so on.
fn spec_lists(p: &TokenStream, fields: &[Placed<'_>]) -> (Vec<TokenStream>, Vec<TokenStream>) {
    let mut name_parts = Vec::new();
    let mut type_parts = Vec::new();
    let (mut names, mut types) = (Vec::new(), Vec::new());
    for (f, ls, pl) in fields {
        if pl.is_some() {
            let ty = f.ty;
            name_parts.push(quote!(&[#(#names),*]));
            type_parts.push(quote!(&[#(#types),*]));
            (names, types) = (Vec::new(), Vec::new());
            name_parts.push(quote_spanned!(ty.span()=> <#ty as #p::StaticRecipe>::SPEC.names()));
            type_parts.push(quote_spanned!(ty.span()=> <#ty as #p::StaticRecipe>::SPEC.types()));
        } else {
            for l in ls {
                names.push(l.entry.name().to_owned());
                let v = wire_variant(l.entry.wire_type());
                types.push(quote!(#p::WireType::#v));
            }
        }
    }
    name_parts.push(quote!(&[#(#names),*]));
    type_parts.push(quote!(&[#(#types),*]));
    (name_parts, type_parts)
}

/// The compile-time checks of one flattened part against the recipe, its own fields and
/// the parts `before` it.
fn part_checks(
    recipe: &Recipe<'_>,
    p: &TokenStream,
    part: &Field<'_>,
    before: &[&Field<'_>],
    entries: &[&'static Entry],
) -> Vec<TokenStream> {
    // The failed assertion is reported where its path is: at the field.
    let p = &respan(p, part.member.span());
    let mut checks = vec![part_direction_check(recipe, p, part)];
    checks.extend(
        entries
            .iter()
            .map(|e| part_lists_own_field_check(recipe, p, part, e)),
    );
    checks.extend(
        before
            .iter()
            .map(|other| parts_share_a_field_check(p, other, part)),
    );
    checks.extend(
        recipe
            .attrs
            .min_controller
            .iter()
            .map(|declared| part_min_controller_check(p, part, declared)),
    );
    checks
}

/// The type a part flattens, as the user wrote it, for the checks' messages.
fn type_name(ty: &Type) -> String {
    quote::ToTokens::to_token_stream(ty).to_string()
}

/// Rule: a part has the recipe's direction (it is set up in the same SETUP_*).
fn part_direction_check(recipe: &Recipe<'_>, p: &TokenStream, part: &Field<'_>) -> TokenStream {
    let (ty, member, ident) = (part.ty, part.member, recipe.ident);
    let direction = direction_variant(recipe.attrs.direction);
    let message = format!(
        "`{member}` flattens `{}`, a recipe of the other direction; `{ident}` is an {} \
         recipe, and can include only {} recipes",
        type_name(ty),
        recipe.attrs.direction,
        recipe.attrs.direction
    );
    quote_spanned! {member.span()=>
        const _: () = #p::assert!(
            #p::is_direction(<#ty as #p::StaticRecipe>::SPEC.direction(), #p::Direction::#direction),
            #message
        );
    }
}

/// Rule: no RTDE field is listed twice across the struct's own fields and its parts; this
/// one checks the part against one own field.
fn part_lists_own_field_check(
    recipe: &Recipe<'_>,
    p: &TokenStream,
    part: &Field<'_>,
    entry: &Entry,
) -> TokenStream {
    let (ty, member, ident) = (part.ty, part.member, recipe.ident);
    let name = entry.name();
    let message = format!(
        "`{member}` flattens `{}`, which lists the RTDE field `{name}` that \
         `{ident}` lists too; a recipe lists each field once",
        type_name(ty)
    );
    quote_spanned! {member.span()=>
        const _: () = #p::assert!(
            !#p::has_name(<#ty as #p::StaticRecipe>::SPEC.names(), #name),
            #message
        );
    }
}

/// The same rule across two parts: `other`, flattened before `part`, shares no field with it.
fn parts_share_a_field_check(p: &TokenStream, other: &Field<'_>, part: &Field<'_>) -> TokenStream {
    let (ty, member) = (part.ty, part.member);
    let (oty, omember) = (other.ty, other.member);
    let message = format!(
        "`{omember}` and `{member}` flatten recipes that share an RTDE field; a recipe \
         lists each field once"
    );
    quote_spanned! {member.span()=>
        const _: () = #p::assert!(
            !#p::share_a_name(
                <#oty as #p::StaticRecipe>::SPEC.names(),
                <#ty as #p::StaticRecipe>::SPEC.names(),
            ),
            #message
        );
    }
}

/// Rule: every part's fields exist on each declared min_controller; this one checks one
/// part against one declaration.
fn part_min_controller_check(
    p: &TokenStream,
    part: &Field<'_>,
    declared: &attr::MinController,
) -> TokenStream {
    let (ty, member) = (part.ty, part.member);
    let g = declared.generation.index();
    let v = declared.version;
    let (a, b, c, d) = (v.major, v.minor, v.bugfix, v.build);
    let message = format!(
        "`{member}` flattens `{}`, which has a field that controller {v} lacks; \
         the recipe declares min_controller = \"{}\"",
        type_name(ty),
        declared.lit.value()
    );
    quote_spanned! {member.span()=>
        const _: () = #p::assert!(
            #p::supports(
                <#ty as #p::StaticRecipe>::MIN_CONTROLLER,
                #g,
                #p::ControllerVersion::new(#a, #b, #c, #d),
            ),
            #message
        );
    }
}

/// The compile-time checks of a recipe with flattened parts as a whole, reported at the
/// struct's name.
fn recipe_checks(recipe: &Recipe<'_>, p: &TokenStream) -> Vec<TokenStream> {
    let ident = recipe.ident;
    let id_span = ident.span();
    let p = &respan(p, id_span);
    let mut checks = Vec::new();
    if recipe.attrs.min_controller.is_empty() {
        // Rule: some controller generation has every field, the parts' included.
        let message = format!(
            "no controller has every field of `{ident}` and the recipes it flattens: each \
             generation lacks one of them"
        );
        checks.push(quote_spanned! {id_span=>
            const _: () = #p::assert!(
                #p::some_generation(<#ident as #p::StaticRecipe>::MIN_CONTROLLER),
                #message
            );
        });
    }
    // Rule: the comma-separated names, the parts' included, fit in one setup request.
    let message = format!(
        "the field names of `{ident}` and the recipes it flattens take more than the 2048 bytes \
         the controller accepts in one setup request: split it into two recipes"
    );
    checks.push(quote_spanned! {id_span=>
        const _: () = #p::assert!(
            #p::name_list_len(&__RTDE_NAMES) <= #p::MAX_NAME_LIST_BYTES,
            #message
        );
    });
    checks
}

/// `tokens` with every span set to `span`, so that a compile-time assertion that names them
/// is reported at `span`.
fn respan(tokens: &TokenStream, span: Span) -> TokenStream {
    tokens
        .clone()
        .into_iter()
        .map(|mut tt| {
            if let proc_macro2::TokenTree::Group(g) = &tt {
                let mut group = proc_macro2::Group::new(g.delimiter(), respan(&g.stream(), span));
                group.set_span(span);
                tt = proc_macro2::TokenTree::Group(group);
            } else {
                tt.set_span(span);
            }
            tt
        })
        .collect()
}

/// The registry's wire type as the `WireType` variant.
fn wire_variant(t: WireType) -> Ident {
    let name = match t {
        WireType::Bool => "Bool",
        WireType::Uint8 => "Uint8",
        WireType::Uint32 => "Uint32",
        WireType::Uint64 => "Uint64",
        WireType::Int32 => "Int32",
        WireType::Double => "Double",
        WireType::Vector3d => "Vector3d",
        WireType::Vector6d => "Vector6d",
        WireType::Vector6Int32 => "Vector6Int32",
        WireType::Vector6Uint32 => "Vector6Uint32",
    };
    Ident::new(name, Span::call_site())
}
