//! The generated code: the recipe traits, straight-line decode and encode at compile-time
//! offsets, and the borrowed view type, all inside one `const _: () = { … };` but the view.

use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use rtde_fields::{ControllerVersion, Direction, Field as Entry, Generation, WireType};
use syn::Type;
use syn::spanned::Spanned;

use crate::ast::{Field, Recipe};

// By path, because the expansion bench compiles this file as a module of its own
// (`#[path = "../src/expand.rs"]`), where a plain `mod` would look beside it in `src/`.
#[path = "expand/static_recipe.rs"]
mod static_recipe;
#[path = "expand/view.rs"]
mod view;

use static_recipe::static_consts;
use view::{accessors, view_impls, view_struct};

/// One RTDE variable's place in the payload: a field, or one register of a field's run.
struct Layout<'a> {
    field: &'a Field<'a>,
    /// The entry whose marker the type check names: the variable's own, or for a run its
    /// first register's, so that an element type that does not fit is reported once.
    checked_as: &'static Entry,
    /// The Rust type that holds the variable: the field's, or its array's element type.
    ty: &'a Type,
    /// The element of a register run.
    index: Option<usize>,
    entry: &'static Entry,
    offset: Size,
    size: usize,
}

/// A flattened field: another recipe's payload at `offset`.
struct PartLayout<'a> {
    field: &'a Field<'a>,
    offset: Size,
}

/// A byte count known at expansion, plus the sizes of the flattened parts before it, which
/// only the compiler knows (`<Header as StaticRecipe>::PAYLOAD_SIZE`).
#[derive(Clone, Default)]
struct Size {
    parts: Vec<TokenStream>,
    bytes: usize,
}

