//! A control loop that closes through the robot: per output package, the user's function
//! gets the decoded state and returns the command, which is sent in the same cycle, with
//! a watchdog the robot program checks and a waypoint handshake it answers.
//!
//! The robot side is the URScript program `rtde_servo.script`
//! ([`SERVO_PROGRAM`]; its steps to install on the pendant are in its header); the
//! simulator runs the same behaviour with `Sim::builder().servo_program()`. Both use the
//! registers of [`layout`] (`rtde_robot_proto::programs::servo`, re-exported):
//!
//! | register | written by | meaning |
//! | --- | --- | --- |
//! | `input_int_register_24` | client | watchdog: a counter the client changes every cycle |
//! | `input_int_register_25` | client | the id of the waypoint in the target registers |
//! | your command recipe (e.g. `input_double_register_24..=29`) | client | the waypoint |
//! | `output_int_register_24` | robot | the id of the last waypoint the robot took |
//! | `output_int_register_25` | robot | the program's [`ProgramStatus`] |
//!
//! The handshake: the client hands the robot waypoint `k + 1` only once the robot reports
//! waypoint `k` taken. The program acknowledges a waypoint as it reads its target, before
//! its `servoj` runs, so `k + 1` is in the registers when that `servoj` returns: one
//! waypoint per controller cycle. Registers hold one value and no queue, and the speed
//! slider stretches each `servoj`, so without the handshake a slowed robot would miss
//! waypoints the client overwrote; with it the trajectory slows down instead.
//! [`Handshake::advance`] refuses to move on before the robot has taken the current
//! waypoint, so no code path can skip one.
//!
//! Deadline accounting: a cycle whose command left after the next package had already
//! arrived is a miss, counted in [`LoopStats::misses`] and reported as
//! [`LoopEvent::DeadlineMiss`].
//!
//! Scheduling: a cycle can only start once its thread runs. At normal priority, any busy
//! thread of the host can delay it past the next package; run the loop's thread at
//! SCHED_FIFO with [`rtde_core::realtime::set_fifo_priority`] (and a core of its own with
//! [`rtde_core::realtime::set_cpu_affinity`]), as the UR Client Library asks for its
//! control loops. The control-loop figures in docs/performance.md are given for both.

mod run;

pub use rtde_robot_proto::programs::servo::{
    self as layout, ProgramStatus, SCRIPT as SERVO_PROGRAM,
};
pub use run::{ControlLoop, CycleReport, Handshake, LoopEvent, LoopStats};
