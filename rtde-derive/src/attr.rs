//! `#[rtde(…)]` on the struct and on its fields.
//!
//! Each key is parsed on its own: a duplicate, unknown or malformed key is an error on its
//! token, and parsing goes on with the next key, so that every attribute mistake shows at once.

use proc_macro2::TokenStream;
use quote::ToTokens;
use rtde_fields::{ControllerVersion, Direction, Generation};
use syn::meta::ParseNestedMeta;
use syn::{Attribute, LitStr, Token};

use crate::ctxt::Ctxt;
use crate::symbol::{self, Symbol};

/// One attribute value, remembering where it was set so that a second one is reported there.
struct Attr<'c, T> {
    cx: &'c Ctxt,
    name: Symbol,
    value: Option<(TokenStream, T)>,
}

impl<'c, T> Attr<'c, T> {
    fn none(cx: &'c Ctxt, name: Symbol) -> Self {
        Attr {
            cx,
            name,
            value: None,
        }
    }

    fn set<A: ToTokens>(&mut self, key: A, value: T) {
        let tokens = key.into_token_stream();
        if self.value.is_some() {
            self.cx
                .error_spanned_by(tokens, format!("duplicate rtde attribute `{}`", self.name));
        } else {
            self.value = Some((tokens, value));
        }
    }

    fn get(self) -> Option<T> {
        self.value.map(|(_, v)| v)
    }

    fn get_with_tokens(self) -> Option<(TokenStream, T)> {
        self.value
    }
}

/// A declared `min_controller`: the version and the literal that gave it.
pub(crate) struct MinController {
    pub(crate) version: ControllerVersion,
    pub(crate) generation: Generation,
    pub(crate) lit: LitStr,
}

/// The struct's attributes.
pub(crate) struct Container {
    /// The direction: `input`, `output`, or the default, output.
    pub(crate) direction: Direction,
    /// Whether `input` or `output` was written, rather than the default taken.
    pub(crate) direction_declared: bool,
    /// One entry per declared generation.
    pub(crate) min_controller: Vec<MinController>,
    pub(crate) allow_fieldbus_registers: bool,
    /// `crate = "…"`, or `::rtde_core`.
    pub(crate) crate_path: syn::Path,
}

/// A field's attributes.
pub(crate) struct Field {
    pub(crate) name: Option<LitStr>,
    /// `registers = "…"`: the field is an array, one element per register of the run.
    pub(crate) registers: Option<Registers>,
    /// A `registers` key was given, parsed or not: the field names no variable by its
    /// identifier, so an unparsable run adds no "unknown field" error.
    pub(crate) is_run: bool,
    /// `flatten`: the field's type is a recipe whose fields this one includes.
    pub(crate) flatten: bool,
    pub(crate) allow_fieldbus_registers: bool,
}

/// A run of registers, `input_double_register_24..=29`: the names it covers, in order.
pub(crate) struct Registers {
    pub(crate) names: Vec<String>,
    pub(crate) lit: LitStr,
}

impl Registers {
    /// Parses `PREFIX_FIRST..=LAST`; an error message otherwise.
    fn parse(lit: LitStr) -> Result<Registers, String> {
        let text = lit.value();
        let bad = || {
            format!(
                "`{text}` is not a register run; write the first register's name, `..=` and the \
                 last index: `input_double_register_24..=29`"
            )
        };
        let (first, last) = text.split_once("..=").ok_or_else(bad)?;
        let digits = first.len() - first.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        let (prefix, first) = first.split_at(first.len() - digits);
        let first: u16 = first.parse().map_err(|_| bad())?;
        let last: u16 = last.trim().parse().map_err(|_| bad())?;
        if prefix.is_empty() || last < first {
            return Err(format!(
                "`{text}` is an empty register run: the last index must not be below the first"
            ));
        }
        let names = (first..=last).map(|i| format!("{prefix}{i}")).collect();
        Ok(Registers { names, lit })
    }
}

