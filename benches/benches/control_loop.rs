//! The control loop's response against a bare-socket echo floor, in one run.
//!
//! `cargo bench -p rtde-bench --bench control_loop -- --seconds 60 [--realtime 80]`
//!
//! `--realtime PRIORITY` makes the process SCHED_FIFO at that priority before it starts a
//! thread, so the floor's threads, the loop and the simulator all inherit it, as a control
//! loop on a real-time host runs (the UR Client Library asks for the same). Without it,
//! everything runs at normal priority.
//!
//! Response: from a package's arrival in user space (the read returning) to the command
//! written (the write returning), the same definition for both cases:
//! - floor: a thread writes a package of the loop's output size every 2 ms into a bare
//!   loopback `TcpStream`; this thread reads it with `read_exact` and writes a reply of
//!   the loop's input package size with `write_all`;
//! - loop: `rtde_robot::control::ControlLoop` against the in-process simulator running the
//!   servo program at 500 Hz, with a trivial control function (a constant waypoint).
//!
//! The cases alternate in rounds of ten seconds (the machine is shared and noisy), and the
//! figures are over all rounds, with the per-round p99 ratio's range as the spread.
//! Targets: loop p99 ≤ 1.2 × the floor's p99; no deadline misses.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use rtde_bench::Waypoint;
use rtde_bench::report::arg;
use rtde_core::realtime;
use rtde_core::{Client, ConnectOptions, RtdeRecipe, StaticRecipe};
use rtde_robot::control::ControlLoop;
use rtde_sim::{Motion, Sim};

#[derive(RtdeRecipe)]
struct State {
    timestamp: f64,
    actual_q: [f64; 6],
}

/// The loop's package sizes on the wire: header, recipe id, payload (the kit adds 8 bytes
/// each way).
const OUTPUT_LEN: usize = 3 + 1 + State::PAYLOAD_SIZE + 8;
const INPUT_LEN: usize = 3 + 1 + Waypoint::PAYLOAD_SIZE + 8;
const ROUND: Duration = Duration::from_secs(10);

/// Whether bytes of the next package are already readable: the loop's miss test, on the
/// bare socket.
fn waiting(stream: &mut TcpStream) -> bool {
    let mut byte = [0u8; 1];
    let _ = stream.set_nonblocking(true);
    let there = matches!(stream.peek(&mut byte), Ok(n) if n > 0);
    let _ = stream.set_nonblocking(false);
    there
}

/// Responses of one floor round in microseconds, and the replies that went out after the
/// next package had arrived (the loop's definition of a miss).
fn floor_round(length: Duration) -> (Vec<f64>, u64) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("an address");
    let packages = u32::try_from(length.as_millis() / 2).unwrap_or(u32::MAX);
    let sender = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().expect("accept");
        stream.set_nodelay(true).expect("TCP_NODELAY");
        let mut reader = stream.try_clone().expect("a second handle");
        // The replies are read on their own thread, as a controller does.
        let drain = std::thread::spawn(move || {
            let mut reply = [0u8; INPUT_LEN];
            while reader.read_exact(&mut reply).is_ok() {}
        });
        let start = Instant::now();
        let package = [0u8; OUTPUT_LEN];
        for i in 0..packages {
            let due = start + Duration::from_micros(2_000) * i;
            std::thread::sleep(due.saturating_duration_since(Instant::now()));
            if stream.write_all(&package).is_err() {
                break;
            }
        }
        let _ = stream.shutdown(std::net::Shutdown::Write);
        let _ = drain.join();
    });
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.set_nodelay(true).expect("TCP_NODELAY");
    let (mut package, reply) = ([0u8; OUTPUT_LEN], [0u8; INPUT_LEN]);
    let mut out = Vec::with_capacity(usize::try_from(packages).unwrap_or(0));
    let mut misses = 0;
    while stream.read_exact(&mut package).is_ok() {
        let arrived = Instant::now();
        stream.write_all(&reply).expect("a reply");
        out.push(arrived.elapsed().as_secs_f64() * 1e6);
        misses += u64::from(waiting(&mut stream));
    }
    drop(stream);
    let _ = sender.join();
    (out, misses)
}

