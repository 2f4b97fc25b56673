use rtde_kinematics::Arm;
use rtde_urscript::run::State;
use rtde_urscript::{ControllerVersion, check};

use super::ScriptProgram;
use crate::io::IoState;

const HOME: [f64; 6] = [0.0, -1.5, 1.5, -1.5, -1.5, 0.0];

fn program(script: &str) -> ScriptProgram {
    let checked = check(script, ControllerVersion::new(5, 9, 0, 0)).unwrap();
    ScriptProgram::new(&checked, Arm::UR5E, HOME).unwrap()
}

fn run(p: &mut ScriptProgram, ticks: u64) {
    let io = IoState::default();
    for _ in 0..ticks {
        if !p.is_running() {
            break;
        }
        p.step(&io, 0.002);
    }
}

#[test]
fn a_loop_of_moves_ends_at_the_last_target_with_the_output_set() {
    let mut p = program(
        "def prog():\n  i = 0\n  while i < 3:\n    movej([0.1 * (i + 1), -1.5, 1.5, -1.5, -1.5, 0], a=3, v=2)\n    i = i + 1\n  end\n\
         set_standard_digital_out(2, True)\n  textmsg(\"done at \", get_actual_joint_positions()[0])\nend\n",
    );
    run(&mut p, 5_000);
    assert_eq!(p.state(), &State::Ended);
    assert!((p.q()[0] - 0.3).abs() < 1e-9, "{:?}", p.q());
    assert_eq!(p.digital_output_bits(), 1 << 2);
    assert_eq!(p.messages(), ["done at 0.3"]);
}

#[test]
fn a_move_takes_the_motion_models_time() {
    let mut p = program("movej([0.5, -1.5, 1.5, -1.5, -1.5, 0], a=1, v=1)\n");
    run(&mut p, 10_000);
    // 0.5 rad at 1 rad/s² and 1 rad/s never reaches speed: 2·sqrt(0.5/1) ≈ 1.414 s.
    let seconds = p.ticks() as f64 * 0.002;
    assert!((seconds - 1.414).abs() < 0.02, "{seconds} s");
}

#[test]
fn movel_follows_a_line_to_a_pose() {
    let mut p = program(
        "x = get_actual_tcp_pose()\nx[2] = x[2] + 0.05\nmovel(x, a=1, v=0.25)\ntextmsg(get_actual_tcp_pose()[2] - x[2])\n",
    );
    run(&mut p, 5_000);
    assert_eq!(p.state(), &State::Ended);
    let off: f64 = p.messages()[0].parse().unwrap();
    assert!(off.abs() < 1e-6, "{off}");
}

#[test]
fn registers_are_written_as_output_fields() {
    let mut p =
        program("write_output_float_register(3, 1.5)\nwrite_output_integer_register(2, 7)\n");
    run(&mut p, 10);
    assert_eq!(
        p.output("output_double_register_3"),
        Some(rtde_core::Value::Double(1.5))
    );
    assert_eq!(
        p.output("output_int_register_2"),
        Some(rtde_core::Value::Int32(7))
    );
}

#[test]
fn a_runtime_error_stops_the_program_with_its_place() {
    let mut p = program("def prog():\n  l = [1, 2]\n  x = l[2]\nend\n");
    run(&mut p, 10);
    assert!(matches!(p.state(), State::Failed(_)));
    assert_eq!(
        p.messages(),
        ["runtime exception at line 3, column 7: index 2 out of range for length 2"]
    );
}

#[test]
fn a_builtin_the_simulator_lacks_is_a_runtime_error_not_silence() {
    let mut p = program("direct_torque([0, 0, 0, 0, 0, 0])\n");
    run(&mut p, 10);
    assert!(
        p.messages()[0].ends_with(
            "`direct_torque` is not simulated yet: the simulated arm has no dynamics to take torques"
        ),
        "{:?}",
        p.messages()
    );
}

