//! What the workspace's tests and benchmarks share, in one crate that each of them depends
//! on, rather than files one crate's tests include from another's by path:
//!
//! - [`scripted`]: a fake controller that plays a script of expected client packages and
//!   canned replies, for the client and driver tests;
//! - [`counting_allocator`]: a counting global allocator, for the zero-allocation test and
//!   the drivers bench (the one place of `unsafe` code in the workspace);
//! - [`mosquitto`]: a real Mosquitto of the test's own on a free loopback port, for the
//!   bridge's tests and the MQTT bench;
//! - [`nats`]: a real 3-node NATS cluster (JetStream, MQTT, sessions replicated 3 ways)
//!   on loopback ports, for the bridge's failover tests and bench;
//! - [`foxglove`]: a Foxglove WebSocket protocol client, as a viewer speaks it, for the
//!   live view's test and benchmark;
//! - [`foxglove_js`]: Foxglove's own TypeScript libraries, run by node, for the interop
//!   tests of the live view and the MCAP files;
//! - `robots` (feature `robots`): the motion API's blocking and tokio drivers behind one
//!   trait, so that a scenario is written once and run against both;
//! - [`sim_faults`]: one observable effect per fault flag of the simulator's command line,
//!   for the tests of both binaries that serve it (`rtde-sim` and `rtde sim`).
//!
//! Not published: nothing here is an API of rtde.

#[allow(unsafe_code)] // a global allocator implements an unsafe trait
pub mod counting_allocator;
pub mod foxglove;
pub mod foxglove_js;
pub mod mosquitto;
pub mod nats;
mod process;
#[cfg(feature = "robots")]
pub mod robots;
pub mod scripted;
pub mod sim_faults;
