//! The simulated robot as a client sees it: exact values in deterministic mode,
//! reproducible noise, forward kinematics, smooth motion within limits.

mod common;

use std::f64::consts::{FRAC_PI_2, PI, TAU};

use common::{Msg, Raw, double, outputs, tick_of, vector6};
use rtde_core::Value;
use rtde_sim::{Arm, Motion, Sim};

/// The documented motion law, written out independently of the simulator's code.
fn law(m: &Motion, t: f64) -> ([f64; 6], [f64; 6]) {
    let q = std::array::from_fn(|j| m.center[j] + m.amplitude[j] * (TAU / m.period[j] * t).sin());
    let qd = std::array::from_fn(|j| {
        let w = TAU / m.period[j];
        m.amplitude[j] * w * (w * t).cos()
    });
    (q, qd)
}

#[test]
fn deterministic_mode_follows_the_documented_motion_law_exactly() {
    let names = [
        "timestamp",
        "target_q",
        "actual_q",
        "target_qd",
        "actual_qd",
    ];
    // Unpaced (ticks from 0) and paced (ticks wherever the wall clock is): the values
    // depend only on the tick.
    for paced in [false, true] {
        let builder = Sim::builder().controller_version("5.21.0").deterministic();
        let sim = if paced { builder } else { builder.unpaced() }
            .start()
            .unwrap();
        for protocol in [1, 2] {
            let mut c = Raw::connect_v(sim.addr(), protocol);
            c.setup_outputs(500.0, &names.join(","));
            c.start();
            let mut r = outputs(&names);
            for _ in 0..100 {
                c.recv_data(&mut r);
                let t = double(&r, "timestamp");
                tick_of(t, 500);
                let (q, qd) = law(&Motion::DEFAULT, t);
                assert_eq!(vector6(&r, "target_q"), q, "t = {t}");
                assert_eq!(vector6(&r, "actual_q"), q, "t = {t}");
                assert_eq!(vector6(&r, "target_qd"), qd, "t = {t}");
                assert_eq!(vector6(&r, "actual_qd"), qd, "t = {t}");
            }
            c.pause();
        }
    }
}

#[test]
fn a_fixed_seed_reproduces_every_byte_and_noise_stays_small() {
    let names = "timestamp,actual_q,target_q,actual_TCP_pose,actual_current,actual_TCP_force";
    let run = |seed: u64| -> Vec<Vec<u8>> {
        let sim = Sim::builder().seed(seed).unpaced().start().unwrap();
        assert_eq!(sim.seed(), seed);
        let mut c = Raw::connect_v(sim.addr(), 2);
        c.setup_outputs(500.0, names);
        c.start();
        (0..200)
            .map(|_| match c.recv() {
                Msg::Data { payload, .. } => payload,
                other => panic!("{other:?}"),
            })
            .collect()
    };
    let a = run(42);
    assert_eq!(a, run(42), "same seed, same bytes");
    assert_ne!(a, run(43), "another seed, other noise");

    let mut r = outputs(&names.split(',').collect::<Vec<_>>());
    for payload in &a {
        rtde_core::OutputRecipe::decode_into(&mut r, payload).unwrap();
        let (q, actual) = (vector6(&r, "target_q"), vector6(&r, "actual_q"));
        assert_ne!(q, actual, "noise is on");
        for j in 0..6 {
            assert!((q[j] - actual[j]).abs() <= 2e-5, "joint {j}");
        }
        // The pose is the kinematics of the noisy joints, not of the target.
        assert_eq!(vector6(&r, "actual_TCP_pose"), Arm::UR5E.tcp_pose(&actual));
    }
}

