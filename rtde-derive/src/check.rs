//! The rules a recipe must follow, checked against the registry. One function per rule,
//! each opened by the rule; every error is recorded in the context, none stops the others.

use rtde_fields::{
    Availability, Direction, Field as Entry, Generation, MAX_NAME_LIST_BYTES, RegisterBank,
    RegisterKind,
};

use crate::ast::{Field, Recipe};
use crate::ctxt::Ctxt;
use crate::suggest;

/// Each field's registry entries, in field order: one for a field, one per register for a
/// register run; `None` for a name that did not resolve (a run whose attribute did not
/// parse has none).
pub(crate) type Resolved = Vec<Vec<Option<&'static Entry>>>;

/// Runs every rule; returns what resolved, for the expansion (or the fallback's type checks).
///
/// A recipe of input fields that forgot `#[rtde(input)]` is one mistake, reported once: from
/// then on the recipe is the input recipe it was meant to be, so that its fields are not
/// reported one by one, the input rules apply, and the fallback's stubs are an input
/// recipe's (code that sends it raises nothing more).
pub(crate) fn check(cx: &Ctxt, recipe: &mut Recipe<'_>) -> Resolved {
    if input_attribute_forgotten(cx, recipe) {
        recipe.attrs.direction = Direction::Input;
    }
    let recipe = &*recipe;
    let resolved: Resolved = recipe
        .fields
        .iter()
        .map(|f| resolve_field(cx, recipe.attrs.direction, f))
        .collect();
    register_run_is_an_array(cx, recipe);
    duplicate_wire_names(cx, recipe, &resolved);
    declared_min_controller(cx, recipe, &resolved);
    some_generation_has_every_field(cx, recipe, &resolved);
    fieldbus_registers(cx, recipe, &resolved);
    masks_and_values(cx, recipe, &resolved);
    not_empty(cx, recipe);
    name_list_fits(cx, recipe, &resolved);
    resolved
}

