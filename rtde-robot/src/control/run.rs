//! The loop over the blocking client: receive, decide, send, account.

use std::collections::VecDeque;
use std::marker::PhantomData;
use std::time::{Duration, Instant};

use rtde_core::fields::{Direction, WireType};

use super::ProgramStatus;
use super::layout;
use rtde_core::background::{Receiver, Sender};
use rtde_core::error::Error;
use rtde_core::{Client, InputHandle};
use rtde_core::{
    FromPayload, InputRecipe, PayloadError, Recipe, RecipeSpec, StaticRecipe, ToPayload,
};

/// The waypoint handshake as the user's function sees it in one cycle.
///
/// ```
/// use rtde_robot::control::Handshake;
///
/// let mut h = Handshake::default();
/// assert!(h.advance());             // waypoint 1 is the first
/// assert_eq!(h.current(), 1);
/// assert!(!h.advance());            // the robot has not taken waypoint 1
/// h.acknowledge(1);
/// assert!(h.advance());
/// assert_eq!(h.current(), 2);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Handshake {
    current: i32,
    acked: i32,
}

impl Handshake {
    /// The id of the waypoint being sent (0 before the first).
    #[must_use]
    pub fn current(&self) -> i32 {
        self.current
    }

    /// The id of the last waypoint the robot reported taken.
    #[must_use]
    pub fn acked(&self) -> i32 {
        self.acked
    }

    /// Whether the robot has taken the current waypoint, so that the next may go.
    #[must_use]
    pub fn ready(&self) -> bool {
        self.acked == self.current
    }

    /// Moves on to the next waypoint if the robot has taken the current one; returns
    /// whether it did. When it did, the command returned this cycle is the new waypoint;
    /// otherwise return the current waypoint again.
    pub fn advance(&mut self) -> bool {
        if !self.ready() {
            return false;
        }
        self.current = self.current.wrapping_add(1);
        true
    }

    /// Records the robot's acknowledgement (the kit does this from each package).
    pub fn acknowledge(&mut self, acked: i32) {
        self.acked = acked;
    }
}

/// What happened in one cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CycleReport {
    /// From the package's arrival in user space to the command sent.
    pub response: Duration,
    /// The next package had already arrived when the command went out.
    pub missed: bool,
    /// The next package was already buffered when the cycle began (it arrived bunched
    /// with this one, or the loop was late to receive): a miss this cycle's work did
    /// not cause.
    pub behind: bool,
    /// The program's status in this package.
    pub status: ProgramStatus,
}

/// Counts over the loop's life.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LoopStats {
    /// Cycles run: packages received and answered.
    pub cycles: u64,
    /// Cycles whose command went out after the next package had arrived.
    pub misses: u64,
    /// Of the misses, those whose next package was already there when the cycle began:
    /// packages delivered bunched (a controller, or a simulator on a busy machine, that
    /// woke late), or a loop late to receive.
    pub misses_behind: u64,
    /// The longest response.
    pub max_response: Duration,
    /// Events dropped because the queue was full (see [`ControlLoop::events`]).
    pub events_dropped: u64,
}

/// Something the loop reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LoopEvent {
    /// A cycle's command went out after the next package had arrived.
    DeadlineMiss {
        /// The cycle (0-based).
        cycle: u64,
        /// Its response time.
        response: Duration,
        /// The next package was already there when the cycle began.
        behind: bool,
    },
    /// The robot program's status changed.
    Status {
        /// The cycle it was first seen in.
        cycle: u64,
        /// The new status.
        status: ProgramStatus,
    },
}

/// Events kept until read; further ones are counted in [`LoopStats::events_dropped`].
const EVENT_CAPACITY: usize = 256;

/// The composed recipes: the user's fields, then the kit's registers.
#[derive(Debug)]
struct Composed {
    names: Vec<&'static str>,
    types: Vec<WireType>,
    direction: Direction,
}

impl Composed {
    fn new(spec: RecipeSpec<'_>, extra: [&'static str; 2]) -> Self {
        let mut names = spec.names().to_vec();
        names.extend(extra);
        let mut types = spec.types().to_vec();
        types.extend([WireType::Int32; 2]);
        Composed {
            names,
            types,
            direction: spec.direction(),
        }
    }

    fn spec(&self) -> RecipeSpec<'_> {
        RecipeSpec::new(self.direction, &self.names, &self.types)
    }
}

/// The command package: the user's command, then watchdog and waypoint id.
struct Outgoing<'a, C> {
    spec: &'a Composed,
    command: &'a C,
    watchdog: i32,
    waypoint: i32,
}

impl<C: ToPayload> Recipe for Outgoing<'_, C> {
    fn spec(&self) -> RecipeSpec<'_> {
        self.spec.spec()
    }
}

