//! The writes over the blocking client: one input recipe per group, set up before start.

use std::ops::RangeInclusive;

use crate::blocking::{Client, InputHandle};
use crate::error::Error;
use crate::writer::InputSink;
use crate::writer::write::{AnalogDomain, IoError, IoGroup, IoWrite};

/// Which groups an [`IoWriter`] sets up: each is one input recipe on the controller, and
/// a field another client or a fieldbus adapter holds makes its setup fail (`IN_USE`), so
/// ask only for what the application writes.
///
/// ```
/// use rtde_core::writer::{IoConfig, IoGroup};
///
/// let config = IoConfig::new().speed_slider().int_registers(24..=25);
/// assert_eq!(config.groups(), [IoGroup::SpeedSlider, IoGroup::IntRegister(24), IoGroup::IntRegister(25)]);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IoConfig {
    groups: Vec<IoGroup>,
}

impl IoConfig {
    /// No groups.
    #[must_use]
    pub fn new() -> Self {
        IoConfig::default()
    }

    /// Every standard input but the registers: digital (standard, configurable, tool) and
    /// analog outputs, and the speed slider.
    #[must_use]
    pub fn standard() -> Self {
        IoConfig {
            groups: IoGroup::STANDARD.to_vec(),
        }
    }

    fn with(mut self, groups: impl IntoIterator<Item = IoGroup>) -> Self {
        for g in groups {
            if !self.groups.contains(&g) {
                self.groups.push(g);
            }
        }
        self
    }

    /// The standard, configurable and tool digital outputs.
    #[must_use]
    pub fn digital_outputs(self) -> Self {
        self.with(IoGroup::STANDARD[..3].iter().copied())
    }

    /// The standard analog outputs, with and without their domain.
    #[must_use]
    pub fn analog_outputs(self) -> Self {
        self.with([IoGroup::AnalogOutputs, IoGroup::AnalogOutputsKeepDomain])
    }

    /// The speed slider.
    #[must_use]
    pub fn speed_slider(self) -> Self {
        self.with([IoGroup::SpeedSlider])
    }

    /// `external_force_torque`.
    #[must_use]
    pub fn external_force_torque(self) -> Self {
        self.with([IoGroup::ExternalForceTorque])
    }

    /// `input_int_register_N` for N in `indices` (24..=47; others fail at setup).
    #[must_use]
    pub fn int_registers(self, indices: RangeInclusive<u8>) -> Self {
        self.with(indices.map(IoGroup::IntRegister))
    }

    /// `input_double_register_N` for N in `indices` (24..=47; others fail at setup).
    #[must_use]
    pub fn double_registers(self, indices: RangeInclusive<u8>) -> Self {
        self.with(indices.map(IoGroup::DoubleRegister))
    }

    /// `input_bit_register_N` for N in `indices` (64..=127; others fail at setup).
    #[must_use]
    pub fn bit_registers(self, indices: RangeInclusive<u8>) -> Self {
        self.with(indices.map(IoGroup::BitRegister))
    }

    /// The groups, in the order they are set up.
    #[must_use]
    pub fn groups(&self) -> &[IoGroup] {
        &self.groups
    }

    /// Each group's write with nothing in it: the recipe every driver sets up.
    pub(super) fn empty_writes(&self) -> Result<Vec<IoWrite>, IoError> {
        self.groups.iter().map(|g| g.empty_write()).collect()
    }
}

