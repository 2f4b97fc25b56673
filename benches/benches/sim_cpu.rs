//! The simulator's CPU while a client servos at 500 Hz, as a percentage of one core: the
//! target of issue 34, "the simulator with the URScript interpreter running ur_rtde's
//! control script at 500 Hz uses ≤ 10 % of one core".
//!
//! One simulator in this process, on a loopback address of its own (127.0.0.N) at a
//! controller's real ports (RTDE 30004, Dashboard 29999, script ports 30001–30003), which
//! ur_rtde needs; the arm powered on and its brakes released. Cases, alternating round by
//! round (the machine is shared and noisy), each measured over `--seconds`:
//!
//! - (a) idle: no client;
//! - (b) ur_rtde 1.6.5's `RTDEControlInterface` servoing at 500 Hz from a Python child
//!   (`peers/ur_rtde_servo.py`): its control script runs on the URScript engine. Beside
//!   it, the engine's part: `ScriptProgram::step` (engine and arm motion) replayed on a
//!   snapshot taken mid-window, per tick, times 500;
//! - (c) rtde's own servo: `rtde_robot::control::ControlLoop` on this process's main
//!   thread against the servo program, sent through the script port and run on the
//!   URScript engine (natively before the engine became the only way a program runs).
//!
//! The figure is the CPU time of this process but its main thread (which drives the cases
//! and, in (c), is the client): `/proc/self/stat`'s total, which keeps the time of threads
//! that end in the window (ur_rtde closes connections while it starts), less the main
//! thread's `/proc/self/task/*/schedstat`; each round also gives it by thread. The Python
//! child is another process and does not count.
//!
//! `cargo bench -p rtde-bench --bench sim_cpu -- --peer PYTHON [--seconds 10 --rounds 3]`;
//! `benches/peers/run.sh --bench sim_cpu` installs ur_rtde and passes `--peer`. Without
//! `--peer`, (b) is skipped and says so; with a Python that lacks ur_rtde, the bench fails
//! before it starts, saying which.

use std::io::{BufRead, BufReader};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use rtde_bench::Waypoint;
use rtde_bench::live::thread_cpu_time;
use rtde_bench::process_cpu::{Used, Window};
use rtde_bench::report::{arg, commit, cpu_model, verdict};
use rtde_core::{Client, ConnectOptions, RobotMode, RtdeRecipe};
use rtde_robot::control::{ControlLoop, SERVO_PROGRAM};
use rtde_robot::dashboard::{Dashboard, DashboardOptions};
use rtde_robot::script::{Program, ScriptSender};
use rtde_sim::script_program::ScriptProgram;
use rtde_sim::{IoState, Motion, Sim};

/// The target, in % of one core.
const TARGET_PERCENT: f64 = 10.0;
/// Where ur_rtde's servo loop starts (the peer's `START`).
const HOME: [f64; 6] = [0.0, -1.57, 1.57, -1.57, -1.57, 0.0];
const TICK: f64 = 0.002;
/// Time for a case to settle before its window: ur_rtde's constructor and first move are
/// in the peer's own wait, the ends of the previous case here.
const SETTLE: Duration = Duration::from_secs(1);
/// How long the peer may take beyond its servo loop (constructor, moveJ, stopScript).
const PEER_SLACK: Duration = Duration::from_secs(60);
/// Ticks of the replayed `ScriptProgram::step`.
const REPLAY_TICKS: u32 = 2_500;

#[derive(RtdeRecipe)]
struct State {
    actual_q: [f64; 6],
}

/// The same small sinusoid as the peer's: 0.05 rad at 0.5 Hz on the base and wrist 3.
fn target(t: f64) -> [f64; 6] {
    let offset = 0.05 * (2.0 * std::f64::consts::PI * 0.5 * t).sin();
    let mut q = HOME;
    q[0] += offset;
    q[5] -= offset;
    q
}

/// A simulator at a controller's real ports on 127.0.0.N, N chosen so that neither
/// another run nor a simulator on 127.0.0.1 collides with it.
fn sim_at_real_ports() -> Result<(Sim, IpAddr), String> {
    let first = 2 + u8::try_from(std::process::id() % 200).unwrap_or(0);
    for n in (first..=254).chain(2..first) {
        let ip = IpAddr::V4(Ipv4Addr::new(127, 0, 0, n));
        let at = |port| SocketAddr::new(ip, port);
        if let Ok(sim) = Sim::builder()
            .deterministic()
            .motion(Motion::still(HOME))
            .bind(at(30004))
            .dashboard_on(at(29999))
            .script_ports_from(at(30001))
            .start()
        {
            return Ok((sim, ip));
        }
    }
    Err("no 127.0.0.N with ports 29999, 30001-30004 and 30011-30013 free".into())
}

