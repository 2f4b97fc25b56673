//! Sending URScript to the controller's script ports (30001–30003), with the
//! preconditions checked through the Dashboard server first and the program's fate
//! (playing, a compile error, a runtime exception at a line and column, a protective
//! stop) reported as a typed result.

mod error;
mod sender;

pub use error::ScriptError;
pub use rtde_robot_proto::ports::{Ports, ScriptPort};
pub use rtde_robot_proto::script::{MARKER_PREFIX, Program, ProgramError};
pub use sender::{Preconditions, ScriptSender, Started, Step};
