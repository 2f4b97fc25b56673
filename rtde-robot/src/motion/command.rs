//! The commands as typed values, their checks, and their register values.

use rtde_core::Pose;
use rtde_robot_proto::programs::command::{Command, int_in};

use crate::motion::defaults;
use crate::motion::error::MotionError;
use crate::motion::limits;
use crate::motion::recipes::Registers;

/// A `move_j` target: joint positions, the leading joint's speed and acceleration, and a
/// blend radius (for a waypoint of a path). The defaults are [`defaults`]' (ur_rtde's):
/// 1.05 rad/s, 1.4 rad/s², no blend.
///
/// ```
/// use rtde_robot::motion::JointMove;
/// let m = JointMove::to([0.0, -1.57, 1.57, -1.57, -1.57, 0.0]).speed(0.5).accel(1.0);
/// assert_eq!(m.speed, 0.5);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointMove {
    /// Joint positions, rad.
    pub q: [f64; 6],
    /// Speed of the leading joint, rad/s.
    pub speed: f64,
    /// Acceleration of the leading joint, rad/s².
    pub accel: f64,
    /// Blend radius, m: 0 stops at the target.
    pub blend: f64,
}

impl JointMove {
    /// A move to `q` at the default speed and acceleration.
    #[must_use]
    pub fn to(q: [f64; 6]) -> Self {
        JointMove {
            q,
            speed: defaults::JOINT_SPEED,
            accel: defaults::JOINT_ACCELERATION,
            blend: 0.0,
        }
    }

    /// The leading joint's speed, rad/s.
    #[must_use]
    pub fn speed(mut self, speed: f64) -> Self {
        self.speed = speed;
        self
    }

    /// The leading joint's acceleration, rad/s².
    #[must_use]
    pub fn accel(mut self, accel: f64) -> Self {
        self.accel = accel;
        self
    }

    /// The blend radius into the next waypoint of a path, m.
    #[must_use]
    pub fn blend(mut self, blend: f64) -> Self {
        self.blend = blend;
        self
    }

    pub(crate) fn check(&self) -> Result<(), MotionError> {
        limits::JOINT_POSITION.check_all(&self.q)?;
        limits::JOINT_SPEED.check(self.speed, None)?;
        limits::JOINT_ACCELERATION.check(self.accel, None)?;
        limits::BLEND_RADIUS.check(self.blend, None)?;
        Ok(())
    }

    pub(crate) fn registers(&self) -> Registers {
        motion_registers(Command::MoveJ, &self.q, self.speed, self.accel, self.blend)
    }
}

/// A `move_l` target: the TCP pose `[x, y, z, rx, ry, rz]` (base frame, m and a rotation
/// vector), the tool's speed and acceleration, and a blend radius. The defaults are
/// [`defaults`]' (ur_rtde's): 0.25 m/s, 1.2 m/s², no blend.
///
/// ```
/// use rtde_core::Pose;
/// use rtde_robot::motion::LinearMove;
/// let m = LinearMove::to([0.4, -0.2, 0.3, 0.0, 3.14, 0.0]).blend(0.02);
/// assert_eq!(m.speed, 0.25);
/// // The pose read from `actual_TCP_pose`, typed, is a target as it is.
/// let here = Pose::new(0.4, -0.2, 0.3, 0.0, 3.14, 0.0);
/// assert_eq!(LinearMove::to(here).pose, m.pose);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinearMove {
    /// The TCP pose.
    pub pose: [f64; 6],
    /// Tool speed, m/s.
    pub speed: f64,
    /// Tool acceleration, m/s².
    pub accel: f64,
    /// Blend radius, m: 0 stops at the target.
    pub blend: f64,
}

impl LinearMove {
    /// A move to `pose` (a [`Pose`] or `[x, y, z, rx, ry, rz]`) at the default speed and
    /// acceleration.
    #[must_use]
    pub fn to(pose: impl Into<Pose>) -> Self {
        LinearMove {
            pose: pose.into().to_array(),
            speed: defaults::TOOL_SPEED,
            accel: defaults::TOOL_ACCELERATION,
            blend: 0.0,
        }
    }

    /// The tool speed, m/s.
    #[must_use]
    pub fn speed(mut self, speed: f64) -> Self {
        self.speed = speed;
        self
    }

    /// The tool acceleration, m/s².
    #[must_use]
    pub fn accel(mut self, accel: f64) -> Self {
        self.accel = accel;
        self
    }

    /// The blend radius into the next waypoint of a path, m.
    #[must_use]
    pub fn blend(mut self, blend: f64) -> Self {
        self.blend = blend;
        self
    }