fn power_on(sim: &Sim) -> Result<(), String> {
    let addr = sim.dashboard_addr().ok_or("no Dashboard server")?;
    let mut dashboard =
        Dashboard::connect(addr, DashboardOptions::new()).map_err(|e| e.to_string())?;
    dashboard.power_on().map_err(|e| e.to_string())?;
    dashboard.brake_release().map_err(|e| e.to_string())?;
    dashboard
        .wait_for_robot_mode(RobotMode::Running, Duration::from_secs(10))
        .map_err(|e| e.to_string())
}

/// (a): no client, and no program left running by the case before.
fn idle(sim: &Sim, length: Duration) -> Result<Used, String> {
    std::thread::sleep(SETTLE);
    if sim.script_program().is_some_and(|p| p.is_running()) {
        return Err("a URScript program still runs from the case before".into());
    }
    let window = Window::start().map_err(|e| e.to_string())?;
    std::thread::sleep(length);
    window.stop().map_err(|e| e.to_string())
}

/// What a ur_rtde round gave.
struct Servoed {
    used: Used,
    /// The peer's summary line.
    summary: String,
    /// `ScriptProgram::step`'s CPU per tick, replayed, in microseconds.
    step_us: Option<f64>,
}

/// The peer's stdout, line by line, on a channel (a thread reads it, so that every wait
/// here has a deadline).
fn lines_of(child: &mut Child) -> Result<Receiver<String>, String> {
    let stdout = child.stdout.take().ok_or("the peer's stdout")?;
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("peer-stdout".into())
        .spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        })
        .map_err(|e| format!("a thread to read the peer: {e}"))?;
    Ok(rx)
}

/// Waits up to `within` for a line starting with `prefix`, skipping ur_rtde's own output.
fn wait_for_line(
    lines: &Receiver<String>,
    prefix: &str,
    within: Duration,
) -> Result<String, String> {
    let end = Instant::now() + within;
    loop {
        let left = end.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) if line.starts_with(prefix) => return Ok(line),
            Ok(_) => {}
            Err(mpsc::RecvTimeoutError::Timeout) => {
                return Err(format!("no `{prefix}` from the peer within {within:?}"));
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(format!("the peer ended before `{prefix}`"));
            }
        }
    }
}

/// (b): the peer servoing for `length`; the window from its first servoJ to its last.
fn ur_rtde(sim: &Sim, python: &str, ip: IpAddr, length: Duration) -> Result<Servoed, String> {
    std::thread::sleep(SETTLE);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/peers/ur_rtde_servo.py");
    let mut child = Command::new(python)
        .arg(script)
        .arg(ip.to_string())
        .arg(length.as_secs_f64().to_string())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{python} {script}: {e}"))?;
    let outcome = follow(sim, &mut child, length);
    // Ended by itself with a summary, or ended here.
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    match (outcome, status) {
        (Ok(servoed), Some(status)) if status.success() => Ok(servoed),
        (Ok(_), status) => Err(format!("the peer failed ({status:?}); its stderr is above")),
        (Err(e), _) => Err(e),
    }
}

/// Follows the peer's markers, measures between them, and replays the engine's tick.
fn follow(sim: &Sim, child: &mut Child, length: Duration) -> Result<Servoed, String> {
    let lines = lines_of(child)?;
    wait_for_line(&lines, "servoing", PEER_SLACK)?;
    let window = Window::start().map_err(|e| e.to_string())?;
    // Mid-window, the engine's state with the servo thread running.
    let snapshot = match lines.recv_timeout(length / 2) {
        Err(mpsc::RecvTimeoutError::Timeout) => sim.script_program().map(|p| (p, sim.io())),
        _ => return Err("the peer stopped servoing early".into()),
    };
    wait_for_line(&lines, "servoed", length + PEER_SLACK)?;
    let used = window.stop().map_err(|e| e.to_string())?;
    let summary = wait_for_line(&lines, "ur_rtde ", PEER_SLACK)?;
    let step_us = snapshot.and_then(|(program, io)| replay(&program, &io));
    Ok(Servoed {
        used,
        summary,
        step_us,
    })
}

/// `ScriptProgram::step`'s CPU per tick on a copy of `program`, in microseconds.
fn replay(program: &ScriptProgram, io: &IoState) -> Option<f64> {
    if !program.is_running() {
        return None;
    }
    let mut copy = program.clone();
    let before = thread_cpu_time()?;
    for _ in 0..REPLAY_TICKS {
        copy.step(io, TICK);
    }
    let cpu = thread_cpu_time()? - before;
    copy.is_running()
        .then(|| cpu.as_secs_f64() * 1e6 / f64::from(REPLAY_TICKS))
}

