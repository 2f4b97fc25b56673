//! Whether every interface describes the same robot state: scripted traffic through each
//! transition of a robot application's life (power on, brake release, the program sent and
//! playing, a move, pause and play, a protective stop and its unlock, recovery, a client
//! that dies and the watchdog, the program replaced, stop, power off), repeated for
//! `--seconds`, and after each transition one sample of every interface:
//!
//! - RTDE: `runtime_state`, `robot_mode`, `safety_mode`;
//! - the Dashboard server: `programState`, `running`, `robotmode`, `safetystatus`;
//! - the primary interface's robot mode data: `is_program_running`, `is_program_paused`,
//!   `robot_mode`, `is_protective_stopped`.
//!
//! A sample agrees when all three say the same program state, robot mode and safety
//! state. Target: every sample agrees.
//!
//! `cargo bench -p rtde-bench --bench state_agreement -- [--seconds 60]`

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use rtde_bench::report::{arg, commit, cpu_model, verdict};
use rtde_core::{
    Client, ConnectOptions, FromPayload, RobotMode, RtdeRecipe, RuntimeState, StaticRecipe,
};
use rtde_robot::dashboard::{Dashboard, DashboardOptions};
use rtde_robot::motion::{
    CommandLayout, JointMove, MotionOptions, ProgramSource, Robot, command_program,
};
use rtde_robot::primary::{Decoded, PrimaryClient};
use rtde_robot::script::{Program, ScriptPort, ScriptSender};
use rtde_sim::Sim;

const SAFETY_PROTECTIVE_STOP: i32 = 3;
/// The primary interface's robot mode data sub-package.
const ROBOT_MODE_DATA: u8 = 0;

#[derive(RtdeRecipe)]
struct Modes {
    runtime_state: u32,
    robot_mode: i32,
    safety_mode: i32,
}

/// What each interface said at one moment.
#[derive(Debug)]
struct Sample {
    rtde: (u32, i32, i32),
    dashboard: (u32, bool, i32, i32),
    primary: (bool, bool, i8, bool),
}

impl Sample {
    /// Where the interfaces disagree, in words; empty when they agree.
    fn disagreements(&self) -> Vec<&'static str> {
        let (runtime, mode, safety) = self.rtde;
        let (program, running, dash_mode, dash_safety) = self.dashboard;
        let (p_running, p_paused, p_mode, p_protective) = self.primary;
        let playing = runtime == RuntimeState::Playing.code();
        let paused = runtime == RuntimeState::Paused.code();
        let mut out = Vec::new();
        if program != runtime || running != playing {
            out.push("program: RTDE vs Dashboard");
        }
        if p_running != playing || p_paused != paused {
            out.push("program: RTDE vs primary");
        }
        if dash_mode != mode || i32::from(p_mode) != mode {
            out.push("robot mode");
        }
        if dash_safety != safety || p_protective != (safety == SAFETY_PROTECTIVE_STOP) {
            out.push("safety");
        }
        out
    }
}

/// The three interfaces. RTDE and the primary interface are connected afresh for each
/// sample, so that what they say is not what waited in a socket since the last one.
struct Interfaces {
    rtde: SocketAddr,
    primary: SocketAddr,
    dashboard: Dashboard,
}

impl Interfaces {
    fn open(sim: &Sim) -> Result<Interfaces, Box<dyn std::error::Error>> {
        let dashboard = Dashboard::connect(
            sim.dashboard_addr().ok_or("no Dashboard")?,
            DashboardOptions::new(),
        )?;
        Ok(Interfaces {
            rtde: sim.addr(),
            primary: sim
                .script_addr(ScriptPort::Primary)
                .ok_or("no primary interface")?,
            dashboard,
        })
    }

