//! A robot application's whole life as its users run it: each entry point (Rust blocking,
//! Rust tokio, Python's `rtde_rs` API, Python's ur_rtde API) a process of its own against
//! `rtde sim`, a process of its own, as a real controller is. Each scenario is written once,
//! here; a client runs its actions for one entry point and says what happened on stdout
//! (`REACHED`, `MOVING`, `ERROR <Kind>`, `FAILED`). The Rust client is this test binary run
//! again (`lifecycle_client`, through `rtde_testkit::robots`); the Python client is
//! `lifecycle/client.py`, which needs the `rtde_rs` wheel: its tests run when
//! `RTDE_LIFECYCLE_PYTHON` names a Python that has it (`.ci/run` sets it after building the
//! wheel), and are ignored otherwise.
//!
//! The scenarios: 20 sessions in a row in one process and in 20 processes, every move ending
//! at its target; a client killed (SIGKILL) mid-move, with an observer connected and with
//! none, the arm at rest and the program stopped in every interface; and each error of the
//! issue recovered without restarting the controller: a protective stop, a watchdog stop
//! (the client frozen with SIGSTOP), a stopped program, an unreachable target and a power
//! cycle.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{Spawned, rtde};
use rtde_core::{Client, ConnectOptions, DynamicRecipe, Recipe, RuntimeState};
use rtde_robot::dashboard::{Dashboard, DashboardOptions};
use rtde_robot::motion::{JointMove, LinearMove, MotionError, MotionOptions, ProgramSource};
use rtde_robot::primary::{Decoded, PrimaryClient};
use rtde_robot::script::{Ports, ScriptSender};
use rtde_testkit::robots::{Driver, Handle, OnTokio, observe, observed, run_robot};

/// How many sessions in a row.
const SESSIONS: usize = 20;
/// The watchdog of the command program on a CB3 (50 cycles at 125 Hz), and one cycle.
const WATCHDOG: Duration = Duration::from_millis(400);
const PERIOD: Duration = Duration::from_millis(8);
/// What a busy test machine adds between the kill and the observer's package.
const SCHEDULING: Duration = Duration::from_millis(100);
const LONG: [f64; 6] = [2.5, -1.57, 1.57, -1.57, -1.57, 0.0];
/// Tool down above the base; a line to its mirror image passes the base axis.
const SINGULAR_FROM: [f64; 6] = [0.4, -0.05, 0.3, 0.0, std::f64::consts::PI, 0.0];
const SINGULAR_TO: [f64; 6] = [-0.4, -0.05, 0.3, 0.0, std::f64::consts::PI, 0.0];

/// Session `i`'s target: each differs from the one before. The Python client's is the same.
fn target(i: usize) -> [f64; 6] {
    let i = i as f64;
    [
        0.2 * (i % 3.0) - 0.2,
        -1.57,
        1.57,
        -1.57,
        -1.57,
        0.1 * (i % 2.0),
    ]
}

/// An entry point: how a user drives the robot.
#[derive(Clone, Copy, Debug)]
enum Entry {
    Blocking,
    Tokio,
    PythonNative,
    PythonUrRtde,
}

/// `rtde sim` as a process: a CB3 with its Dashboard server and script ports, powered on
/// with the brakes released, as a robot waiting for a program.
struct Controller {
    _process: Spawned,
    rtde: SocketAddr,
    dashboard: SocketAddr,
    ports: Ports,
}

impl Controller {
    fn start(extra: &[&str]) -> Controller {
        let mut cmd = rtde();
        cmd.args(["sim", "--version", "3.15.8", "--arm", "ur5", "--port", "0"])
            .args([
                "--dashboard-port",
                "0",
                "--script-ports",
                "0",
                "--deterministic",
            ])
            .args(extra);
        let mut process = Spawned::new(cmd);
        let rtde = process.listening_on();
        let mut addr_of = |what: &str| -> SocketAddr {
            let line = process.line(Duration::from_secs(10));
            let (_, addr) = line
                .rsplit_once(" on ")
                .unwrap_or_else(|| panic!("no {what} in {line:?}"));
            assert!(line.contains(what), "{what} expected: {line:?}");
            addr.parse().unwrap()
        };
        let dashboard = addr_of("Dashboard");
        let primary = addr_of("primary");
        let secondary = addr_of("secondary");
        let realtime = addr_of("real-time");
        let controller = Controller {
            _process: process,
            rtde,
            dashboard,
            ports: Ports {
                dashboard: dashboard.port(),
                primary: primary.port(),
                secondary: secondary.port(),
                realtime: realtime.port(),
                rtde: rtde.port(),
            },
        };
        controller.run_robot();
        controller
    }