impl Container {
    pub(crate) fn from_ast(cx: &Ctxt, attrs: &[Attribute]) -> Self {
        let mut direction = Attr::none(cx, symbol::INPUT);
        let mut allow = Attr::none(cx, symbol::ALLOW_FIELDBUS_REGISTERS);
        let mut crate_path = Attr::none(cx, symbol::CRATE);
        let mut min_controller: Vec<MinController> = Vec::new();

        for_each_key(cx, attrs, |meta| {
            if meta.path == symbol::INPUT || meta.path == symbol::OUTPUT {
                let d = if meta.path == symbol::INPUT {
                    Direction::Input
                } else {
                    Direction::Output
                };
                if let Some((_, previous)) = &direction.value {
                    let message = if *previous == d {
                        format!("duplicate rtde attribute `{d}`")
                    } else {
                        format!(
                            "conflicting rtde attributes `{previous}` and `{d}`: a recipe has one direction"
                        )
                    };
                    cx.error_spanned_by(&meta.path, message);
                } else {
                    direction.set(&meta.path, d);
                }
                no_value(cx, meta)?;
            } else if meta.path == symbol::ALLOW_FIELDBUS_REGISTERS {
                allow.set(&meta.path, ());
                no_value(cx, meta)?;
            } else if meta.path == symbol::CRATE {
                if let Some(lit) = string_value(cx, meta, symbol::CRATE)? {
                    match lit.parse::<syn::Path>() {
                        Ok(path) => crate_path.set(&meta.path, path),
                        Err(_) => cx.error_spanned_by(
                            &lit,
                            format!("`{}` is not a path to rtde-core", lit.value()),
                        ),
                    }
                }
            } else if meta.path == symbol::MIN_CONTROLLER {
                if let Some(lit) = string_value(cx, meta, symbol::MIN_CONTROLLER)? {
                    min_controller_value(cx, lit, &mut min_controller);
                }
            } else {
                unknown_key(
                    cx,
                    meta,
                    &symbol::CONTAINER_KEYS,
                    "struct",
                    &symbol::FIELD_KEYS,
                )?;
            }
            Ok(())
        });

        let declared = direction.get();
        Container {
            direction: declared.unwrap_or(Direction::Output),
            direction_declared: declared.is_some(),
            min_controller,
            allow_fieldbus_registers: allow.get().is_some(),
            crate_path: crate_path
                .get()
                .unwrap_or_else(|| syn::parse_quote!(::rtde_core)),
        }
    }
}

impl Field {
    pub(crate) fn from_ast(cx: &Ctxt, attrs: &[Attribute]) -> Self {
        let mut name = Attr::none(cx, symbol::NAME);
        let mut registers = Attr::none(cx, symbol::REGISTERS);
        let mut is_run = false;
        let mut allow = Attr::none(cx, symbol::ALLOW_FIELDBUS_REGISTERS);
        let mut flatten = Attr::none(cx, symbol::FLATTEN);
        for_each_key(cx, attrs, |meta| {
            if meta.path == symbol::FLATTEN {
                flatten.set(&meta.path, ());
                no_value(cx, meta)?;
            } else if meta.path == symbol::NAME {
                if let Some(lit) = string_value(cx, meta, symbol::NAME)? {
                    name.set(&meta.path, lit);
                }
            } else if meta.path == symbol::REGISTERS {
                is_run = true;
                if let Some(lit) = string_value(cx, meta, symbol::REGISTERS)? {
                    match Registers::parse(lit.clone()) {
                        Ok(run) => registers.set(&meta.path, run),
                        Err(message) => cx.error_spanned_by(&lit, message),
                    }
                }
            } else if meta.path == symbol::ALLOW_FIELDBUS_REGISTERS {
                allow.set(&meta.path, ());
                no_value(cx, meta)?;
            } else {
                unknown_key(
                    cx,
                    meta,
                    &symbol::FIELD_KEYS,
                    "field",
                    &symbol::CONTAINER_KEYS,
                )?;
            }
            Ok(())
        });
        let mut name = name.get_with_tokens().map(|(_, lit)| lit);
        let mut registers = registers.get_with_tokens();
        if let (Some(given), Some((key, _))) = (&name, &registers) {
            cx.error_spanned_by(
                key,
                format!(
                    "conflicting rtde attributes `name` and `registers`: a field is one RTDE \
                     variable (`name = \"{}\"`) or an array over a run of registers",
                    given.value()
                ),
            );
            (name, registers) = (None, None);
        }
        let mut allow = allow.get_with_tokens();
        let flatten = match flatten.get_with_tokens() {
            Some((key, ())) => {
                // A part brings its own names, registers and opt-ins: a key that would
                // rename or widen it belongs on the part's own fields.
                let other = [
                    name.as_ref().map(|_| symbol::NAME),
                    is_run.then_some(symbol::REGISTERS),
                    allow.as_ref().map(|_| symbol::ALLOW_FIELDBUS_REGISTERS),
                ];
                for other in other.into_iter().flatten() {
                    cx.error_spanned_by(
                        &key,
                        format!(
                            "conflicting rtde attributes `flatten` and `{other}`: a flattened \
                             field includes another recipe as it is; put `{other}` on that \
                             recipe's fields"
                        ),
                    );
                }
                (name, registers, is_run, allow) = (None, None, false, None);
                true
            }
            None => false,
        };
        Field {
            name,
            registers: registers.map(|(_, r)| r),
            is_run,
            flatten,
            allow_fieldbus_registers: allow.is_some(),
        }
    }
}

