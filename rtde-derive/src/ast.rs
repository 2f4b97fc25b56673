//! The derive's input as a recipe: a struct with named fields, its attributes parsed.

use syn::{Data, DeriveInput, Fields, Ident, Type, Visibility};

use crate::attr;
use crate::ctxt::Ctxt;

/// A struct deriving `RtdeRecipe`.
pub(crate) struct Recipe<'a> {
    pub(crate) ident: &'a Ident,
    pub(crate) vis: &'a Visibility,
    pub(crate) attrs: attr::Container,
    /// The fields in declaration order; empty when the input is not a struct with named fields.
    pub(crate) fields: Vec<Field<'a>>,
    pub(crate) original: &'a DeriveInput,
}

/// One field: one RTDE variable.
pub(crate) struct Field<'a> {
    /// The Rust name, which is also the wire name unless `name = "…"` says otherwise.
    pub(crate) member: &'a Ident,
    pub(crate) attrs: attr::Field,
    pub(crate) ty: &'a Type,
    pub(crate) original: &'a syn::Field,
}

impl<'a> Field<'a> {
    /// For a field over a run of registers: the array's element type, and its length when
    /// it is an integer literal.
    pub(crate) fn array(&self) -> Option<(&'a Type, Option<usize>)> {
        let Type::Array(array) = self.ty else {
            return None;
        };
        let len = match &array.len {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(n),
                ..
            }) => n.base10_parse().ok(),
            _ => None,
        };
        Some((&array.elem, len))
    }
}

impl<'a> Recipe<'a> {
    /// Parses the input; shape errors (enum, union, tuple struct, generics) are recorded,
    /// and the attributes are parsed all the same so that their errors show too.
    pub(crate) fn from_ast(cx: &Ctxt, input: &'a DeriveInput) -> Recipe<'a> {
        let attrs = attr::Container::from_ast(cx, &input.attrs);
        let fields = match &input.data {
            Data::Struct(data) => match &data.fields {
                Fields::Named(named) => named
                    .named
                    .iter()
                    .filter_map(|f| {
                        Some(Field {
                            member: f.ident.as_ref()?,
                            attrs: attr::Field::from_ast(cx, &f.attrs),
                            ty: &f.ty,
                            original: f,
                        })
                    })
                    .collect(),
                Fields::Unnamed(_) => {
                    cx.error_spanned_by(
                        &input.ident,
                        "a tuple struct cannot be an RTDE recipe: name each field after its RTDE variable",
                    );
                    Vec::new()
                }
                Fields::Unit => {
                    cx.error_spanned_by(
                        &input.ident,
                        "a unit struct cannot be an RTDE recipe: it needs at least one field",
                    );
                    Vec::new()
                }
            },
            Data::Enum(data) => {
                cx.error_spanned_by(
                    data.enum_token,
                    "an enum cannot be an RTDE recipe: use a struct with one field per RTDE variable",
                );
                Vec::new()
            }
            Data::Union(data) => {
                cx.error_spanned_by(
                    data.union_token,
                    "a union cannot be an RTDE recipe: use a struct with one field per RTDE variable",
                );
                Vec::new()
            }
        };
        if !input.generics.params.is_empty() || input.generics.where_clause.is_some() {
            cx.error_spanned_by(
                &input.generics,
                "an RTDE recipe cannot be generic: its layout is fixed at compile time",
            );
        }
        Recipe {
            ident: &input.ident,
            vis: &input.vis,
            attrs,
            fields,
            original: input,
        }
    }

    /// Whether the input is a struct with named fields (the shape the generated view needs).
    pub(crate) fn has_named_fields(&self) -> bool {
        matches!(
            &self.original.data,
            Data::Struct(s) if matches!(s.fields, Fields::Named(_))
        )
    }
}