impl<C: ToPayload> InputRecipe for Outgoing<'_, C> {
    fn encode_into(&self, out: &mut [u8]) -> Result<usize, PayloadError> {
        let payload = self.command.to_payload();
        let payload = payload.as_ref();
        let size = payload.len() + 8;
        let Some(out) = out.get_mut(..size) else {
            return Err(PayloadError::BufferTooSmall {
                needed: size,
                available: out.len(),
            });
        };
        let (user, kit) = out.split_at_mut(payload.len());
        user.copy_from_slice(payload);
        kit[..4].copy_from_slice(&self.watchdog.to_be_bytes());
        kit[4..].copy_from_slice(&self.waypoint.to_be_bytes());
        Ok(size)
    }
}

/// A control loop over a [`Client`]: output recipe `S` (the state the user's function
/// reads) and input recipe `C` (the command it returns), each extended by the kit's
/// registers of [`layout`].
///
/// ```
/// use rtde_robot::control::ControlLoop;
/// use rtde_core::RtdeRecipe;
///
/// #[derive(RtdeRecipe)]
/// struct State {
///     actual_q: [f64; 6],
/// }
///
/// #[derive(RtdeRecipe)]
/// #[rtde(input)]
/// struct Target {
///     #[rtde(registers = "input_double_register_24..=29")]
///     q: [f64; 6],
/// }
///
/// fn follow(client: &mut rtde_core::Client) -> Result<(), rtde_core::Error> {
///     let mut control = ControlLoop::<State, Target>::setup(client, 500.0)?;
///     client.start()?;
///     let mut q = [0.0; 6];
///     for _ in 0..500 {
///         control.cycle(client, |state, handshake| {
///             if handshake.advance() {
///                 q[0] += 0.001; // the next waypoint
///             }
///             let _ = state.actual_q;
///             Target { q }
///         })?;
///     }
///     assert_eq!(control.stats().misses, 0);
///     Ok(())
/// }
/// ```
#[derive(Debug)]
pub struct ControlLoop<S, C> {
    outputs: Composed,
    inputs: Composed,
    input: InputHandle,
    state_size: usize,
    watchdog: i32,
    handshake: Handshake,
    status: Option<ProgramStatus>,
    stats: LoopStats,
    events: VecDeque<LoopEvent>,
    types: PhantomData<fn(&S) -> C>,
}

