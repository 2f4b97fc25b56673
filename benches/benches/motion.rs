//! The motion layer's figures, in one run against the in-process simulator's command
//! program at 500 Hz.
//!
//! `cargo bench -p rtde-bench --bench motion -- [--commands 1000] [--stops 100]`
//!
//! - Command latency: from the `start_move_j` call to the first tick in which the arm moves,
//!   p50 and p99 over `--commands` moves. Target: ≤ 2 control periods (4 ms).
//! - Stop reaction: from the `stop_j` call to the first tick in which the arm slows down,
//!   over `--stops` stops mid-move. Target: ≤ 2 periods.
//!
//! Both ticks are seen by polling the program the simulator runs (on the URScript engine)
//! every 20 µs, so each figure includes up to that much polling delay.
//! - Accuracy: the largest distance of a reached pose from its target over the moves (joint
//!   and linear), target ≤ 1 µm and 1 µrad; the largest distance of the TCP from the
//!   straight line during `move_l`s, every package of a second connection, target ≤ 0.1 mm.
//! - Inverse kinematics: the time per `inverse_nearest` over 10 000 random poses per arm,
//!   and the largest FK(IK(p)) error.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rtde_bench::interleave::quantile;
use rtde_bench::report::{arg, commit, cpu_model, verdict};
use rtde_core::{Client, ConnectOptions, RtdeRecipe, StaticRecipe};
use rtde_robot::motion::{Arm, JointMove, LinearMove, MotionError, MotionOptions, Robot};
use rtde_sim::{Motion, Sim};

const HOME: [f64; 6] = [0.0, -1.57, 1.57, -1.57, -1.57, 0.0];
const PERIOD_MS: f64 = 2.0;

#[derive(RtdeRecipe)]
struct Pose {
    #[rtde(name = "actual_TCP_pose")]
    tcp: [f64; 6],
}

