//! What the motion and whole-life tests share: a controller waiting for the command program,
//! and the options that send it.

use std::time::Duration;

use rtde_robot::dashboard::{Dashboard, DashboardOptions};
use rtde_robot::motion::{CommandLayout, JointMove, MotionError, MotionOptions, ProgramSource};
use rtde_robot::script::ScriptSender;
use rtde_sim::{Sim, SimBuilder};
use rtde_testkit::robots::{Driver, Handle};

/// [`powered_off`] as `configure` leaves it, powered on with the brakes released and no program playing: a
/// robot waiting for the command program to be sent.
pub(crate) fn waiting_for_a_program(
    configure: impl FnOnce(SimBuilder) -> SimBuilder,
) -> (Sim, Dashboard) {
    let sim = configure(powered_off()).start().unwrap();
    let mut d = Dashboard::connect(sim.dashboard_addr().unwrap(), DashboardOptions::new()).unwrap();
    rtde_testkit::robots::run_robot(&mut d);
    (sim, d)
}

/// A CB3 controller (125 Hz: a 400 ms watchdog that a busy test machine does not trip by
/// starving the client), deterministic, with its Dashboard server and script ports, the
/// arm powered off as a controller starts.
pub(crate) fn powered_off() -> SimBuilder {
    Sim::builder()
        .controller_version("3.15.8")
        .dashboard()
        .script_ports()
        .deterministic()
}

/// Motion options that send the command program on `layout`'s registers through the
/// simulator's script ports, as a session on a real controller does.
pub(crate) fn sending(sim: &Sim, layout: CommandLayout) -> MotionOptions {
    let sender = ScriptSender::new(sim.addr().ip()).ports(sim.script_sender_ports().unwrap());
    MotionOptions::new()
        .layout(layout)
        .source(ProgramSource::Send(sender))
        .timeout(Duration::from_secs(20))
}

/// The largest difference between two joint or pose vectors.
pub(crate) fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

/// `robot` starts a slow move, and a collision the controller sees stops the arm in it:
/// the move ends with [`MotionError::ProtectiveStop`], returned.
pub(crate) fn stopped_by_a_collision_mid_move<R: Driver>(sim: &Sim, robot: &R) -> MotionError {
    let handle = robot
        .start_move_j(JointMove::to([1.0, -1.57, 1.57, -1.57, -1.57, 0.0]).speed(0.5))
        .unwrap();
    sim.protective_stop("a collision");
    let err = handle.wait().unwrap_err();
    assert!(matches!(err, MotionError::ProtectiveStop { .. }), "{err}");
    err
}
