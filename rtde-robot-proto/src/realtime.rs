//! The real-time interface (port 30003, read-only 30013): one fixed-layout package per
//! control cycle (125 Hz on CB3, 500 Hz on e-Series), a size (i32, itself included) and
//! then doubles, big-endian.
//!
//! The layout grew at the end over the releases, so its size says which it is:
//!
//! | size | software          | added                                          |
//! |------|-------------------|------------------------------------------------|
//! | 1044 | 3.0, 3.1          |                                                |
//! | 1060 | 3.2 – 3.4         | digital outputs, program state                 |
//! | 1108 | 3.5 – 3.9         | elbow position and velocity                    |
//! | 1116 | 3.10 –, 5.0 – 5.9 | safety status                                  |
//! | 1220 | 5.10 –            | three unused, payload mass, CoG and inertia    |
//!
//! Universal Robots documents it as deprecated since 3.5 in favour of RTDE; clients
//! still read it.
//!
//! ```
//! use rtde_core::fields::ControllerVersion;
//! use rtde_robot_proto::realtime::{RealtimeLayout, RealtimeState};
//!
//! let layout = RealtimeLayout::of(ControllerVersion::new(5, 21, 0, 0));
//! let sent = RealtimeState { time: 1.5, q_actual: [0.1; 6], ..Default::default() };
//! let mut bytes = Vec::new();
//! sent.encode(layout, &mut bytes);
//! assert_eq!(bytes.len(), 1220);
//!
//! let mut seen = RealtimeState::default();
//! let (used, layout_seen) = seen.decode(&bytes).unwrap().unwrap();
//! assert_eq!((used, layout_seen, seen), (1220, layout, sent));
//! ```

use rtde_core::fields::ControllerVersion;

use crate::primary::DecodeError;
use crate::wire::{Reader, Walker, Writer};

/// Which of the real-time package's layouts: named after the first version that sent it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum RealtimeLayout {
    /// 3.0 and 3.1: 1044 bytes.
    V3_0,
    /// 3.2 to 3.4: 1060 bytes.
    V3_2,
    /// 3.5 to 3.9: 1108 bytes.
    V3_5,
    /// 3.10 and later on CB3, and e-Series to 5.9: 1116 bytes.
    V3_10,
    /// e-Series 5.10 and later: 1220 bytes.
    V5_10,
}

impl RealtimeLayout {
    /// Every layout with its size, oldest first.
    const SIZES: [(RealtimeLayout, usize); 5] = [
        (RealtimeLayout::V3_0, 1044),
        (RealtimeLayout::V3_2, 1060),
        (RealtimeLayout::V3_5, 1108),
        (RealtimeLayout::V3_10, 1116),
        (RealtimeLayout::V5_10, 1220),
    ];

    /// The layout controller software `version` sends.
    #[must_use]
    pub fn of(version: ControllerVersion) -> Self {
        let at_least = |major, minor| version >= ControllerVersion::new(major, minor, 0, 0);
        if at_least(5, 10) {
            RealtimeLayout::V5_10
        } else if at_least(3, 10) {
            RealtimeLayout::V3_10
        } else if at_least(3, 5) {
            RealtimeLayout::V3_5
        } else if at_least(3, 2) {
            RealtimeLayout::V3_2
        } else {
            RealtimeLayout::V3_0
        }
    }

    /// The layout a package of `size` bytes has, if any.
    #[must_use]
    pub fn of_size(size: usize) -> Option<Self> {
        Self::SIZES
            .iter()
            .find(|(_, s)| *s == size)
            .map(|(layout, _)| *layout)
    }

    /// The package's size in this layout, the size field included.
    #[must_use]
    pub fn size(self) -> usize {
        Self::SIZES
            .iter()
            .find(|(layout, _)| *layout == self)
            .map_or(0, |(_, size)| *size)
    }
}