    fn dashboard(&self) -> Dashboard {
        Dashboard::connect(self.dashboard, DashboardOptions::new()).unwrap()
    }

    /// Powers on and releases the brakes.
    fn run_robot(&self) {
        run_robot(&mut self.dashboard());
    }

    /// Whether the primary interface says a program runs.
    fn primary_says_running(&self) -> bool {
        let addr = SocketAddr::new(self.rtde.ip(), self.ports.primary);
        let mut primary = PrimaryClient::connect(addr).unwrap();
        loop {
            if let Decoded::State { state, .. } = primary.recv().unwrap()
                && let Some(mode) = &state.robot_mode
            {
                return mode.program_running;
            }
        }
    }

    /// The environment the clients read the controller's ports from.
    fn env(&self) -> Vec<(String, String)> {
        let p = &self.ports;
        [
            ("RTDE_PORT", p.rtde),
            ("RTDE_DASHBOARD_PORT", p.dashboard),
            ("RTDE_PRIMARY_PORT", p.primary),
            ("RTDE_SECONDARY_PORT", p.secondary),
            ("RTDE_REALTIME_PORT", p.realtime),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_string()))
        .collect()
    }
}

/// A client process running one action for one entry point.
struct ClientProcess {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
    entry: Entry,
}

/// What a client says.
const SAYS: [&str; 4] = ["REACHED ", "MOVING", "ERROR ", "FAILED "];

