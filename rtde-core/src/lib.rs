//! Typed RTDE (Real-Time Data Exchange) for Universal Robots controllers.
//!
//! A recipe is a struct; `#[derive(RtdeRecipe)]` checks it against the registry at compile
//! time and generates its decoding, encoding and a zero-copy view:
//!
//! ```
//! use rtde_core::{FromPayload, Pose, RecipeView, RobotMode, RtdeRecipe, StaticRecipe};
//!
//! #[derive(RtdeRecipe)]
//! #[rtde(min_controller = "5.4")]
//! struct Telemetry {
//!     timestamp: f64,
//!     actual_q: [f64; 6],
//!     actual_tcp_pose: Pose,     // the canonical name is `actual_TCP_pose`
//!     robot_mode: RobotMode,
//! }
//!
//! assert_eq!(Telemetry::SPEC.names(), ["timestamp", "actual_q", "actual_TCP_pose", "robot_mode"]);
//! let payload = [0u8; Telemetry::PAYLOAD_SIZE];
//! let t = Telemetry::from_payload(&payload).unwrap();
//! assert_eq!(t.robot_mode, RobotMode::Disconnected);
//! assert_eq!(Telemetry::view(&payload).unwrap().timestamp(), 0.0);
//! ```
//!
//! A mistake is a compile error at the token to fix:
//!
//! ```compile_fail
//! #[derive(rtde_core::RtdeRecipe)]
//! struct Telemetry {
//!     actual_tcp_pos: [f64; 6], // unknown RTDE output field `actual_tcp_pos`; did you mean `actual_TCP_pose`?
//! }
//! ```
//!
//! - [`RtdeRecipe`]: the derive, its attributes and what it generates.
//! - [`wire`]: the wire types as Rust types, and [`IsWire`](wire::IsWire), which decides which
//!   Rust types may hold a field; the typed values ([`RobotMode`], [`SafetyStatus`],
//!   [`JointMode`], [`DigitalBits`], [`Pose`], …) implement it for their own fields only.
//! - [`protocol`]: the wire codec, pure functions over bytes, for both protocol versions
//!   and both sides of the connection.
//! - [`Recipe`], [`OutputRecipe`], [`InputRecipe`]: what a client asks for and writes;
//!   [`StaticRecipe`], [`FromPayload`], [`ToPayload`], [`RecipeView`] for derived recipes;
//!   [`DynamicRecipe`] builds one from names at run time.
//! - [`Client`]: a thin blocking client over TCP, with [`Error`] telling "the controller said
//!   no" from "the link broke" from "the bytes were wrong"; every package in order or the
//!   latest only, reconnection that replays what was negotiated, [`Stats`] that count every
//!   loss by its cause, and [`State`] and [`Event`]s to watch the connection (see the
//!   [`blocking`] module).
//! - [`session`]: the same conversation as a state machine without I/O ([`Session`]), which
//!   owns every rule the client applies. The three drivers are peers over it, each a loop
//!   of read → handle → poll → write: [`blocking`] ([`Client`]), [`background`] (a reader
//!   thread and `Send + Sync` handles) and `tokio`; [`realtime`] gives any driver's thread
//!   SCHED_FIFO and a core of its own.
//! - [`writer`]: typed writes to the standard inputs (digital and analog outputs, speed
//!   slider, registers) that set their own masks and send only what they change.
//! - `tokio` (feature `tokio`): the async driver, a connection task and
//!   cheap handles (tokio-postgres' shape), with a `Stream` of every package and a watch
//!   of the latest.
//! - [`fields`]: the registry of every RTDE variable (re-exported `rtde-fields`).

#![forbid(unsafe_code)]

pub mod protocol;
pub mod wire;

#[doc(hidden)]
pub mod __private;
pub mod background;
pub mod blocking;
mod delivery;
pub mod diagnosis;
mod dynamic;
pub mod error;
pub mod realtime;
mod recipe;
mod recipe_error;
mod report;
pub mod rotation;
pub mod session;
mod tcp;
#[cfg(feature = "tokio")]
pub mod tokio;
mod typed;
mod value;
pub mod writer;

pub use blocking::{
    Client, ConnectOptions, ControllerText, DropReason, DroppedField, Event, InputHandle,
    RTDE_PORT, ReconnectPolicy, Reconnection, State, Stats,
};
pub use diagnosis::InUseOwner;
pub use dynamic::{DynamicRecipe, SetError};
pub use error::{
    Error, ErrorKind, RealtimeRefused, SetupRefused, SetupReplyMismatch, TypeMismatch, Unavailable,
    UnavailableField,
};
pub use recipe::{
    FromPayload, InputRecipe, OutputRecipe, PayloadError, Recipe, RecipeSpec, StaticRecipe,
};
pub use recipe::{RecipeView, ToPayload};
pub use recipe_error::{RecipeError, RecipeProblem};
pub use report::Report;
#[cfg(feature = "derive")]
pub use rtde_derive::RtdeRecipe;
pub use session::Session;
pub use typed::{
    DigitalBits, JointMode, Pose, RobotMode, RobotStatusBits, RuntimeState, SafetyMode,
    SafetyStatus, SafetyStatusBits, ToolMode, code_names,
};
pub use value::Value;

/// The registry of RTDE variables: names, wire types, directions, controller versions.
pub use rtde_fields as fields;