impl Size {
    /// A literal when no part precedes, or a const block adding the parts' sizes.
    fn tokens(&self) -> TokenStream {
        let bytes = lit(self.bytes);
        if self.parts.is_empty() {
            return quote!(#bytes);
        }
        let parts = &self.parts;
        quote!({ #(#parts +)* #bytes })
    }
}

/// `{ <T as StaticRecipe>::PAYLOAD_SIZE }`, spanned at the part's type.
fn part_size(p: &TokenStream, ty: &Type) -> TokenStream {
    quote_spanned!(ty.span()=> <#ty as #p::StaticRecipe>::PAYLOAD_SIZE)
}

/// `::rtde_core::__private`, or the same under `crate = "…"`.
pub(crate) fn private(recipe: &Recipe<'_>) -> TokenStream {
    let krate = &recipe.attrs.crate_path;
    quote!(#krate::__private)
}

/// The name of the view type: `<Name>View`.
pub(crate) fn view_ident(recipe: &Recipe<'_>) -> Ident {
    format_ident!("{}View", recipe.ident, span = recipe.ident.span())
}

/// The marker type of a wire type, `__private::wire::VECTOR6D`.
fn wire_marker(p: &TokenStream, t: WireType, span: Span) -> TokenStream {
    let ident = Ident::new(t.as_str(), span);
    quote_spanned!(span=> #p::wire::#ident)
}

/// The marker type of a field, `__private::field::actual_TCP_pose`.
pub(crate) fn field_marker(p: &TokenStream, entry: &Entry, span: Span) -> TokenStream {
    let ident = Ident::new(entry.name(), span);
    quote_spanned!(span=> #p::field::#ident)
}

/// `&&Slot::<T, W, F>::NEW`, spanned at the field's type: its decode and encode, which never
/// report a type that does not fit (the field's one type check does, see [`type_check`]).
fn slot(p: &TokenStream, ty: &Type, entry: &Entry) -> TokenStream {
    let span = ty.span();
    let wire = wire_marker(p, entry.wire_type(), span);
    let marker = field_marker(p, entry, span);
    quote_spanned!(span=> (&&#p::Slot::<#ty, #wire, #marker>::NEW))
}

/// The check that a field's Rust type fits its field, spanned at the type: the one place
/// that reports a type that does not fit. `entry` is the field's, or a run's first
/// register's (a run's registers share one wire type). For a field that a typed value
/// carries, the check's error names the value (`safety_mode` carries a `SafetyMode`).
pub(crate) fn type_check(p: &TokenStream, ty: &Type, entry: &Entry) -> TokenStream {
    let span = ty.span();
    let wire = wire_marker(p, entry.wire_type(), span);
    let marker = field_marker(p, entry, span);
    let assert = if rtde_fields::typed_value(entry.name()).is_some() {
        Ident::new("assert_fits", span)
    } else {
        Ident::new("assert_is_wire", span)
    };
    quote_spanned! {span=>
        #p::#assert::<#ty, #wire, #marker>();
    }
}

/// The type a field's check names: the field's, or a run's element type.
pub(crate) fn checked_type<'a>(f: &Field<'a>) -> Option<&'a Type> {
    match f.attrs.registers {
        Some(_) => f.array().map(|(elem, _)| elem),
        None => Some(f.ty),
    }
}

fn decode(p: &TokenStream, l: &Layout<'_>, n: &TokenStream, bytes: &TokenStream) -> TokenStream {
    let span = l.ty.span();
    let slot = slot(p, l.ty, l.checked_as);
    let wire = wire_marker(p, l.entry.wire_type(), span);
    let (offset, size) = (l.offset.tokens(), lit(l.size));
    quote_spanned! {span=>
        #slot.rtde_from_wire(<#wire as #p::WireKind>::decode(#p::at::<#offset, #size, #n>(#bytes)))
    }
}

fn encode(p: &TokenStream, l: &Layout<'_>, n: &TokenStream, out: &Ident) -> TokenStream {
    let span = l.ty.span();
    let slot = slot(p, l.ty, l.checked_as);
    let wire = wire_marker(p, l.entry.wire_type(), span);
    let member = l.field.member;
    let place = match l.index {
        Some(i) => {
            let i = lit(i);
            quote!(self.#member[#i])
        }
        None => quote!(self.#member),
    };
    let (offset, size) = (l.offset.tokens(), lit(l.size));
    quote_spanned! {span=>
        #p::put::<#offset, #size, #n>(#out, <#wire as #p::WireKind>::encode(#slot.rtde_to_wire(&#place)))
    }
}

/// A flattened part's value, decoded by its own recipe from its bytes.
fn decode_part(
    p: &TokenStream,
    part: &PartLayout<'_>,
    n: &TokenStream,
    bytes: &TokenStream,
) -> TokenStream {
    let ty = part.field.ty;
    let size = part_size(p, ty);
    let offset = part.offset.tokens();
    quote_spanned! {ty.span()=>
        <#ty as #p::Part<{ #size }>>::decode_part(#p::part_bytes::<#offset, { #size }, #n>(#bytes))
    }
}

/// A field's value from the payload: its one variable, the array of its run, or its part.
fn decode_field(
    p: &TokenStream,
    (ls, part): (&[Layout<'_>], Option<&PartLayout<'_>>),
    n: &TokenStream,
    bytes: &TokenStream,
) -> TokenStream {
    if let Some(part) = part {
        return decode_part(p, part, n, bytes);
    }
    match ls {
        [one] if one.index.is_none() => decode(p, one, n, bytes),
        run => {
            let each = run.iter().map(|l| decode(p, l, n, bytes));
            quote!([#(#each),*])
        }
    }
}

/// How many values a wire type decodes into: what a decoder holds in registers at once.
fn scalars(t: WireType) -> usize {
    match t {
        WireType::Bool
        | WireType::Uint8
        | WireType::Uint32
        | WireType::Uint64
        | WireType::Int32
        | WireType::Double => 1,
        WireType::Vector3d => 3,
        WireType::Vector6d | WireType::Vector6Int32 | WireType::Vector6Uint32 => 6,
    }
}

/// Recipes of more values than this decode out of line. Inlined into a caller, a decoder
/// builds its struct from loads through a pointer the backend cannot tell apart from the
/// struct's memory, so instruction selection puts every store after every load: past the
/// registers x86-64 has free (12 values fit, checked in the assembly), the values wait on
/// the stack. Out of line, the payload is a `noalias` read-only argument, memory no store
/// can change, and each value is stored as soon as it is read, as by hand.
const MAX_INLINE_SCALARS: usize = 12;

/// Whether a recipe of these layouts decodes out of line ([`MAX_INLINE_SCALARS`]).
fn decodes_out_of_line(layouts: &[&Layout<'_>]) -> bool {
    layouts
        .iter()
        .map(|l| scalars(l.entry.wire_type()))
        .sum::<usize>()
        > MAX_INLINE_SCALARS
}

/// `FromPayload`: the length check, then the values as `Part::decode_part` reads them
/// (always inlined, so each value is still stored where the caller's `Result` keeps it).
/// Inline for recipes of few values; for many (see [`MAX_INLINE_SCALARS`]), one function
/// out of line, generic over the error so that `from_payload_as` writes the values
/// straight into the caller's `Result` rather than converting (copying) one.
fn from_payload(
    recipe: &Recipe<'_>,
    p: &TokenStream,
    layouts: &[&Layout<'_>],
    n_lit: &TokenStream,
) -> TokenStream {
    let ident = recipe.ident;
    let payload = payload_local();
    if !decodes_out_of_line(layouts) {
        return quote! {
            #[automatically_derived]
            impl #p::FromPayload for #ident {
                #[inline]
                fn from_payload(#payload: &[u8]) -> #p::Result<Self, #p::PayloadError> {
                    let #payload = #p::payload::<#n_lit>(#payload)?;
                    #p::Ok(<Self as #p::Part<#n_lit>>::decode_part(#payload))
                }
            }
        };
    }
    let decode = Ident::new("__rtde_decode", Span::mixed_site());
    let error = Ident::new("__RtdeError", Span::mixed_site());
    let cause = Ident::new("__rtde_cause", Span::mixed_site());
    quote! {
        #[inline(never)]
        fn #decode<#error: #p::From<#p::PayloadError>>(
            #payload: &[u8],
        ) -> #p::Result<#ident, #error> {
            let #payload = match #p::payload::<#n_lit>(#payload) {
                #p::Ok(#payload) => #payload,
                #p::Err(#cause) => {
                    return #p::Err(<#error as #p::From<#p::PayloadError>>::from(#cause));
                }
            };
            #p::Ok(<#ident as #p::Part<#n_lit>>::decode_part(#payload))
        }

        #[automatically_derived]
        impl #p::FromPayload for #ident {
            #[inline]
            fn from_payload(#payload: &[u8]) -> #p::Result<Self, #p::PayloadError> {
                #decode(#payload)
            }
            #[inline]
            fn from_payload_as<#error: #p::From<#p::PayloadError>>(
                #payload: &[u8],
            ) -> #p::Result<Self, #error> {
                #decode(#payload)
            }
        }
    }
}

/// `OutputRecipe::decode_into`: the length check, then each member assigned. For many
/// values the assignments are one function out of line, for the reason
/// [`MAX_INLINE_SCALARS`] gives, and the length check stays inline: the `Result` is made in
/// the caller, so the decoder stores only the values. Had the check gone out of line too,
/// the `Result` would come back through memory, one more store on a path the stores bound
/// (on an AMD EPYC, `recv_into`'s frame path ran at 1.20× the out-of-line floor that way,
/// and at 1.04–1.11× this way).
fn decode_into(
    recipe: &Recipe<'_>,
    p: &TokenStream,
    layouts: &[&Layout<'_>],
    n_lit: &TokenStream,
    members: &[&Ident],
    decodes: &[TokenStream],
) -> TokenStream {
    let ident = recipe.ident;
    let payload = payload_local();
    if !decodes_out_of_line(layouts) {
        return quote! {
            #[automatically_derived]
            impl #p::OutputRecipe for #ident {
                #[inline]
                fn decode_into(&mut self, #payload: &[u8]) -> #p::Result<(), #p::PayloadError> {
                    let #payload = #p::payload::<#n_lit>(#payload)?;
                    #(self.#members = #decodes;)*
                    #p::Ok(())
                }
            }
        };
    }
    let assign = Ident::new("__rtde_assign", Span::mixed_site());
    let out = out_local();
    quote! {
        #[inline(never)]
        fn #assign(#out: &mut #ident, #payload: &[u8; #n_lit]) {
            #(#out.#members = #decodes;)*
        }

        #[automatically_derived]
        impl #p::OutputRecipe for #ident {
            #[inline]
            fn decode_into(&mut self, #payload: &[u8]) -> #p::Result<(), #p::PayloadError> {
                #assign(self, #p::payload::<#n_lit>(#payload)?);
                #p::Ok(())
            }
        }
    }
}

fn lit(n: usize) -> Literal {
    Literal::usize_unsuffixed(n)
}

pub(crate) fn direction_variant(d: Direction) -> Ident {
    Ident::new(
        match d {
            Direction::Output => "Output",
            Direction::Input => "Input",
        },
        Span::call_site(),
    )
}

/// The first version of each generation that has every field.
fn min_controller(entries: &[&'static Entry]) -> [Option<ControllerVersion>; 3] {
    Generation::ALL.map(|g| {
        entries
            .iter()
            .map(|e| e.since(g))
            .try_fold(ControllerVersion::new(g.major(), 0, 0, 0), |max, v| {
                v.map(|v| max.max(v))
            })
    })
}

fn version_tokens(p: &TokenStream, v: Option<ControllerVersion>) -> TokenStream {
    match v {
        Some(v) => {
            let (a, b, c, d) = (v.major, v.minor, v.bugfix, v.build);
            quote!(#p::Some(#p::ControllerVersion::new(#a, #b, #c, #d)))
        }
        None => quote!(#p::None),
    }
}

/// The attributes on the `const _` block and the view: why each lint is allowed.
pub(crate) fn allows() -> TokenStream {
    quote! {
        #[allow(
            // A deprecated field type is the user's choice, already warned about at the field.
            deprecated,
            // Accessors are named after the fields, whatever their case (`actual_TCP_pose`).
            non_snake_case,
            // A private recipe's view and accessors may go unused.
            dead_code,
        )]
    }
}

/// A field's place in the payload: the layouts of its variables, or, flattened, its part.
type Placed<'f> = (&'f Field<'f>, Vec<Layout<'f>>, Option<PartLayout<'f>>);

/// The name of the payload a generated function reads. Locals get names no user constant is
/// likely to have: a constant in scope would turn a binding of the same name into a pattern,
/// whatever the span's hygiene.
fn payload_local() -> Ident {
    Ident::new("__rtde_payload", Span::mixed_site())
}

/// The name of the buffer a generated function writes, for the reason [`payload_local`] gives.
fn out_local() -> Ident {
    Ident::new("__rtde_out", Span::mixed_site())
}

/// The code of a recipe that passed every check; `per_field` are its fields' registry
/// entries (one each, or one per register of a run).
pub(crate) fn expand(recipe: &Recipe<'_>, per_field: &[Vec<&'static Entry>]) -> TokenStream {
    let p = private(recipe);
    let ident = recipe.ident;
    let (fields, size) = place_fields(recipe, &p, per_field);
    let n = &size.tokens();
    let entries: Vec<&'static Entry> = per_field.iter().flatten().copied().collect();
    let layouts: Vec<&Layout<'_>> = fields.iter().flat_map(|(_, ls, _)| ls).collect();

    let mins = min_controller(&entries).map(|v| version_tokens(&p, v));
    let members: Vec<&Ident> = fields.iter().map(|(f, _, _)| f.member).collect();
    let payload = payload_local();
    let payload_expr = quote!(#payload);
    let decodes: Vec<TokenStream> = fields
        .iter()
        .map(|(_, ls, pl)| decode_field(&p, (ls, pl.as_ref()), n, &payload_expr))
        .collect();
    let encodes = encodes(&p, &fields, n);

    let view_struct = view_struct(recipe, n, &size);
    let allows = allows();
    let type_checks = fields.iter().filter_map(|(_, ls, _)| {
        let first = ls.first()?;
        Some(type_check(&p, first.ty, first.checked_as))
    });
    let static_consts = static_consts(recipe, &p, &fields, &entries, mins, n);
    let from_payload = from_payload(recipe, &p, &layouts, n);
    let payload_impls = payload_impls(recipe, &p, n, (&members, &decodes), &encodes);
    let direction_impl = match recipe.attrs.direction {
        Direction::Output => decode_into(recipe, &p, &layouts, n, &members, &decodes),
        Direction::Input => encode_into(recipe, &p, n),
    };
    let view_impls = view_impls(recipe, &p, n, &accessors(&p, &fields, n));

    quote! {
        #view_struct

        #allows
        const _: () = {
            use #p::{Fit as _, Unfit as _};

            const _: () = {
                #(#type_checks)*
            };

            #[automatically_derived]
            impl #p::Recipe for #ident {
                #[inline]
                fn spec(&self) -> #p::RecipeSpec<'_> {
                    <Self as #p::StaticRecipe>::SPEC
                }
            }

            #static_consts

            #from_payload

            #payload_impls

            #direction_impl

            #view_impls
        };
    }
}

/// Each field's place in the payload, in field order, and the payload's size: a field's
/// variables follow one another, and a flattened part takes its recipe's size, which only
/// the compiler knows.
fn place_fields<'r>(
    recipe: &'r Recipe<'_>,
    p: &TokenStream,
    per_field: &[Vec<&'static Entry>],
) -> (Vec<Placed<'r>>, Size) {
    let mut fields: Vec<Placed<'_>> = Vec::with_capacity(per_field.len());
    let mut offset = Size::default();
    for (field, field_entries) in recipe.fields.iter().zip(per_field) {
        if field.attrs.flatten {
            fields.push((
                field,
                Vec::new(),
                Some(PartLayout {
                    field,
                    offset: offset.clone(),
                }),
            ));
            offset.parts.push(part_size(p, field.ty));
            continue;
        }
        let run = field.attrs.registers.as_ref().and(field.array());
        let mut layouts = Vec::with_capacity(field_entries.len());
        for (i, &entry) in field_entries.iter().enumerate() {
            let size = entry.wire_type().size();
            layouts.push(Layout {
                field,
                checked_as: field_entries[0],
                ty: checked_type(field).unwrap_or(field.ty),
                index: run.map(|_| i),
                entry,
                offset: offset.clone(),
                size,
            });
            offset.bytes += size;
        }
        fields.push((field, layouts, None));
    }
    (fields, offset)
}

/// The statements that write each field into the payload, a part through its own recipe.
fn encodes(p: &TokenStream, fields: &[Placed<'_>], n: &TokenStream) -> Vec<TokenStream> {
    let out = out_local();
    fields
        .iter()
        .flat_map(|(f, ls, pl)| {
            let part = pl.as_ref().map(|pl| {
                let (ty, member) = (f.ty, f.member);
                let (size, offset) = (part_size(p, ty), pl.offset.tokens());
                quote_spanned! {ty.span()=>
                    #p::put_part::<#offset, { #size }, #n, #ty>(#out, &self.#member)
                }
            });
            ls.iter().map(|l| encode(p, l, n, &out)).chain(part)
        })
        .collect()
}

/// `ToPayload` and `Part`: the encode into a fixed-size array, and the decode and encode
/// that a recipe flattening this one calls on its bytes.
fn payload_impls(
    recipe: &Recipe<'_>,
    p: &TokenStream,
    n: &TokenStream,
    (members, decodes): (&[&Ident], &[TokenStream]),
    encodes: &[TokenStream],
) -> TokenStream {
    let ident = recipe.ident;
    let view = view_ident(recipe);
    let (payload, out) = (payload_local(), out_local());
    quote! {
        #[automatically_derived]
        impl #p::ToPayload for #ident {
            type Payload = [u8; #n];
            #[inline]
            fn to_payload(&self) -> [u8; #n] {
                let mut #out = [0u8; #n];
                <Self as #p::Part<#n>>::encode_part(self, &mut #out);
                #out
            }
        }

        #[automatically_derived]
        impl #p::Part<#n> for #ident {
            #[inline(always)]
            fn decode_part(#payload: &[u8; #n]) -> Self {
                Self {
                    #(#members: #decodes,)*
                }
            }
            #[inline]
            fn encode_part(&self, #out: &mut [u8; #n]) {
                #(#encodes;)*
            }
            #[inline]
            fn view_part(#payload: &[u8; #n]) -> #view<'_> {
                #view { bytes: #payload }
            }
        }
    }
}

/// `InputRecipe::encode_into`: the payload, written into the caller's buffer.
fn encode_into(recipe: &Recipe<'_>, p: &TokenStream, n: &TokenStream) -> TokenStream {
    let ident = recipe.ident;
    let out = out_local();
    quote! {
        #[automatically_derived]
        impl #p::InputRecipe for #ident {
            #[inline]
            fn encode_into(&self, #out: &mut [u8]) -> #p::Result<usize, #p::PayloadError> {
                #p::write_payload::<#n>(#out, &<Self as #p::ToPayload>::to_payload(self))
            }
        }
    }
}
