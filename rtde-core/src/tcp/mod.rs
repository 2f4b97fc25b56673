//! What the two drivers over std's `TcpStream` share, the blocking client
//! ([`crate::blocking`]) and the background driver ([`crate::background`]): opening a link
//! and reading from it into the session ([`transport`]), and the reconnection round
//! ([`reconnect`]). The async driver has its own over tokio's socket; the rules all three
//! follow are the session's.

pub(crate) mod reconnect;
pub(crate) mod transport;
