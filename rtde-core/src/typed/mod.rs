//! Typed values for the RTDE fields that carry codes, flags or poses.
//!
//! Each implements [`IsWire`](crate::wire::IsWire) only for the fields it describes, so
//! `safety_mode: RobotMode` is a compile error. Codes a controller sends that a type does not
//! know decode to an `Unknown(code)` variant (or, for flags, stay in the raw bits): decoding
//! never fails and never panics.

mod bits;
mod modes;
mod pose;

pub use bits::{DigitalBits, RobotStatusBits, SafetyStatusBits};
pub use modes::{JointMode, RobotMode, RuntimeState, SafetyMode, SafetyStatus, ToolMode};
pub use pose::Pose;