/// Responses of one loop round in microseconds, misses, and misses whose next package was
/// already there when the cycle began.
fn loop_round(length: Duration) -> (Vec<f64>, u64, u64) {
    let sim = Sim::builder()
        .servo_program()
        .motion(Motion::still([0.0; 6]))
        .start()
        .expect("a simulator");
    let options = ConnectOptions::new().read_timeout(Some(Duration::from_secs(5)));
    let mut client = Client::connect(sim.addr(), options).expect("connect");
    let mut control = ControlLoop::<State, Waypoint>::setup(&mut client, 500.0).expect("setup");
    client.start().expect("start");
    let cycles = usize::try_from(length.as_millis() / 2).unwrap_or(0);
    let mut out = Vec::with_capacity(cycles);
    for _ in 0..cycles {
        let report = control
            .cycle(&mut client, |_, handshake| {
                handshake.advance();
                Waypoint { q: [0.0; 6] }
            })
            .expect("a cycle");
        out.push(report.response.as_secs_f64() * 1e6);
    }
    let stats = control.stats();
    client.close().expect("close");
    sim.shutdown().expect("shutdown");
    (out, stats.misses, stats.misses_behind)
}

fn quantile(mut v: Vec<f64>, q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    #[allow(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss
    )]
    let i = ((v.len() - 1) as f64 * q).round() as usize;
    v[i]
}

fn main() {
    let seconds = arg("--seconds", 60);
    let scheduling = match u8::try_from(arg("--realtime", 0)) {
        Ok(0) => "normal scheduling".to_string(),
        Ok(priority) => match realtime::set_fifo_priority(priority) {
            Ok(()) => format!("SCHED_FIFO priority {priority}, every thread"),
            Err(e) => {
                eprintln!("--realtime {priority}: {e}");
                std::process::exit(2);
            }
        },
        Err(_) => {
            eprintln!("--realtime takes a priority from 1 to 99");
            std::process::exit(2);
        }
    };
    let rounds = (seconds / ROUND.as_secs()).max(1);
    let length = Duration::from_secs(seconds / rounds);
    println!(
        "control loop vs bare-socket echo at 500 Hz: {rounds} rounds of {length:?} each, alternating \
         ({OUTPUT_LEN}-byte packages in, {INPUT_LEN}-byte commands out), {scheduling}"
    );
    let (mut floor, mut ours) = (Vec::new(), Vec::new());
    let (mut misses, mut behind, mut ratios, mut floor_misses) = (0, 0, Vec::new(), 0);
    for round in 0..rounds {
        let (f, fm) = floor_round(length);
        floor_misses += fm;
        let (l, m, b) = loop_round(length);
        let ratio = quantile(l.clone(), 0.99) / quantile(f.clone(), 0.99);
        println!(
            "  round {}: floor p50 {:.1} p99 {:.1} µs, misses {fm}; loop p50 {:.1} p99 {:.1} µs \
             ({ratio:.2} ×), misses {m} ({b} with the next package already there)",
            round + 1,
            quantile(f.clone(), 0.5),
            quantile(f.clone(), 0.99),
            quantile(l.clone(), 0.5),
            quantile(l.clone(), 0.99),
        );
        ratios.push(ratio);
        floor.extend(f);
        ours.extend(l);
        misses += m;
        behind += b;
    }
    let (fp99, lp99) = (quantile(floor.clone(), 0.99), quantile(ours.clone(), 0.99));
    let ratio = lp99 / fp99;
    ratios.sort_by(f64::total_cmp);
    println!(
        "floor: {} replies, response p50 {:.1} µs, p99 {fp99:.1} µs, max {:.1} µs; \
         replies after the next package: {floor_misses}",
        floor.len(),
        quantile(floor.clone(), 0.5),
        quantile(floor, 1.0)
    );
    println!(
        "loop:  {} cycles, response p50 {:.1} µs, p99 {lp99:.1} µs, max {:.1} µs",
        ours.len(),
        quantile(ours.clone(), 0.5),
        quantile(ours, 1.0)
    );
    println!(
        "p99 loop / floor: {ratio:.2} × (rounds {:.2} to {:.2}); target ≤ 1.2: {}",
        ratios.first().copied().unwrap_or(f64::NAN),
        ratios.last().copied().unwrap_or(f64::NAN),
        if ratio <= 1.2 { "met" } else { "not met" }
    );
    println!(
        "deadline misses: {misses} ({behind} with the next package already there when the cycle \
         began); target 0: {}",
        if misses == 0 { "met" } else { "not met" }
    );
}
