//! The async driver against rtde-sim: one connection shared by tasks, as the background
//! driver's threads share one in `background.rs`. (Its fault scenarios are the shared
//! suite in `drivers.rs`.)

mod common;

use std::time::Duration;

use common::{WAIT, options, timestamp};
use rtde_core::{DynamicRecipe, Recipe, Value};
use rtde_sim::Sim;
use tokio::time::{MissedTickBehavior, timeout};

fn int_of(recipe: &DynamicRecipe, name: &str) -> i32 {
    match recipe.get(name) {
        Some(Value::Int32(v)) => *v,
        other => panic!("{name}: {other:?}"),
    }
}

#[test]
fn one_task_sends_at_500_hz_while_another_receives_every_package() {
    const N: i32 = 500; // one second of inputs
    let sim = Sim::builder()
        .controller_version("5.21.0")
        .deterministic()
        .start()
        .unwrap();
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
        let mut outputs = DynamicRecipe::outputs(["timestamp", "input_int_register_24"]).unwrap();
        let mut inputs = DynamicRecipe::inputs(["input_int_register_24"]).unwrap();
        client.setup_outputs(outputs.spec(), 500.0).await.unwrap();
        let handle = client.setup_inputs(inputs.spec()).await.unwrap();
        let mut packages = client.packages(1024).unwrap();
        client.start().await.unwrap();

        let sender = {
            let client = client.clone();
            tokio::spawn(async move {
                let mut period = tokio::time::interval(Duration::from_millis(2));
                // Late ticks are made up, not dropped: every input goes out.
                period.set_missed_tick_behavior(MissedTickBehavior::Burst);
                for k in 1..=N {
                    period.tick().await;
                    inputs
                        .set("input_int_register_24", Value::Int32(k))
                        .unwrap();
                    client.send(&handle, &inputs).await.unwrap();
                }
            })
        };
        let receiver = tokio::spawn(async move {
            let (mut seen, mut times) = (Vec::new(), Vec::new());
            while seen.last() != Some(&N) {
                timeout(WAIT, packages.recv_into(&mut outputs))
                    .await
                    .expect("a package within the wait")
                    .unwrap();
                times.push(timestamp(&outputs));
                seen.push(int_of(&outputs, "input_int_register_24"));
            }
            (seen, times, packages)
        });
        timeout(WAIT * 4, sender).await.unwrap().unwrap();
        let (seen, times, packages) = timeout(WAIT * 4, receiver).await.unwrap().unwrap();

        // Every package, in order, nothing lost on the way.
        assert!(times.windows(2).all(|w| w[0] < w[1]), "out of order");
        let stats = client.stats();
        assert_eq!(
            (stats.skipped, stats.lost, stats.overflowed, stats.discarded),
            (0, 0, 0, 0),
            "{stats:?}"
        );
        // Every input reached the controller and was applied, in order: the simulator
        // counted each package, the read-back never goes back, and it ends with the last.
        // (Two inputs within one 2 ms control tick leave only the later one to read back,
        // as on a controller, so the count is taken at the simulator, not from the
        // outputs.)
        assert_eq!(
            sim.stats().input_packages_applied,
            u64::try_from(N).unwrap(),
            "input packages the simulator applied"
        );
        assert!(seen.windows(2).all(|w| w[0] <= w[1]), "{seen:?}");
        assert_eq!(seen.last(), Some(&N));
        timeout(WAIT, client.close()).await.unwrap().unwrap();
        drop(packages);
        timeout(WAIT, task).await.unwrap().unwrap().unwrap();
    });
}