    pub(crate) fn check(&self) -> Result<(), MotionError> {
        limits::POSE.check_all(&self.pose)?;
        limits::TOOL_SPEED.check(self.speed, None)?;
        limits::TOOL_ACCELERATION.check(self.accel, None)?;
        limits::BLEND_RADIUS.check(self.blend, None)?;
        Ok(())
    }

    pub(crate) fn registers(&self) -> Registers {
        motion_registers(
            Command::MoveL,
            &self.pose,
            self.speed,
            self.accel,
            self.blend,
        )
    }
}

/// The force mode type of URScript's `force_mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ForceModeType {
    /// 1: the force frame's y axis points from the task frame's origin to the TCP.
    PointToTcp,
    /// 2: the force frame is the task frame.
    Simple,
    /// 3: the force frame's x axis is the TCP's motion projected onto the task frame's x-y
    /// plane.
    Motion,
}

impl ForceModeType {
    fn code(self) -> i32 {
        match self {
            ForceModeType::PointToTcp => 1,
            ForceModeType::Simple => 2,
            ForceModeType::Motion => 3,
        }
    }
}

/// The arguments of URScript's `force_mode`.
///
/// ```
/// use rtde_robot::motion::{ForceMode, ForceModeType};
/// let press = ForceMode {
///     task_frame: [0.0; 6],
///     selection: [false, false, true, false, false, false], // compliant in z
///     wrench: [0.0, 0.0, -10.0, 0.0, 0.0, 0.0],
///     kind: ForceModeType::Simple,
///     limits: [0.1, 0.1, 0.15, 0.35, 0.35, 0.35],
/// };
/// # let _ = press;
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ForceMode {
    /// The task frame, a pose in the base frame.
    pub task_frame: [f64; 6],
    /// The compliant axes of the task frame.
    pub selection: [bool; 6],
    /// The wrench to apply on the compliant axes (N, N·m).
    pub wrench: [f64; 6],
    /// How the force frame is derived from the task frame.
    pub kind: ForceModeType,
    /// On compliant axes the largest TCP speed (m/s, rad/s), on the others the largest
    /// deviation from the programmed path (m, rad).
    pub limits: [f64; 6],
}

impl ForceMode {
    pub(crate) fn check(&self) -> Result<(), MotionError> {
        limits::POSE.check_all(&self.task_frame)?;
        limits::WRENCH.check_all(&self.wrench)?;
        limits::FORCE_LIMITS.check_all(&self.limits)?;
        Ok(())
    }

    pub(crate) fn registers(&self) -> Registers {
        let mut r = Registers::default();
        r.ints[usize::from(int_in::COMMAND)] = Command::ForceMode.code();
        let args = usize::from(int_in::ARGS);
        r.ints[args] = self.kind.code();
        for (i, s) in self.selection.iter().enumerate() {
            r.ints[args + 1 + i] = i32::from(*s);
        }
        r.doubles[..6].copy_from_slice(&self.task_frame);
        r.doubles[6..12].copy_from_slice(&self.wrench);
        r.doubles[12..18].copy_from_slice(&self.limits);
        r
    }
}

/// The registers of a command with `doubles` from double +0 on.
pub(crate) fn registers(command: Command, doubles: &[f64]) -> Registers {
    let mut r = Registers::default();
    r.ints[usize::from(int_in::COMMAND)] = command.code();
    r.doubles[..doubles.len()].copy_from_slice(doubles);
    r
}