/// One real-time package. Every value is a double on the wire, the modes and bit masks
/// included (the documentation types them so; the bits are the mask's integer value).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RealtimeState {
    /// Seconds since the controller started.
    pub time: f64,
    /// Target joint positions, in radians.
    pub q_target: [f64; 6],
    /// Target joint speeds.
    pub qd_target: [f64; 6],
    /// Target joint accelerations.
    pub qdd_target: [f64; 6],
    /// Target joint currents.
    pub i_target: [f64; 6],
    /// Target joint moments.
    pub m_target: [f64; 6],
    /// Actual joint positions, in radians.
    pub q_actual: [f64; 6],
    /// Actual joint speeds.
    pub qd_actual: [f64; 6],
    /// Actual joint currents.
    pub i_actual: [f64; 6],
    /// Joint control currents.
    pub i_control: [f64; 6],
    /// The actual TCP pose.
    pub tool_vector_actual: [f64; 6],
    /// The actual TCP speed.
    pub tcp_speed_actual: [f64; 6],
    /// The wrench at the TCP.
    pub tcp_force: [f64; 6],
    /// The target TCP pose.
    pub tool_vector_target: [f64; 6],
    /// The target TCP speed.
    pub tcp_speed_target: [f64; 6],
    /// The digital inputs' bit mask.
    pub digital_input_bits: f64,
    /// Each joint motor's temperature, in °C.
    pub motor_temperatures: [f64; 6],
    /// The real-time thread's execution time.
    pub controller_timer: f64,
    /// The robot mode's code.
    pub robot_mode: f64,
    /// Each joint's mode's code.
    pub joint_modes: [f64; 6],
    /// The safety mode's code.
    pub safety_mode: f64,
    /// The tool accelerometer, x, y, z.
    pub tool_accelerometer: [f64; 3],
    /// The speed scaling.
    pub speed_scaling: f64,
    /// The norm of the Cartesian linear momentum.
    pub linear_momentum_norm: f64,
    /// The masterboard's main voltage.
    pub v_main: f64,
    /// The arm's voltage.
    pub v_robot: f64,
    /// The arm's current.
    pub i_robot: f64,
    /// Each joint's voltage.
    pub v_actual: [f64; 6],
    /// The digital outputs' bit mask (3.2 and later).
    pub digital_outputs: f64,
    /// The program state (3.2 and later).
    pub program_state: f64,
    /// The elbow's position (3.5 and later).
    pub elbow_position: [f64; 3],
    /// The elbow's velocity (3.5 and later).
    pub elbow_velocity: [f64; 3],
    /// The safety status (3.10 and 5.4 and later).
    pub safety_status: f64,
    /// The payload's mass, in kilograms (5.10 and later).
    pub payload_mass: f64,
    /// The payload's centre of gravity (5.10 and later).
    pub payload_cog: [f64; 3],
    /// The payload's inertia `[Ixx, Iyy, Izz, Ixy, Ixz, Iyz]` (5.10 and later).
    pub payload_inertia: [f64; 6],
}

/// One reserved double.
const DOUBLE: usize = 8;

impl RealtimeState {
    /// The fields in wire order, after the size.
    fn walk(&mut self, w: &mut impl Walker, layout: RealtimeLayout) {
        w.field(&mut self.time);
        w.fields(&mut self.q_target);
        w.fields(&mut self.qd_target);
        w.fields(&mut self.qdd_target);
        w.fields(&mut self.i_target);
        w.fields(&mut self.m_target);
        w.fields(&mut self.q_actual);
        w.fields(&mut self.qd_actual);
        w.fields(&mut self.i_actual);
        w.fields(&mut self.i_control);
        w.fields(&mut self.tool_vector_actual);
        w.fields(&mut self.tcp_speed_actual);
        w.fields(&mut self.tcp_force);
        w.fields(&mut self.tool_vector_target);
        w.fields(&mut self.tcp_speed_target);
        w.field(&mut self.digital_input_bits);
        w.fields(&mut self.motor_temperatures);
        w.field(&mut self.controller_timer);
        // A test value, "used by Universal Robots software only".
        w.reserved(DOUBLE);
        w.field(&mut self.robot_mode);
        w.fields(&mut self.joint_modes);
        w.field(&mut self.safety_mode);
        w.reserved(6 * DOUBLE);
        w.fields(&mut self.tool_accelerometer);
        w.reserved(6 * DOUBLE);
        w.field(&mut self.speed_scaling);
        w.field(&mut self.linear_momentum_norm);
        w.reserved(2 * DOUBLE);
        w.field(&mut self.v_main);
        w.field(&mut self.v_robot);
        w.field(&mut self.i_robot);
        w.fields(&mut self.v_actual);
        if layout >= RealtimeLayout::V3_2 {
            w.field(&mut self.digital_outputs);
            w.field(&mut self.program_state);
        }
        if layout >= RealtimeLayout::V3_5 {
            w.fields(&mut self.elbow_position);
            w.fields(&mut self.elbow_velocity);
        }
        if layout >= RealtimeLayout::V3_10 {
            w.field(&mut self.safety_status);
        }
        if layout >= RealtimeLayout::V5_10 {
            w.reserved(3 * DOUBLE);
            w.field(&mut self.payload_mass);
            w.fields(&mut self.payload_cog);
            w.fields(&mut self.payload_inertia);
        }
    }