    /// One sample: the primary interface's first state message, RTDE's first package, then
    /// the Dashboard's answers.
    fn sample(&mut self) -> Result<Sample, Box<dyn std::error::Error>> {
        let mut primary = PrimaryClient::connect(self.primary)?;
        let primary = loop {
            if let Decoded::State { update, state } = primary.recv()?
                && update.has(ROBOT_MODE_DATA)
                && let Some(m) = &state.robot_mode
            {
                break (
                    m.program_running,
                    m.program_paused,
                    m.robot_mode,
                    m.protective_stopped,
                );
            }
        };
        let mut rtde = Client::connect(self.rtde, ConnectOptions::new())?;
        rtde.setup_outputs(<Modes as StaticRecipe>::SPEC, 500.0)?;
        rtde.start()?;
        let modes: Modes = Modes::from_payload_as::<rtde_core::Error>(rtde.recv()?)?;
        rtde.close()?;
        let d = &mut self.dashboard;
        Ok(Sample {
            rtde: (modes.runtime_state, modes.robot_mode, modes.safety_mode),
            dashboard: (
                d.program_state()?.state.code(),
                d.running()?,
                d.robot_mode()?.code(),
                d.safety_status()?.code(),
            ),
            primary,
        })
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let seconds = arg("--seconds", 60);
    println!("machine: {}", cpu_model());
    println!("commit:  {}", commit());
    println!("command: cargo bench -p rtde-bench --bench state_agreement -- --seconds {seconds}");
    let sim = Sim::builder()
        .dashboard()
        .script_ports()
        .deterministic()
        .protective_stop_unlock_delay(Duration::from_millis(200))
        .start()?;
    let sender =
        ScriptSender::new(sim.addr().ip()).ports(sim.script_sender_ports().ok_or("no ports")?);
    let sending = MotionOptions::new().source(ProgramSource::Send(sender.clone()));
    let attaching = MotionOptions::new();
    let mut interfaces = Interfaces::open(&sim)?;
    let (mut samples, mut agreed, mut cycles) = (0u32, 0u32, 0u32);
    let mut seen: Vec<(String, Sample)> = Vec::new();
    let started = Instant::now();
    let mut check =
        |what: &str, interfaces: &mut Interfaces| -> Result<(), Box<dyn std::error::Error>> {
            // The transition's effects reach every interface within a state message's period.
            std::thread::sleep(Duration::from_millis(20));
            let sample = interfaces.sample()?;
            samples += 1;
            if sample.disagreements().is_empty() {
                agreed += 1;
            } else {
                seen.push((what.to_owned(), sample));
            }
            Ok(())
        };
    let home =
        |i: u32| JointMove::to([0.2 * f64::from(i % 2), -1.57, 1.57, -1.57, -1.57, 0.0]).speed(2.0);
    while started.elapsed() < Duration::from_secs(seconds) {
        let d = &mut interfaces.dashboard;
        d.power_on()?;
        d.wait_for_robot_mode(RobotMode::Idle, Duration::from_secs(10))?;
        check("power on", &mut interfaces)?;
        interfaces.dashboard.brake_release()?;
        interfaces
            .dashboard
            .wait_for_robot_mode(RobotMode::Running, Duration::from_secs(10))?;
        check("brake release", &mut interfaces)?;

        let robot = Robot::connect(sim.addr(), sending.clone())?;
        check("program sent, playing", &mut interfaces)?;
        robot.move_j(home(cycles))?;
        check("a move ended", &mut interfaces)?;
        let handle = robot.start_move_j(home(cycles + 1))?;
        check("a move under way", &mut interfaces)?;
        handle.wait()?;

        interfaces.dashboard.pause()?;
        check("paused", &mut interfaces)?;
        interfaces.dashboard.play()?;
        check("playing again", &mut interfaces)?;

        let handle = robot.start_move_j(home(cycles).speed(0.5))?;
        std::thread::sleep(Duration::from_millis(50));
        sim.protective_stop("a collision, scripted");
        let _ = handle.wait();
        check("protective stop", &mut interfaces)?;
        std::thread::sleep(Duration::from_millis(250));
        interfaces.dashboard.unlock_protective_stop()?;
        check("unlocked", &mut interfaces)?;
        let robot = robot.recover()?;
        check("recovered: the program sent again", &mut interfaces)?;

        // A client that dies: its watchdog register stops changing.
        drop(robot);
        std::thread::sleep(Duration::from_millis(200));
        check("watchdog stop", &mut interfaces)?;

        let robot = Robot::connect(sim.addr(), sending.clone())?;
        robot.move_j(home(cycles + 1))?;
        // The program replaced while it plays; a new session attaches to the new one.
        drop(robot);
        sender.send(&Program::new(&command_program(CommandLayout::UPPER))?)?;
        check("program replaced", &mut interfaces)?;
        let robot = Robot::connect(sim.addr(), attaching.clone())?;
        robot.move_j(home(cycles))?;
        robot.close()?;
        check("session closed", &mut interfaces)?;

        interfaces.dashboard.stop()?;
        check("stopped from the Dashboard", &mut interfaces)?;
        interfaces.dashboard.power_off()?;
        interfaces
            .dashboard
            .wait_for_robot_mode(RobotMode::PowerOff, Duration::from_secs(10))?;
        check("power off", &mut interfaces)?;
        cycles += 1;
    }
    for (what, sample) in seen.iter().take(10) {
        println!(
            "disagree after {what}: {:?}: {sample:?}",
            sample.disagreements()
        );
    }
    println!(
        "state agreement: {agreed}/{samples} samples agree, one after each transition, over {cycles} cycles in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    println!("every sample agrees: {}", verdict(agreed == samples));
    Ok(())
}
