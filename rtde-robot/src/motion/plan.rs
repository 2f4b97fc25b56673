//! Each command as the registers to write, checked first: every value against its limit,
//! every straight-line target against the arm's reach, every path's blends. Both drivers
//! send what this returns, so a refusal is the same, and sends nothing, whichever runs it.

use std::sync::{Mutex, PoisonError};

use rtde_kinematics::{compose, invert};
use rtde_robot_proto::programs::command::Command;

use crate::motion::command::{self, ForceMode, JointMove, LinearMove};
use crate::motion::error::MotionError;
use crate::motion::kinematics::Kinematics;
use crate::motion::limits;
use crate::motion::recipes::Registers;

/// What a driver waits for once the program took an order.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Kind {
    /// A move: its handle waits until it ends and the arm rests.
    Move,
    /// A setting ([`Command::is_setting`]): done when the program takes it, the move
    /// under way running on.
    Taken,
    /// A command that replaces the motion under way (a speed, a servo target, teach
    /// mode): done when the program takes it; the moves under way end there.
    Replace,
    /// A stop: the moves under way end where it brings the arm to rest.
    Stop,
    /// A new TCP offset, taken from when the program takes it.
    Tcp([f64; 6]),
}

impl Kind {
    /// A command that is done when the program takes it: a setting leaves the motion
    /// under way running, anything else replaces it.
    fn taken(command: Command) -> Kind {
        if command.is_setting() {
            Kind::Taken
        } else {
            Kind::Replace
        }
    }

    /// Whether its handle waits for the arm to rest too (moves and stops), not only for
    /// the program to finish the command.
    pub(crate) fn waits_until_still(self) -> bool {
        matches!(self, Kind::Move | Kind::Stop)
    }
}

/// The registers of one or more commands (a path's waypoints), and what to wait for.
#[derive(Clone, Debug)]
pub(crate) struct Order {
    pub(crate) registers: Vec<Registers>,
    pub(crate) kind: Kind,
}

impl Order {
    fn one(registers: Registers, kind: Kind) -> Order {
        Order {
            registers: vec![registers],
            kind,
        }
    }

    /// A command that is done when the program takes it.
    fn taken(command: Command, doubles: &[f64]) -> Order {
        Order::one(command::registers(command, doubles), Kind::taken(command))
    }

    fn stop(command: Command, decel: f64) -> Order {
        Order::one(command::registers(command, &[decel]), Kind::Stop)
    }

    fn path(registers: impl Iterator<Item = Registers>) -> Result<Order, MotionError> {
        let registers: Vec<Registers> = registers.collect();
        if registers.is_empty() {
            return Err(MotionError::Invalid("a path needs a waypoint".into()));
        }
        Ok(Order {
            registers,
            kind: Kind::Move,
        })
    }
}

/// The arm's kinematics and the TCP offset the checks use.
#[derive(Debug)]
pub(crate) struct Plan {
    kinematics: Kinematics,
    tcp: Mutex<[f64; 6]>,
}

impl Plan {
    pub(crate) fn new(kinematics: Kinematics) -> Plan {
        Plan {
            kinematics,
            tcp: Mutex::new([0.0; 6]),
        }
    }

    pub(crate) fn kinematics(&self) -> &Kinematics {
        &self.kinematics
    }

