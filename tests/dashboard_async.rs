//! The async Dashboard client's own paths against the simulator: the greeting and the
//! version on connect, typed replies, refusals, a timeout that drops the link, a command
//! future dropped before its reply, PolyScope X, and the wait for a robot mode.

use std::time::Duration;

use rtde_core::{RobotMode, SafetyStatus};
use rtde_robot::dashboard::{AsyncDashboard, DashboardError, DashboardOptions};
use rtde_sim::{Fault, Sim};

#[tokio::test]
async fn typed_commands_and_refusals() {
    let sim = Sim::builder()
        .dashboard()
        .fault(Fault::DashboardRefuse("play".into()))
        .start()
        .unwrap();
    let mut d = AsyncDashboard::connect(sim.dashboard_addr().unwrap(), DashboardOptions::new())
        .await
        .unwrap();
    assert_eq!(d.controller_version().to_string(), "5.21.0");
    d.power_on().await.unwrap();
    d.brake_release().await.unwrap();
    assert_eq!(d.robot_mode().await.unwrap(), RobotMode::Running);
    assert_eq!(d.safety_status().await.unwrap(), SafetyStatus::Normal);
    d.load("/programs/pick.urp").await.unwrap();
    let err = d.play().await.unwrap_err();
    assert!(
        matches!(&err, DashboardError::Refused { command: "play", reply } if reply == "Failed to execute: play"),
        "{err}"
    );
    d.quit().await.unwrap();
    assert!(!d.is_connected());
    // Reconnects for the next command.
    assert_eq!(d.robot_mode().await.unwrap(), RobotMode::Running);
    sim.shutdown_async().await.unwrap();
}

#[tokio::test]
async fn a_timeout_drops_the_link_and_a_dropped_future_does_not_leave_its_reply_behind() {
    let sim = Sim::builder()
        .dashboard()
        .fault(Fault::DashboardDelay(Duration::from_millis(300)))
        .start()
        .unwrap();
    let options = DashboardOptions::new()
        .controller_version(rtde_sim::DEFAULT_CONTROLLER_VERSION)
        .timeout(Duration::from_millis(100));
    let mut d = AsyncDashboard::connect(sim.dashboard_addr().unwrap(), options.clone())
        .await
        .unwrap();
    let err = d.robot_mode().await.unwrap_err();
    assert!(
        matches!(
            err,
            DashboardError::Timeout {
                command: "robotmode",
                ..
            }
        ),
        "{err}"
    );
    assert!(!d.is_connected());

    let mut d = AsyncDashboard::connect(
        sim.dashboard_addr().unwrap(),
        options.timeout(Duration::from_secs(5)),
    )
    .await
    .unwrap();
    // `power on` is sent, then its future is dropped before the reply comes.
    let cancelled = tokio::time::timeout(Duration::from_millis(50), d.power_on()).await;
    assert!(cancelled.is_err());
    // The next command must get its own reply: `Powering on` read as `robotmode`'s would
    // be a refusal. (Whether the power on has happened yet is a race; either mode is fine.)
    let mode = d.robot_mode().await.unwrap();
    assert!(
        matches!(mode, RobotMode::Idle | RobotMode::PowerOff),
        "{mode}"
    );
    sim.shutdown_async().await.unwrap();
}

#[tokio::test]
async fn polyscope_x_has_no_dashboard() {
    let x = Sim::builder()
        .controller_version("10.11.0")
        .start()
        .unwrap();
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let err = AsyncDashboard::connect(
        closed,
        DashboardOptions::new().rtde_port(Some(x.addr().port())),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, DashboardError::PolyScopeX { .. }), "{err}");
    x.shutdown_async().await.unwrap();
}

#[tokio::test]
async fn waiting_for_a_mode_ends_when_the_robot_is_in_it_or_says_where_it_is() {
    let sim = Sim::builder().dashboard().start().unwrap();
    let mut d = AsyncDashboard::connect(sim.dashboard_addr().unwrap(), DashboardOptions::new())
        .await
        .unwrap();
    // Bounded, so that a wait which never gives up fails here rather than hanging.
    let err = tokio::time::timeout(
        Duration::from_secs(5),
        d.wait_for_robot_mode(RobotMode::Running, Duration::from_millis(200)),
    )
    .await
    .expect("the wait gives up at its deadline")
    .unwrap_err();
    // The rule's every field is `mode_wait`'s to test; here, that the async client follows it.
    let not_reached =
        matches!(err, DashboardError::ModeNotReached { last, .. } if last == RobotMode::PowerOff);
    assert!(not_reached, "{err}");
    d.power_on().await.unwrap();
    d.wait_for_robot_mode(RobotMode::Idle, Duration::from_secs(10))
        .await
        .unwrap();
    sim.shutdown_async().await.unwrap();
}