impl ClientProcess {
    fn start(entry: Entry, controller: &Controller, action: &str, env: &[(&str, &str)]) -> Self {
        let mut cmd = match entry {
            Entry::Blocking | Entry::Tokio => {
                let mut cmd = Command::new(std::env::current_exe().unwrap());
                cmd.args(["--exact", "lifecycle_client", "--ignored", "--nocapture"])
                    .arg("--test-threads=1")
                    .env(
                        "RTDE_LIFECYCLE_ENTRY",
                        if matches!(entry, Entry::Blocking) {
                            "blocking"
                        } else {
                            "tokio"
                        },
                    )
                    .env("RTDE_LIFECYCLE_ACTION", action);
                cmd
            }
            Entry::PythonNative | Entry::PythonUrRtde => {
                let mut cmd = Command::new(python().expect("RTDE_LIFECYCLE_PYTHON"));
                let api = if matches!(entry, Entry::PythonNative) {
                    "native"
                } else {
                    "ur_rtde"
                };
                cmd.arg(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/tests/lifecycle/client.py"
                ))
                .args([api, action]);
                cmd
            }
        };
        cmd.envs(controller.env()).envs(env.iter().copied());
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{entry:?} client: {e}"));
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                // libtest may print the test's name on the same line first.
                if let Some(at) = SAYS.iter().filter_map(|s| line.find(s)).min()
                    && tx.send(line[at..].to_owned()).is_err()
                {
                    return;
                }
            }
        });
        ClientProcess {
            child,
            stdin,
            lines,
            entry,
        }
    }

    /// What the client says next, within `timeout`.
    fn says(&self, timeout: Duration) -> String {
        let line = self
            .lines
            .recv_timeout(timeout)
            .unwrap_or_else(|_| panic!("{:?} client: nothing said within {timeout:?}", self.entry));
        assert!(
            !line.starts_with("FAILED"),
            "{:?} client: {line}",
            self.entry
        );
        line
    }

    /// Waits for `REACHED i q…` and returns `q`.
    fn reached(&self, timeout: Duration) -> (usize, [f64; 6]) {
        let line = self.says(timeout);
        let mut words = line.split_whitespace();
        assert_eq!(words.next(), Some("REACHED"), "{:?}: {line}", self.entry);
        let i = words.next().unwrap().parse().unwrap();
        let q: Vec<f64> = words.map(|w| w.parse().unwrap()).collect();
        (i, q.try_into().unwrap())
    }

    fn go(&mut self) {
        writeln!(self.stdin, "go").unwrap();
        self.stdin.flush().unwrap();
    }

    fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([signal, &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Waits for the client to end, and that it ended well.
    fn succeeds(mut self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "{:?} client: {status}", self.entry);
                return;
            }
            assert!(Instant::now() < deadline, "{:?} client hangs", self.entry);
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for ClientProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The Python with the `rtde_rs` wheel, if the environment names one.
fn python() -> Option<String> {
    std::env::var("RTDE_LIFECYCLE_PYTHON").ok()
}

fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

// ---- the scenarios ----------------------------------------------------------------------

/// 20 connect → move → close sessions in a row in one client process, then one each in 20
/// processes, on one running controller: every move ends at its target.
fn sessions_in_a_row(entry: Entry) {
    let controller = Controller::start(&[]);
    let client = ClientProcess::start(entry, &controller, &format!("sessions:{SESSIONS}"), &[]);
    for i in 0..SESSIONS {
        let (said, q) = client.reached(Duration::from_secs(30));
        assert_eq!(said, i);
        assert!(
            max_diff(&q, &target(i)) < 1e-9,
            "{entry:?} session {i}: {q:?}"
        );
    }
    client.succeeds();
    for i in 0..SESSIONS {
        let first = i.to_string();
        let client = ClientProcess::start(
            entry,
            &controller,
            "sessions:1",
            &[("RTDE_LIFECYCLE_FIRST", &first)],
        );
        let (said, q) = client.reached(Duration::from_secs(30));
        assert_eq!(said, i);
        assert!(
            max_diff(&q, &target(i)) < 1e-9,
            "{entry:?} process {i}: {q:?}"
        );
        client.succeeds();
    }
    eprintln!(
        "{entry:?}: {SESSIONS}/{SESSIONS} sessions in one process, {SESSIONS}/{SESSIONS} in {SESSIONS} processes"
    );
}

/// A client killed mid-move: with an observer connected, the joints are at rest within the
/// watchdog time and two periods (plus the arm's deceleration) of the kill; with none, an
/// observer that connects 2 s later finds the arm at rest and the program stopped in every
/// interface. Then the next session moves the arm.
fn a_killed_client_stops_the_arm(entry: Entry) {
    let controller = Controller::start(&[]);

    // An observer connected throughout.
    let mut observer = Client::connect(controller.rtde, ConnectOptions::new()).unwrap();
    let mut outputs = DynamicRecipe::outputs(["actual_q", "actual_qd", "runtime_state"]).unwrap();
    observer.setup_outputs(outputs.spec(), 125.0).unwrap();
    let mut client = ClientProcess::start(entry, &controller, "hold", &[]);
    assert_eq!(client.says(Duration::from_secs(30)), "MOVING");
    std::thread::sleep(Duration::from_millis(300));
    observer.start().unwrap();
    client.child.kill().unwrap();
    let killed = Instant::now();
    let rested = loop {
        observer.recv_into(&mut outputs).unwrap();
        let (_, qd, state) = observed(&outputs);
        if qd == [0.0; 6] && state == RuntimeState::Stopped.code() {
            break killed.elapsed();
        }
        assert!(
            killed.elapsed() < Duration::from_secs(5),
            "{entry:?}: the arm kept moving"
        );
    };
    observer.close().unwrap();
    drop(client);
    eprintln!("{entry:?}: the arm at rest {rested:?} after the kill, observed");
    assert!(
        rested < WATCHDOG + 2 * PERIOD + SCHEDULING,
        "{entry:?}: at rest {rested:?} after the kill"
    );

    // Nobody connected.
    let mut client = ClientProcess::start(entry, &controller, "hold", &[]);
    assert_eq!(client.says(Duration::from_secs(30)), "MOVING");
    std::thread::sleep(Duration::from_millis(300));
    client.child.kill().unwrap();
    drop(client);
    std::thread::sleep(Duration::from_secs(2));
    let (q0, qd, state) = observe(controller.rtde);
    assert_eq!(qd, [0.0; 6], "{entry:?}: moving 2 s after the kill");
    assert_eq!(state, RuntimeState::Stopped.code(), "{entry:?}: RTDE");
    let mut dashboard = controller.dashboard();
    assert!(!dashboard.running().unwrap(), "{entry:?}: the Dashboard");
    assert_eq!(
        dashboard.program_state().unwrap().state,
        RuntimeState::Stopped,
        "{entry:?}: the Dashboard"
    );
    assert!(
        !controller.primary_says_running(),
        "{entry:?}: the primary interface"
    );
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(
        observe(controller.rtde).0,
        q0,
        "{entry:?}: the arm moved on"
    );

    let client = ClientProcess::start(entry, &controller, "sessions:1", &[]);
    let (_, q) = client.reached(Duration::from_secs(30));
    assert!(max_diff(&q, &target(0)) < 1e-9, "{entry:?}: {q:?}");
    client.succeeds();
}

/// The errors a session meets, each recovered by the same client without restarting the
/// controller.
#[derive(Clone, Copy, Debug)]
enum Failure {
    ProtectiveStop,
    Watchdog,
    ProgramStopped,
    /// A line through a singularity: the controller's protective stop.
    Singularity,
    PowerCycle,
}

/// Each error, then a successful move by the same client after its recovery call: 5/5.
fn recovers_from_each_error(entry: Entry) {
    // A protective stop after 500 ms of the program's motion: on its own controller, whose
    // other moves would meet it too.
    let protective = Controller::start(&["--fault", "protective-stop=500ms"]);
    let controller = Controller::start(&[]);
    let mut recovered = 0;
    for failure in [
        Failure::ProtectiveStop,
        Failure::Watchdog,
        Failure::ProgramStopped,
        Failure::Singularity,
        Failure::PowerCycle,
    ] {
        let on = if matches!(failure, Failure::ProtectiveStop) {
            &protective
        } else {
            &controller
        };
        let singular = if matches!(failure, Failure::Singularity) {
            "1"
        } else {
            "0"
        };
        let mut client = ClientProcess::start(entry, on, "recover", &[("RTDE_SINGULAR", singular)]);
        assert_eq!(client.says(Duration::from_secs(30)), "MOVING");
        let mut dashboard = on.dashboard();
        let expected: String = match failure {
            Failure::ProtectiveStop | Failure::Singularity => "ProtectiveStop".into(),
            Failure::Watchdog => {
                std::thread::sleep(Duration::from_millis(200));
                client.signal("-STOP");
                std::thread::sleep(WATCHDOG + Duration::from_millis(300));
                client.signal("-CONT");
                "Watchdog".into()
            }
            Failure::ProgramStopped => {
                std::thread::sleep(Duration::from_millis(200));
                dashboard.stop().unwrap();
                "ProgramStopped".into()
            }
            Failure::PowerCycle => {
                std::thread::sleep(Duration::from_millis(200));
                dashboard.power_off().unwrap();
                "ProgramStopped".into()
            }
        };
        eprintln!("{entry:?}: {failure:?}");
        let said = client.says(Duration::from_secs(30));
        assert_eq!(said, format!("ERROR {expected}"), "{entry:?}, {failure:?}");
        match failure {
            Failure::ProtectiveStop | Failure::Singularity => {
                // Unlocked once the controller allows it (5 s after the stop).
                let deadline = Instant::now() + Duration::from_secs(10);
                while dashboard.unlock_protective_stop().is_err() {
                    assert!(Instant::now() < deadline, "{entry:?}: never unlocked");
                    std::thread::sleep(Duration::from_millis(200));
                }
            }
            Failure::PowerCycle => on.run_robot(),
            _ => {}
        }
        client.go();
        client.reached(Duration::from_secs(30));
        client.succeeds();
        recovered += 1;
    }
    eprintln!("{entry:?}: recovered from {recovered}/5 errors");
}

// ---- the clients ------------------------------------------------------------------------

/// Not a test of its own: the Rust client the scenarios start, for the entry point and
/// action in its environment.
#[test]
#[ignore = "the lifecycle suite's Rust client, started by its scenarios"]
fn lifecycle_client() {
    let Ok(entry) = std::env::var("RTDE_LIFECYCLE_ENTRY") else {
        return;
    };
    let outcome = if entry == "tokio" {
        act::<OnTokio>()
    } else {
        act::<rtde_robot::motion::Robot>()
    };
    if let Err(e) = outcome {
        // The whole chain: a failure under load must say why, not only what.
        println!("FAILED {}", rtde_core::Report(&e));
        std::process::exit(1);
    }
}

/// The action of `RTDE_LIFECYCLE_ACTION` on driver `R`.
fn act<R: Driver>() -> Result<(), MotionError> {
    let port = |name: &str| -> u16 { std::env::var(name).unwrap().parse().unwrap() };
    let rtde = SocketAddr::from(([127, 0, 0, 1], port("RTDE_PORT")));
    let ports = Ports {
        dashboard: port("RTDE_DASHBOARD_PORT"),
        primary: port("RTDE_PRIMARY_PORT"),
        secondary: port("RTDE_SECONDARY_PORT"),
        realtime: port("RTDE_REALTIME_PORT"),
        rtde: rtde.port(),
    };
    let options = MotionOptions::new()
        .source(ProgramSource::Send(
            ScriptSender::new(rtde.ip()).ports(ports),
        ))
        .primary_port(Some(ports.primary))
        .timeout(Duration::from_secs(20));
    let connect = || R::connect(rtde, options.clone());
    let action = std::env::var("RTDE_LIFECYCLE_ACTION").unwrap();
    if let Some(count) = action.strip_prefix("sessions:") {
        let first: usize = std::env::var("RTDE_LIFECYCLE_FIRST").map_or(0, |f| f.parse().unwrap());
        for i in first..first + count.parse::<usize>().unwrap() {
            let robot = connect()?;
            let reached = robot.move_j(JointMove::to(target(i)).speed(2.0).accel(4.0))?;
            robot.close()?;
            println!("REACHED {i} {}", words(&reached.q));
        }
        return Ok(());
    }
    let robot = connect()?;
    if action == "hold" {
        let _handle = robot.start_move_j(JointMove::to(LONG).speed(0.3))?;
        println!("MOVING");
        std::thread::sleep(Duration::from_secs(60));
        return Ok(());
    }
    // recover
    let verdict = if std::env::var("RTDE_SINGULAR").as_deref() == Ok("1") {
        let start = robot.inverse_kinematics(&SINGULAR_FROM, Some(target(0)))?;
        robot.move_j(JointMove::to(start).speed(2.0).accel(4.0))?;
        println!("MOVING");
        robot.move_l(LinearMove::to(SINGULAR_TO)).map(drop)
    } else {
        let handle = robot.start_move_j(JointMove::to(LONG).speed(0.3))?;
        println!("MOVING");
        handle.wait().map(drop)
    };
    let kind = match verdict {
        Err(MotionError::ProtectiveStop { .. }) => "ProtectiveStop",
        Err(MotionError::Watchdog { .. }) => "Watchdog",
        Err(MotionError::ProgramStopped { .. }) => "ProgramStopped",
        Err(MotionError::TargetUnreachable { .. }) => "TargetUnreachable",
        Err(other) => return Err(other),
        Ok(()) => return Err(MotionError::Invalid("the robot gave no verdict".into())),
    };
    println!("ERROR {kind}");
    let mut go = String::new();
    std::io::stdin().read_line(&mut go).unwrap();
    let robot = robot.recover()?;
    let mut goal = robot.state().q;
    goal[0] += 0.05;
    let reached = robot.move_j(JointMove::to(goal).speed(2.0).accel(8.0))?;
    robot.close()?;
    println!("REACHED 0 {}", words(&reached.q));
    Ok(())
}

fn words(q: &[f64; 6]) -> String {
    q.map(|v| v.to_string()).join(" ")
}

/// Each scenario as a test per entry point; the Python ones need `RTDE_LIFECYCLE_PYTHON`.
macro_rules! every_entry {
    ($($scenario:ident),* $(,)?) => {
        mod blocking {
            $( #[test] fn $scenario() { super::$scenario(super::Entry::Blocking) } )*
        }
        mod tokio {
            $( #[test] fn $scenario() { super::$scenario(super::Entry::Tokio) } )*
        }
        mod python_native {
            $(
                #[test]
                #[ignore = "needs the rtde_rs wheel: RTDE_LIFECYCLE_PYTHON (.ci/run)"]
                fn $scenario() { super::$scenario(super::Entry::PythonNative) }
            )*
        }
        mod python_ur_rtde {
            $(
                #[test]
                #[ignore = "needs the rtde_rs wheel: RTDE_LIFECYCLE_PYTHON (.ci/run)"]
                fn $scenario() { super::$scenario(super::Entry::PythonUrRtde) }
            )*
        }
    };
}

every_entry!(
    sessions_in_a_row,
    a_killed_client_stops_the_arm,
    recovers_from_each_error,
);