    fn tcp(&self) -> [f64; 6] {
        *self.tcp.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The program took a new TCP offset.
    pub(crate) fn adopt_tcp(&self, offset: [f64; 6]) {
        *self.tcp.lock().unwrap_or_else(PoisonError::into_inner) = offset;
    }

    /// The joint solution of the TCP pose `pose` nearest `near`, with the TCP offset.
    pub(crate) fn inverse_kinematics(
        &self,
        pose: &[f64; 6],
        near: &[f64; 6],
    ) -> Result<[f64; 6], MotionError> {
        let flange = compose(pose, &invert(&self.tcp()));
        Ok(self.kinematics.arm().inverse_nearest(flange, near)?)
    }

    pub(crate) fn move_j(target: &JointMove) -> Result<Order, MotionError> {
        target.check()?;
        Ok(Order::one(target.registers(), Kind::Move))
    }

    /// A straight line from the arm at joints `q`.
    pub(crate) fn move_l(&self, target: &LinearMove, q: &[f64; 6]) -> Result<Order, MotionError> {
        self.check_linear(target, q)?;
        Ok(Order::one(target.registers(), Kind::Move))
    }

    fn check_linear(&self, target: &LinearMove, q: &[f64; 6]) -> Result<(), MotionError> {
        target.check()?;
        self.inverse_kinematics(&target.pose, q).map(|_| ())
    }

    /// Joint waypoints from the TCP at `tcp_pose`.
    pub(crate) fn move_j_path(
        &self,
        path: &[JointMove],
        tcp_pose: &[f64; 6],
    ) -> Result<Order, MotionError> {
        path.iter().try_for_each(JointMove::check)?;
        let tcp = self.tcp();
        let arm = self.kinematics.arm();
        let points: Vec<([f64; 3], f64)> = path
            .iter()
            .map(|m| (position(&compose(&arm.tcp_pose(&m.q), &tcp)), m.blend))
            .collect();
        limits::check_blends(position(tcp_pose), &points)?;
        Order::path(path.iter().map(JointMove::registers))
    }

    /// Straight-line waypoints from the TCP at `tcp_pose`, the arm at joints `q`.
    pub(crate) fn move_l_path(
        &self,
        path: &[LinearMove],
        tcp_pose: &[f64; 6],
        q: &[f64; 6],
    ) -> Result<Order, MotionError> {
        path.iter().try_for_each(|m| self.check_linear(m, q))?;
        let points: Vec<([f64; 3], f64)> =
            path.iter().map(|m| (position(&m.pose), m.blend)).collect();
        limits::check_blends(position(tcp_pose), &points)?;
        Order::path(path.iter().map(LinearMove::registers))
    }

    pub(crate) fn speed_j(qd: [f64; 6], accel: f64) -> Result<Order, MotionError> {
        limits::JOINT_VELOCITY.check_all(&qd)?;
        limits::JOINT_ACCELERATION.check(accel, None)?;
        let [a, b, c, d, e, f] = qd;
        Ok(Order::taken(Command::SpeedJ, &[a, b, c, d, e, f, accel]))
    }

    pub(crate) fn speed_l(xd: [f64; 6], accel: f64) -> Result<Order, MotionError> {
        limits::TOOL_VELOCITY.check_all(&xd)?;
        limits::TOOL_ACCELERATION.check(accel, None)?;
        let [a, b, c, d, e, f] = xd;
        Ok(Order::taken(Command::SpeedL, &[a, b, c, d, e, f, accel]))
    }

    pub(crate) fn stop_j(decel: f64) -> Result<Order, MotionError> {
        limits::JOINT_ACCELERATION.check(decel, None)?;
        Ok(Order::stop(Command::StopJ, decel))
    }

    pub(crate) fn stop_l(decel: f64) -> Result<Order, MotionError> {
        limits::TOOL_ACCELERATION.check(decel, None)?;
        Ok(Order::stop(Command::StopL, decel))
    }

    pub(crate) fn servo_j(
        q: [f64; 6],
        time: f64,
        lookahead: f64,
        gain: f64,
    ) -> Result<Order, MotionError> {
        limits::JOINT_POSITION.check_all(&q)?;
        limits::SERVO_TIME.check(time, None)?;
        limits::SERVO_LOOKAHEAD.check(lookahead, None)?;
        limits::SERVO_GAIN.check(gain, None)?;
        let [a, b, c, d, e, f] = q;
        Ok(Order::taken(
            Command::ServoJ,
            &[a, b, c, d, e, f, time, lookahead, gain],
        ))
    }

    pub(crate) fn servo_stop(decel: f64) -> Result<Order, MotionError> {
        limits::JOINT_ACCELERATION.check(decel, None)?;
        Ok(Order::stop(Command::ServoStop, decel))
    }

    pub(crate) fn zero_ft_sensor() -> Order {
        Order::taken(Command::ZeroFtSensor, &[])
    }

    pub(crate) fn set_tcp(offset: [f64; 6]) -> Result<Order, MotionError> {
        limits::OFFSET.check_all(&offset[..3])?;
        limits::POSE.check_all(&offset[3..])?;
        Ok(Order::one(
            command::registers(Command::SetTcp, &offset),
            Kind::Tcp(offset),
        ))
    }

    pub(crate) fn set_payload(mass: f64, cog: [f64; 3]) -> Result<Order, MotionError> {
        limits::PAYLOAD_MASS.check(mass, None)?;
        limits::OFFSET.check_all(&cog)?;
        Ok(Order::taken(
            Command::SetPayload,
            &[mass, cog[0], cog[1], cog[2]],
        ))
    }

    pub(crate) fn teach_mode() -> Order {
        Order::taken(Command::TeachMode, &[])
    }

    pub(crate) fn end_teach_mode() -> Order {
        Order::taken(Command::EndTeachMode, &[])
    }

    pub(crate) fn force_mode(mode: &ForceMode) -> Result<Order, MotionError> {
        mode.check()?;
        Ok(Order::one(
            mode.registers(),
            Kind::taken(Command::ForceMode),
        ))
    }

    pub(crate) fn end_force_mode() -> Order {
        Order::taken(Command::EndForceMode, &[])
    }
}

/// A pose's position.
fn position(pose: &[f64; 6]) -> [f64; 3] {
    [pose[0], pose[1], pose[2]]
}