/// A server on this machine that answers the script's sends, as the UR Client Library's
/// reverse interface or a user's own server does: returns what it received.
fn server(answer: &'static [&'static [u8]]) -> (u16, std::thread::JoinHandle<Vec<u8>>) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let handle = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        s.set_read_timeout(Some(std::time::Duration::from_secs(5)))
            .unwrap();
        let mut received = Vec::new();
        for reply in answer {
            // Each reply answers one line the script sent.
            let mut byte = [0u8];
            while s.read(&mut byte).unwrap() == 1 {
                received.push(byte[0]);
                if byte[0] == b'\n' {
                    break;
                }
            }
            s.write_all(reply).unwrap();
        }
        let _ = s.read_to_end(&mut received);
        received
    });
    (port, handle)
}

#[test]
fn a_script_talks_to_a_server_on_this_machine() {
    let (port, server) = server(&[
        b"\x00\x00\x00\x05\xff\xff\xff\xfe(1.5, -2.25)a line\r\n",
        b"speed 42\n",
    ]);
    let mut p = program(&format!(
        "def talk():\n  ok = socket_open(\"127.0.0.1\", {port}, \"host\")\n  socket_send_line(\"hello\", \"host\")\n\
         ints = socket_read_binary_integer(2, \"host\")\n  floats = socket_read_ascii_float(2, \"host\")\n\
         line = socket_read_line(\"host\")\n  v = socket_get_var(\"speed\", \"host\")\n\
         socket_send_int(7, \"host\")\n  socket_close(\"host\")\n\
         textmsg(ok, ints)\n  textmsg(floats, line)\n  textmsg(v, \"\")\nend\n"
    ));
    // On the controller's clock, as in the simulator: a read's timeout is in ticks, and
    // the server's thread answers in real time.
    let io = IoState::default();
    for _ in 0..2_000 {
        if !p.is_running() {
            break;
        }
        p.step(&io, 0.002);
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    assert_eq!(p.state(), &State::Ended, "{:?}", p.messages());
    assert_eq!(
        p.messages(),
        ["True[2, 5, -2]", "[2, 1.5, -2.25]a line", "42"]
    );
    assert_eq!(
        server.join().unwrap(),
        b"hello\nget speed\n\x00\x00\x00\x07"
    );
}

#[test]
fn a_read_that_times_out_gives_the_manuals_failure_after_its_timeout() {
    let (port, _server) = server(&[b""]);
    let mut p = program(&format!(
        "def wait():\n  socket_open(\"127.0.0.1\", {port})\n  socket_send_line(\"go\")\n\
         textmsg(socket_read_binary_integer(2, timeout=0.1))\n  textmsg(socket_read_line(timeout=0.1), \"|\")\nend\n"
    ));
    run(&mut p, 2_000);
    assert_eq!(p.state(), &State::Ended, "{:?}", p.messages());
    assert_eq!(p.messages(), ["[0, -1, -1]", "|"]);
    // 0.1 s each at 2 ms a tick, and a few ticks for the calls.
    assert!((100..110).contains(&p.ticks()), "{}", p.ticks());
}

#[test]
fn a_socket_reaches_only_this_machine() {
    let mut p = program(
        "def out():\n  textmsg(socket_open(\"192.0.2.1\", 30002), \"\")\n  textmsg(socket_send_line(\"x\"), \"\")\nend\n",
    );
    run(&mut p, 10);
    assert_eq!(
        p.messages(),
        [
            "socket_open(192.0.2.1, 30002) failed: `192.0.2.1` is not a loopback address: the simulator connects only to this machine",
            "False",
            "False"
        ]
    );
}

/// Every built-in of the checker's table, called with arguments of its parameters' types:
/// the simulator runs each, except those `NOT_SIMULATED` names, whose calls say why.
#[test]
fn every_builtin_runs_but_those_named_not_simulated() {
    use rtde_urscript::builtins::{BUILTINS, Type};
    let mut not_simulated = Vec::new();
    for b in &BUILTINS {
        let args: Vec<&str> = b
            .params
            .iter()
            .filter(|p| p.default.is_none())
            .map(|p| match p.ty {
                Type::Int => "1",
                Type::Bool => "True",
                Type::Str => "\"a\"",
                Type::Pose => "p[0.1, -0.2, 0.3, 0, 3.14, 0]",
                Type::List | Type::PoseOrList => "[0.1, -1.5, 1.5, -1.5, -1.5, 0]",
                _ => "0.5",
            })
            .collect();
        let script = format!("def probe():\n  {}({})\nend\n", b.name, args.join(", "));
        let checked = check(&script, ControllerVersion::new(10, 11, 0, 0))
            .unwrap_or_else(|e| panic!("{script}: {e:?}"));
        let mut p = ScriptProgram::new(&checked, Arm::UR5E, HOME).unwrap();
        run(&mut p, 3_000);
        if let Some(m) = p
            .messages()
            .iter()
            .find(|m| m.contains("is not simulated yet"))
        {
            let why = super::NOT_SIMULATED.iter().find(|(n, _)| *n == b.name);
            assert!(
                why.is_some_and(|(_, why)| m.ends_with(why)),
                "{}: {m}",
                b.name
            );
            not_simulated.push(b.name);
        }
    }
    let mut named: Vec<&str> = super::NOT_SIMULATED.iter().map(|(n, _)| *n).collect();
    named.sort_unstable();
    not_simulated.sort_unstable();
    assert_eq!(not_simulated, named);
    let docs = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/urscript.md");
    if let Ok(docs) = std::fs::read_to_string(docs) {
        for (name, why) in super::NOT_SIMULATED {
            assert!(
                docs.contains(&format!("`{name}`")) && docs.contains(why),
                "docs/urscript.md does not list `{name}` ({why})"
            );
        }
    }
}

/// What the script reads of the robot: inputs as nothing drives them, its own outputs and
/// registers back, the joints' history, the arm's temperatures and the same `random()`
/// sequence on every run.
#[test]
fn a_script_reads_back_what_it_set_and_what_the_arm_measures() {
    let script = "def read():\n  set_configurable_digital_out(2, True)\n  set_standard_analog_out(1, 0.25)\n\
                  write_output_integer_register(30, 12)\n  movej([0.1, -1.5, 1.5, -1.5, -1.5, 0], a=3, v=2)\n\
                  textmsg(get_configurable_digital_out(2), get_standard_digital_in(0))\n\
                  textmsg(get_standard_analog_out(1), read_output_integer_register(30))\n\
                  textmsg(get_actual_joint_positions_history(0)[0], get_actual_joint_positions_history(999)[0])\n\
                  sync()\n  textmsg(get_joint_temp(5), is_steady())\n  textmsg(random(), \" \")\nend\n";
    let mut a = program(script);
    run(&mut a, 5_000);
    assert_eq!(a.state(), &State::Ended, "{:?}", a.messages());
    assert_eq!(
        &a.messages()[..4],
        ["TrueFalse", "0.2512", "0.10", "39True"]
    );
    assert_eq!(
        a.output("standard_analog_output1"),
        Some(rtde_core::Value::Double(0.25))
    );
    let mut b = program(script);
    run(&mut b, 5_000);
    assert_eq!(a.messages()[4], b.messages()[4]);
}

/// `get_target_waypoint` is where the move under way goes, whatever the arm's pose that
/// tick, and where the arm is once no move is under way.
#[test]
fn the_target_waypoint_is_the_moves_end_while_it_runs() {
    let mut p = program(
        "def way():\n  global q = [0.3, -1.5, 1.5, -1.5, -1.5, 0]\n  thread mover():\n    movej(q, a=1, v=1)\n  end\n\
         t = run mover()\n  sync()\n  sync()\n\
         textmsg(pose_dist(get_target_waypoint(), get_forward_kin(q)) < 1e-9, pose_dist(get_actual_tcp_pose(), get_forward_kin(q)) > 0.01)\n\
         join t\n  textmsg(pose_dist(get_target_waypoint(), get_actual_tcp_pose()) < 1e-9, \"\")\nend\n",
    );
    run(&mut p, 5_000);
    assert_eq!(p.state(), &State::Ended, "{:?}", p.messages());
    assert_eq!(p.messages(), ["TrueTrue", "True"]);
}

/// `movec` runs the circle through where it starts, its via point and its target: every
/// tick on the circle, past the via point, ending at the target.
#[test]
fn movec_runs_the_circle_through_its_via_point() {
    let start = Arm::UR5E.tcp_pose(&HOME);
    let centre = [start[0] + 0.05, start[1], start[2]];
    let mut p = program(
        "def arc():\n  x = get_actual_tcp_pose()\n\
         movec(pose_add(x, p[0.05, 0.05, 0, 0, 0, 0]), pose_add(x, p[0.1, 0, 0, 0, 0, 0]), a=1, v=0.1)\nend\n",
    );
    let io = IoState::default();
    let mut nearest_via = f64::MAX;
    while p.is_running() {
        p.step(&io, 0.002);
        let at = Arm::UR5E.tcp_pose(&p.q());
        let d = |c: [f64; 3]| {
            ((at[0] - c[0]).powi(2) + (at[1] - c[1]).powi(2) + (at[2] - c[2]).powi(2)).sqrt()
        };
        assert!(
            (d(centre) - 0.05).abs() < 1e-6,
            "off the circle by {}",
            d(centre) - 0.05
        );
        nearest_via = nearest_via.min(d([start[0] + 0.05, start[1] + 0.05, start[2]]));
        assert!(p.ticks() < 10_000, "the move never ended");
    }
    assert_eq!(p.state(), &State::Ended, "{:?}", p.messages());
    assert!(
        nearest_via < 1e-3,
        "passed the via point at {nearest_via} m"
    );
    let end = Arm::UR5E.tcp_pose(&p.q());
    assert!((end[0] - (start[0] + 0.1)).abs() < 1e-9 && (end[1] - start[1]).abs() < 1e-9);
    // Half a circle of 0.05 m at 0.1 m/s, ramps of 0.1 s: about 1.67 s.
    let seconds = p.ticks() as f64 * 0.002;
    assert!(
        (seconds - (0.05 * std::f64::consts::PI / 0.1 + 0.1)).abs() < 0.02,
        "{seconds} s"
    );
}

/// `servoc` is movel's line, profile and blend on the motion model: a path of `servoc`
/// calls with a blend radius runs tick for tick as the same path of `movel` calls.
#[test]
fn servoc_runs_as_movel_with_its_blend() {
    let path = |f: &str| {
        format!(
            "def path():\n  x = get_actual_tcp_pose()\n\
             {f}(pose_add(x, p[0.05, 0, 0, 0, 0, 0]), a=1, v=0.2, r=0.01)\n\
             {f}(pose_add(x, p[0.05, 0.05, 0, 0, 0, 0]), a=1, v=0.2)\nend\n"
        )
    };
    let (mut servo, mut line) = (program(&path("servoc")), program(&path("movel")));
    let io = IoState::default();
    while line.is_running() {
        servo.step(&io, 0.002);
        line.step(&io, 0.002);
        assert_eq!(
            servo.q(),
            line.q(),
            "tick {}: {:?}",
            line.ticks(),
            servo.messages()
        );
        assert!(line.ticks() < 10_000, "the path never ended");
    }
    assert_eq!(servo.state(), &State::Ended, "{:?}", servo.messages());
    let (start, end) = (Arm::UR5E.tcp_pose(&HOME), Arm::UR5E.tcp_pose(&servo.q()));
    assert!((end[0] - (start[0] + 0.05)).abs() < 1e-9 && (end[1] - (start[1] + 0.05)).abs() < 1e-9);
}

#[test]
fn movec_through_points_on_a_line_is_a_runtime_error() {
    let mut p = program(
        "def line():\n  x = get_actual_tcp_pose()\n\
         movec(pose_add(x, p[0.05, 0, 0, 0, 0, 0]), pose_add(x, p[0.1, 0, 0, 0, 0, 0]))\nend\n",
    );
    run(&mut p, 10);
    assert!(matches!(p.state(), State::Failed(_)));
    assert!(p.messages()[0].contains("on a line"), "{:?}", p.messages());
}

#[test]
fn the_speed_slider_stretches_servoj() {
    let script = "def prog():\n  servoj([0.1, -1.5, 1.5, -1.5, -1.5, 0], t=0.002)\n  textmsg(\"after \", get_actual_joint_positions()[0])\nend\n";
    for (slider, ticks) in [(1.0, 2), (0.5, 3), (0.25, 5)] {
        let mut p = program(script);
        let mut io = IoState::default();
        io.write_inputs(&[
            ("speed_slider_mask", rtde_core::Value::Uint32(1)),
            ("speed_slider_fraction", rtde_core::Value::Double(slider)),
        ])
        .unwrap();
        while p.is_running() && p.ticks() < 100 {
            p.step(&io, 0.002);
        }
        // servoj blocks for t / slider, then the program ends on the next tick.
        assert_eq!(p.ticks(), ticks, "slider {slider}");
    }
}

/// Ticks the simulator runs late move the arm but do not run the script: a loop that
/// counts its iterations (as a watchdog does) does not count them.
#[test]
fn late_ticks_move_the_arm_without_running_the_script() {
    let mut p = program(
        "def prog():\n  thread mover():\n    movej([0.5, -1.5, 1.5, -1.5, -1.5, 0], a=1, v=1)\n  end\n  \
         run mover()\n  n = 0\n  while True:\n    n = n + 1\n    write_output_integer_register(0, n)\n    \
         sync()\n  end\nend\n",
    );
    let io = IoState::default();
    let mut moved = Vec::new();
    for late in [false, true, false] {
        let before = p.q()[0];
        for _ in 0..10 {
            if late {
                p.step_late(&io, 0.002);
            } else {
                p.step(&io, 0.002);
            }
        }
        moved.push(p.q()[0] - before);
    }
    assert_eq!(
        p.output("output_int_register_0"),
        Some(rtde_core::Value::Int32(20))
    );
    assert_eq!(p.ticks(), 30);
    assert!(moved.iter().all(|d| *d > 0.0), "{moved:?}");
}

/// `rtde_set_watchdog`: a program whose watched input stops arriving (its client died) is
/// stopped once the period of the minimum frequency has passed without an update; updates
/// keep it running, and "ignore" only watches.
#[test]
fn an_rtde_watchdog_stops_the_program_when_its_input_goes_quiet() {
    let program = |action: &str| {
        program(&format!(
            "def watched():\n  rtde_set_watchdog(\"input_int_register_0\", 10, \"{action}\")\n\
             \x20 while True:\n    sync()\n  end\nend\n"
        ))
    };
    let mut io = IoState::default();
    let mut p = program("stop");
    for i in 0..200 {
        io.write(&[("input_int_register_0", rtde_core::Value::Int32(i % 2))]);
        p.step(&io, 0.002);
    }
    assert!(p.is_running(), "updated every tick: {:?}", p.messages());
    // The client dies: 0.1 s (50 ticks) without an update is allowed, the next is not.
    for _ in 0..50 {
        p.step(&io, 0.002);
    }
    assert!(p.is_running(), "{:?}", p.messages());
    p.step(&io, 0.002);
    assert!(!p.is_running());
    assert_eq!(
        p.messages(),
        [
            "RTDE watchdog: no update of `input_int_register_0` for more than 0.100 s (minimum 10 Hz): the program stopped"
        ]
    );

    let mut ignored = program("ignore");
    run(&mut ignored, 500);
    assert!(ignored.is_running() && ignored.messages().is_empty());
}

#[test]
fn an_rtde_watchdog_on_no_input_variable_is_a_runtime_error() {
    let mut p = program("rtde_set_watchdog(\"actual_q\", 10)\n");
    run(&mut p, 5);
    assert_eq!(
        p.messages(),
        ["runtime exception at line 1, column 1: `actual_q` is no RTDE input variable"]
    );
}