/// Why a write failed: it could not be built (nothing sent), or the client failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// The write is not one the controller can take; nothing was sent.
    #[error(transparent)]
    Io(#[from] IoError),
    /// The group was not in the [`IoConfig`] the writer was set up with; nothing was sent.
    #[error("the writer has no recipe for {0}; add it to the `IoConfig` it is set up with")]
    NotSetUp(IoGroup),
    /// Setting up or sending failed.
    #[error(transparent)]
    Client(#[from] Error),
}

/// Typed writes over a [`Client`]: each group of [`IoConfig`] is an input recipe of its
/// own, and each call sends one package through its group's recipe with the masks set to
/// what it changes, so nothing else on the controller moves.
///
/// Set up before [`Client::start`] (the controller takes setups only while paused), write
/// after, through the [`Client`] or, once it is spawned, a background [`Sender`](crate::background::Sender)
/// (any [`InputSink`]). The handles survive reconnection, as [`Client::send`]'s do. Over
/// the async driver (feature `tokio`), `IoWriter::setup_async` sets the groups up and
/// `IoWriter::send_async` sends an [`IoWrite`].
#[derive(Debug)]
pub struct IoWriter {
    /// Each group's input recipe, in the order they were set up (by any driver).
    pub(super) handles: Vec<(IoGroup, InputHandle)>,
}

impl IoWriter {
    /// Sets up one input recipe per group of `config`.
    ///
    /// # Errors
    /// [`WriteError::Io`] for a register outside the external range (before anything is
    /// sent); [`WriteError::Client`] when the controller refuses a recipe (a field in use
    /// by another client or a fieldbus adapter, say) or the link fails.
    pub fn setup(client: &mut Client, config: &IoConfig) -> Result<IoWriter, WriteError> {
        let writes = config.empty_writes()?;
        let mut handles = Vec::with_capacity(writes.len());
        for w in &writes {
            handles.push((w.group(), client.setup_inputs(crate::Recipe::spec(w))?));
        }
        Ok(IoWriter { handles })
    }

    /// The handle of a group's recipe, for sending [`IoWrite`]s with [`Client::send`].
    #[must_use]
    pub fn handle(&self, group: IoGroup) -> Option<&InputHandle> {
        self.handles
            .iter()
            .find(|(g, _)| *g == group)
            .map(|(_, h)| h)
    }

    /// Sends one write through its group's recipe.
    ///
    /// # Errors
    /// [`WriteError::NotSetUp`] for a group this writer lacks; a client error.
    pub fn send<S: InputSink + ?Sized>(
        &self,
        client: &mut S,
        write: &IoWrite,
    ) -> Result<(), WriteError> {
        client.send_input(self.handle_of(write)?, write)?;
        Ok(())
    }

    /// The handle `write` goes through, or why there is none.
    pub(super) fn handle_of(&self, write: &IoWrite) -> Result<&InputHandle, WriteError> {
        self.handle(write.group())
            .ok_or(WriteError::NotSetUp(write.group()))
    }
}

/// Writes each typed write of [`IoWriter`]: it builds the [`IoWrite`] of the same name (where
/// the masks are decided) and sends it with [`IoWriter::send`].
macro_rules! typed_writes {
    ($($(#[$doc:meta])* fn $name:ident($($arg:ident: $ty:ty),*);)*) => {
        impl IoWriter {$(
            $(#[$doc])*
            pub fn $name<S: InputSink + ?Sized>(
                &self,
                client: &mut S,
                $($arg: $ty),*
            ) -> Result<(), WriteError> {
                self.send(client, &IoWrite::$name($($arg),*)?)
            }
        )*}
    };
}

typed_writes! {
    /// Standard digital output `index` (0..=7) on or off; the other outputs keep theirs.
    ///
    /// # Errors
    /// As [`IoWriter::send`], and [`IoError::NoSuchOutput`].
    fn standard_digital_output(index: u8, on: bool);

    /// Configurable digital output `index` (0..=7) on or off.
    ///
    /// # Errors
    /// As [`IoWriter::standard_digital_output`].
    fn configurable_digital_output(index: u8, on: bool);

    /// Tool digital output `index` (0 or 1) on or off.
    ///
    /// # Errors
    /// As [`IoWriter::standard_digital_output`].
    fn tool_digital_output(index: u8, on: bool);

    /// Standard analog output `index` (0 or 1) at `ratio` (0..=1) of its range in `domain`.
    ///
    /// # Errors
    /// As [`IoWriter::send`], [`IoError::NoSuchOutput`] and [`IoError::OutOfRange`].
    fn analog_output(index: u8, domain: AnalogDomain, ratio: f64);

    /// Standard analog output `index` at `ratio` in the domain it already has.
    ///
    /// # Errors
    /// As [`IoWriter::analog_output`].
    fn analog_output_keep_domain(index: u8, ratio: f64);

    /// The speed slider at `fraction` (0..=1).
    ///
    /// # Errors
    /// As [`IoWriter::send`], and [`IoError::OutOfRange`].
    fn speed_slider(fraction: f64);

    /// `external_force_torque`: force (N) and torque (Nm) for the robot's force/torque
    /// interface.
    ///
    /// # Errors
    /// As [`IoWriter::send`], and [`IoError::NotFinite`].
    fn external_force_torque(wrench: [f64; 6]);

    /// `input_int_register_{index}` (24..=47).
    ///
    /// # Errors
    /// As [`IoWriter::send`], and [`IoError::NotExternal`].
    fn int_register(index: u8, value: i32);

    /// `input_double_register_{index}` (24..=47).
    ///
    /// # Errors
    /// As [`IoWriter::int_register`].
    fn double_register(index: u8, value: f64);

    /// `input_bit_register_{index}` (64..=127).
    ///
    /// # Errors
    /// As [`IoWriter::int_register`].
    fn bit_register(index: u8, on: bool);
}
