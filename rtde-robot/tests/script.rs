//! Sending programs: the preconditions (each refused with nothing sent, read through the
//! Dashboard server or the primary interface's robot state), and each fate a program can
//! meet, forced on the simulator.

/// Both places the preconditions are read.
const CHECKS: [Preconditions; 2] = [Preconditions::Dashboard, Preconditions::PrimaryInterface];

use std::time::Duration;

use rtde_core::fields::ControllerVersion;
use rtde_core::{RobotMode, RuntimeState, SafetyStatus};
use rtde_robot::dashboard::{Dashboard, DashboardOptions};
use rtde_robot::script::{Preconditions, Program, ScriptError, ScriptPort, ScriptSender, Step};
use rtde_sim::{Fault, Sim, SimBuilder};

const SERVO: &str = rtde_robot_proto::programs::servo::SCRIPT;

fn hello() -> Program {
    Program::new("def hello():\n  textmsg(\"hi\")\nend\n").unwrap()
}

fn start(builder: SimBuilder) -> Sim {
    builder
        .dashboard()
        .script_ports()
        .protective_stop_unlock_delay(Duration::ZERO)
        .start()
        .unwrap()
}

/// A sender to `sim`, quick to give up.
fn sender(sim: &Sim) -> ScriptSender {
    ScriptSender::new(sim.addr().ip())
        .ports(sim.script_sender_ports().unwrap())
        .timeout(Duration::from_secs(2))
}

fn dashboard(sim: &Sim) -> Dashboard {
    Dashboard::connect(sim.dashboard_addr().unwrap(), DashboardOptions::new()).unwrap()
}

/// Powered on, brakes released.
fn ready(sim: &Sim) {
    let mut d = dashboard(sim);
    d.power_on().unwrap();
    d.brake_release().unwrap();
}

/// Nothing reached the script ports: no program ran and the robot said nothing.
fn assert_nothing_sent(sim: &Sim) {
    std::thread::sleep(Duration::from_millis(100));
    let robot = sim.robot_state().unwrap();
    assert!(robot.messages().is_empty(), "{:?}", robot.messages());
    assert_eq!(robot.program_state(), RuntimeState::Stopped);
    assert!(sim.program().is_none());
}

#[test]
fn a_powered_off_robot_is_refused_before_sending() {
    for check in CHECKS {
        let sim = start(Sim::builder());
        let err = sender(&sim)
            .preconditions(check)
            .send(&hello())
            .unwrap_err();
        assert!(
            matches!(
                err,
                ScriptError::RobotNotRunning {
                    mode: RobotMode::PowerOff
                }
            ),
            "{check:?}: {err}"
        );
        assert!(
            err.to_string()
                .contains("power it on and release the brakes")
        );
        assert_nothing_sent(&sim);
    }
}

#[test]
fn local_control_is_refused_before_sending() {
    let sim = start(Sim::builder().local_control());
    let err = sender(&sim).send(&hello()).unwrap_err();
    assert!(matches!(err, ScriptError::NotInRemoteControl), "{err}");
    assert_nothing_sent(&sim);
}

#[test]
fn a_safety_stop_is_refused_before_sending() {
    for check in CHECKS {
        let sim = start(Sim::builder());
        ready(&sim);
        sim.protective_stop("a test");
        let before = sim.robot_state().unwrap().messages().len();
        let err = sender(&sim)
            .preconditions(check)
            .send(&hello())
            .unwrap_err();
        assert!(
            matches!(
                err,
                ScriptError::SafetyStop {
                    status: SafetyStatus::ProtectiveStop
                }
            ),
            "{check:?}: {err}"
        );
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(sim.robot_state().unwrap().messages().len(), before);
    }
}

#[test]
fn the_servo_template_is_recognised_and_plays() {
    for check in CHECKS {
        servo_template_plays(check);
    }
}