fn motion_registers(
    command: Command,
    target: &[f64; 6],
    speed: f64,
    accel: f64,
    blend: f64,
) -> Registers {
    let mut doubles = [0.0; 9];
    doubles[..6].copy_from_slice(target);
    doubles[6..].copy_from_slice(&[speed, accel, blend]);
    registers(command, &doubles)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::motion::recipes::UpperCommand;
    use rtde_core::ToPayload;

    /// The payload the upper layout's input recipe carries: ten big-endian `INT32`s
    /// (`input_int_register_30..=39`), then eighteen big-endian `DOUBLE`s
    /// (`input_double_register_30..=47`).
    fn wire(registers: &Registers) -> Vec<u8> {
        UpperCommand::from(*registers)
            .to_payload()
            .as_ref()
            .to_vec()
    }

    /// The expected payload, built apart from the recipe: the ints given by offset, the
    /// doubles given by offset, zero elsewhere.
    fn expected(ints: &[(usize, i32)], doubles: &[(usize, f64)]) -> Vec<u8> {
        let mut bytes = vec![0u8; 10 * 4 + 18 * 8];
        for (i, v) in ints {
            bytes[i * 4..i * 4 + 4].copy_from_slice(&v.to_be_bytes());
        }
        for (i, v) in doubles {
            bytes[40 + i * 8..48 + i * 8].copy_from_slice(&v.to_be_bytes());
        }
        bytes
    }

    fn indexed(values: &[f64]) -> Vec<(usize, f64)> {
        values.iter().copied().enumerate().collect()
    }

    #[test]
    fn move_j_on_the_wire_byte_by_byte() {
        let mut r = JointMove::to([1.0, 0.0, 0.0, 0.0, 0.0, -2.0])
            .speed(0.5)
            .accel(0.25)
            .registers();
        r.ints[usize::from(int_in::SEQUENCE)] = 7;
        r.ints[usize::from(int_in::WATCHDOG)] = 258;
        let bytes = wire(&r);
        #[rustfmt::skip]
        let head: [u8; 12] = [
            0x00, 0x00, 0x01, 0x02, // input_int_register_30: watchdog 258
            0x00, 0x00, 0x00, 0x01, // input_int_register_31: command 1, move_j
            0x00, 0x00, 0x00, 0x07, // input_int_register_32: sequence 7
        ];
        assert_eq!(bytes[..12], head);
        assert!(
            bytes[12..40].iter().all(|b| *b == 0),
            "no integer arguments"
        );
        #[rustfmt::skip]
        let doubles: [[u8; 8]; 9] = [
            [0x3f, 0xf0, 0, 0, 0, 0, 0, 0], // input_double_register_30: q0 = 1.0
            [0; 8], [0; 8], [0; 8], [0; 8], // q1..q4 = 0
            [0xc0, 0x00, 0, 0, 0, 0, 0, 0], // input_double_register_35: q5 = -2.0
            [0x3f, 0xe0, 0, 0, 0, 0, 0, 0], // input_double_register_36: speed 0.5
            [0x3f, 0xd0, 0, 0, 0, 0, 0, 0], // input_double_register_37: acceleration 0.25
            [0; 8],                         // input_double_register_38: no blend
        ];
        assert_eq!(bytes[40..112], doubles.concat());
        assert!(bytes[112..].iter().all(|b| *b == 0));
    }

    #[test]
    fn every_command_on_the_wire() {
        let code = |c: Command| (usize::from(int_in::COMMAND), c.code());
        let pose = [0.4, -0.2, 0.3, 0.0, 3.1, 0.1];
        let cases: Vec<(Registers, Vec<u8>)> = vec![
            (
                LinearMove::to(pose)
                    .speed(0.1)
                    .accel(0.5)
                    .blend(0.02)
                    .registers(),
                expected(
                    &[code(Command::MoveL)],
                    &indexed(&[0.4, -0.2, 0.3, 0.0, 3.1, 0.1, 0.1, 0.5, 0.02]),
                ),
            ),
            (
                registers(Command::SpeedJ, &[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 1.5]),
                expected(
                    &[code(Command::SpeedJ)],
                    &indexed(&[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 1.5]),
                ),
            ),
            (
                registers(Command::StopJ, &[2.0]),
                expected(&[code(Command::StopJ)], &[(0, 2.0)]),
            ),
            (
                registers(Command::StopL, &[10.0]),
                expected(&[code(Command::StopL)], &[(0, 10.0)]),
            ),
            (
                registers(Command::SetPayload, &[1.5, 0.0, 0.01, 0.05]),
                expected(
                    &[code(Command::SetPayload)],
                    &indexed(&[1.5, 0.0, 0.01, 0.05]),
                ),
            ),
            (
                registers(Command::TeachMode, &[]),
                expected(&[code(Command::TeachMode)], &[]),
            ),
            (
                ForceMode {
                    task_frame: [0.0; 6],
                    selection: [false, false, true, false, false, true],
                    wrench: [0.0, 0.0, -10.0, 0.0, 0.0, 0.5],
                    kind: ForceModeType::Motion,
                    limits: [0.1, 0.1, 0.15, 0.3, 0.3, 0.3],
                }
                .registers(),
                expected(
                    &[
                        code(Command::ForceMode),
                        (3, 3), // the type, Motion
                        (6, 1), // z compliant
                        (9, 1), // rz compliant
                    ],
                    &[
                        (8, -10.0),
                        (11, 0.5),
                        (12, 0.1),
                        (13, 0.1),
                        (14, 0.15),
                        (15, 0.3),
                        (16, 0.3),
                        (17, 0.3),
                    ],
                ),
            ),
        ];
        for (registers, bytes) in cases {
            assert_eq!(wire(&registers), bytes, "{registers:?}");
        }
    }
}
