//! What only the background driver has: handles shared across threads, real-time options.
//! (Its fault scenarios, and the staleness deadline it shares with the async driver, are
//! the suite in `drivers.rs`.)

mod common;

use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::input_echo::{self, INPUTS, PERIOD, ReadBack};
use common::{WAIT, options};
use rtde_core::background::{Background, Receiver, Sender, SpawnOptions};
use rtde_core::{
    Client, DynamicRecipe, Error, OutputRecipe, Recipe, ReconnectPolicy, State, Value,
};
use rtde_sim::{Fault, Sim, Trigger};

// The handles cross threads: checked at compile time.
const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    const fn clone<T: Clone>() {}
    send_sync::<Sender>();
    send_sync::<Receiver>();
    send_sync::<Background>();
    clone::<Sender>();
    clone::<Receiver>();
};

#[test]
fn one_thread_sends_at_500_hz_while_another_receives_every_package() {
    let sim = input_echo::sim();
    let mut client = Client::connect(sim.addr(), options()).unwrap();
    let mut outputs = input_echo::outputs();
    let mut inputs = input_echo::inputs();
    client.setup_outputs(outputs.spec(), 500.0).unwrap();
    let handle = client.setup_inputs(inputs.spec()).unwrap();
    client.start().unwrap();
    let background = client
        .spawn(SpawnOptions::new().name("rtde-test-reader"))
        .unwrap();

    let sender = background.sender();
    let writer = std::thread::spawn(move || {
        let began = Instant::now();
        for k in 1..=INPUTS {
            input_echo::set(&mut inputs, k);
            sender.send(&handle, &inputs).unwrap();
            let next = began + PERIOD * u32::try_from(k).unwrap();
            std::thread::sleep(next.saturating_duration_since(Instant::now()));
        }
    });

    let mut receiver = background.receiver();
    let mut read_back = ReadBack::default();
    let mut seqs = Vec::new();
    loop {
        receiver.recv_into(&mut outputs, Some(WAIT)).unwrap();
        seqs.push(receiver.seq());
        if read_back.record(&outputs) {
            break;
        }
    }
    writer.join().unwrap();

    // The queue's sequence numbers too: no hole.
    assert!(
        seqs.windows(2).all(|w| w[1] == w[0] + 1),
        "a hole in {seqs:?}"
    );
    read_back.check(&sim, &background.stats());
    background.close().unwrap();
}

