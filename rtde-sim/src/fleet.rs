//! Many simulated controllers in one process, from [`SimBuilder::start_fleet`](crate::SimBuilder::start_fleet).

use std::net::SocketAddr;
use std::sync::Arc;

use crate::clock::Clock;
use crate::sim::{Error, Sim, SimBuilder, random_seed};
use crate::ticker::Ticker;

impl SimBuilder {
    /// Starts a fleet: `robots` simulated controllers in this process, each configured
    /// like this builder, each on its own listener, all streamed by one clock thread.
    ///
    /// With port 0 in [`SimBuilder::bind`] (the default) every robot gets a free port;
    /// with port `p`, robot `i` listens on `p + i`. Robot `i` gets noise seed
    /// `seed + i`, so robots differ unless [`SimBuilder::deterministic`]. All robots
    /// share one simulated clock (they were switched on together): a paced fleet makes
    /// one wake-up per control-loop tick however many robots stream, where separate
    /// [`Sim`]s make one per robot per output period. [`SimBuilder::unpaced`] fleets
    /// stream each connection from its own thread, as an unpaced [`Sim`] does.
    ///
    /// The clock thread writes every robot's packages in turn: a client that stops
    /// reading delays the others by up to the [`SimBuilder::stall_timeout`] once,
    /// and is then dropped.
    ///
    /// ```
    /// use rtde_sim::Sim;
    ///
    /// let fleet = Sim::builder().deterministic().start_fleet(3).unwrap();
    /// assert_eq!(fleet.len(), 3);
    /// let ports: std::collections::HashSet<u16> = fleet.addrs().map(|a| a.port()).collect();
    /// assert_eq!(ports.len(), 3);
    /// fleet.shutdown().unwrap();
    /// ```
    ///
    /// # Errors
    /// As [`SimBuilder::start`]; [`Error::FleetPorts`] when `p + robots - 1` is past
    /// port 65535. Robots already started are stopped again.
    pub fn start_fleet(self, robots: u16) -> Result<Fleet, Error> {
        let seed = self.seed.unwrap_or_else(random_seed);
        let base = self.bind.port();
        if base != 0 && u32::from(base) + u32::from(robots) > 65536 {
            return Err(Error::FleetPorts {
                first: base,
                robots,
            });
        }
        let (_, loop_rate, speed_ppm) = self.checked()?;
        let clock = Clock::new(loop_rate, speed_ppm);
        let ticker = Ticker::start(clock).map_err(Error::Spawn)?;
        let mut sims = Vec::with_capacity(usize::from(robots));
        for i in 0..robots {
            let port = if base == 0 { 0 } else { base + i };
            let bind = SocketAddr::new(self.bind.ip(), port);
            let robot = self.start_robot(
                bind,
                seed.wrapping_add(u64::from(i)),
                Some((clock, Arc::clone(&ticker))),
            )?;
            sims.push(Some(robot));
        }
        Ok(Fleet { sims, seed })
    }
}

/// Simulated robots served from one process, each on its own port, all streamed by one
/// clock thread; from [`SimBuilder::start_fleet`](crate::SimBuilder::start_fleet).
///
/// Dropping the fleet stops every robot; [`Fleet::take`] hands one robot out, to stop
/// it alone (a robot that fails in the middle of a run, say).
///
/// ```
/// use rtde_sim::Sim;
///
/// let mut fleet = Sim::builder().deterministic().start_fleet(2).unwrap();
/// let first = fleet.take(0).unwrap();
/// first.shutdown().unwrap(); // robot 0 is gone, robot 1 still serves
/// assert!(fleet.robot(0).is_none());
/// assert!(fleet.robot(1).is_some());
/// ```
#[derive(Debug)]
pub struct Fleet {
    pub(crate) sims: Vec<Option<Sim>>,
    pub(crate) seed: u64,
}

impl Fleet {
    /// The number of robots the fleet started with.
    #[must_use]
    pub fn len(&self) -> usize {
        self.sims.len()
    }

    /// Whether the fleet has no robots.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.sims.is_empty()
    }

    /// Robot `index`, unless it was taken out or there is no such robot.
    #[must_use]
    pub fn robot(&self, index: usize) -> Option<&Sim> {
        self.sims.get(index).and_then(Option::as_ref)
    }

    /// Takes robot `index` out of the fleet (its clock thread keeps streaming it).
    pub fn take(&mut self, index: usize) -> Option<Sim> {
        self.sims.get_mut(index).and_then(Option::take)
    }

    /// The addresses of the robots still in the fleet, in order.
    pub fn addrs(&self) -> impl Iterator<Item = SocketAddr> + '_ {
        self.sims.iter().flatten().map(Sim::addr)
    }

    /// The noise seed of robot 0; robot `i` has `seed + i`.
    #[must_use]
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Stops every robot still in the fleet.
    ///
    /// # Errors
    /// The first robot whose threads did not stop in time; the others are still stopped.
    pub fn shutdown(self) -> Result<(), Error> {
        let mut first = Ok(());
        for sim in self.sims.into_iter().flatten() {
            let result = sim.shutdown();
            if first.is_ok() {
                first = result;
            }
        }
        first
    }
}
