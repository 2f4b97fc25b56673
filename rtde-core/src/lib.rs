//! Typed RTDE (Real-Time Data Exchange) for Universal Robots controllers.
//!
//! - [`protocol`]: the wire codec, pure functions over bytes, for both protocol versions
//!   and both sides of the connection.
//! - [`Recipe`], [`OutputRecipe`], [`InputRecipe`]: what a client asks for and writes;
//!   [`DynamicRecipe`] builds one from names at run time.
//! - [`fields`]: the registry of every RTDE variable (re-exported `rtde-fields`).

pub mod protocol;
pub mod wire;

#[doc(hidden)]
pub mod __private;
mod dynamic;
mod recipe;
mod typed;
mod value;

pub use dynamic::{DynamicRecipe, RecipeError, RecipeProblem, SetError};
pub use recipe::{
    FromPayload, InputRecipe, OutputRecipe, PayloadError, Recipe, RecipeSpec, StaticRecipe,
};
pub use recipe::{RecipeView, ToPayload};
#[cfg(feature = "derive")]
pub use rtde_derive::RtdeRecipe;
pub use typed::{
    DigitalBits, JointMode, Pose, RobotMode, RobotStatusBits, RuntimeState, SafetyMode,
    SafetyStatus, SafetyStatusBits, ToolMode,
};
pub use value::Value;

/// The registry of RTDE variables: names, wire types, directions, controller versions.
pub use rtde_fields as fields;
