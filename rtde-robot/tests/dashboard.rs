//! The Dashboard client against the simulator's Dashboard server, and against fake
//! servers for what the simulator cannot be (an old controller that records every line,
//! something that is no Dashboard server, PolyScope X).

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use rtde_core::fields::ControllerVersion;
use rtde_core::{
    Client, ConnectOptions, DynamicRecipe, Recipe, RobotMode, RuntimeState, SafetyStatus, Value,
};
use rtde_robot::dashboard::{
    AsyncDashboard, COMMANDS, Command, Dashboard, DashboardError, DashboardOptions,
    OperationalMode, Reply, Stranger,
};
use rtde_robot::script::ScriptPort;
use rtde_sim::{Fault, Sim};

fn sim() -> Sim {
    Sim::builder().dashboard().start().unwrap()
}

fn connect(sim: &Sim) -> Dashboard {
    Dashboard::connect(sim.dashboard_addr().unwrap(), DashboardOptions::new()).unwrap()
}

/// The robot's state as RTDE reports it.
struct Rtde {
    client: Client,
    recipe: DynamicRecipe,
}

impl Rtde {
    fn new(sim: &Sim) -> Rtde {
        let mut client = Client::connect(sim.addr(), ConnectOptions::new()).unwrap();
        let recipe = DynamicRecipe::outputs([
            "robot_mode",
            "safety_mode",
            "safety_status",
            "runtime_state",
            "robot_status_bits",
            "safety_status_bits",
        ])
        .unwrap();
        client.setup_outputs(recipe.spec(), 125.0).unwrap();
        client.start().unwrap();
        Rtde { client, recipe }
    }

    /// The newest values: (robot_mode, safety_status, runtime_state, robot bits, safety bits).
    fn read(&mut self) -> (i32, i32, u32, u32, u32) {
        self.client.recv_latest_into(&mut self.recipe).unwrap();
        // A package sampled before the command may still be on its way (a thread of the
        // simulator preempted between sampling and writing): read past it.
        for _ in 0..3 {
            self.client.recv_into(&mut self.recipe).unwrap();
        }
        let int = |v: Option<&Value>| match v {
            Some(Value::Int32(i)) => *i,
            other => panic!("{other:?}"),
        };
        let uint = |v: Option<&Value>| match v {
            Some(Value::Uint32(i)) => *i,
            other => panic!("{other:?}"),
        };
        let r = &self.recipe;
        assert_eq!(int(r.get("safety_mode")), int(r.get("safety_status")));
        (
            int(r.get("robot_mode")),
            int(r.get("safety_status")),
            uint(r.get("runtime_state")),
            uint(r.get("robot_status_bits")),
            uint(r.get("safety_status_bits")),
        )
    }
}

#[test]
fn power_brakes_program_and_safety_each_visible_over_rtde() {
    let sim = Sim::builder()
        .dashboard()
        .protective_stop_unlock_delay(Duration::from_millis(200))
        .start()
        .unwrap();
    let mut d = connect(&sim);
    let mut rtde = Rtde::new(&sim);
    assert_eq!(d.controller_version().to_string(), "5.21.0");

    assert_eq!(d.robot_mode().unwrap(), RobotMode::PowerOff);
    assert_eq!(rtde.read(), (3, 1, 1, 0, 1));
    d.power_on().unwrap();
    assert_eq!(d.robot_mode().unwrap(), RobotMode::Idle);
    assert_eq!(rtde.read(), (5, 1, 1, 1, 1));
    d.brake_release().unwrap();
    assert_eq!(d.robot_mode().unwrap(), RobotMode::Running);
    assert_eq!(rtde.read(), (7, 1, 1, 1, 1));

    d.load("/programs/pick.urp").unwrap();
    assert_eq!(
        d.loaded_program().unwrap().as_deref(),
        Some("/programs/pick.urp")
    );
    d.play().unwrap();
    let state = d.program_state().unwrap();
    assert_eq!(
        (state.state, state.program.as_deref()),
        (RuntimeState::Playing, Some("pick.urp"))
    );
    assert!(d.running().unwrap());
    assert_eq!(rtde.read(), (7, 1, 2, 3, 1));
    d.pause().unwrap();
    assert_eq!(rtde.read().2, 4);
    d.play().unwrap();

    sim.protective_stop("a collision");
    assert_eq!(d.safety_status().unwrap(), SafetyStatus::ProtectiveStop);
    assert_eq!(d.program_state().unwrap().state, RuntimeState::Paused);
    assert_eq!(rtde.read(), (7, 3, 4, 1, 0x404));
    let early = d.unlock_protective_stop().unwrap_err();
    assert!(
        matches!(&early, DashboardError::Refused { command: "unlock protective stop", reply } if reply.starts_with("Cannot unlock protective stop until 5s")),
        "{early}"
    );
    thread::sleep(Duration::from_millis(250));
    d.unlock_protective_stop().unwrap();
    assert_eq!(d.safety_status().unwrap(), SafetyStatus::Normal);
    d.play().unwrap();
    d.stop().unwrap();
    assert_eq!(rtde.read(), (7, 1, 1, 1, 1));
    d.power_off().unwrap();
    assert_eq!(rtde.read().0, 3);
}

