//! The robot state message (package type 16): sub-packages, each with its own size and
//! type, in one package the controller sends about every 100 ms.
//!
//! Every sub-package's fields are listed once, in wire order, in its `walk`; the same
//! list encodes (the simulator) and decodes (the client). Layouts follow Universal
//! Robots' client interface documentation; where it is silent or unreadable, the sizes
//! a controller actually sends (docs/primary.md says which and from where).

mod cartesian;
mod configuration;
mod extras;
mod joints;
mod kinematics;
mod layout;
mod masterboard;
mod robot_mode;
mod tool;

pub use cartesian::CartesianInfo;
pub use configuration::ConfigurationData;
pub use extras::{AdditionalInfo, CalibrationData, ForceModeData};
pub use joints::{Joint, JointData};
pub use kinematics::KinematicsInfo;
pub use layout::Layout;
pub use masterboard::{Euromap67, MasterboardData};
pub use robot_mode::RobotModeData;
pub use tool::{ToolCommunicationInfo, ToolData, ToolModeInfo};

use crate::wire::{Reader, Walker, Writer};

/// The sub-package header: size (i32, the header included) and type (u8).
const SUB_HEADER_LEN: usize = 5;

/// One sub-package of the robot state.
pub(crate) trait SubPackage: Copy + Default {
    /// Its type byte.
    const TYPE: u8;

    /// Whether a controller with this layout sends it at all.
    fn sent_by(layout: Layout) -> bool {
        let _ = layout;
        true
    }

    /// Its fields in wire order, after the header.
    fn walk(&mut self, w: &mut impl Walker, layout: Layout);
}

/// What one robot state message held.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Update {
    /// The types of the sub-packages it carried and that were decoded, one bit each
    /// (bit 0 robot mode data … bit 12 tool mode info).
    pub present: u32,
    /// Sub-packages passed over whole: types this crate does not decode (safety data,
    /// which UR does not document, and newer ones).
    pub skipped: u16,
    /// Sub-packages shorter than their layout, or sizes that do not fit the message:
    /// left out, the state keeps their last values.
    pub cut: u16,
}

impl Update {
    /// Whether the message carried the sub-package of this type.
    #[must_use]
    pub fn has(&self, sub_package_type: u8) -> bool {
        u32::from(sub_package_type) < 32 && self.present & (1 << sub_package_type) != 0
    }
}