/// The instant polling first sees the joint velocities of the program the simulator runs
/// pass `test`, given the velocities seen before them.
fn seen(
    sim: &Sim,
    test: impl Fn(&[f64; 6], &[f64; 6]) -> bool,
) -> Result<Instant, Box<dyn std::error::Error>> {
    let qd = || {
        sim.script_program()
            .map(|p| p.qd())
            .ok_or("no program runs")
    };
    let give_up = Instant::now() + Duration::from_secs(1);
    let mut last = qd()?;
    loop {
        let now = qd()?;
        if test(&last, &now) {
            return Ok(Instant::now());
        }
        if Instant::now() > give_up {
            return Err("the arm never did what was waited for within 1 s".into());
        }
        last = now;
        std::thread::sleep(Duration::from_micros(20));
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let commands = usize::try_from(arg("--commands", 1000))?;
    let stops = usize::try_from(arg("--stops", 100))?;
    println!("machine: {}", cpu_model());
    println!("commit:  {}", commit());
    println!(
        "command: cargo bench -p rtde-bench --bench motion -- --commands {commands} --stops {stops}"
    );
    let sim = Sim::builder()
        .command_program()
        .deterministic()
        .motion(Motion::still(HOME))
        .start()?;
    let robot = Robot::connect(sim.addr(), MotionOptions::new())?;
    robot.move_j(JointMove::to(HOME))?;

    // Command latency, and the reached joints' accuracy.
    let mut latencies = Vec::with_capacity(commands);
    let mut worst_joint: f64 = 0.0;
    for i in 0..commands {
        let mut target = HOME;
        target[0] = if i % 2 == 0 { 0.01 } else { 0.0 };
        let called = Instant::now();
        let handle = robot.start_move_j(JointMove::to(target).speed(1.0).accel(20.0))?;
        let at = seen(&sim, |_, qd| qd[0] != 0.0)?;
        let reached = handle.wait()?;
        latencies.push(at.duration_since(called).as_secs_f64() * 1e3);
        worst_joint = worst_joint.max(max_diff(&reached.q, &target));
    }
    let (p50, p99) = (quantile(latencies.clone(), 0.5), quantile(latencies, 0.99));
    println!(
        "command latency (move_j call -> first motion tick), {commands} commands: p50 {p50:.3} ms \
         ({:.2} periods), p99 {p99:.3} ms ({:.2} periods); target <= 2 periods: {}",
        p50 / PERIOD_MS,
        p99 / PERIOD_MS,
        verdict(p99 <= 2.0 * PERIOD_MS)
    );

    // Stop reaction.
    let mut reactions = Vec::with_capacity(stops);
    for i in 0..stops {
        let mut target = HOME;
        target[0] = if i % 2 == 0 { 0.5 } else { 0.0 };
        let handle = robot.start_move_j(JointMove::to(target).speed(2.0).accel(10.0))?;
        std::thread::sleep(Duration::from_millis(60));
        let called = Instant::now();
        robot.stop_j(20.0)?;
        // The move still speeds up (60 ms at 10 rad/s² is short of 2 rad/s): the first
        // tick whose speed is below the last one's is the stop's.
        let at = seen(&sim, |last, qd| qd[0].abs() < last[0].abs())?;
        reactions.push(at.saturating_duration_since(called).as_secs_f64() * 1e3);
        // The stop cut the move short: its handle says where the arm came to rest.
        match handle.wait() {
            Ok(_) | Err(MotionError::Interrupted { .. }) => {}
            Err(e) => return Err(e.into()),
        }
        robot.move_j(JointMove::to(target).speed(2.0).accel(10.0))?;
    }
    let (s50, s99, smax) = (
        quantile(reactions.clone(), 0.5),
        quantile(reactions.clone(), 0.99),
        reactions.iter().copied().fold(0.0, f64::max),
    );
    println!(
        "stop reaction (stop_j call -> deceleration starts), {stops} stops: p50 {s50:.3} ms, \
         p99 {s99:.3} ms, max {smax:.3} ms ({:.2} periods); target <= 2 periods: {}",
        smax / PERIOD_MS,
        verdict(smax <= 2.0 * PERIOD_MS)
    );

    // Linear accuracy and the deviation from the line, from every package of a second
    // connection.
    robot.move_j(JointMove::to(HOME))?;
    let start = robot.state().tcp_pose;
    let mut watcher = Client::connect(sim.addr(), ConnectOptions::new())?;
    watcher.setup_outputs(Pose::SPEC, 500.0)?;
    watcher.start()?;
    let running = Arc::new(AtomicBool::new(true));
    let samples = {
        let running = Arc::clone(&running);
        std::thread::spawn(move || {
            let mut poses = Vec::new();
            while running.load(Ordering::Acquire) {
                match watcher.recv_as::<Pose>() {
                    Ok(p) => poses.push(p.tcp),
                    Err(_) => break,
                }
            }
            poses
        })
    };
    let mut worst_pose: f64 = 0.0;
    let lines = [(0.1, 0.0, -0.1), (0.0, 0.1, 0.0), (-0.1, -0.1, 0.1)];
    let mut segments = Vec::new();
    let mut from = start;
    for (dx, dy, dz) in lines {
        let mut to = from;
        to[0] += dx;
        to[1] += dy;
        to[2] += dz;
        let reached = robot.move_l(LinearMove::to(to).speed(0.25).accel(1.2))?;
        worst_pose = worst_pose.max(max_diff(&reached.tcp_pose, &to));
        segments.push((from, to));
        from = to;
    }
    running.store(false, Ordering::Release);
    let poses = samples.join().map_err(|_| "the watcher panicked")?;
    let deviation = poses
        .iter()
        .map(|p| {
            segments
                .iter()
                .map(|(a, b)| distance_to_segment(p, a, b))
                .fold(f64::INFINITY, f64::min)
        })
        .fold(0.0, f64::max);
    println!(
        "accuracy: reached joints within {worst_joint:.1e} rad of the target over {commands} \
         move_j, reached TCP poses within {worst_pose:.1e} (m and rad) over {} move_l; target \
         <= 1e-6: {}",
        lines.len(),
        verdict(worst_joint <= 1e-6 && worst_pose <= 1e-6)
    );
    println!(
        "move_l deviation from the straight line over {} packages: {:.2e} m; target <= 1e-4 m: {}",
        poses.len(),
        deviation,
        verdict(deviation <= 1e-4)
    );
    robot.close()?;
    sim.shutdown()?;

    ik_figures();
    Ok(())
}

fn ik_figures() {
    let mut state = 0x5eed_u64;
    let mut unit = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1);
        #[allow(clippy::cast_precision_loss)] // 53 bits into the mantissa
        let u = (state >> 11) as f64 / (1u64 << 53) as f64;
        u
    };
    for arm in [Arm::UR3E, Arm::UR5E, Arm::UR10E, Arm::UR5] {
        let cases: Vec<([f64; 6], [f64; 6])> = (0..10_000)
            .map(|_| {
                let q: [f64; 6] =
                    std::array::from_fn(|_| (unit() * 2.0 - 1.0) * std::f64::consts::PI);
                (arm.tcp_pose(&q), q)
            })
            .collect();
        let started = Instant::now();
        let mut solutions = Vec::with_capacity(cases.len());
        for (pose, near) in &cases {
            solutions.push(arm.inverse_nearest(pose, near));
        }
        let elapsed = started.elapsed();
        let worst = cases
            .iter()
            .zip(&solutions)
            .filter_map(|((pose, _), s)| s.as_ref().ok().map(|q| (pose, q)))
            .map(|(pose, q)| max_diff(&arm.tcp_pose(q)[..3], &pose[..3]))
            .fold(0.0, f64::max);
        #[allow(clippy::cast_precision_loss)] // nanoseconds far below 2^53
        let per = elapsed.as_nanos() as f64 / cases.len() as f64;
        println!(
            "inverse kinematics {}: {per:.0} ns per solve (all 8 solutions and the nearest), \
             10000 poses, FK(IK(p)) position error <= {worst:.1e} m",
            arm.name
        );
    }
}

fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

fn distance_to_segment(p: &[f64; 6], a: &[f64; 6], b: &[f64; 6]) -> f64 {
    let ab: [f64; 3] = std::array::from_fn(|i| b[i] - a[i]);
    let ap: [f64; 3] = std::array::from_fn(|i| p[i] - a[i]);
    let len2: f64 = ab.iter().map(|x| x * x).sum();
    let t = if len2 == 0.0 {
        0.0
    } else {
        ((0..3).map(|i| ap[i] * ab[i]).sum::<f64>() / len2).clamp(0.0, 1.0)
    };
    (0..3)
        .map(|i| (ap[i] - t * ab[i]).powi(2))
        .sum::<f64>()
        .sqrt()
}
