//! The async driver against rtde-sim: one connection shared by tasks, as the background
//! driver's threads share one in `background.rs`. (Its fault scenarios are the shared
//! suite in `drivers.rs`.)

mod common;

use common::input_echo::{self, INPUTS, PERIOD, ReadBack};
use common::{WAIT, options};
use rtde_core::Recipe;
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