/// Declares the robot state: one field per sub-package, in the order a controller
/// sends them (URSim's first message: 0, 1, 4, 5, 9, 3, 2, 6, 7, 8, then 11, 12), and
/// from that one list the decoding dispatch and the encoding order.
macro_rules! robot_state {
    ($($(#[$doc:meta])* $field:ident: $ty:ty,)*) => {
        /// The robot state, as the latest messages told it: each sub-package a message
        /// carried replaces the one before; one it did not carry keeps its last value
        /// (`None` until one arrives).
        ///
        /// Decoding into it never allocates, so one value is reused for a whole
        /// connection.
        ///
        /// ```
        /// use rtde_core::fields::ControllerVersion;
        /// use rtde_robot_proto::primary::{JointData, Layout, RobotModeData, RobotState};
        ///
        /// let layout = Layout::of(ControllerVersion::new(5, 21, 0, 0));
        /// let mut sent = RobotState::default();
        /// sent.robot_mode = Some(RobotModeData { robot_mode: 7, ..Default::default() });
        /// sent.joints = Some(JointData::default());
        /// let mut bytes = Vec::new();
        /// sent.encode(layout, &mut bytes);
        ///
        /// let mut seen = RobotState::default();
        /// let update = seen.update(&bytes[5..], layout);
        /// assert_eq!(seen, sent);
        /// assert!(update.has(0) && update.has(1) && !update.has(4));
        /// ```
        #[derive(Clone, Copy, Debug, Default, PartialEq)]
        #[non_exhaustive]
        pub struct RobotState {
            $($(#[$doc])* pub $field: Option<$ty>,)*
        }

        impl RobotState {
            /// Decodes one sub-package of type `kind` from `body` (after its header) into
            /// its field; `None` for a type this crate does not decode, `Some(false)` for
            /// one too short for its layout.
            fn decode_one(&mut self, kind: u8, body: &[u8], layout: Layout) -> Option<bool> {
                $(
                    if kind == <$ty as SubPackage>::TYPE {
                        return Some(decode_into(&mut self.$field, body, layout));
                    }
                )*
                None
            }

            /// Appends every sub-package present that `layout` sends, each with its header.
            fn encode_all(&self, layout: Layout, out: &mut Vec<u8>) {
                $(
                    if let Some(package) = &self.$field {
                        encode_one(package, layout, out);
                    }
                )*
            }
        }
    };
}

robot_state! {
    /// Robot mode data (0).
    robot_mode: RobotModeData,
    /// Joint data (1).
    joints: JointData,
    /// Cartesian info (4).
    cartesian: CartesianInfo,
    /// Kinematics info (5): the calibrated DH parameters.
    kinematics: KinematicsInfo,
    /// Calibration data (9).
    calibration: CalibrationData,
    /// Masterboard data (3).
    masterboard: MasterboardData,
    /// Tool data (2).
    tool: ToolData,
    /// Configuration data (6).
    configuration: ConfigurationData,
    /// Force mode data (7).
    force_mode: ForceModeData,
    /// Additional info (8).
    additional: AdditionalInfo,
    /// Tool communication info (11, e-Series).
    tool_communication: ToolCommunicationInfo,
    /// Tool mode info (12, e-Series).
    tool_mode: ToolModeInfo,
}

impl RobotState {
    /// Decodes a robot state message's sub-packages (`body`: the package after its
    /// 5-byte header) into this state. Never fails and never panics: what cannot be
    /// decoded is counted in the [`Update`].
    pub fn update(&mut self, body: &[u8], layout: Layout) -> Update {
        let mut update = Update::default();
        let mut rest = body;
        while !rest.is_empty() {
            let header = rest.first_chunk::<SUB_HEADER_LEN>();
            let size = header.map(|h| i32::from_be_bytes([h[0], h[1], h[2], h[3]]));
            let package = size
                .and_then(|s| usize::try_from(s).ok())
                .filter(|&s| s >= SUB_HEADER_LEN)
                .and_then(|s| rest.get(..s));
            let (Some(header), Some(package)) = (header, package) else {
                // A size that cannot be followed: the rest of the message is lost.
                update.cut += 1;
                break;
            };
            let kind = header[4];
            match self.decode_one(kind, &package[SUB_HEADER_LEN..], layout) {
                Some(true) => update.present |= 1u32.checked_shl(u32::from(kind)).unwrap_or(0),
                Some(false) => update.cut += 1,
                None => update.skipped += 1,
            }
            rest = &rest[package.len()..];
        }
        update
    }

    /// Appends the state as one robot state message (package type 16) in `layout`:
    /// every sub-package present that the layout sends.
    pub fn encode(&self, layout: Layout, out: &mut Vec<u8>) {
        let start = out.len();
        out.extend_from_slice(&[0; 4]);
        out.push(super::ROBOT_STATE);
        self.encode_all(layout, out);
        patch_size(out, start);
    }
}

/// Decodes `body` into `slot` when it holds the whole layout (bytes after it are fields
/// of newer versions, and ignored); a cut one leaves `slot` as it was.
fn decode_into<T: SubPackage>(slot: &mut Option<T>, body: &[u8], layout: Layout) -> bool {
    let mut value = slot.unwrap_or_default();
    let mut reader = Reader::new(body);
    value.walk(&mut reader, layout);
    if reader.is_whole() {
        *slot = Some(value);
    }
    reader.is_whole()
}

/// Appends one sub-package with its header, when `layout` sends it.
fn encode_one<T: SubPackage>(package: &T, layout: Layout, out: &mut Vec<u8>) {
    if !T::sent_by(layout) {
        return;
    }
    let start = out.len();
    out.extend_from_slice(&[0; 4]);
    out.push(T::TYPE);
    let mut copy = *package;
    copy.walk(&mut Writer::new(out), layout);
    patch_size(out, start);
}

/// Writes the size of what starts at `start` into its first four bytes.
fn patch_size(out: &mut [u8], start: usize) {
    let size = i32::try_from(out.len() - start).unwrap_or(i32::MAX);
    out[start..start + 4].copy_from_slice(&size.to_be_bytes());
}