impl<S, C> ControlLoop<S, C>
where
    S: FromPayload + StaticRecipe,
    C: ToPayload + StaticRecipe,
{
    /// Sets up the output recipe (`S`'s fields, then the acknowledgement and status
    /// registers) at `frequency`, and the input recipe (`C`'s fields, then the watchdog
    /// and waypoint registers). Start the client afterwards.
    ///
    /// # Errors
    /// As [`Client::setup_outputs`] and [`Client::setup_inputs`]; a recipe that names a
    /// register of the kit itself is refused as a duplicate.
    pub fn setup(client: &mut Client, frequency: f64) -> Result<Self, Error> {
        let outputs = Composed::new(S::SPEC, layout::OUTPUT_NAMES);
        let inputs = Composed::new(C::SPEC, layout::INPUT_NAMES);
        client.setup_outputs(outputs.spec(), frequency)?;
        let input = client.setup_inputs(inputs.spec())?;
        Ok(ControlLoop {
            outputs,
            inputs,
            input,
            state_size: S::PAYLOAD_SIZE,
            watchdog: 0,
            handshake: Handshake::default(),
            status: None,
            stats: LoopStats::default(),
            events: VecDeque::new(),
            types: PhantomData,
        })
    }

    /// One cycle: receives the next package, decodes `S`, calls `f` with it and the
    /// handshake, and sends the command it returns with the next watchdog value and the
    /// current waypoint id, then checks whether the next package had already arrived.
    ///
    /// # Errors
    /// A client error (link, timeout); a payload `S` cannot decode.
    pub fn cycle<F>(&mut self, client: &mut Client, f: F) -> Result<CycleReport, Error>
    where
        F: FnOnce(&S, &mut Handshake) -> C,
    {
        let payload = client.recv()?;
        let arrived = Instant::now();
        let (state, status) = self.decode(payload)?;
        let behind = client.package_buffered();
        let command = f(&state, &mut self.handshake);
        self.watchdog = self.watchdog.wrapping_add(1);
        client.send(&self.input, &self.outgoing(&command))?;
        let response = arrived.elapsed();
        let missed = client.package_waiting();
        Ok(self.account(response, missed, behind, status))
    }

    /// One cycle over the background driver: as [`ControlLoop::cycle`], with the packages
    /// from `receiver`'s in-order queue (waiting up to `timeout`) and the command sent
    /// through `sender`. The response counts from the reader thread's read of the package
    /// ([`Receiver::received_at`]), so the hand-off between the threads is in it.
    ///
    /// Set the loop up on the [`Client`] before [`Client::spawn`]; the input handle stays
    /// valid on the driver.
    ///
    /// # Errors
    /// As [`Receiver::recv`] and [`Sender::send`]; a payload `S` cannot decode.
    pub fn cycle_background<F>(
        &mut self,
        receiver: &mut Receiver,
        sender: &Sender,
        timeout: Option<Duration>,
        f: F,
    ) -> Result<CycleReport, Error>
    where
        F: FnOnce(&S, &mut Handshake) -> C,
    {
        let payload = receiver.recv(timeout)?;
        let (state, status) = self.decode(payload)?;
        let arrived = receiver.received_at().unwrap_or_else(Instant::now);
        let behind = receiver.pending();
        let command = f(&state, &mut self.handshake);
        self.watchdog = self.watchdog.wrapping_add(1);
        sender.send(&self.input, &self.outgoing(&command))?;
        let response = arrived.elapsed();
        let missed = receiver.pending();
        Ok(self.account(response, missed, behind, status))
    }

    /// The user's state and the program's status from a package; records the
    /// acknowledgement.
    fn decode(&mut self, payload: &[u8]) -> Result<(S, ProgramStatus), Error> {
        let (state, kit) = payload
            .split_at_checked(self.state_size)
            .ok_or(Error::Payload(PayloadError::WrongLength {
                expected: self.state_size + 8,
                found: payload.len(),
            }))?;
        let state = S::from_payload(state).map_err(Error::Payload)?;
        let register = |at: usize| {
            kit.get(at..at + 4)
                .and_then(|b| b.try_into().ok())
                .map_or(0, i32::from_be_bytes)
        };
        let (acked, status) = (register(0), ProgramStatus::from_register(register(4)));
        self.handshake.acknowledge(acked);
        Ok((state, status))
    }

    fn outgoing<'a>(&'a self, command: &'a C) -> Outgoing<'a, C> {
        Outgoing {
            spec: &self.inputs,
            command,
            watchdog: self.watchdog,
            waypoint: self.handshake.current(),
        }
    }

    /// Counts a finished cycle.
    fn account(
        &mut self,
        response: Duration,
        missed: bool,
        behind: bool,
        status: ProgramStatus,
    ) -> CycleReport {
        let cycle = self.stats.cycles;
        self.stats.cycles += 1;
        self.stats.max_response = self.stats.max_response.max(response);
        if missed {
            self.stats.misses += 1;
            self.stats.misses_behind += u64::from(behind);
            self.push(LoopEvent::DeadlineMiss {
                cycle,
                response,
                behind,
            });
        }
        if self.status != Some(status) {
            self.status = Some(status);
            self.push(LoopEvent::Status { cycle, status });
        }
        CycleReport {
            response,
            missed,
            behind,
            status,
        }
    }

    fn push(&mut self, event: LoopEvent) {
        if self.events.len() == EVENT_CAPACITY {
            self.events.pop_front();
            self.stats.events_dropped += 1;
        }
        self.events.push_back(event);
    }

    /// The counts so far.
    #[must_use]
    pub fn stats(&self) -> LoopStats {
        self.stats
    }

    /// The events since the last call, oldest first (the last 256 are kept; older ones
    /// are counted in [`LoopStats::events_dropped`]).
    pub fn events(&mut self) -> impl Iterator<Item = LoopEvent> + '_ {
        self.events.drain(..)
    }

    /// The handshake's state after the last cycle.
    #[must_use]
    pub fn handshake(&self) -> Handshake {
        self.handshake
    }

    /// The robot program's status in the last package.
    #[must_use]
    pub fn status(&self) -> Option<ProgramStatus> {
        self.status
    }

    /// The output recipe set up: `S`'s fields, then the kit's registers.
    #[must_use]
    pub fn output_spec(&self) -> RecipeSpec<'_> {
        self.outputs.spec()
    }

    /// The input recipe set up: `C`'s fields, then the kit's registers.
    #[must_use]
    pub fn input_spec(&self) -> RecipeSpec<'_> {
        self.inputs.spec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handshake_moves_on_only_after_the_robot() {
        let mut h = Handshake::default();
        assert!(h.ready());
        assert!(h.advance());
        for _ in 0..3 {
            assert!(!h.advance());
        }
        h.acknowledge(1);
        assert!(h.advance());
        assert_eq!((h.current(), h.acked()), (2, 1));
    }
}