    /// Appends the package in `layout`.
    pub fn encode(&self, layout: RealtimeLayout, out: &mut Vec<u8>) {
        let start = out.len();
        out.extend_from_slice(&[0; 4]);
        let mut copy = *self;
        copy.walk(&mut Writer::new(out), layout);
        let size = i32::try_from(out.len() - start).unwrap_or(i32::MAX);
        out[start..start + 4].copy_from_slice(&size.to_be_bytes());
    }

    /// Decodes the package at the start of `buf` into this state: the bytes it used and
    /// its layout (which its size says), `Ok(None)` when it has not all arrived.
    ///
    /// # Errors
    /// [`DecodeError::BadSize`] for a size that is none of the layouts'.
    pub fn decode(&mut self, buf: &[u8]) -> Result<Option<(usize, RealtimeLayout)>, DecodeError> {
        let Some(size) = buf.first_chunk::<4>() else {
            return Ok(None);
        };
        let size = i32::from_be_bytes(*size);
        let (len, layout) = usize::try_from(size)
            .ok()
            .and_then(|n| Some((n, RealtimeLayout::of_size(n)?)))
            .ok_or(DecodeError::BadSize(i64::from(size)))?;
        let Some(package) = buf.get(4..len) else {
            return Ok(None);
        };
        // The size fixes the layout, so the fields fill the package exactly.
        self.walk(&mut Reader::new(package), layout);
        Ok(Some((len, layout)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_layout_fills_its_documented_size() {
        for (layout, size) in RealtimeLayout::SIZES {
            let mut out = Vec::new();
            RealtimeState::default().encode(layout, &mut out);
            assert_eq!(out.len(), size, "{layout:?}");
            assert_eq!(out[..4], i32::try_from(size).unwrap().to_be_bytes());
            assert_eq!(RealtimeLayout::of_size(size), Some(layout));
        }
        let v = |s: &str| RealtimeLayout::of(s.parse().unwrap());
        assert_eq!(v("3.15.8"), RealtimeLayout::V3_10);
        assert_eq!(v("3.9.0"), RealtimeLayout::V3_5);
        assert_eq!(v("5.9.4"), RealtimeLayout::V3_10);
        assert_eq!(v("5.21.0"), RealtimeLayout::V5_10);
    }

    /// Offsets from UR's table (its "Gnuplot col." counts doubles from 1 after the size).
    #[test]
    fn fields_sit_at_their_documented_offsets() {
        let state = RealtimeState {
            time: 1.0,
            q_actual: [2.0; 6],
            tool_vector_actual: [3.0; 6],
            robot_mode: 7.0,
            safety_mode: 1.0,
            speed_scaling: 0.5,
            v_actual: [48.0; 6],
            digital_outputs: 5.0,
            safety_status: 1.0,
            payload_mass: 1.25,
            ..Default::default()
        };
        let mut out = Vec::new();
        state.encode(RealtimeLayout::V5_10, &mut out);
        let at = |offset: usize| f64::from_be_bytes(out[offset..offset + 8].try_into().unwrap());
        let column = |col: usize| at(4 + (col - 1) * 8);
        assert_eq!(column(1), 1.0);
        assert_eq!((at(252), at(292)), (2.0, 2.0)); // q actual: 32–37
        assert_eq!(at(444), 3.0); // tool vector actual: 56–61
        assert_eq!(column(95), 7.0); // robot mode
        assert_eq!(column(102), 1.0); // safety mode
        assert_eq!(column(118), 0.5); // speed scaling
        assert_eq!(column(125), 48.0); // V actual
        assert_eq!(at(1044), 5.0); // digital outputs
        assert_eq!(at(1108), 1.0); // safety status
        assert_eq!(at(1140), 1.25); // payload mass
    }

    #[test]
    fn partial_and_impossible_packages() {
        let mut out = Vec::new();
        RealtimeState::default().encode(RealtimeLayout::V3_10, &mut out);
        let mut state = RealtimeState::default();
        for n in [0, 3, 4, 500, 1115] {
            assert_eq!(state.decode(&out[..n]), Ok(None), "{n}");
        }
        out[3] = 0x55;
        assert!(matches!(state.decode(&out), Err(DecodeError::BadSize(_))));
    }
}
