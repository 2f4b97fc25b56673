//! The primary interface (ports 30001 and 30002, read-only 30011 and 30012), as a codec
//! over bytes without I/O: what rtde-robot's clients read, and what the simulator
//! writes.
//!
//! Every package starts with a header; robot messages (type 20) carry a second one:
//!
//! ```text
//! +-----------------+------+   +----------------+--------+------+----------------+
//! | size: i32 (BE)  | type |   | timestamp: u64 | source | kind | body …         |
//! | whole package   | u8   |   | (BE)           | i8     | u8   |                |
//! +-----------------+------+   +----------------+--------+------+----------------+
//! ```
//!
//! A connection starts with the version message; then a robot state message (type 16,
//! [`RobotState`]) comes about every 100 ms, and robot messages as things happen. The
//! robot messages decoded here, from Universal Robots' client interface documentation:
//!
//! | kind | message           | body                                                            |
//! |------|-------------------|-----------------------------------------------------------------|
//! | 0    | text              | text (the rest)                                                 |
//! | 3    | version           | name length i8, name, major u8, minor u8, bugfix i32, build i32, build date (the rest) |
//! | 5    | safety mode       | code i32, argument i32, safety mode u8, report data type u32, report data u32 |
//! | 7    | key               | code i32, argument i32, title length u8, title, text (the rest)  |
//! | 10   | runtime exception | line i32, column i32, text (the rest)                           |
//!
//! Other packages and messages are returned as [`PrimaryMessage::Other`] with their
//! types, so a reader skips them without losing the stream.
//!
//! ```
//! use rtde_robot_proto::primary::{PrimaryMessage, parse};
//!
//! let message = PrimaryMessage::RuntimeException { line: 3, column: 7, text: "not_a_function".into() };
//! let mut bytes = Vec::new();
//! message.encode(0, &mut bytes);
//! let (decoded, used) = parse(&bytes).unwrap().unwrap();
//! assert_eq!((decoded, used), (message, bytes.len()));
//! // Half a package is not one yet.
//! assert_eq!(parse(&bytes[..10]).unwrap(), None);
//! ```

mod decoder;
mod message;
mod state;

pub use decoder::{Decoded, Decoder, DecoderStats};
pub use message::{
    DecodeError, MAX_PACKAGE_LEN, PrimaryMessage, ROBOT_MESSAGE, ROBOT_STATE, message_kind, parse,
};
pub use state::{
    AdditionalInfo, CalibrationData, CartesianInfo, ConfigurationData, Euromap67, ForceModeData,
    Joint, JointData, KinematicsInfo, Layout, MasterboardData, RobotModeData, RobotState,
    ToolCommunicationInfo, ToolData, ToolModeInfo, Update,
};