fn servo_template_plays(check: Preconditions) {
    let sim = start(Sim::builder());
    ready(&sim);
    let mut steps = Vec::new();
    let started = sender(&sim)
        .preconditions(check)
        .send_observed(&Program::new(SERVO).unwrap(), |s| steps.push(s.clone()))
        .unwrap();
    assert_eq!(started.version.unwrap().to_string(), "5.21.0");
    assert!(sim.program().is_some(), "the servo program runs");
    assert_eq!(
        sim.robot_state().unwrap().program_state(),
        RuntimeState::Playing
    );
    // Checked before anything was sent: through the Dashboard first of all, on the
    // primary interface once its robot state came.
    let checked = steps.iter().position(|s| {
        matches!(
            s,
            Step::Checked {
                mode: RobotMode::Running,
                ..
            }
        )
    });
    let sent = steps.iter().position(|s| {
        matches!(
            s,
            Step::Sent {
                port: ScriptPort::Secondary,
                ..
            }
        )
    });
    assert!(checked.is_some() && checked < sent, "{check:?}: {steps:?}");
    if check == Preconditions::Dashboard {
        assert_eq!(checked, Some(0));
    }
    assert!(steps.contains(&Step::Playing));
    // One program, recognised whole: no part of it was taken for another program.
    assert!(
        !steps
            .iter()
            .any(|s| matches!(s, Step::Said(t) if t.contains("does not interpret"))),
        "{steps:?}"
    );
}

/// Listens on the primary interface, from now on, for the key message that program
/// `name` stopped; the thread answers whether it came within 10 s.
fn stopped_key(sim: &Sim, name: &str) -> std::thread::JoinHandle<bool> {
    use rtde_robot::primary::{Decoded, PrimaryClient, PrimaryMessage};
    let mut client = PrimaryClient::connect(sim.script_addr(ScriptPort::Primary).unwrap()).unwrap();
    let name = name.to_owned();
    std::thread::spawn(move || {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while std::time::Instant::now() < deadline {
            match client.recv() {
                Ok(Decoded::Message(PrimaryMessage::Key { title, text, .. }))
                    if title == "PROGRAM_XXX_STOPPED" && text == name =>
                {
                    return true;
                }
                Ok(_) => {}
                Err(_) => return false,
            }
        }
        false
    })
}

/// Waits until the robot's program is stopped again, at most 10 s.
fn wait_stopped(sim: &Sim) {
    wait_for_state(sim, RuntimeState::Stopped);
}

