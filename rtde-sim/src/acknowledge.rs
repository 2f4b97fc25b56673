//! Acknowledging what a client sent at once.
//!
//! A client that leaves Nagle's algorithm on (ur_rtde's IO interface does) holds a small
//! package back until the one before it is acknowledged. A connection that only receives
//! (inputs with no output stream, whose packages would carry the acknowledgement) has
//! its acknowledgements delayed by the kernel, on Linux by up to 40 ms: the second of two
//! back-to-back inputs took effect that late. A controller applies each input at its next
//! control cycle, so every read asks for its acknowledgement now.

use std::net::TcpStream;

/// Asks the kernel to acknowledge what `stream` has received without delay. Linux leaves
/// quick-acknowledgement mode again on its own, so this follows every read. Elsewhere a
/// no-op: no portable option exists.
pub(crate) fn acknowledge_now(stream: &TcpStream) {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        // A failure leaves the kernel's usual timing: later, not wrong.
        let _ = socket2::SockRef::from(stream).set_tcp_quickack(true);
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let _ = stream;
}
