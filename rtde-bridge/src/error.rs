//! Why the bridge could not start or stop.

/// Why the bridge could not start or stop.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The broker did not accept a connection in time.
    #[error("cannot reach the broker at {url}: {why}")]
    BrokerUnreachable {
        /// The broker as configured.
        url: String,
        /// The last attempt's error.
        why: String,
    },
    /// The runtime or a thread could not be started.
    #[error("cannot start the bridge: {0}")]
    Start(#[source] std::io::Error),
}
