//! How to connect: timeouts and the text message queue.

use std::time::Duration;

/// Options for [`Client::connect`](crate::Client::connect).
///
/// ```
/// use std::time::Duration;
/// use rtde_core::ConnectOptions;
///
/// let options = ConnectOptions::new()
///     .connect_timeout(Duration::from_secs(2))
///     .read_timeout(Some(Duration::from_millis(500)));
/// assert_eq!(options.get_read_timeout(), Some(Duration::from_millis(500)));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectOptions {
    connect_timeout: Duration,
    read_timeout: Option<Duration>,
    write_timeout: Option<Duration>,
    text_message_capacity: usize,
}

impl Default for ConnectOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl ConnectOptions {
    /// Connect within 5 s; wait at most 1 s for a reply or a data package and for a write;
    /// keep the last 64 text messages.
    #[must_use]
    pub const fn new() -> Self {
        ConnectOptions {
            connect_timeout: Duration::from_secs(5),
            read_timeout: Some(Duration::from_secs(1)),
            write_timeout: Some(Duration::from_secs(1)),
            text_message_capacity: 64,
        }
    }

    /// How long to try each resolved address. Must not be zero.
    #[must_use]
    pub const fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// The longest wait for a reply to a request, or for the next output package in
    /// [`Client::recv`](crate::Client::recv); `None` waits forever. Must not be zero.
    ///
    /// It bounds the whole wait, not each read: text messages trickling in do not extend it.
    /// Raise it for output frequencies below about 2 Hz.
    #[must_use]
    pub const fn read_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.read_timeout = timeout;
        self
    }

    /// The longest a write may block (the controller stopped reading); `None` blocks
    /// forever. Must not be zero.
    #[must_use]
    pub const fn write_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.write_timeout = timeout;
        self
    }

    /// How many text messages to keep until read; older ones are dropped and counted in
    /// [`Stats::texts_dropped`](crate::Stats::texts_dropped). Zero keeps none.
    #[must_use]
    pub const fn text_message_capacity(mut self, capacity: usize) -> Self {
        self.text_message_capacity = capacity;
        self
    }

    /// The connect timeout.
    #[must_use]
    pub const fn get_connect_timeout(&self) -> Duration {
        self.connect_timeout
    }

    /// The read timeout.
    #[must_use]
    pub const fn get_read_timeout(&self) -> Option<Duration> {
        self.read_timeout
    }

    /// The write timeout.
    #[must_use]
    pub const fn get_write_timeout(&self) -> Option<Duration> {
        self.write_timeout
    }

    /// The text message queue's capacity.
    #[must_use]
    pub const fn get_text_message_capacity(&self) -> usize {
        self.text_message_capacity
    }
}
