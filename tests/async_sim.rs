//! The async driver against rtde-sim: one connection shared by tasks, as the background
//! driver's threads share one in `background.rs`. (Its fault scenarios are the shared
//! suite in `drivers.rs`.)

mod common;

use std::sync::{Mutex, PoisonError, mpsc};

use common::input_echo::{self, INPUTS, PERIOD, ReadBack};
use common::{WAIT, options};
use rtde_core::fields::Field;
use rtde_core::tokio::StreamExt;
use rtde_core::{Recipe, RtdeRecipe, StaticRecipe, Value};
use rtde_sim::{IoState, OutputSource, SHUTDOWN_TIMEOUT, Sample, Sim, Tick};
use tokio::sync::oneshot;
use tokio::time::{MissedTickBehavior, timeout};

#[test]
fn one_task_sends_at_500_hz_while_another_receives_every_package() {
    let sim = input_echo::sim();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let (client, connection) = rtde_core::tokio::connect(sim.addr(), options())
            .await
            .unwrap();
        let task = tokio::spawn(connection);
        let mut outputs = input_echo::outputs();
        let mut inputs = input_echo::inputs();
        client.setup_outputs(outputs.spec(), 500.0).await.unwrap();
        let handle = client.setup_inputs(inputs.spec()).await.unwrap();
        let mut packages = client.packages(1024).unwrap();
        client.start().await.unwrap();

        let sender = {
            let client = client.clone();
            tokio::spawn(async move {
                let mut period = tokio::time::interval(PERIOD);
                // Late ticks are made up, not dropped: every input goes out.
                period.set_missed_tick_behavior(MissedTickBehavior::Burst);
                for k in 1..=INPUTS {
                    period.tick().await;
                    input_echo::set(&mut inputs, k);
                    client.send(&handle, &inputs).await.unwrap();
                }
            })
        };
        let receiver = tokio::spawn(async move {
            let mut read_back = ReadBack::default();
            loop {
                timeout(WAIT, packages.recv_into(&mut outputs))
                    .await
                    .expect("a package within the wait")
                    .unwrap();
                if read_back.record(&outputs) {
                    break (read_back, packages);
                }
            }
        });
        timeout(WAIT * 4, sender).await.unwrap().unwrap();
        let (read_back, packages) = timeout(WAIT * 4, receiver).await.unwrap().unwrap();
        read_back.check(&sim, &client.stats());
        timeout(WAIT, client.close()).await.unwrap().unwrap();
        drop(packages);
        timeout(WAIT, task).await.unwrap().unwrap().unwrap();
    });
}

/// A source that a task of the runtime feeds: its first sample waits until the task has
/// run (bounded, so that its thread ends whatever happens).
#[derive(Debug)]
struct FedByATask {
    /// Told when the first sample begins to wait.
    waiting: Mutex<Option<oneshot::Sender<()>>>,
    fed: Mutex<mpsc::Receiver<()>>,
}

impl OutputSource for FedByATask {
    fn sample(&self, tick: Tick, _: &[&'static Field], _: &IoState, out: &mut [Value]) -> Sample {
        let waiting = self
            .waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(waiting) = waiting {
            let _ = waiting.send(());
            let fed = self.fed.lock().unwrap_or_else(PoisonError::into_inner);
            let _ = fed.recv_timeout(SHUTDOWN_TIMEOUT * 2);
        }
        out.fill(Value::Double(tick.seconds()));
        Sample::Send
    }
}

#[derive(RtdeRecipe)]
struct Stamp {
    timestamp: f64,
}

/// `#[tokio::test]` runs on a current-thread runtime: a shutdown that blocked its one
/// worker would keep the feeding task from running until the shutdown timed out.
#[tokio::test]
async fn shutdown_async_lets_the_runtime_run_what_the_simulator_waits_for() {
    let (waiting, sampling) = oneshot::channel();
    let (feed, fed) = mpsc::channel();
    let sim = Sim::builder()
        .source(FedByATask {
            waiting: Mutex::new(Some(waiting)),
            fed: Mutex::new(fed),
        })
        .start()
        .unwrap();
    let (client, connection) = rtde_core::tokio::connect(sim.addr(), options())
        .await
        .unwrap();
    let task = tokio::spawn(connection);
    client.setup_outputs(Stamp::SPEC, 125.0).await.unwrap();
    let mut stamps = client.packages(16).unwrap().stream::<Stamp>();
    client.start().await.unwrap();
    // The simulator's thread now waits in the source, for the task below.
    timeout(WAIT, sampling).await.unwrap().unwrap();
    tokio::spawn(async move { feed.send(()) });
    timeout(WAIT, sim.shutdown_async())
        .await
        .expect("shut down within the wait")
        .expect("every thread of the simulator stopped");

    // The stream ends with the link.
    let mut items = 0;
    while let Some(item) = timeout(WAIT, stamps.next()).await.expect("the stream ends") {
        items += 1;
        assert!(items <= 2, "at most the fed package, then the end");
        if let Ok(stamp) = item {
            assert!(stamp.timestamp >= 0.0);
        }
    }
    let _ = timeout(WAIT, task).await.expect("the connection ended");
}
