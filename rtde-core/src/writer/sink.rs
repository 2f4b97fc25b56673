//! What the writer sends through: any driver that can send an input package.

use crate::background::Sender;
use crate::blocking::{Client, InputHandle};
use crate::error::Error;
use crate::writer::IoWrite;

/// A driver that sends input packages: the blocking [`Client`], or the background driver's
/// [`Sender`]. [`IoWriter`](crate::writer::IoWriter)'s calls take any of them, so the same
/// writer, set up once on the [`Client`] before it is spawned, keeps working through the
/// background driver (input handles survive [`Client::spawn`]).
///
/// ```
/// use rtde_core::background::Sender;
/// use rtde_core::writer::{InputSink, IoWriter};
///
/// // Both drivers take the writer's calls.
/// fn slow_down<S: InputSink>(io: &IoWriter, sink: &mut S) -> Result<(), rtde_core::writer::WriteError> {
///     io.speed_slider(sink, 0.3)
/// }
/// fn assert_sink<S: InputSink>() {}
/// assert_sink::<rtde_core::Client>();
/// assert_sink::<Sender>();
/// ```
pub trait InputSink {
    /// Sends `write` as a data package of the input recipe `input` was set up with.
    ///
    /// # Errors
    /// As [`Client::send`] or [`Sender::send`].
    fn send_input(&mut self, input: &InputHandle, write: &IoWrite) -> Result<(), Error>;
}

impl InputSink for Client {
    #[inline]
    fn send_input(&mut self, input: &InputHandle, write: &IoWrite) -> Result<(), Error> {
        self.send(input, write)
    }
}

impl InputSink for Sender {
    #[inline]
    fn send_input(&mut self, input: &InputHandle, write: &IoWrite) -> Result<(), Error> {
        self.send(input, write)
    }
}