fn wait_for_state(sim: &Sim, state: RuntimeState) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while sim.robot_state().unwrap().program_state() != state {
        assert!(
            std::time::Instant::now() < deadline,
            "the program never came to {state:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// `rtde_set_watchdog(…, "pause")`: with no client writing the watched register, the
/// controller pauses the program once the period has passed, and `play` goes on with it.
#[test]
fn an_rtde_watchdog_that_pauses_leaves_the_program_to_play_again() {
    let sim = start(Sim::builder());
    ready(&sim);
    let program = Program::new(
        "def watched():\n  rtde_set_watchdog(\"input_int_register_0\", 2, \"pause\")\n\
         \x20 while True:\n    sync()\n  end\nend\n",
    )
    .unwrap();
    sender(&sim).send(&program).unwrap();
    wait_for_state(&sim, RuntimeState::Paused);
    dashboard(&sim).play().unwrap();
    assert_eq!(
        sim.robot_state().unwrap().program_state(),
        RuntimeState::Playing
    );
}

#[test]
fn a_client_program_runs_on_the_engine_and_its_end_is_seen_everywhere() {
    let sim = start(Sim::builder());
    ready(&sim);
    let program = Program::new(
        "def pick():\n  i = 0\n  while i < 3:\n    movej([0.1 * (i + 1), -1.5, 1.5, -1.5, -1.5, 0], a=3, v=2)\n    i = i + 1\n  end\n\
         \x20 set_standard_digital_out(2, True)\n  textmsg(\"picked\")\nend\n",
    )
    .unwrap();
    let stopped = stopped_key(&sim, "pick");
    let mut steps = Vec::new();
    sender(&sim)
        .timeout(Duration::from_secs(10))
        .send_observed(&program, |s| steps.push(s.clone()))
        .unwrap();
    assert!(steps.contains(&Step::Playing), "{steps:?}");
    wait_stopped(&sim);
    let script = sim.script_program().unwrap();
    assert!((script.q()[0] - 0.3).abs() < 1e-9, "{:?}", script.q());
    assert_eq!(script.digital_output_bits() & (1 << 2), 1 << 2);
    assert_eq!(script.messages(), ["picked"]);
    assert!(
        stopped.join().unwrap(),
        "the primary interface said it stopped"
    );
    assert!(
        !dashboard(&sim).running().unwrap(),
        "the Dashboard sees it ended"
    );
}

/// A controller slow to answer RTDE's handshake (busy, or far away on the network) is
/// waited for up to the sender's timeout, not a look's 20 ms.
#[test]
fn a_controller_slow_to_answer_the_rtde_handshake_still_starts_the_program() {
    let sim = start(Sim::builder().fault(Fault::DelayReplies(Duration::from_millis(60))));
    ready(&sim);
    let mut steps = Vec::new();
    sender(&sim)
        .send_observed(&hello(), |s| steps.push(s.clone()))
        .unwrap();
    assert!(steps.contains(&Step::Said("hi".into())), "{steps:?}");
}

#[test]
fn a_client_program_failing_at_runtime_is_answered_at_its_line_and_column() {
    let sim = start(Sim::builder());
    ready(&sim);
    let program = Program::new("def boom():\n  l = [1, 2]\n  x = l[2]\nend\n").unwrap();
    let err = sender(&sim).send(&program).unwrap_err();
    assert!(
        matches!(&err, ScriptError::Runtime { line: 3, column: 7, text } if text.contains("index 2 out of range")),
        "{err}"
    );
    wait_stopped(&sim);
}

#[test]
fn a_client_program_with_a_compile_error_is_answered_at_its_line_and_column() {
    let sim = start(Sim::builder());
    ready(&sim);
    let program = Program::new("def bad():\n  x = 1\n  mvoej([0, 0, 0, 0, 0, 0])\nend\n").unwrap();
    // Sent unchecked, so that the controller's compiler answers.
    let err = sender(&sim).check_script(false).send(&program).unwrap_err();
    assert!(
        matches!(&err, ScriptError::Compile { line: 3, column: 3, text } if text.starts_with("compile_error_name_not_found")),
        "{err}"
    );
    let robot = sim.robot_state().unwrap();
    assert!(
        robot
            .messages()
            .iter()
            .any(|m| m.contains("compile_error_name_not_found") && m.contains("mvoej")),
        "{:?}",
        robot.messages()
    );
    assert_eq!(robot.program_state(), RuntimeState::Stopped);
    assert!(sim.script_program().is_none(), "nothing ran");
}

#[test]
fn a_single_line_through_the_primary_port_is_a_program_of_its_own() {
    let sim = start(Sim::builder());
    ready(&sim);
    let stopped = stopped_key(&sim, "set_digital_out(0, True)");
    sender(&sim)
        .via(ScriptPort::Primary)
        .timeout(Duration::from_millis(500))
        .send(&Program::line("set_digital_out(0, True)").unwrap())
        .unwrap();
    wait_stopped(&sim);
    assert!(
        stopped.join().unwrap(),
        "the primary interface said it stopped"
    );
    assert_eq!(sim.script_program().unwrap().digital_output_bits() & 1, 1);
}

#[test]
fn a_runtime_exception_has_its_line_and_column() {
    let sim = start(Sim::builder().fault(Fault::RuntimeException { line: 3, column: 5 }));
    ready(&sim);
    let err = sender(&sim).send(&hello()).unwrap_err();
    assert!(
        matches!(&err, ScriptError::Runtime { line: 3, column: 5, text } if text.contains("hello")),
        "{err}"
    );
    assert!(
        err.to_string()
            .starts_with("the program failed at line 3, column 5")
    );
}

#[test]
fn a_program_failing_the_urscript_check_is_refused_before_sending() {
    let sim = start(Sim::builder());
    ready(&sim);
    let program = Program::new(
        "def pick():\n  movej([0, 0, 0, 0, 0, 0])\n  movjl(p[0, 0, 0, 0, 0, 0])\nend\n",
    )
    .unwrap();
    let err = sender(&sim).send(&program).unwrap_err();
    let ScriptError::Check { errors, .. } = &err else {
        panic!("{err}");
    };
    assert_eq!((errors[0].span.line, errors[0].span.column), (3, 3));
    assert!(
        err.to_string().contains("line 3, column 3: compile_error_name_not_found: name `movjl` is not defined; did you mean `movel`?"),
        "{err}"
    );
    assert_nothing_sent(&sim);
}

/// rtde's own programs, as the sender sends them (wrapped in a `def`), pass the check at
/// every controller version from the one their newest built-in needs on (get_steptime:
/// CB3 3.14, e-Series 5.4), and PolyScope X; below that, only that built-in fails.
#[test]
fn rtde_s_own_programs_pass_the_urscript_check_at_every_version() {
    use rtde_robot_proto::programs::command::{CommandLayout, command_program};
    let programs = [
        ("servo", SERVO.to_owned()),
        ("command (upper)", command_program(CommandLayout::UPPER)),
        ("command (lower)", command_program(CommandLayout::LOWER)),
    ];
    let newest = rtde_urscript::builtins::newest_e_series();
    let versions = (10..=15)
        .map(|minor| ControllerVersion::new(3, minor, 0, 0))
        .chain((4..=newest.minor).map(|minor| ControllerVersion::new(5, minor, 0, 0)))
        .chain([ControllerVersion::new(10, 7, 0, 0)]);
    let mut failed = Vec::new();
    for version in versions {
        for (name, text) in &programs {
            let program = Program::new(text).unwrap();
            if let Err(errors) = rtde_urscript::check(program.text(), version) {
                failed.push(format!("{name} at {version}: {}", errors[0]));
            }
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
    for older in [
        ControllerVersion::new(3, 9, 0, 0),
        ControllerVersion::new(5, 3, 0, 0),
    ] {
        for (name, text) in &programs {
            let program = Program::new(text).unwrap();
            // Older controllers may have `get_steptime` too (the 3.10 manual is the first
            // read that has it): warned, not refused.
            let checked = rtde_urscript::check(program.text(), older).unwrap();
            let warnings = &checked.warnings;
            assert!(
                !warnings.is_empty()
                    && warnings
                        .iter()
                        .all(|w| w.message.starts_with("`get_steptime` is known from")),
                "{name} at {older}: {warnings:#?}"
            );
        }
    }
}

#[test]
fn a_compile_error_is_told_apart() {
    let sim = start(Sim::builder().fault(Fault::CompileError { line: 2, column: 1 }));
    ready(&sim);
    let err = sender(&sim).send(&hello()).unwrap_err();
    assert!(
        matches!(
            err,
            ScriptError::Compile {
                line: 2,
                column: 1,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn a_protective_stop_while_starting_is_reported() {
    let sim = start(Sim::builder().fault(Fault::ProtectiveStopAfter(Duration::ZERO)));
    ready(&sim);
    let err = sender(&sim)
        .settle(Duration::from_millis(500))
        .send(&Program::new(SERVO).unwrap())
        .unwrap_err();
    assert!(matches!(err, ScriptError::ProtectiveStop { .. }), "{err}");
    assert_eq!(
        sim.robot_state().unwrap().safety_status(),
        SafetyStatus::ProtectiveStop
    );
}

#[test]
fn a_missing_script_port_is_a_connect_error_naming_it() {
    let sim = Sim::builder().dashboard().start().unwrap();
    ready(&sim);
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let ports = rtde_robot::script::Ports {
        dashboard: sim.dashboard_addr().unwrap().port(),
        primary: closed.port(),
        secondary: closed.port(),
        realtime: closed.port(),
        rtde: sim.addr().port(),
    };
    let err = ScriptSender::new(sim.addr().ip())
        .ports(ports)
        .send(&hello())
        .unwrap_err();
    assert!(
        matches!(
            err,
            ScriptError::Connect {
                port: "primary interface (30001)",
                ..
            }
        ),
        "{err}"
    );
}
