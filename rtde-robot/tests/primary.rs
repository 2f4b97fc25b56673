//! The primary interface clients against the simulator and against servers that
//! misbehave: the version first, robot state as it comes, and each way a connection
//! fails named.

use std::io::Write;
use std::net::{SocketAddr, TcpListener};
use std::thread;
use std::time::Duration;

use rtde_core::{Client, ConnectOptions, DynamicRecipe, Recipe, Value};
use rtde_robot::primary::{
    Decoded, Layout, PrimaryClient, PrimaryError, PrimaryMessage, RobotState, calibrated_arm,
};
use rtde_robot_proto::ports::ScriptPort;
use rtde_sim::Sim;
use rtde_sim::{Arm, Calibration};

fn sim() -> Sim {
    Sim::builder()
        .controller_version("3.15.8")
        .script_ports()
        .start()
        .unwrap()
}

fn next_state(client: &mut PrimaryClient) -> RobotState {
    loop {
        if let Decoded::State { state, .. } = client.recv().unwrap() {
            return *state;
        }
    }
}

#[test]
fn reads_the_version_and_robot_state_again_after_a_client_is_dropped() {
    let sim = sim();
    let addr = sim.script_addr(ScriptPort::Primary).unwrap();
    // The second connection is served as the first was, the first dropped mid-stream.
    for round in 0..2 {
        let mut client = PrimaryClient::connect(addr).unwrap();
        assert_eq!(client.version(), "3.15.8".parse().unwrap(), "round {round}");
        let state = next_state(&mut client);
        let mode = state.robot_mode.expect("robot mode data");
        assert_eq!(mode.mode(), rtde_core::RobotMode::PowerOff);
        let kinematics = state.kinematics.expect("kinematics info");
        assert_eq!(kinematics.dh_d[0], Arm::UR5E.d[0]);
        assert_eq!(client.state(), &state);
        assert_eq!(client.stats().states, 1);
        // CB3: no tool communication info.
        assert_eq!(state.tool_communication, None);
    }
}

/// A server that accepts one connection and plays `serve` on it.
fn fake(serve: impl FnOnce(std::net::TcpStream) + Send + 'static) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    thread::spawn(move || {
        if let Ok((stream, _)) = listener.accept() {
            serve(stream);
        }
    });
    addr
}

fn version_bytes() -> Vec<u8> {
    let mut out = Vec::new();
    PrimaryMessage::Version {
        project: "URControl".into(),
        version: "5.21.0".parse().unwrap(),
        build_date: String::new(),
    }
    .encode(0, &mut out);
    out
}

#[test]
fn each_way_a_connection_fails_is_named() {
    // Silent after the version message.
    let addr = fake(|mut s| {
        s.write_all(&version_bytes()).unwrap();
        thread::sleep(Duration::from_secs(2));
    });
    let mut client = PrimaryClient::connect(addr).unwrap();
    client.set_timeout(Duration::from_millis(200)).unwrap();
    assert!(matches!(
        client.recv(),
        Err(PrimaryError::Silent { timeout, .. }) if timeout == Duration::from_millis(200)
    ));

    // Closed after the version message.
    let addr = fake(|mut s| s.write_all(&version_bytes()).unwrap());
    let mut client = PrimaryClient::connect(addr).unwrap();
    assert!(matches!(client.recv(), Err(PrimaryError::Closed { .. })));

    // A size no package has.
    let addr = fake(|mut s| {
        s.write_all(&version_bytes()).unwrap();
        s.write_all(&[0xff, 0, 0, 0, 16]).unwrap();
        thread::sleep(Duration::from_secs(1));
    });
    let mut client = PrimaryClient::connect(addr).unwrap();
    let error = client.recv().unwrap_err();
    assert!(matches!(error, PrimaryError::Decode { .. }), "{error}");

    // A robot state before any version message.
    let addr = fake(|mut s| {
        let mut state = Vec::new();
        RobotState::default().encode(Layout::NEWEST, &mut state);
        s.write_all(&state).unwrap();
        thread::sleep(Duration::from_secs(1));
    });
    assert!(matches!(
        PrimaryClient::connect(addr),
        Err(PrimaryError::NoVersion { .. })
    ));

    // Nobody listening.
    let unused = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    assert!(matches!(
        PrimaryClient::connect(unused),
        Err(PrimaryError::Connect { .. })
    ));
}

#[cfg(feature = "tokio")]
#[tokio::test]
async fn the_async_client_reads_the_same_stream() {
    let sim = sim();
    let addr = sim.script_addr(ScriptPort::Secondary).unwrap();
    let mut client = rtde_robot::primary::AsyncPrimaryClient::connect(addr)
        .await
        .unwrap();
    assert_eq!(client.version(), "3.15.8".parse().unwrap());
    let state = loop {
        if let Decoded::State { state, .. } = client.recv().await.unwrap() {
            break *state;
        }
    };
    assert!(state.joints.is_some() && state.configuration.is_some());
    client.set_timeout(Duration::from_millis(1));
    // Robot state comes every 96 ms on CB3: a millisecond's wait is silence.
    let mut silent = false;
    for _ in 0..200 {
        match client.recv().await {
            Ok(_) => {}
            Err(PrimaryError::Silent { .. }) => {
                silent = true;
                break;
            }
            Err(e) => panic!("{e}"),
        }
    }
    assert!(silent);
}

/// The calibration the primary interface publishes is the one the controller computes
/// `actual_TCP_pose` with: a client's forward kinematics of `actual_q` on it meets the
/// reported pose to 1e-9, where the nominal table misses it by more than 0.1 mm.
#[test]
fn the_primary_interfaces_calibration_gives_the_controllers_poses() {
    for seed in 1..=3 {
        let sim = Sim::builder()
            .script_ports()
            .calibration(Calibration::random(seed))
            .start()
            .unwrap();
        let mut primary =
            PrimaryClient::connect(sim.script_addr(ScriptPort::Primary).unwrap()).unwrap();
        let state = next_state(&mut primary);
        let arm = calibrated_arm(&state, primary.version()).expect("model and kinematics info");
        assert_eq!(arm.name, "UR5e");

        let options = ConnectOptions::new().read_timeout(Some(Duration::from_secs(5)));
        let mut rtde = Client::connect(sim.addr(), options).unwrap();
        let mut recipe = DynamicRecipe::outputs(["actual_q", "actual_TCP_pose"]).unwrap();
        rtde.setup_outputs(recipe.spec(), 500.0).unwrap();
        rtde.start().unwrap();
        let (mut worst, mut nominal_best) = (0.0f64, f64::INFINITY);
        for _ in 0..50 {
            rtde.recv_into(&mut recipe).unwrap();
            let (Some(Value::Vector6d(q)), Some(Value::Vector6d(pose))) =
                (recipe.get("actual_q"), recipe.get("actual_TCP_pose"))
            else {
                panic!("the recipe's values");
            };
            let distance = |p: [f64; 6]| (0..6).map(|i| (p[i] - pose[i]).abs()).fold(0.0, f64::max);
            worst = worst.max(distance(arm.tcp_pose(q)));
            let nominal = Arm::UR5E.tcp_pose(q);
            let moved = (0..3)
                .map(|i| (nominal[i] - pose[i]).powi(2))
                .sum::<f64>()
                .sqrt();
            nominal_best = nominal_best.min(moved);
        }
        assert!(worst < 1e-9, "seed {seed}: calibrated FK off by {worst:e}");
        assert!(
            nominal_best > 1e-4,
            "seed {seed}: the nominal table came within {nominal_best:e} m"
        );
    }
}