/// (c): rtde's ControlLoop on this thread against the servo program, for `length`.
fn control_loop(sim: &Sim, ip: IpAddr, length: Duration) -> Result<(Used, u64), String> {
    std::thread::sleep(SETTLE);
    let ports = sim.script_sender_ports().ok_or("no script ports")?;
    let program = Program::new(SERVO_PROGRAM).map_err(|e| e.to_string())?;
    ScriptSender::new(ip)
        .ports(ports)
        .send(&program)
        .map_err(|e| format!("sending the servo program: {e}"))?;
    let options = ConnectOptions::new().read_timeout(Some(Duration::from_secs(5)));
    let mut client = Client::connect(sim.addr(), options).map_err(|e| e.to_string())?;
    let mut control =
        ControlLoop::<State, Waypoint>::setup(&mut client, 500.0).map_err(|e| e.to_string())?;
    client.start().map_err(|e| e.to_string())?;
    let mut cycle = |i: u32| {
        control
            .cycle(&mut client, |_, handshake| {
                handshake.advance();
                Waypoint {
                    q: target(f64::from(i) * TICK),
                }
            })
            .map_err(|e| e.to_string())
    };
    let warm_up = u32::try_from(SETTLE.as_millis() / 2).unwrap_or(500);
    for i in 0..warm_up {
        cycle(i)?;
    }
    let window = Window::start().map_err(|e| e.to_string())?;
    let cycles = u32::try_from(length.as_millis() / 2).unwrap_or(u32::MAX);
    for i in warm_up..warm_up + cycles {
        cycle(i)?;
    }
    let used = window.stop().map_err(|e| e.to_string())?;
    let misses = control.stats().misses;
    client.close().map_err(|e| e.to_string())?;
    Ok((used, misses))
}

/// One figure per round, and their median and range.
#[derive(Default)]
struct Series(Vec<f64>);

impl Series {
    fn summary(&self, unit: &str) -> String {
        let mut v = self.0.clone();
        v.sort_by(f64::total_cmp);
        match (v.first(), v.get(v.len() / 2), v.last()) {
            (Some(lo), Some(mid), Some(hi)) => {
                format!("{mid:.2}{unit} (rounds {lo:.2}–{hi:.2})")
            }
            _ => "no rounds".into(),
        }
    }
}

/// The threads that used the window's time, busiest first, then what the total holds
/// beyond them: the threads that ended in the window, and its rounding.
fn by_thread(used: &Used) -> String {
    let mut names: Vec<_> = used
        .by_name
        .iter()
        .filter(|(_, cpu)| !cpu.is_zero())
        .collect();
    names.sort_by(|a, b| b.1.cmp(a.1));
    let names: Vec<String> = names
        .iter()
        .map(|(name, cpu)| format!("{name} {:.2}", used.percent(**cpu)))
        .collect();
    let ended = match used.ended.as_slice() {
        [] => String::new(),
        ended => format!(" ended in the window ({}) and", ended.join(", ")),
    };
    format!(
        "      by thread (%): {};{ended} the total's 10 ms ticks {:.2}",
        names.join(", "),
        used.unnamed_percent()
    )
}

#[derive(Default)]
struct Figures {
    idle: Series,
    ur_rtde: Series,
    engine: Series,
    rtde: Series,
    /// (b) / (c) in each round that has both.
    ratio: Series,
    failures: Vec<String>,
}

impl Figures {
    fn round(&mut self, sim: &Sim, peer: Option<&str>, ip: IpAddr, length: Duration, round: usize) {
        println!("round {round}:");
        let (servoed, looped) = (self.ur_rtde.0.len(), self.rtde.0.len());
        for case in (0..3).map(|i| (i + round) % 3) {
            match case {
                0 => match idle(sim, length) {
                    Ok(used) => {
                        println!(
                            "  (a) idle:                 {:.2} %",
                            used.percent_of_core()
                        );
                        println!("{}", by_thread(&used));
                        self.idle.0.push(used.percent_of_core());
                    }
                    Err(e) => self.failed("(a)", &e),
                },
                1 => match peer.map(|python| ur_rtde(sim, python, ip, length)) {
                    Some(Ok(s)) => self.servoed(&s),
                    Some(Err(e)) => self.failed("(b) ur_rtde", &e),
                    None => {}
                },
                _ => match control_loop(sim, ip, length) {
                    Ok((used, misses)) => {
                        println!(
                            "  (c) rtde ControlLoop:     {:.2} %    (client misses {misses})",
                            used.percent_of_core()
                        );
                        println!("{}", by_thread(&used));
                        self.rtde.0.push(used.percent_of_core());
                    }
                    Err(e) => self.failed("(c) ControlLoop", &e),
                },
            }
        }
        let b = self.ur_rtde.0.get(servoed);
        if let (Some(b), Some(c)) = (b, self.rtde.0.get(looped)) {
            println!("  (b) / (c): {:.2} ×", b / c);
            self.ratio.0.push(b / c);
        }
    }