/// A program sent to a script port, paused from the Dashboard, is resumed by `play` as the
/// pendant's Play button resumes it, though no program is loaded.
#[test]
fn play_resumes_a_paused_program_that_was_sent_not_loaded() {
    let sim = Sim::builder()
        .dashboard()
        .script_ports()
        .deterministic()
        .start()
        .unwrap();
    let mut d = connect(&sim);
    d.power_on().unwrap();
    d.brake_release().unwrap();
    let sender = rtde_robot::script::ScriptSender::new(sim.addr().ip())
        .ports(sim.script_sender_ports().unwrap());
    let program = rtde_robot::motion::command_program(rtde_robot::motion::CommandLayout::UPPER);
    sender
        .send(&rtde_robot::script::Program::new(&program).unwrap())
        .unwrap();
    assert_eq!(d.loaded_program().unwrap(), None);
    assert_eq!(d.program_state().unwrap().state, RuntimeState::Playing);
    d.pause().unwrap();
    assert_eq!(d.program_state().unwrap().state, RuntimeState::Paused);
    d.play().unwrap();
    assert_eq!(d.program_state().unwrap().state, RuntimeState::Playing);
    // With nothing paused and nothing loaded, there is nothing to play.
    d.stop().unwrap();
    assert!(matches!(d.play(), Err(DashboardError::Refused { .. })));
}

#[test]
fn every_query_has_its_typed_reply() {
    let sim = sim();
    let mut d = connect(&sim);
    assert!(!d.running().unwrap());
    assert_eq!(d.loaded_program().unwrap(), None);
    assert!(!d.is_program_saved().unwrap());
    assert_eq!(
        d.polyscope_version().unwrap(),
        ControllerVersion::new(5, 21, 0, 0)
    );
    assert_eq!(
        d.software_version().unwrap(),
        ControllerVersion::new(5, 21, 0, 0)
    );
    assert_eq!(d.safety_mode().unwrap(), rtde_core::SafetyMode::Normal);
    assert!(d.is_in_remote_control().unwrap());
    assert_eq!(d.serial_number().unwrap(), "20255500001");
    assert_eq!(d.robot_model().unwrap(), "UR5");
    assert_eq!(d.operational_mode().unwrap(), None);
    d.set_operational_mode(OperationalMode::Manual).unwrap();
    assert_eq!(d.operational_mode().unwrap(), Some(OperationalMode::Manual));
    d.clear_operational_mode().unwrap();
    d.popup("hello").unwrap();
    assert_eq!(sim.robot_state().unwrap().popup(), Some("hello"));
    d.close_popup().unwrap();
    d.close_safety_popup().unwrap();
    d.add_to_log("a note").unwrap();
    assert_eq!(sim.robot_state().unwrap().log(), ["a note"]);
    d.load_installation("cell.installation").unwrap();
    assert_eq!(
        sim.robot_state().unwrap().installation(),
        "cell.installation"
    );
    d.restart_safety().unwrap();
    d.save_log().unwrap();
    assert_eq!(
        d.generate_flight_report("controller").unwrap(),
        "Flight Report generated with id: 1"
    );
    assert!(
        d.generate_support_file("/tmp")
            .unwrap()
            .starts_with("Completed successfully")
    );
    d.shutdown().unwrap();
    // The generic entry point gives the same typed replies.
    assert_eq!(
        d.execute(&Command::RobotMode).unwrap(),
        Reply::RobotMode(RobotMode::PowerOff)
    );
    d.quit().unwrap();
    assert!(!d.is_connected());
}