/// Every field with its resolved entries, one pair per entry.
fn entries<'r, 'a>(
    recipe: &'r Recipe<'a>,
    resolved: &'r Resolved,
) -> impl Iterator<Item = (&'r Field<'a>, &'static Entry)> + 'r {
    recipe
        .fields
        .iter()
        .zip(resolved)
        .flat_map(|(f, es)| es.iter().flatten().map(move |&e| (f, e)))
}

/// The wire name a field asks for, as typed: its `name = "…"` or its identifier.
fn asked_name(f: &Field<'_>) -> String {
    match &f.attrs.name {
        Some(lit) => lit.value(),
        None => f.member.to_string().trim_start_matches("r#").to_owned(),
    }
}

/// Where an error about a field's wire names points: the `registers = "…"` or
/// `name = "…"` literal, or the identifier.
fn name_tokens(f: &Field<'_>) -> proc_macro2::TokenStream {
    if let Some(run) = &f.attrs.registers {
        let lit = &run.lit;
        return quote::quote!(#lit);
    }
    match &f.attrs.name {
        Some(lit) => quote::quote!(#lit),
        None => {
            let m = f.member;
            quote::quote!(#m)
        }
    }
}

/// A field's entries: its one variable, or each register of its run.
fn resolve_field(cx: &Ctxt, direction: Direction, f: &Field<'_>) -> Vec<Option<&'static Entry>> {
    // A flattened part's names are its own recipe's, checked there; those across parts
    // are compared at compile time by the expansion (the macro cannot see them).
    if f.attrs.flatten {
        return Vec::new();
    }
    if !f.attrs.is_run {
        return vec![resolve_name(cx, direction, f)];
    }
    let Some(run) = &f.attrs.registers else {
        return Vec::new();
    };
    let mut reported = false;
    run.names
        .iter()
        .map(|name| {
            let entry = resolve_register(cx, direction, f, name, !reported);
            reported |= entry.is_none();
            entry
        })
        .collect()
}

/// Whether every name of a field exists in `direction`, as [`resolve_field`] looks it up.
fn names_exist(direction: Direction, f: &Field<'_>) -> bool {
    if f.attrs.flatten {
        return false;
    }
    if f.attrs.is_run {
        return f.attrs.registers.as_ref().is_some_and(|run| {
            run.names.iter().all(|name| {
                rtde_fields::lookup(direction, name).is_some_and(|e| e.register().is_some())
            })
        });
    }
    let name = asked_name(f);
    match f.attrs.name {
        Some(_) => rtde_fields::lookup(direction, &name).is_some(),
        None => rtde_fields::lookup_ignore_case(direction, &name).is_some(),
    }
}

/// Rule: a recipe whose fields are all input fields says `#[rtde(input)]`. Without it, it
/// would be an output recipe: one that fails field by field, or, when the fields are input
/// registers, one that silently reads them back and cannot be sent. An explicit
/// `#[rtde(output)]` is how a recipe reads input registers back.
fn input_attribute_forgotten(cx: &Ctxt, recipe: &Recipe<'_>) -> bool {
    let forgotten = !recipe.attrs.direction_declared
        && !recipe.fields.is_empty()
        && recipe
            .fields
            .iter()
            .all(|f| names_exist(Direction::Input, f));
    if forgotten {
        let read_back = if recipe
            .fields
            .iter()
            .all(|f| names_exist(Direction::Output, f))
        {
            ", or `#[rtde(output)]` to read its registers back"
        } else {
            ""
        };
        cx.error_spanned_by(
            recipe.ident,
            format!(
                "every field of `{}` is an input field, but a recipe without `#[rtde(input)]` is \
                 an output recipe; add `#[rtde(input)]` to send it{read_back}",
                recipe.ident
            ),
        );
    }
    forgotten
}

/// Rule: every field names an RTDE variable of the recipe's direction. An identifier matches
/// ignoring case (`actual_tcp_pose` is `actual_TCP_pose`); `name = "…"` must be exact.
fn resolve_name(cx: &Ctxt, direction: Direction, f: &Field<'_>) -> Option<&'static Entry> {
    let name = asked_name(f);
    let exact = f.attrs.name.is_some();
    let find = |d: Direction| {
        if exact {
            rtde_fields::lookup(d, &name)
        } else {
            rtde_fields::lookup_ignore_case(d, &name)
        }
    };
    if let Some(entry) = find(direction) {
        return Some(entry);
    }
    let message = if let Some(other) = find(direction.opposite()) {
        format!(
            "`{}` is an {} field; it cannot appear in an {direction} recipe",
            other.name(),
            direction.opposite()
        )
    } else {
        format!(
            "unknown RTDE {direction} field `{name}`{}",
            suggest::hint(direction, &name)
        )
    };
    cx.error_spanned_by(name_tokens(f), message);
    None
}

/// Rule: every register of a run exists, as a register of the recipe's direction (the
/// names are exact, as the registry spells them). A run reports its first bad register.
fn resolve_register(
    cx: &Ctxt,
    direction: Direction,
    f: &Field<'_>,
    name: &str,
    report: bool,
) -> Option<&'static Entry> {
    if let Some(entry) = rtde_fields::lookup(direction, name).filter(|e| e.register().is_some()) {
        return Some(entry);
    }
    if !report {
        return None;
    }
    let run = f
        .attrs
        .registers
        .as_ref()
        .map(|r| r.lit.value())
        .unwrap_or_default();
    let message = match rtde_fields::lookup(direction.opposite(), name) {
        Some(other) if other.register().is_some() => format!(
            "`{run}` covers `{name}`, an {} register; it cannot appear in an {direction} recipe",
            direction.opposite()
        ),
        _ if rtde_fields::lookup(direction, name).is_some() => {
            format!("`{run}` covers `{name}`, which is not a register")
        }
        _ => format!(
            "`{run}` covers `{name}`, which no controller has{}",
            family_range(direction, name)
        ),
    };
    cx.error_spanned_by(name_tokens(f), message);
    None
}

/// "; these registers are numbered 24..=47", from the registry, for a register name past
/// the end of its family; empty when no family matches.
fn family_range(direction: Direction, name: &str) -> String {
    let prefix = name.trim_end_matches(|c: char| c.is_ascii_digit());
    let indices: Vec<u8> = rtde_fields::fields(direction)
        .iter()
        .filter(|e| {
            e.name()
                .strip_prefix(prefix)
                .is_some_and(|i| i.parse::<u8>().is_ok())
        })
        .filter_map(|e| e.register().map(|r| r.index()))
        .collect();
    match (indices.iter().min(), indices.iter().max()) {
        (Some(first), Some(last)) => {
            format!("; `{prefix}…` registers are numbered {first}..={last}")
        }
        _ => String::new(),
    }
}

/// Rule: a field over a register run is an array with one element per register.
fn register_run_is_an_array(cx: &Ctxt, recipe: &Recipe<'_>) {
    for f in &recipe.fields {
        let Some(run) = &f.attrs.registers else {
            continue;
        };
        let n = run.names.len();
        match f.array() {
            Some((_, Some(len))) if len == n => {}
            Some((elem, Some(len))) => cx.error_spanned_by(
                f.ty,
                format!(
                    "`{}` covers {n} registers, but the array has {len} elements; use `[{}; {n}]`",
                    run.lit.value(),
                    quote::ToTokens::to_token_stream(elem)
                ),
            ),
            Some((_, None)) => cx.error_spanned_by(
                f.ty,
                format!("the length of a register run's array must be a literal: `{n}`"),
            ),
            None => cx.error_spanned_by(
                f.ty,
                format!(
                    "a field over `{}` is an array of {n} elements, one per register",
                    run.lit.value()
                ),
            ),
        }
    }
}

/// Rule: no two struct fields (or registers of a run) name the same RTDE variable.
fn duplicate_wire_names(cx: &Ctxt, recipe: &Recipe<'_>, resolved: &Resolved) {
    let all: Vec<_> = entries(recipe, resolved).collect();
    for (i, (f, entry)) in all.iter().enumerate() {
        let first = all[..i].iter().find(|(_, e)| e.name() == entry.name());
        if let Some((first, _)) = first {
            let message = if std::ptr::eq(*first, *f) {
                format!(
                    "`{}` covers the RTDE field `{}` twice; a recipe lists each field once",
                    f.member,
                    entry.name()
                )
            } else {
                format!(
                    "`{}` and `{}` both name the RTDE field `{}`; a recipe lists each field once",
                    first.member,
                    f.member,
                    entry.name()
                )
            };
            cx.error_spanned_by(name_tokens(f), message);
        }
    }
}

/// Rule: every field exists on each controller version the recipe declares with
/// `min_controller`.
fn declared_min_controller(cx: &Ctxt, recipe: &Recipe<'_>, resolved: &Resolved) {
    for declared in &recipe.attrs.min_controller {
        // A run reports its first register the version lacks, once.
        let mut reported: Vec<*const Field<'_>> = Vec::new();
        for (f, entry) in entries(recipe, resolved) {
            if reported.contains(&std::ptr::from_ref(f)) {
                continue;
            }
            let problem = match entry.availability_on(declared.version) {
                Availability::Available | Availability::UnknownGeneration => continue,
                Availability::Since(v) => {
                    format!("needs {v} or later on {}", declared.generation)
                }
                Availability::NotOnGeneration(g) => format!("does not exist on {g}"),
            };
            reported.push(std::ptr::from_ref(f));
            cx.error_spanned_by(
                name_tokens(f),
                format!(
                    "field `{}` {problem}, but the recipe declares min_controller = \"{}\"",
                    entry.name(),
                    declared.lit.value()
                ),
            );
        }
    }
}

/// Rule: with no `min_controller` declared, at least one controller generation has every field.
fn some_generation_has_every_field(cx: &Ctxt, recipe: &Recipe<'_>, resolved: &Resolved) {
    let unresolved = recipe.fields.iter().zip(resolved).any(|(f, es)| {
        es.iter().any(Option::is_none)
            || (f.attrs.registers.is_none() && !f.attrs.flatten && es.is_empty())
    });
    if !recipe.attrs.min_controller.is_empty() || unresolved {
        return;
    }
    let mut lacks = Vec::new();
    for g in Generation::ALL {
        match resolved
            .iter()
            .flatten()
            .flatten()
            .find(|e| e.since(g).is_none())
        {
            Some(e) => lacks.push(format!("{g} lacks `{}`", e.name())),
            None => return,
        }
    }
    if !lacks.is_empty() {
        cx.error_spanned_by(
            recipe.ident,
            format!(
                "no controller has every field of this recipe: {}",
                lacks.join(", ")
            ),
        );
    }
}

/// Rule: an input recipe writes no register of the ranges reserved for fieldbus adapters
/// (int and double 0..=23, bits 0..=63) without `allow_fieldbus_registers`.
fn fieldbus_registers(cx: &Ctxt, recipe: &Recipe<'_>, resolved: &Resolved) {
    if recipe.attrs.direction != Direction::Input || recipe.attrs.allow_fieldbus_registers {
        return;
    }
    let mut reported: Vec<*const Field<'_>> = Vec::new();
    for (f, entry) in entries(recipe, resolved) {
        let Some(register) = entry.register() else {
            continue;
        };
        if register.bank() != RegisterBank::Input
            || !register.is_reserved_for_fieldbus()
            || f.attrs.allow_fieldbus_registers
            || reported.contains(&std::ptr::from_ref(f))
        {
            continue;
        }
        // A run reports its first reserved register, once.
        reported.push(std::ptr::from_ref(f));
        let kind = register.kind();
        let reserved = kind.fieldbus_range();
        let instead = match kind.external_range() {
            Some(r) => format!(
                "external RTDE clients use {kind} registers {}..={}",
                r.start(),
                r.end()
            ),
            None => format!(
                "external RTDE clients use `input_bit_register_{}`..`input_bit_register_{}`",
                RegisterKind::Bit
                    .external_range()
                    .map_or(64, |r| *r.start()),
                RegisterKind::Bit.external_range().map_or(127, |r| *r.end()),
            ),
        };
        let what = match kind {
            RegisterKind::BitWord => format!(
                "bit registers {}..={}",
                register.indices().start(),
                register.indices().end()
            ),
            _ => format!("{kind} registers {}..={}", reserved.start(), reserved.end()),
        };
        cx.error_spanned_by(
            name_tokens(f),
            format!(
                "`{}` writes {what}, reserved for fieldbus adapters (EtherNet/IP, PROFINET, Modbus); \
                 {instead}, or add #[rtde(allow_fieldbus_registers)]",
                entry.name()
            ),
        );
    }
}

/// Rule: an input recipe that writes a masked value also writes its mask (the controller
/// ignores the value otherwise), and a mask comes with at least one of its values. Which
/// mask gates which value is `rtde_fields::masks()`.
fn masks_and_values(cx: &Ctxt, recipe: &Recipe<'_>, resolved: &Resolved) {
    if recipe.attrs.direction != Direction::Input {
        return;
    }
    let has = |name: &str| entries(recipe, resolved).any(|(_, e)| e.name() == name);
    for (f, entry) in entries(recipe, resolved) {
        if let Some(m) = rtde_fields::mask_of(entry.name())
            && !has(m.mask())
        {
            let mask = m.mask();
            cx.error_spanned_by(
                name_tokens(f),
                format!(
                    "`{}` has no effect without `{mask}` in the same recipe: the controller \
                     applies it only where the mask selects it; add a `{mask}` field",
                    entry.name()
                ),
            );
        }
        if rtde_fields::is_mask(entry.name())
            && !rtde_fields::masked_by(entry.name()).any(|m| has(m.value()))
        {
            cx.error_spanned_by(
                name_tokens(f),
                format!(
                    "`{}` selects values this recipe does not write; add {}",
                    entry.name(),
                    rtde_fields::masked_by(entry.name())
                        .map(|m| format!("`{}`", m.value()))
                        .collect::<Vec<_>>()
                        .join(" or ")
                ),
            );
        }
    }
}

/// Rule: a recipe has at least one field (the controller refuses an empty setup).
fn not_empty(cx: &Ctxt, recipe: &Recipe<'_>) {
    if recipe.has_named_fields() && recipe.fields.is_empty() {
        cx.error_spanned_by(
            recipe.ident,
            "an RTDE recipe needs at least one field; the controller refuses an empty setup",
        );
    }
}

/// Rule: the comma-separated names fit in one setup request (2048 bytes).
fn name_list_fits(cx: &Ctxt, recipe: &Recipe<'_>, resolved: &Resolved) {
    let len = entries(recipe, resolved)
        .map(|(_, e)| e.name().len() + 1)
        .sum::<usize>()
        .saturating_sub(1);
    if len > MAX_NAME_LIST_BYTES {
        let setup = match recipe.attrs.direction {
            Direction::Output => "SETUP_OUTPUTS",
            Direction::Input => "SETUP_INPUTS",
        };
        cx.error_spanned_by(
            recipe.ident,
            format!(
                "the field names of this recipe take {len} bytes; the controller accepts at most \
                 {MAX_NAME_LIST_BYTES} in one {setup}: split it into two recipes"
            ),
        );
    }
}