    fn servoed(&mut self, s: &Servoed) {
        let percent = s.used.percent_of_core();
        let engine = s.step_us.map(|us| 100.0 * us / (TICK * 1e6));
        println!(
            "  (b) ur_rtde servoJ:       {percent:.2} %    target ≤ {TARGET_PERCENT} %: {}    [{}]",
            verdict(percent <= TARGET_PERCENT),
            s.summary
        );
        println!("{}", by_thread(&s.used));
        match (s.step_us, engine) {
            (Some(us), Some(share)) => {
                println!(
                    "      of which ScriptProgram::step (replayed): {us:.2} µs a tick = {share:.2} %"
                );
                self.engine.0.push(share);
            }
            _ => println!("      ScriptProgram::step: no running script to replay"),
        }
        self.ur_rtde.0.push(percent);
    }

    fn failed(&mut self, case: &str, e: &str) {
        println!("  {case}: FAILED: {e}");
        self.failures.push(format!("{case}: {e}"));
    }

    fn print(&self, rounds: usize, peer: Option<&str>) {
        let met =
            self.ur_rtde.0.len() == rounds && self.ur_rtde.0.iter().all(|p| *p <= TARGET_PERCENT);
        let verdict = match peer {
            Some(_) => verdict(met),
            None => "not measured (no --peer)",
        };
        println!("summary over {rounds} round(s), % of one core (median, range):");
        println!(
            "  (a) idle simulator:                    {}",
            self.idle.summary(" %")
        );
        println!(
            "  (b) ur_rtde servoJ, URScript engine:   {}",
            self.ur_rtde.summary(" %")
        );
        println!(
            "      ScriptProgram::step (replayed):    {}",
            self.engine.summary(" %")
        );
        println!(
            "  (c) rtde ControlLoop, servo program:   {}",
            self.rtde.summary(" %")
        );
        println!(
            "  (b) / (c), same round:                 {}",
            self.ratio.summary(" ×")
        );
        println!("target: (b) ≤ {TARGET_PERCENT} % of one core in every round: {verdict}");
    }
}

/// A Python that imports ur_rtde's control interface, or why not.
fn check_peer(python: &str) -> Result<(), String> {
    let out = Command::new(python)
        .args(["-c", "import rtde_control"])
        .output()
        .map_err(|e| format!("cannot run {python}: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    Err(format!(
        "{python} cannot import ur_rtde's rtde_control ({}): benches/peers/run.sh --bench sim_cpu installs it",
        String::from_utf8_lossy(&out.stderr)
            .lines()
            .last()
            .unwrap_or("no output")
    ))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let peer = args
        .iter()
        .position(|a| a == "--peer")
        .and_then(|i| args.get(i + 1))
        .map(String::as_str);
    let (seconds, rounds) = (arg("--seconds", 10).max(1), arg("--rounds", 3).max(1));
    let rounds = usize::try_from(rounds).unwrap_or(3);
    let start = peer.map_or(Ok(()), check_peer).and_then(|()| {
        let (sim, ip) = sim_at_real_ports()?;
        power_on(&sim)?;
        Ok((sim, ip))
    });
    let (sim, ip) = match start {
        Ok(started) => started,
        Err(e) => {
            eprintln!("sim_cpu: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!("machine: {}", cpu_model());
    println!("commit:  {}", commit());
    let peer_arg = peer.map(|p| format!(" --peer {p}")).unwrap_or_default();
    println!(
        "command: cargo bench -p rtde-bench --bench sim_cpu --{peer_arg} --seconds {seconds} --rounds {rounds}"
    );
    println!(
        "simulator on {ip} at the real ports, in this process; its threads' CPU over {seconds} s per case, cases alternating"
    );
    if peer.is_none() {
        println!(
            "(b) ur_rtde: skipped (benches/peers/run.sh --bench sim_cpu runs it: --peer PYTHON)"
        );
    }
    let mut figures = Figures::default();
    for round in 1..=rounds {
        figures.round(&sim, peer, ip, Duration::from_secs(seconds), round);
    }
    figures.print(rounds, peer);
    let _ = sim.shutdown();
    if figures.failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        eprintln!(
            "sim_cpu: {} case(s) failed: {}",
            figures.failures.len(),
            figures.failures.join("; ")
        );
        ExitCode::FAILURE
    }
}
