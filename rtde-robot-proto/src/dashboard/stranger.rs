//! Telling what answered where a Dashboard server was expected, so that a client pointed
//! at the wrong port says so within a second instead of timing out.
//!
//! A Dashboard server greets as soon as it accepts. The controller's other ports behave
//! otherwise: the primary, secondary and real-time interfaces send binary packages at
//! once (the line rule refuses them, [`LineBuffer`](super::LineBuffer)), and an RTDE
//! server says nothing until it is asked. So a client waits [`GREETING_WAIT`] for the
//! greeting; when nothing came, it asks the port on a second connection whether it speaks
//! RTDE ([`rtde_probe`]), and names what it found ([`Stranger`]). The question and its
//! answer are rtde-core's codec's, as every RTDE client's are.

use std::fmt;
use std::time::Duration;

use rtde_core::protocol::{ClientMessage, ControllerMessage, Frame, HEADER_LEN, ProtocolVersion};

/// How long a client waits for the greeting before it asks what listens: hundreds of
/// round trips on any network a robot is on, and a Dashboard server greets as it accepts.
pub const GREETING_WAIT: Duration = Duration::from_millis(750);

/// How long the RTDE question may take; with [`GREETING_WAIT`], one second in all.
pub const PROBE_WAIT: Duration = Duration::from_millis(250);

/// RTDE's GET_URCONTROL_VERSION package, which an RTDE server answers at any time: the
/// question a client sends on a second connection to a port that stayed silent.
///
/// ```
/// assert_eq!(rtde_robot_proto::dashboard::rtde_probe(), [0, 3, b'v']);
/// ```
#[must_use]
pub fn rtde_probe() -> [u8; HEADER_LEN] {
    let mut package = [0; HEADER_LEN];
    // A package without a body is its header: it always fits.
    let _ = ClientMessage::GetUrcontrolVersion.encode(ProtocolVersion::V1, &mut package);
    package
}

/// What answered on a port where a Dashboard server was expected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Stranger {
    /// Binary packages: the primary, secondary or real-time interface.
    RobotInterface,
    /// An RTDE server.
    Rtde,
    /// Nothing: the port accepted the connection and stayed silent.
    Silent,
    /// Something that answered RTDE's question in other words.
    Other,
}

impl Stranger {
    /// What the answer to [`rtde_probe`] says so far: `None` while the bytes read could
    /// still become the controller's version package, so that a reader knows to go on.
    ///
    /// ```
    /// use rtde_robot_proto::dashboard::Stranger;
    ///
    /// let reply = [0, 19, b'v', 0, 0, 0, 5, 0, 0, 0, 21, 0, 0, 0, 0, 0, 0, 0, 0];
    /// assert_eq!(Stranger::of_probe_reply(&reply), Some(Stranger::Rtde));
    /// assert_eq!(Stranger::of_probe_reply(&reply[..10]), None);
    /// ```
    #[must_use]
    pub fn of_probe_reply(reply: &[u8]) -> Option<Stranger> {
        match Frame::parse(reply) {
            Ok(None) => None,
            Ok(Some((frame, _))) => Some(
                match ControllerMessage::decode(frame, ProtocolVersion::V1) {
                    Ok(ControllerMessage::UrcontrolVersion(_)) => Stranger::Rtde,
                    _ => Stranger::Other,
                },
            ),
            Err(_) => Some(Stranger::Other),
        }
    }

    /// What a silent port is, from all the bytes it answered [`rtde_probe`] with within
    /// [`PROBE_WAIT`] (none if the probe could not connect).
    ///
    /// ```
    /// use rtde_robot_proto::dashboard::Stranger;
    ///
    /// assert_eq!(Stranger::after_probe(&[]), Stranger::Silent);
    /// assert_eq!(Stranger::after_probe(&[0, 19, b'v']), Stranger::Other);
    /// ```
    #[must_use]
    pub fn after_probe(reply: &[u8]) -> Stranger {
        match Stranger::of_probe_reply(reply) {
            Some(found) => found,
            None if reply.is_empty() => Stranger::Silent,
            // Part of a package, then nothing: no RTDE server stops mid-answer.
            None => Stranger::Other,
        }
    }
}

impl fmt::Display for Stranger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stranger::RobotInterface => {
                "it sends binary packages, as the primary, secondary and real-time interfaces \
                 (30001 to 30003) do"
            }
            Stranger::Rtde => "it answers RTDE, as port 30004 does",
            Stranger::Silent => {
                "it accepted the connection and sent nothing within a second (a Dashboard server \
                 greets at once)"
            }
            Stranger::Other => "it answered neither as a Dashboard server nor as RTDE",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_probe_reply_tells_rtde_from_the_rest() {
        let mut version = [0u8; 64];
        let n = ControllerMessage::UrcontrolVersion("5.21.0".parse().unwrap())
            .encode(ProtocolVersion::V1, &mut version)
            .unwrap();
        assert_eq!(Stranger::after_probe(&version[..n]), Stranger::Rtde);
        // Cut short, it may still come; then nothing more: not an RTDE server.
        assert_eq!(Stranger::of_probe_reply(&version[..n - 1]), None);
        assert_eq!(Stranger::after_probe(&version[..n - 1]), Stranger::Other);
        // Another RTDE package, a length below its own header, or text: not an answer.
        let start = [0, 4, b'S', 1];
        assert_eq!(Stranger::after_probe(&start), Stranger::Other);
        assert_eq!(Stranger::after_probe(&[0, 2, b'v']), Stranger::Other);
        assert_eq!(Stranger::after_probe(b"HTTP/1.1 400"), Stranger::Other);
        assert_eq!(Stranger::after_probe(&[]), Stranger::Silent);
        assert_eq!(rtde_probe(), [0, 3, b'v']);
    }
}