/// Each line sent on a raw connection, and the line the server answered: what a client
/// without rtde's parser sees.
fn raw_exchange(sim: &Sim, lines: &[&str]) -> Vec<String> {
    let stream = std::net::TcpStream::connect(sim.dashboard_addr().unwrap()).unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    let mut read = || {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        line.trim_end().to_owned()
    };
    read(); // the greeting
    lines
        .iter()
        .map(|line| {
            writeln!(writer, "{line}").unwrap();
            read()
        })
        .collect()
}

#[test]
fn replies_in_the_words_real_controllers_use() {
    let sim = Sim::builder()
        .controller_version("3.15.8")
        .dashboard()
        .start()
        .unwrap();
    let replies = raw_exchange(
        &sim,
        &[
            "setUserRole OPERATOR",
            "getUserRole",
            "setUserRole locked",
            "getUserRole",
            "generate flight report system",
            "generate flight report controller",
            "load \"/programs/pick.urp\"",
            "get loaded program",
            // Nothing plays: a program already stopped has nothing to fail at (ur_rtde's
            // construction sends it after stopping its own script, and requires this).
            "stop",
        ],
    );
    assert_eq!(
        replies[..4],
        [
            "Setting user role: OPERATOR",
            "OPERATOR",
            "Setting user role: locked",
            "LOCKED"
        ]
    );
    assert_eq!(replies[4], "Flight Report generated with id: 1");
    assert_eq!(replies[5], "Flight Report generated with id: 2");
    assert_eq!(replies[6], "Loading program: /programs/pick.urp");
    assert_eq!(replies[7], "Loaded program: /programs/pick.urp");
    assert_eq!(replies[8], "Stopped");
    // rtde's own client reads each of them.
    let mut d = connect(&sim);
    assert_eq!(
        d.user_role().unwrap(),
        rtde_robot::dashboard::UserRole::Locked
    );
    assert!(d.generate_flight_report("system").unwrap().ends_with(": 3"));
    sim.shutdown().unwrap();
}

#[test]
fn refusals_name_the_command_and_quote_the_controller() {
    let sim = Sim::builder()
        .dashboard()
        .fault(Fault::DashboardRefuse("power on".into()))
        .start()
        .unwrap();
    let mut d = connect(&sim);
    let err = d.power_on().unwrap_err();
    assert!(
        matches!(&err, DashboardError::Refused { command: "power on", reply } if reply == "Failed to execute: power on"),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        "the controller refused `power on`: \"Failed to execute: power on\""
    );
    let err = d.load("pick.txt").unwrap_err();
    assert!(
        matches!(&err, DashboardError::Refused { command: "load", reply } if reply == "File not found: pick.txt"),
        "{err}"
    );
    // Nothing loaded: play is refused by the robot itself.
    let err = d.play().unwrap_err();
    assert!(
        matches!(&err, DashboardError::Refused { command: "play", reply } if reply == "Failed to execute: play"),
        "{err}"
    );
}

#[test]
fn local_control_refuses_what_acts() {
    let sim = Sim::builder().dashboard().local_control().start().unwrap();
    let mut d = connect(&sim);
    assert!(!d.is_in_remote_control().unwrap());
    let err = d.power_on().unwrap_err();
    assert!(
        matches!(&err, DashboardError::Refused { command: "power on", reply } if reply.contains("local control")),
        "{err}"
    );
    sim.set_remote_control(true);
    d.power_on().unwrap();
}

#[test]
fn a_late_reply_times_out_drops_the_link_and_the_next_command_reconnects() {
    let sim = Sim::builder()
        .dashboard()
        .fault(Fault::DashboardDelay(Duration::from_millis(400)))
        .start()
        .unwrap();
    let options = DashboardOptions::new()
        .timeout(Duration::from_millis(100))
        .controller_version(rtde_sim::DEFAULT_CONTROLLER_VERSION);
    let mut d = Dashboard::connect(sim.dashboard_addr().unwrap(), options.clone()).unwrap();
    let err = d.robot_mode().unwrap_err();
    assert!(
        matches!(err, DashboardError::Timeout { command: "robotmode", after } if after == Duration::from_millis(100)),
        "{err}"
    );
    assert!(!d.is_connected());
    // Patient enough now: the next command connects again and gets its own reply.
    let mut d = Dashboard::connect(
        sim.dashboard_addr().unwrap(),
        options.timeout(Duration::from_secs(5)),
    )
    .unwrap();
    d.quit().unwrap();
    assert!(!d.is_connected());
    assert_eq!(d.robot_mode().unwrap(), RobotMode::PowerOff);
    assert!(d.is_connected());
}

