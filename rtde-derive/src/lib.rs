//! The `#[derive(RtdeRecipe)]` macro of [rtde-core](https://docs.rs/rtde-core); use it from
//! there (`rtde_core::RtdeRecipe`), which pins this crate to its exact version.
//!
//! Phases, one private module each: `ast` parses the struct and `attr` its `#[rtde(…)]`
//! attributes (keys named in `symbol`), `check` validates it against the registry
//! (`rtde-fields`) with `suggest` for did-you-mean, every error collected in a `ctxt`;
//! `expand` generates the code, or `fallback` the errors and a stub; `derive` runs them in order.

#![forbid(unsafe_code)]

mod ast;
mod attr;
mod check;
mod ctxt;
mod derive;
mod expand;
mod fallback;
mod suggest;
mod symbol;

#[cfg(test)]
mod output_tests;

use proc_macro::TokenStream;
use syn::{DeriveInput, parse_macro_input};

/// Makes a struct an RTDE recipe: each field is one RTDE variable, checked against the
/// registry at compile time, decoded and encoded at fixed offsets with no allocation.
///
/// ```
/// use rtde_core::{FromPayload, Pose, RecipeView, RobotMode, RtdeRecipe, StaticRecipe, ToPayload};
///
/// #[derive(RtdeRecipe)]                 // an output recipe (controller to client) by default
/// #[rtde(min_controller = "5.4")]       // checked: every field exists on e-Series 5.4
/// struct Telemetry {
///     timestamp: f64,
///     actual_q: [f64; 6],
///     actual_tcp_pose: Pose,            // snake_case finds the canonical `actual_TCP_pose`
///     robot_mode: RobotMode,
/// }
///
/// assert_eq!(Telemetry::SPEC.names(), ["timestamp", "actual_q", "actual_TCP_pose", "robot_mode"]);
/// assert_eq!(Telemetry::PAYLOAD_SIZE, 8 + 48 + 48 + 4);
///
/// let mut payload = [0u8; 108];
/// payload[104..].copy_from_slice(&7i32.to_be_bytes());
/// let t = Telemetry::from_payload(&payload).unwrap();
/// assert_eq!(t.robot_mode, RobotMode::Running);
/// let view = Telemetry::view(&payload).unwrap();   // reads one field on demand
/// assert_eq!(view.robot_mode(), RobotMode::Running);
/// assert_eq!(t.to_payload(), payload);
/// ```
///
/// # Attributes
///
/// | attribute | where | meaning |
/// | --- | --- | --- |
/// | `#[rtde(output)]` | struct | an output recipe (the default): [`OutputRecipe`]; required when every field is an input register (read back) |
/// | `#[rtde(input)]` | struct | an input recipe: [`InputRecipe`] |
/// | `#[rtde(min_controller = "5.4")]` | struct, once per generation | every field must exist on that version ("3.10", "5.4", "10.11") |
/// | `#[rtde(name = "actual_TCP_pose")]` | field | the wire name, exactly; otherwise the field's name, ignoring case |
/// | `#[rtde(registers = "input_double_register_24..=29")]` | array field | one element per register of the run, each checked as a field of its own (exists, direction, fieldbus range, controller version) |
/// | `#[rtde(flatten)]` | field whose type is a recipe | includes that recipe's fields at this place; duplicates, direction and `min_controller` across the parts are checked at compile time |
/// | `#[rtde(allow_fieldbus_registers)]` | field or struct | allow writing the registers reserved for fieldbus adapters (int and double 0..=23, bits 0..=63) |
/// | `#[rtde(crate = "path::to::rtde_core")]` | struct | where rtde-core is, for crates that re-export it |
///
/// A run of registers is one array field:
///
/// ```
/// use rtde_core::{RtdeRecipe, StaticRecipe, ToPayload};
///
/// #[derive(RtdeRecipe)]
/// #[rtde(input)]
/// struct Setpoint {
///     #[rtde(registers = "input_double_register_24..=29")]
///     q: [f64; 6],
///     input_int_register_30: i32,
/// }
///
/// assert_eq!(Setpoint::SPEC.names()[5], "input_double_register_29");
/// let bytes = Setpoint { q: [0.5; 6], input_int_register_30: 1 }.to_payload();
/// assert_eq!(bytes[..8], 0.5f64.to_be_bytes());
/// ```
///
/// # Generated items
///
/// [`Recipe`], [`StaticRecipe`] (`SPEC`, `PAYLOAD_SIZE`, `MIN_CONTROLLER`), [`FromPayload`],
/// [`ToPayload`] (`[u8; PAYLOAD_SIZE]`), [`RecipeView`], and [`OutputRecipe`] or
/// [`InputRecipe`]; and a struct `<Name>View<'a>` with the struct's visibility: a borrowed
/// payload with one accessor per field, named and typed as the field.
///
/// # Compile errors
///
/// Unknown fields (with the closest name), fields of the other direction (a recipe of input
/// fields only, without `#[rtde(input)]`, is one error at the struct), fields a declared
/// `min_controller` lacks, fieldbus-reserved registers, register runs that reach past their
/// family, are not arrays of their length or conflict with `name`, an output value without its mask (or
/// a mask without a value) in an input recipe, two fields naming one variable, an empty
/// recipe, a name list over 2048 bytes, and unknown or repeated attributes are reported
/// together, each at the token to fix. A Rust type that cannot hold its field (`[f32; 6]`
/// for `actual_q`, `RobotMode` for `safety_mode`) is reported at the type, once, in RTDE
/// terms, naming the typed value that the field carries (`SafetyMode`) if it has one.
///
/// [`Recipe`]: https://docs.rs/rtde-core/latest/rtde_core/trait.Recipe.html
/// [`StaticRecipe`]: https://docs.rs/rtde-core/latest/rtde_core/trait.StaticRecipe.html
/// [`FromPayload`]: https://docs.rs/rtde-core/latest/rtde_core/trait.FromPayload.html
/// [`ToPayload`]: https://docs.rs/rtde-core/latest/rtde_core/trait.ToPayload.html
/// [`RecipeView`]: https://docs.rs/rtde-core/latest/rtde_core/trait.RecipeView.html
/// [`OutputRecipe`]: https://docs.rs/rtde-core/latest/rtde_core/trait.OutputRecipe.html
/// [`InputRecipe`]: https://docs.rs/rtde-core/latest/rtde_core/trait.InputRecipe.html
#[proc_macro_derive(RtdeRecipe, attributes(rtde))]
pub fn derive_rtde_recipe(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    derive::derive(&input).into()
}
