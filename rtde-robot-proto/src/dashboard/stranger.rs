//! Telling what answered where a Dashboard server was expected, so that a client pointed
//! at the wrong port says so within a second instead of timing out.
//!
//! A Dashboard server greets as soon as it accepts. The controller's other ports behave
//! otherwise: the primary, secondary and real-time interfaces send binary packages at
//! once (the line rule refuses them, [`LineBuffer`](super::LineBuffer)), and an RTDE
//! server says nothing until it is asked. So a client waits [`GREETING_WAIT`] for the
//! greeting; when nothing came, it asks the port on a second connection whether it speaks
//! RTDE ([`RTDE_PROBE`]), and names what it found ([`Stranger`]).

use std::fmt;
use std::time::Duration;

use rtde_core::protocol::package_type::GET_URCONTROL_VERSION;

/// How long a client waits for the greeting before it asks what listens: hundreds of
/// round trips on any network a robot is on, and a Dashboard server greets as it accepts.
pub const GREETING_WAIT: Duration = Duration::from_millis(750);

/// How long the RTDE question may take; with [`GREETING_WAIT`], one second in all.
pub const PROBE_WAIT: Duration = Duration::from_millis(250);

/// RTDE's GET_URCONTROL_VERSION package, which an RTDE server answers at any time: the
/// question a client sends on a second connection to a port that stayed silent.
pub const RTDE_PROBE: [u8; 3] = [0, 3, GET_URCONTROL_VERSION];

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
    /// What a silent port is, from its answer to [`RTDE_PROBE`] (all the bytes read
    /// within [`PROBE_WAIT`], none if the probe could not connect).
    ///
    /// ```
    /// use rtde_robot_proto::dashboard::Stranger;
    ///
    /// let reply = [0, 19, b'v', 0, 0, 0, 5, 0, 0, 0, 21, 0, 0, 0, 0, 0, 0, 0, 0];
    /// assert_eq!(Stranger::of_probe_reply(&reply), Stranger::Rtde);
    /// assert_eq!(Stranger::of_probe_reply(&[]), Stranger::Silent);
    /// ```
    #[must_use]
    pub fn of_probe_reply(reply: &[u8]) -> Stranger {
        match reply {
            [high, low, kind, ..]
                if *kind == GET_URCONTROL_VERSION && u16::from_be_bytes([*high, *low]) >= 3 =>
            {
                Stranger::Rtde
            }
            [] => Stranger::Silent,
            _ => Stranger::Other,
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
        assert_eq!(
            Stranger::of_probe_reply(&[0, 19, b'v', 0, 0]),
            Stranger::Rtde
        );
        // Another RTDE package type, or a length below its own header: not an answer.
        assert_eq!(Stranger::of_probe_reply(&[0, 19, b'V']), Stranger::Other);
        assert_eq!(Stranger::of_probe_reply(&[0, 2, b'v']), Stranger::Other);
        assert_eq!(Stranger::of_probe_reply(b"HTTP/1.1 400"), Stranger::Other);
        assert_eq!(Stranger::of_probe_reply(&[]), Stranger::Silent);
    }
}