/// Whoever asks first, the reason the link ended is the receiver's (and `close`'s): a
/// send after the end is `ConnectionLost`, as it is during a reconnection round that
/// fails, and as the async driver's is.
#[test]
fn after_the_link_ends_a_send_is_connection_lost_and_the_receiver_learns_why() {
    let sim = Sim::builder()
        .fault(Fault::CloseMidFrame(Trigger::DataPackage(3)))
        .deterministic()
        .start()
        .unwrap();
    let mut client = Client::connect(sim.addr(), options()).unwrap();
    let mut outputs = input_echo::outputs();
    let mut inputs = input_echo::inputs();
    client.setup_outputs(outputs.spec(), 500.0).unwrap();
    let handle = client.setup_inputs(inputs.spec()).unwrap();
    client.start().unwrap();
    let background = client.spawn(SpawnOptions::new()).unwrap();
    let deadline = Instant::now() + WAIT;
    while !background.is_closed() {
        assert!(
            Instant::now() < deadline,
            "the cut link did not end the driver"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    input_echo::set(&mut inputs, 1);
    let err = background.sender().send(&handle, &inputs).unwrap_err();
    assert!(matches!(err, Error::ConnectionLost), "{err}");
    // The packages before the cut, then why.
    let mut receiver = background.receiver();
    for _ in 0..3 {
        receiver.recv_into(&mut outputs, Some(WAIT)).unwrap();
    }
    let err = receiver.recv(Some(WAIT)).unwrap_err();
    assert!(matches!(err, Error::Closed { mid_frame: true }), "{err}");
    drop(background);
}

/// A send waiting for a reconnection round holds up no other handle (it waits without the
/// connection's lock), and a close during the round's backoff ends the round and the wait
/// at once. (The getters through a round, for both drivers that reconnect on their own:
/// `drivers.rs`.)
#[test]
fn a_send_waiting_for_a_round_holds_up_no_getter_and_close_ends_both() {
    const PROMPT: Duration = Duration::from_millis(200);
    let sim = input_echo::sim();
    let backoff = Duration::from_secs(2);
    let policy = ReconnectPolicy::new()
        .attempts(5)
        .initial_backoff(backoff)
        .max_backoff(backoff);
    let mut client = Client::connect(sim.addr(), options().reconnect(policy)).unwrap();
    let mut outputs = input_echo::outputs();
    let mut inputs = input_echo::inputs();
    client.setup_outputs(outputs.spec(), 500.0).unwrap();
    let handle = client.setup_inputs(inputs.spec()).unwrap();
    client.start().unwrap();
    let background = client.spawn(SpawnOptions::new()).unwrap();
    let mut receiver = background.receiver();
    receiver.recv_into(&mut outputs, Some(WAIT)).unwrap();
    // The controller goes away and stays away: every attempt is refused.
    sim.shutdown().unwrap();
    let deadline = Instant::now() + WAIT;
    while background.state() != State::Reconnecting {
        assert!(Instant::now() < deadline, "reconnecting within {WAIT:?}");
        std::thread::sleep(Duration::from_millis(2));
    }
    let sender = background.sender();
    let (sent, on_sent) = mpsc::channel();
    let writer = std::thread::spawn(move || {
        input_echo::set(&mut inputs, 1);
        let result = sender.send(&handle, &inputs);
        let _ = sent.send(());
        result
    });
    for _ in 0..15 {
        let began = Instant::now();
        let state = background.state();
        let _ = background.stats();
        let _ = background.events();
        let took = began.elapsed();
        assert!(
            took < PROMPT,
            "the getters took {took:?} while a send waited"
        );
        assert_eq!(state, State::Reconnecting);
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(on_sent.try_recv().is_err(), "the send waits for the round");
    let began = Instant::now();
    background.close().unwrap();
    let took = began.elapsed();
    assert!(
        took < backoff / 4,
        "close took {took:?} during a {backoff:?} backoff"
    );
    on_sent.recv_timeout(WAIT).unwrap();
    let err = writer.join().unwrap().unwrap_err();
    assert!(matches!(err, Error::ConnectionLost), "{err}");
}

#[test]
fn latest_returns_the_newest_without_waiting() {
    let sim = Sim::builder().deterministic().start().unwrap();
    let mut client = Client::connect(sim.addr(), options()).unwrap();
    let mut outputs = DynamicRecipe::outputs(["timestamp"]).unwrap();
    client.setup_outputs(outputs.spec(), 500.0).unwrap();
    client.start().unwrap();
    let background = client.spawn(SpawnOptions::new().queue_capacity(4)).unwrap();
    let mut receiver = background.receiver();
    // The in-order queue is tiny and nobody drains it: it overflows, counted.
    std::thread::sleep(Duration::from_millis(100));
    let values = receiver.latest().unwrap().expect("packages arrived");
    outputs.decode_into(values).unwrap();
    let first = receiver.seq();
    assert!(first > 4, "{first}");
    std::thread::sleep(Duration::from_millis(20));
    receiver.latest().unwrap().unwrap();
    assert!(receiver.seq() > first);
    let stats = background.stats();
    assert!(stats.overflowed > 0, "{stats:?}");
    // The queue kept the newest 4, in order.
    receiver.recv(Some(WAIT)).unwrap();
    let a = receiver.seq();
    receiver.recv(Some(WAIT)).unwrap();
    assert_eq!(receiver.seq(), a + 1);
    background.close().unwrap();
}

/// A batch takes what is queued, in order and without waiting, and leaves the rest for
/// the next receive; an ended stream is told once the queue is empty.
#[test]
fn recv_queued_takes_the_backlog_in_order_without_waiting() {
    let sim = Sim::builder().deterministic().start().unwrap();
    let mut client = Client::connect(sim.addr(), options()).unwrap();
    let outputs = DynamicRecipe::outputs(["timestamp"]).unwrap();
    client.setup_outputs(outputs.spec(), 500.0).unwrap();
    client.start().unwrap();
    let background = client.spawn(SpawnOptions::new()).unwrap();
    let mut receiver = background.receiver();
    let stamp = |values: &[u8]| f64::from_be_bytes(values[..8].try_into().unwrap());
    while background.stats().received < 20 {
        std::thread::sleep(Duration::from_millis(5));
    }
    sim.pause_stream();
    std::thread::sleep(Duration::from_millis(200));
    let queued = background.stats().received;
    let mut stamps = Vec::new();
    assert_eq!(
        receiver.recv_queued(5, |v| stamps.push(stamp(v))).unwrap(),
        5
    );
    assert_eq!(receiver.seq(), 5);
    let rest = receiver
        .recv_queued(usize::MAX, |v| stamps.push(stamp(v)))
        .unwrap();
    assert_eq!(5 + rest as u64, queued);
    assert_eq!(receiver.seq(), queued);
    for pair in stamps.windows(2) {
        assert!(((pair[1] - pair[0]) * 500.0 - 1.0).abs() < 1e-6, "{pair:?}");
    }
    // Nothing queued: no wait, nothing taken.
    let started = Instant::now();
    assert_eq!(
        receiver
            .recv_queued(10, |_| panic!("nothing is queued"))
            .unwrap(),
        0
    );
    assert!(started.elapsed() < Duration::from_millis(100));
    drop(sim);
    let ended = (0..500).find_map(|_| {
        std::thread::sleep(Duration::from_millis(10));
        receiver.recv_queued(10, |_| {}).err()
    });
    assert!(ended.is_some(), "the end of the stream was told");
    background.close().ok();
}

/// A receiver that busy-waits near each arrival gets every package in order, as a
/// sleeping one does, and its waits still end: at the timeout when packages stop (the
/// window passes and it sleeps), and at the end of the link.
#[test]
fn a_spinning_receiver_gets_every_package_and_still_times_out() {
    // Silent from tick 1500 (3 s in) for a minute.
    let sim = Sim::builder()
        .deterministic()
        .fault(Fault::SkipTicks((1500..31_500).collect()))
        .start()
        .unwrap();
    let mut client = Client::connect(sim.addr(), options()).unwrap();
    let mut outputs = DynamicRecipe::outputs(["timestamp"]).unwrap();
    client.setup_outputs(outputs.spec(), 500.0).unwrap();
    client.start().unwrap();
    let background = client
        .spawn(SpawnOptions::new().spin_before_arrival(Duration::from_micros(50)))
        .unwrap();
    let mut receiver = background.receiver();
    let mut last: Option<f64> = None;
    for _ in 0..300 {
        receiver.recv_into(&mut outputs, Some(WAIT)).unwrap();
        let Some(Value::Double(t)) = outputs.get("timestamp").cloned() else {
            panic!("no timestamp");
        };
        if let Some(last) = last {
            // 500 Hz: the next tick, none skipped, none twice.
            let ticks = ((t - last) * 500.0_f64).round();
            assert!((ticks - 1.0).abs() < f64::EPSILON, "{last} then {t}");
        }
        last = Some(t);
    }
    let stats = background.stats();
    assert_eq!((stats.skipped, stats.overflowed), (0, 0), "{stats:?}");
    // Packages stop: the wait ends at its timeout, not in the spin. (Drained until a
    // longer quiet than a loaded machine's stall of the simulator, which ended a drain by
    // 50 ms waits early and left a package for the wait below.)
    while receiver.recv(Some(Duration::from_millis(500))).is_ok() {}
    let started = Instant::now();
    let err = receiver.recv(Some(Duration::from_millis(50))).unwrap_err();
    assert!(matches!(err, Error::Timeout { .. }), "{err}");
    assert!(started.elapsed() < Duration::from_secs(2));
    background.close().unwrap();
}

fn started_client(sim: &Sim) -> Client {
    let mut client = Client::connect(sim.addr(), options()).unwrap();
    let recipe = DynamicRecipe::outputs(["timestamp"]).unwrap();
    client.setup_outputs(recipe.spec(), 125.0).unwrap();
    client.start().unwrap();
    client
}

#[test]
fn refused_realtime_options_say_why_and_what_to_grant() {
    let sim = Sim::builder().start().unwrap();
    for (options, says) in [
        (SpawnOptions::new().realtime_priority(0), "from 1 to 99"),
        (SpawnOptions::new().realtime_priority(100), "from 1 to 99"),
        (SpawnOptions::new().cpu_affinity(100_000), "CPU 100000"),
    ] {
        let err = started_client(&sim).spawn(options).unwrap_err();
        assert!(matches!(err, Error::Realtime(_)), "{err}");
        let text = err.to_string();
        assert!(text.contains(says), "{text}");
    }
    // A CPU that exists in the mask but not on this machine.
    let err = started_client(&sim)
        .spawn(SpawnOptions::new().cpu_affinity(1000))
        .unwrap_err();
    assert!(err.to_string().contains("CPU 1000"), "{err}");
}

/// A refused SCHED_FIFO request says what to grant, on any machine: this thread gives up
/// CAP_SYS_NICE (capabilities are per thread on Linux, and the reader thread inherits this
/// thread's) and the soft RLIMIT_RTPRIO drops to 0, so even root is refused.
#[cfg(target_os = "linux")]
#[test]
fn a_refused_priority_says_to_grant_cap_sys_nice() {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};

    let sim = Sim::builder().start().unwrap();
    let client = started_client(&sim);
    let err = std::thread::spawn(move || {
        caps::drop(
            None,
            caps::CapSet::Effective,
            caps::Capability::CAP_SYS_NICE,
        )
        .unwrap();
        let (_, hard) = getrlimit(Resource::RLIMIT_RTPRIO).unwrap();
        setrlimit(Resource::RLIMIT_RTPRIO, 0, hard).unwrap();
        client
            .spawn(SpawnOptions::new().realtime_priority(10))
            .unwrap_err()
    })
    .join()
    .unwrap();
    assert!(matches!(err, Error::Realtime(_)), "{err}");
    let text = err.to_string();
    for says in ["SCHED_FIFO priority 10", "CAP_SYS_NICE", "rtprio"] {
        assert!(text.contains(says), "{says:?} missing from: {text}");
    }
}

/// The effective user id, from /proc (Linux).
fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find(|l| l.starts_with("Uid:"))
            .and_then(|l| l.split_whitespace().nth(2))
            == Some("0")
    })
}

