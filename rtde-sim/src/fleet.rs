//! Many simulated controllers in one process, from [`SimBuilder::start_fleet`](crate::SimBuilder::start_fleet).

use std::net::SocketAddr;

use crate::sim::{Error, Sim};

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