#[test]
fn tcp_pose_is_the_ur5e_forward_kinematics_of_known_poses() {
    // UR5e: d1 = 0.1625, a2 = -0.425, a3 = -0.3922, d4 = 0.1333, d5 = 0.0997, d6 = 0.0996.
    let (d1, a2, a3, d4, d5, d6) = (0.1625, -0.425, -0.3922, 0.1333, 0.0997, 0.0996);
    let cases: [([f64; 6], [f64; 3]); 2] = [
        // All zero: the arm lies along -x at shoulder height; the wrist offsets d4 and d6
        // point along -y, d5 down. The flange frame is the base turned by π/2 about x.
        ([0.0; 6], [a2 + a3, -(d4 + d6), d1 - d5]),
        // Shoulder -π/2 and wrist 1 -π/2: upper arm and forearm point straight up, d5
        // continues up, d4 and d6 point along -y.
        (
            [0.0, -FRAC_PI_2, 0.0, -FRAC_PI_2, 0.0, 0.0],
            [0.0, -(d4 + d6), d1 - a2 - a3 + d5],
        ),
    ];
    for (q, position) in cases {
        let sim = Sim::builder()
            .motion(Motion::still(q))
            .deterministic()
            .unpaced()
            .start()
            .unwrap();
        let mut c = Raw::connect_v(sim.addr(), 2);
        c.setup_outputs(
            500.0,
            "actual_q,actual_TCP_pose,target_TCP_pose,actual_TCP_speed",
        );
        c.start();
        let mut r = outputs(&[
            "actual_q",
            "actual_TCP_pose",
            "target_TCP_pose",
            "actual_TCP_speed",
        ]);
        c.recv_data(&mut r);
        assert_eq!(vector6(&r, "actual_q"), q);
        let pose = vector6(&r, "actual_TCP_pose");
        assert_eq!(pose, vector6(&r, "target_TCP_pose"));
        for i in 0..3 {
            assert!((pose[i] - position[i]).abs() < 1e-12, "{q:?}: {pose:?}");
        }
        assert_eq!(vector6(&r, "actual_TCP_speed"), [0.0; 6], "standing still");
        let rotation = [pose[3], pose[4], pose[5]];
        if q[1] == 0.0 {
            // Rx(π/2).
            let expected = [FRAC_PI_2, 0.0, 0.0];
            for i in 0..3 {
                assert!((rotation[i] - expected[i]).abs() < 1e-12, "{rotation:?}");
            }
        } else {
            // Flange axes x = -x0, y = -z0, z = -y0: a half turn about (0, 1, -1)/√2,
            // whose rotation vector may point either way.
            let norm = rotation.iter().map(|x| x * x).sum::<f64>().sqrt();
            assert!((norm - PI).abs() < 1e-9, "{rotation:?}");
            assert!(rotation[0].abs() < 1e-9 && (rotation[1] + rotation[2]).abs() < 1e-9);
        }
    }
}

#[test]
fn joints_move_smoothly_within_limits() {
    let sim = Sim::builder().unpaced().start().unwrap();
    let mut c = Raw::connect_v(sim.addr(), 2);
    c.setup_outputs(500.0, "timestamp,actual_q,actual_qd");
    c.start();
    let mut r = outputs(&["timestamp", "actual_q", "actual_qd"]);
    let mut previous: Option<[f64; 6]> = None;
    for _ in 0..2000 {
        c.recv_data(&mut r);
        let q = vector6(&r, "actual_q");
        for j in 0..6 {
            assert!(q[j].abs() <= rtde_sim::JOINT_POSITION_LIMIT);
            assert!(vector6(&r, "actual_qd")[j].abs() <= rtde_sim::JOINT_SPEED_LIMIT);
            if let Some(p) = previous {
                // At most the speed limit over one 2 ms period, plus the noise either side.
                assert!((q[j] - p[j]).abs() <= PI * 0.002 + 4e-5, "joint {j}");
            }
        }
        previous = Some(q);
    }
    // The joints did move.
    let (q0, _) = law(&Motion::DEFAULT, 0.0);
    assert!((previous.unwrap()[5] - q0[5]).abs() > 0.1);
}

#[test]
fn every_output_field_has_a_value_of_its_type_and_fixed_values_override() {
    // control_step came with 5.26.
    let sim = Sim::builder()
        .controller_version("5.26.0")
        .output_value("robot_mode", Value::Int32(5))
        .output_value("actual_digital_input_bits", Value::Uint64(0b1010))
        .deterministic()
        .unpaced()
        .start()
        .unwrap();
    let mut c = Raw::connect_v(sim.addr(), 2);
    let names = [
        "robot_mode",
        "actual_digital_input_bits",
        "safety_status",
        "joint_mode",
        "runtime_state",
        "control_step",
        "timestamp",
    ];
    let (texts, _, _) = c.setup_outputs(500.0, &names.join(","));
    assert!(texts.is_empty(), "{texts:?}");
    c.start();
    let mut r = outputs(&names);
    c.recv_data(&mut r);
    c.recv_data(&mut r);
    assert_eq!(r.get("robot_mode"), Some(&Value::Int32(5)));
    assert_eq!(
        r.get("actual_digital_input_bits"),
        Some(&Value::Uint64(0b1010))
    );
    assert_eq!(r.get("safety_status"), Some(&Value::Int32(1)));
    assert_eq!(r.get("joint_mode"), Some(&Value::Vector6Int32([253; 6])));
    assert_eq!(r.get("runtime_state"), Some(&Value::Uint32(1)));
    // control_step counts the ticks timestamp is made of.
    assert_eq!(r.get("control_step"), Some(&Value::Uint64(1)));
    assert_eq!(double(&r, "timestamp"), 1.0 / 500.0);

    let wrong = Sim::builder()
        .output_value("robot_mode", Value::Double(1.0))
        .start();
    assert!(wrong.unwrap_err().to_string().contains("INT32"));
    let unknown = Sim::builder()
        .output_value("robot_mood", Value::Int32(1))
        .start();
    assert!(unknown.is_err());
}
