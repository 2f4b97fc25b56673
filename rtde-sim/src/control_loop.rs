//! The controller's own control loop: a controller runs its program, its watchdog and its
//! robot on its clock whoever is connected. Without it, the program and the arm would
//! advance only while some RTDE client streams (each package's tick runs them), and a
//! client that died mid-move would leave the arm where it was until another connected.

use std::sync::Arc;
use std::sync::mpsc::Sender;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::clock::Clock;
use crate::controller::Shared;
use crate::source::Tick;

/// Ticks run per wake-up: fewer than the catch-up that counts as the simulator running
/// late (`LATE_TICKS`, 10), so each one counts against a program's watchdog, and few
/// enough wake-ups a second (125 on e-Series, 31 on CB3) for a test machine that runs
/// dozens of simulators.
const STRIDE: u64 = 4;

/// How far the loop trails the clock. A streaming RTDE connection runs each tick it
/// samples itself, on time; the loop catches up only with ticks nobody sampled (no client,
/// or one that died), so a package never carries a program state from after its own tick.
const TRAIL: Duration = Duration::from_millis(10);

/// Starts the loop on `clock`; it ends when the simulator shuts down, and drops `alive`
/// (the simulator's count of its threads) then.
pub(crate) fn spawn(
    shared: Arc<Shared>,
    clock: Clock,
    alive: Sender<()>,
) -> std::io::Result<JoinHandle<()>> {
    thread::Builder::new()
        .name("rtde-sim-control-loop".into())
        .spawn(move || {
            run(&shared, clock);
            drop(alive);
        })
}

fn run(shared: &Shared, clock: Clock) {
    let rate = shared.config.loop_rate;
    let mut next = clock.tick_at(Instant::now()).saturating_add(STRIDE);
    while !shared.is_shutting_down() {
        let at = clock.instant_of(next);
        let now = Instant::now();
        if at > now {
            // Bounded, so that a slowed clock (`SimBuilder::speed`) still sees a shutdown.
            thread::sleep((at - now).min(Duration::from_millis(50)));
            continue;
        }
        let tick = clock.tick_at(now).saturating_sub(clock.ticks_in(TRAIL));
        shared.controller().tick(Tick::new(tick, rate));
        next = tick.max(next).saturating_add(STRIDE);
    }
}