/// (policy, rt priority, allowed CPUs) of this process's thread named `name`.
fn thread_sched(name: &str) -> Option<(u32, u32, String)> {
    for task in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let path = task.path();
        let comm = std::fs::read_to_string(path.join("comm")).ok()?;
        if comm.trim() != name {
            continue;
        }
        let stat = std::fs::read_to_string(path.join("stat")).ok()?;
        // Fields after the command name, which is in parentheses: field 3 is index 0.
        let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
        let rt_priority = fields.get(37)?.parse().ok()?;
        let policy = fields.get(38)?.parse().ok()?;
        let status = std::fs::read_to_string(path.join("status")).ok()?;
        let cpus = status
            .lines()
            .find(|l| l.starts_with("Cpus_allowed_list:"))?
            .split_whitespace()
            .nth(1)?
            .to_string();
        return Some((policy, rt_priority, cpus));
    }
    None
}

#[test]
#[ignore = "needs root: run as root with `-- --ignored` (.ci/run does)"]
fn realtime_options_take_effect_when_run_as_root() {
    assert!(
        is_root(),
        "SCHED_FIFO and CPU affinity can only be shown to take effect as root"
    );
    let sim = Sim::builder().start().unwrap();
    let background = started_client(&sim)
        .spawn(
            SpawnOptions::new()
                .name("rtde-rt-test")
                .realtime_priority(10)
                .cpu_affinity(0),
        )
        .unwrap();
    const SCHED_FIFO: u32 = 1;
    assert_eq!(
        thread_sched("rtde-rt-test"),
        Some((SCHED_FIFO, 10, "0".to_string()))
    );
    let mut receiver = background.receiver();
    receiver.recv(Some(WAIT)).unwrap();
    background.close().unwrap();
}