#[test]
fn without_reconnection_a_dropped_link_stays_dropped() {
    let sim = sim();
    let mut d = Dashboard::connect(
        sim.dashboard_addr().unwrap(),
        DashboardOptions::new().reconnect(false),
    )
    .unwrap();
    d.quit().unwrap();
    assert!(matches!(d.robot_mode(), Err(DashboardError::Closed { .. })));
    d.reconnect().unwrap();
    assert_eq!(d.robot_mode().unwrap(), RobotMode::PowerOff);
}

/// A Dashboard server of `version` that answers `PolyscopeVersion` and records every
/// other line it receives.
fn recording_server(version: &'static str) -> (SocketAddr, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&seen);
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let record = Arc::clone(&record);
            thread::spawn(move || {
                writeln!(stream, "Connected: Universal Robots Dashboard Server").unwrap();
                let reader = BufReader::new(stream.try_clone().unwrap());
                for line in reader.lines() {
                    let Ok(line) = line else { return };
                    if line == "PolyscopeVersion" {
                        writeln!(stream, "URSoftware {version} (Jan 01 2020)").unwrap();
                    } else {
                        record.lock().unwrap().push(line);
                        writeln!(stream, "could not understand").unwrap();
                    }
                }
            });
        }
    });
    (addr, seen)
}

#[test]
fn every_version_gated_command_is_refused_before_sending() {
    let mut refused = 0;
    for (old, generation) in [("3.0.0.0", "cb3"), ("5.0.0.0", "e-series")] {
        let (addr, seen) = recording_server(old);
        let mut d = Dashboard::connect(addr, DashboardOptions::new()).unwrap();
        let version: ControllerVersion = old.parse().unwrap();
        for spec in COMMANDS {
            let Err(expected) = spec.check(version) else {
                continue;
            };
            let command = probe(spec.name);
            let err = d.execute(&command).unwrap_err();
            assert!(
                matches!(err, DashboardError::Unsupported { command, .. } if command == spec.name),
                "{generation} {}: {err} (expected {expected})",
                spec.name
            );
            refused += 1;
        }
        // One command that exists goes through, so the recording is known to work.
        let _ = d.execute(&Command::Play);
        assert_eq!(*seen.lock().unwrap(), ["play"], "{generation}");
    }
    assert!(refused >= 15, "{refused}");
}

/// A command of this name, with an argument where it takes one.
fn probe(name: &str) -> Command {
    let arg = match name {
        "load" => " a.urp",
        "popup" | "addToLog" => " hi",
        "setUserRole" => " operator",
        "set operational mode" => " manual",
        "load installation" => " a.installation",
        "generate flight report" => " system",
        "generate support file" => " /tmp",
        _ => "",
    };
    format!("{name}{arg}").parse().unwrap()
}

#[test]
fn an_error_message_says_which_version_added_the_command() {
    let (addr, _) = recording_server("5.3.0.0");
    let mut d = Dashboard::connect(addr, DashboardOptions::new()).unwrap();
    let err = d.safety_status().unwrap_err();
    assert_eq!(
        err.to_string(),
        "`safetystatus` needs controller software 5.4.0 or later; this controller runs 5.3.0"
    );
    let err = d.user_role().unwrap_err();
    assert_eq!(
        err.to_string(),
        "`getUserRole` does not exist on e-Series 5.x controllers (this one runs 5.3.0)"
    );
}

#[test]
fn polyscope_x_is_named_whether_declared_or_found_over_rtde() {
    let declared = Dashboard::connect(
        "127.0.0.1:9",
        DashboardOptions::new().controller_version("10.7.0".parse().unwrap()),
    )
    .unwrap_err();
    assert!(
        matches!(declared, DashboardError::PolyScopeX { .. }),
        "{declared}"
    );
    assert!(declared.to_string().contains("has no Dashboard server"));

    let x = Sim::builder()
        .controller_version("10.11.0")
        .start()
        .unwrap();
    // A port on the same address where nothing listens.
    let closed = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let err = Dashboard::connect(
        closed,
        DashboardOptions::new().rtde_port(Some(x.addr().port())),
    )
    .unwrap_err();
    assert!(
        matches!(err, DashboardError::PolyScopeX { version } if version.major == 10),
        "{err}"
    );
    // The simulator plays the same part: a PolyScope X has no Dashboard server.
    assert!(matches!(
        Sim::builder()
            .controller_version("10.11.0")
            .dashboard()
            .start(),
        Err(rtde_sim::Error::NoDashboard(_))
    ));
}

