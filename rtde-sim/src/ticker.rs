//! One clock thread for a fleet of simulated controllers: it wakes once per control-loop
//! tick and streams every connection that has a package due, so a hundred robots cost a
//! hundred writes per tick but one wake-up, not a hundred.

use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::thread;
use std::time::Instant;

use crate::clock::Clock;

/// What the clock thread drives: a connection's output side.
pub(crate) trait Ticked: Send {
    /// Sends what has come due.
    fn on_tick(&mut self);
}

/// The shared clock thread's registry. The thread runs while some [`Arc<Ticker>`] is
/// held (by the fleet or one of its simulators) and stops by itself after the last goes.
#[derive(Default)]
pub(crate) struct Ticker {
    connections: Mutex<Vec<Weak<Mutex<dyn Ticked>>>>,
}

impl std::fmt::Debug for Ticker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ticker").finish_non_exhaustive()
    }
}

impl Ticker {
    /// Starts the clock thread, ticking on `clock`.
    pub(crate) fn start(clock: Clock) -> std::io::Result<Arc<Ticker>> {
        let ticker = Arc::new(Ticker::default());
        let weak = Arc::downgrade(&ticker);
        thread::Builder::new()
            .name("rtde-sim-clock".into())
            .spawn(move || run(&weak, clock))?;
        Ok(ticker)
    }

    /// Adds a connection to be streamed on every tick until it ends or is dropped.
    pub(crate) fn register(&self, connection: Weak<Mutex<dyn Ticked>>) {
        self.connections
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(connection);
    }
}

/// The clock thread: sleeps to the next tick, streams every live connection, repeats.
fn run(ticker: &Weak<Ticker>, clock: Clock) {
    let mut next = clock.tick_at(Instant::now()).saturating_add(1);
    let mut live: Vec<Arc<Mutex<dyn Ticked>>> = Vec::new();
    loop {
        let at = clock.instant_of(next);
        let now = Instant::now();
        if at > now {
            thread::sleep(at - now);
        }
        let Some(ticker) = ticker.upgrade() else {
            return;
        };
        {
            let mut connections = ticker
                .connections
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            connections.retain(|weak| match weak.upgrade() {
                Some(c) => {
                    live.push(c);
                    true
                }
                None => false,
            });
        }
        drop(ticker);
        for connection in live.drain(..) {
            // A connection that panicked while locked is ended by its own thread.
            connection
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .on_tick();
        }
        // Woken late (a busy machine): skip to the tick after now; each connection
        // catches up on the packages it missed.
        next = clock.tick_at(Instant::now()).max(next).saturating_add(1);
    }
}