/// Calls `f` for every key of every `#[rtde(…)]` attribute; a malformed attribute is
/// recorded and the next one parsed.
fn for_each_key(
    cx: &Ctxt,
    attrs: &[Attribute],
    mut f: impl FnMut(&ParseNestedMeta<'_>) -> syn::Result<()>,
) {
    for attr in attrs {
        if *attr.path() != symbol::RTDE {
            continue;
        }
        if let syn::Meta::Path(_) = attr.meta {
            cx.error_spanned_by(
                attr,
                "expected `#[rtde(…)]` with keys such as `input`, `name = \"…\"`",
            );
            continue;
        }
        if let Err(e) = attr.parse_nested_meta(|meta| f(&meta)) {
            cx.syn_error(e);
        }
    }
}

/// A key that takes no value (`input`, `allow_fieldbus_registers`).
fn no_value(cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(Token![=]) || meta.input.peek(syn::token::Paren) {
        let key = meta.path.clone();
        skip_value(meta)?;
        cx.error_spanned_by(
            key.clone(),
            format!(
                "rtde attribute `{}` takes no value",
                key.get_ident().map(ToString::to_string).unwrap_or_default()
            ),
        );
    }
    Ok(())
}

/// The string of `key = "…"`; a missing or non-string value is recorded and skipped.
fn string_value(cx: &Ctxt, meta: &ParseNestedMeta<'_>, key: Symbol) -> syn::Result<Option<LitStr>> {
    if !meta.input.peek(Token![=]) {
        cx.error_spanned_by(
            &meta.path,
            format!("rtde attribute `{key}` needs a string value: `{key} = \"…\"`"),
        );
        if meta.input.peek(syn::token::Paren) {
            skip_value(meta)?;
        }
        return Ok(None);
    }
    let value = meta.value()?;
    if value.peek(LitStr) {
        return Ok(Some(value.parse()?));
    }
    let expr: TokenStream = take_until_comma(value)?;
    cx.error_spanned_by(
        expr,
        format!("rtde attribute `{key}` takes a string literal: `{key} = \"…\"`"),
    );
    Ok(None)
}

fn min_controller_value(cx: &Ctxt, lit: LitStr, declared: &mut Vec<MinController>) {
    let text = lit.value();
    let version = match ControllerVersion::parse(&text) {
        Ok(v) => v,
        Err(e) => {
            cx.error_spanned_by(
                &lit,
                format!("`{text}` is not a controller version: {}", e.reason()),
            );
            return;
        }
    };
    let Some(generation) = version.generation() else {
        cx.error_spanned_by(
            &lit,
            format!(
                "`{text}` is no Universal Robots controller version; \
                 expected CB3 3.x, e-Series 5.x or PolyScope X 10.x"
            ),
        );
        return;
    };
    if let Some(previous) = declared.iter().find(|m| m.generation == generation) {
        cx.error_spanned_by(
            &lit,
            format!(
                "min_controller is declared twice for {generation} (`{}` and `{text}`); \
                 declare one version per generation",
                previous.lit.value()
            ),
        );
        return;
    }
    declared.push(MinController {
        version,
        generation,
        lit,
    });
}

/// An unknown key: named as belonging to the other level when it does, and skipped.
fn unknown_key(
    cx: &Ctxt,
    meta: &ParseNestedMeta<'_>,
    here: &[Symbol],
    level: &str,
    other_level: &[Symbol],
) -> syn::Result<()> {
    let path = meta.path.clone();
    skip_value(meta)?;
    let name = path
        .get_ident()
        .map_or_else(|| path.to_token_stream().to_string(), ToString::to_string);
    let known: Vec<String> = here.iter().map(|s| format!("`{s}`")).collect();
    let message = if other_level.iter().any(|s| path == *s) {
        let other = if level == "struct" { "field" } else { "struct" };
        format!("rtde attribute `{name}` belongs on a {other}, not on a {level}")
    } else {
        format!(
            "unknown rtde attribute `{name}`; expected one of {} on a {level}",
            known.join(", ")
        )
    };
    cx.error_spanned_by(path, message);
    Ok(())
}

/// Consumes `= value` or `(…)` after a key, so that parsing can go on with the next key.
fn skip_value(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        let value = meta.value()?;
        take_until_comma(value)?;
    } else if meta.input.peek(syn::token::Paren) {
        let _: proc_macro2::Group = meta.input.parse()?;
    }
    Ok(())
}

fn take_until_comma(input: syn::parse::ParseStream<'_>) -> syn::Result<TokenStream> {
    let mut tokens = TokenStream::new();
    while !input.is_empty() && !input.peek(Token![,]) {
        let tt: proc_macro2::TokenTree = input.parse()?;
        tokens.extend([tt]);
    }
    if tokens.is_empty() {
        return Err(input.error("expected a value"));
    }
    Ok(tokens)
}