#[test]
fn a_refused_connection_to_an_e_series_is_a_plain_connect_error() {
    let e = Sim::builder().start().unwrap();
    let closed = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let err = Dashboard::connect(
        closed,
        DashboardOptions::new().rtde_port(Some(e.addr().port())),
    )
    .unwrap_err();
    assert!(matches!(err, DashboardError::Connect { .. }), "{err}");
}

#[test]
fn something_else_on_the_port_is_not_a_dashboard() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        writeln!(s, "SSH-2.0-OpenSSH_9.6").unwrap();
        thread::sleep(Duration::from_millis(200));
    });
    let err = Dashboard::connect(addr, DashboardOptions::new()).unwrap_err();
    assert!(
        matches!(&err, DashboardError::NotADashboard { greeting } if greeting.starts_with("SSH")),
        "{err}"
    );
}

#[test]
fn another_port_of_the_controller_is_named_without_waiting_out_the_timeout() {
    let sim = Sim::builder().script_ports().start().unwrap();
    // A port that accepts and never speaks: each connection is held open, unanswered.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_addr = silent.local_addr().unwrap();
    thread::spawn(move || {
        let held: Vec<_> = silent.incoming().take(4).collect();
        thread::sleep(Duration::from_secs(10));
        drop(held);
    });
    let cases = [
        (sim.addr(), Stranger::Rtde),
        (
            sim.script_addr(ScriptPort::Primary).unwrap(),
            Stranger::RobotInterface,
        ),
        (
            sim.script_addr(ScriptPort::RealTime).unwrap(),
            Stranger::RobotInterface,
        ),
        (silent_addr, Stranger::Silent),
    ];
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for (addr, want) in cases {
        for driver in ["blocking", "tokio"] {
            let started = Instant::now();
            let options = DashboardOptions::new();
            let err = if driver == "blocking" {
                Dashboard::connect(addr, options).unwrap_err()
            } else {
                runtime
                    .block_on(AsyncDashboard::connect(addr, options))
                    .unwrap_err()
            };
            assert!(
                matches!(&err, DashboardError::NotADashboardServer { found, .. } if *found == want),
                "{driver} at {addr}: {err}"
            );
            assert!(err.to_string().contains(&want.to_string()), "{err}");
            // The connect timeout is 5 s; the greeting and the question take one.
            assert!(
                started.elapsed() < Duration::from_millis(2500),
                "{driver} at {addr}: {:?}",
                started.elapsed()
            );
        }
    }
}

#[test]
fn an_old_controller_does_not_know_a_newer_command() {
    // The simulator as a 5.3 controller: `safetystatus` is not known there, and the
    // client says so before asking; asked anyway (raw), the server does not understand.
    let sim = Sim::builder()
        .controller_version("5.3.0")
        .dashboard()
        .start()
        .unwrap();
    let mut d = connect(&sim);
    assert!(matches!(
        d.safety_status(),
        Err(DashboardError::Unsupported { .. })
    ));
    let mut raw = Dashboard::connect(
        sim.dashboard_addr().unwrap(),
        DashboardOptions::new().controller_version("5.21.0".parse().unwrap()),
    )
    .unwrap();
    let err = raw.safety_status().unwrap_err();
    assert!(
        matches!(&err, DashboardError::Refused { reply, .. } if reply.starts_with("could not understand")),
        "{err}"
    );
}

#[test]
fn waiting_for_a_mode_ends_when_the_robot_is_in_it_or_says_where_it_is() {
    let sim = sim();
    let mut d = connect(&sim);
    let err = d
        .wait_for_robot_mode(RobotMode::Running, Duration::from_millis(200))
        .unwrap_err();
    assert!(
        matches!(
            err,
            DashboardError::ModeNotReached {
                wanted: RobotMode::Running,
                last: RobotMode::PowerOff,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("POWER_OFF"), "{err}");
    d.power_on().unwrap();
    d.wait_for_robot_mode(RobotMode::Idle, Duration::from_secs(10))
        .unwrap();
    assert_eq!(d.robot_mode().unwrap(), RobotMode::Idle);
    sim.shutdown().unwrap();
}
