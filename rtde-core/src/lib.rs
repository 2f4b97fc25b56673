//! Typed RTDE (Real-Time Data Exchange) for Universal Robots controllers.
//!
//! - [`protocol`]: the wire codec, pure functions over bytes, for both protocol versions
//!   and both sides of the connection.
//! - [`Recipe`], [`OutputRecipe`], [`InputRecipe`]: what a client asks for and writes;
//!   [`DynamicRecipe`] builds one from names at run time.
//! - [`Client`]: a thin blocking client over TCP, with [`Error`] telling "the controller said
//!   no" from "the link broke" from "the bytes were wrong".
//! - [`fields`]: the registry of every RTDE variable (re-exported `rtde-fields`).

#![forbid(unsafe_code)]

pub mod protocol;

pub mod client;
mod dynamic;
pub mod error;
mod recipe;
mod value;

pub use client::{
    Client, ConnectOptions, ControllerText, Event, InputHandle, RTDE_PORT, ReconnectPolicy,
    Reconnection, State, Stats,
};
pub use dynamic::{DynamicRecipe, RecipeError, RecipeProblem, SetError};
pub use error::{
    Error, ErrorKind, SetupRefused, SetupReplyMismatch, TypeMismatch, Unavailable, UnavailableField,
};
pub use recipe::{
    FromPayload, InputRecipe, OutputRecipe, PayloadError, Recipe, RecipeSpec, StaticRecipe,
};
pub use value::Value;

/// The registry of RTDE variables: names, wire types, directions, controller versions.
pub use rtde_fields as fields;
