//! Why the bridge could not start or stop, and why its broker connection failed.

use std::io;

use rumqttc::{ConnectReturnCode, ConnectionError, StateError};

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
    #[error("cannot start the bridge")]
    Start(#[source] io::Error),
}

/// Why a broker connection failed or could not be made, in the words of someone who runs
/// the bridge; the MQTT client's own account is kept in [`BrokerError::detail`].
///
/// ```
/// # fn shown(bridge: &rtde_bridge::Bridge, verbose: bool) {
/// if let Some(e) = bridge.broker_error() {
///     // "the broker closed the connection (connection reset)"
///     eprintln!("broker lost: {e}");
///     if verbose {
///         eprintln!("  {}", e.detail());
///     }
/// }
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrokerError {
    kind: Kind,
    /// `HOST:PORT`.
    address: String,
    reason: String,
    detail: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// No MQTT connection was made: the address, the network, the TCP connection.
    Unreachable,
    /// The broker answered the CONNECT with a refusal.
    Refused,
    /// A connection that was up ended from the broker's side or the network's.
    Closed,
    /// Anything else, said in full by `reason`.
    Other,
}

impl std::fmt::Display for BrokerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.kind {
            Kind::Unreachable => write!(
                f,
                "could not reach the broker at {}: {}",
                self.address, self.reason
            ),
            Kind::Refused => write!(f, "the broker refused the connection: {}", self.reason),
            Kind::Closed if self.reason.is_empty() => {
                f.write_str("the broker closed the connection")
            }
            Kind::Closed => write!(f, "the broker closed the connection ({})", self.reason),
            Kind::Other => f.write_str(&self.reason),
        }
    }
}

impl std::error::Error for BrokerError {}

impl BrokerError {
    /// The MQTT client's error as it reported it, for `--verbose`.
    #[must_use]
    pub fn detail(&self) -> &str {
        &self.detail
    }

    /// What the bridge knows without an error from the MQTT client (a timeout of its own).
    pub(crate) fn other(reason: String) -> BrokerError {
        BrokerError {
            kind: Kind::Other,
            address: String::new(),
            detail: reason.clone(),
            reason,
        }
    }

    /// Why the first connection could not be made, after "cannot reach the broker at
    /// URL: ": the reason alone when the broker was not reached, else the whole sentence.
    pub(crate) fn at_start(&self) -> String {
        match self.kind {
            Kind::Unreachable => self.reason.clone(),
            _ => self.to_string(),
        }
    }

    /// The one place a `rumqttc` error becomes words: `e`, from the connection to the
    /// broker at `host`:`port`.
    pub(crate) fn of(e: &ConnectionError, (host, port): (&str, u16)) -> BrokerError {
        let (kind, reason) = match e {
            // Only the TCP connection (or the name lookup) fails with a bare I/O error.
            ConnectionError::Io(io) => (Kind::Unreachable, io_words(io)),
            ConnectionError::NetworkTimeout => (Kind::Unreachable, "no answer in time".into()),
            ConnectionError::ConnectionRefused(code) => (Kind::Refused, refusal(*code).into()),
            ConnectionError::NotConnAck(_) => (
                Kind::Other,
                "the broker answered the connection with something other than an MQTT CONNACK"
                    .into(),
            ),
            ConnectionError::FlushTimeout => (
                Kind::Other,
                "the broker stopped taking data (a write timed out)".into(),
            ),
            ConnectionError::MqttState(state) => state_words(state),
            ConnectionError::RequestsDone => (Kind::Other, "the bridge stopped".into()),
            #[cfg(feature = "tls")]
            ConnectionError::Tls(e) => (Kind::Unreachable, format!("TLS: {e}")),
            #[allow(unreachable_patterns)] // variants of rumqttc features this crate may enable
            _ => (Kind::Other, "the connection to the broker failed".into()),
        };
        BrokerError {
            kind,
            address: if host.contains(':') {
                format!("[{host}]:{port}")
            } else {
                format!("{host}:{port}")
            },
            reason,
            detail: e.to_string(),
        }
    }
}

/// A broken established connection.
fn state_words(state: &StateError) -> (Kind, String) {
    match state {
        StateError::Io(io) | StateError::Deserialization(rumqttc::mqttbytes::Error::Io(io)) => {
            match io.kind() {
                io::ErrorKind::UnexpectedEof => (Kind::Closed, String::new()),
                io::ErrorKind::TimedOut => {
                    (Kind::Other, "the connection to the broker timed out".into())
                }
                _ => (Kind::Closed, io_words(io)),
            }
        }
        StateError::ConnectionAborted => (Kind::Closed, String::new()),
        StateError::AwaitPingResp => (
            Kind::Other,
            "the broker stopped answering (no reply to a keep-alive ping)".into(),
        ),
        StateError::Deserialization(rumqttc::mqttbytes::Error::OutgoingPacketTooLarge {
            pkt_size,
            max,
        }) => (
            Kind::Other,
            format!("a message of {pkt_size} bytes is over the broker's limit of {max}"),
        ),
        StateError::Deserialization(_) => (
            Kind::Other,
            "the broker sent a packet that is not MQTT 3.1.1 as this client reads it".into(),
        ),
        _ => (
            Kind::Other,
            "the MQTT exchange with the broker broke down (a protocol error)".into(),
        ),
    }
}

/// An I/O error as a few words: the kind's own where it has one ("connection reset"),
/// else the message without the OS's error number.
fn io_words(io: &io::Error) -> String {
    use io::ErrorKind as K;
    match io.kind() {
        K::ConnectionRefused
        | K::ConnectionReset
        | K::ConnectionAborted
        | K::BrokenPipe
        | K::TimedOut
        | K::HostUnreachable
        | K::NetworkUnreachable
        | K::NetworkDown
        | K::AddrNotAvailable
        | K::PermissionDenied => io.kind().to_string(),
        _ => {
            let text = io.to_string();
            match text.find(" (os error") {
                Some(at) => text[..at].to_owned(),
                None => text,
            }
        }
    }
}

/// A CONNACK's refusal, as the MQTT 3.1.1 specification names its codes.
fn refusal(code: ConnectReturnCode) -> &'static str {
    match code {
        ConnectReturnCode::RefusedProtocolVersion => "it does not accept MQTT 3.1.1",
        ConnectReturnCode::BadClientId => "the client id is not accepted",
        ConnectReturnCode::ServiceUnavailable => "the service is unavailable",
        ConnectReturnCode::BadUserNamePassword => "bad user name or password",
        ConnectReturnCode::NotAuthorized => "not authorized",
        ConnectReturnCode::Success => "it said success, then closed",
    }
}

#[cfg(test)]
mod tests {
    use rumqttc::mqttbytes;

    use super::*;

    fn said(e: ConnectionError) -> String {
        let why = BrokerError::of(&e, ("127.0.0.1", 1883));
        assert_eq!(
            why.detail(),
            e.to_string(),
            "the detail is the client's own"
        );
        why.to_string()
    }

    /// As Linux reports them: the kind, and the OS's text with its number.
    fn os(code: i32) -> io::Error {
        io::Error::from_raw_os_error(code)
    }

    #[test]
    fn a_broken_connection_is_said_in_the_users_words() {
        // ECONNRESET as rumqttc wraps it when reading: the issue's message.
        let reset =
            ConnectionError::MqttState(StateError::Deserialization(mqttbytes::Error::Io(os(104))));
        assert!(reset.to_string().contains("Mqtt state: Mqtt serialization"));
        assert_eq!(
            said(reset),
            "the broker closed the connection (connection reset)"
        );
        // EPIPE when writing.
        assert_eq!(
            said(ConnectionError::MqttState(StateError::Io(os(32)))),
            "the broker closed the connection (broken pipe)"
        );
        // The end of the stream.
        assert_eq!(
            said(ConnectionError::MqttState(StateError::ConnectionAborted)),
            "the broker closed the connection"
        );
        assert_eq!(
            said(ConnectionError::MqttState(StateError::Io(
                io::ErrorKind::UnexpectedEof.into()
            ))),
            "the broker closed the connection"
        );
        assert_eq!(
            said(ConnectionError::MqttState(StateError::AwaitPingResp)),
            "the broker stopped answering (no reply to a keep-alive ping)"
        );
        assert_eq!(
            said(ConnectionError::FlushTimeout),
            "the broker stopped taking data (a write timed out)"
        );
        assert_eq!(
            said(ConnectionError::MqttState(StateError::Deserialization(
                mqttbytes::Error::OutgoingPacketTooLarge {
                    pkt_size: 300,
                    max: 256
                }
            ))),
            "a message of 300 bytes is over the broker's limit of 256"
        );
        assert_eq!(
            said(ConnectionError::MqttState(StateError::Deserialization(
                mqttbytes::Error::MalformedPacket
            ))),
            "the broker sent a packet that is not MQTT 3.1.1 as this client reads it"
        );
        assert_eq!(
            said(ConnectionError::MqttState(StateError::Unsolicited(7))),
            "the MQTT exchange with the broker broke down (a protocol error)"
        );
    }

    #[test]
    fn a_broker_not_reached_is_named_by_its_address() {
        // ECONNREFUSED from the TCP connection.
        assert_eq!(
            said(ConnectionError::Io(os(111))),
            "could not reach the broker at 127.0.0.1:1883: connection refused"
        );
        assert_eq!(
            said(ConnectionError::NetworkTimeout),
            "could not reach the broker at 127.0.0.1:1883: no answer in time"
        );
        // A name that does not resolve: the resolver's words, without an error number.
        let lookup =
            io::Error::other("failed to lookup address information: Name or service not known");
        let why = BrokerError::of(&ConnectionError::Io(lookup), ("plc.invalid", 1883));
        assert_eq!(
            why.to_string(),
            "could not reach the broker at plc.invalid:1883: failed to lookup address information: Name or service not known"
        );
        assert_eq!(
            BrokerError::of(&ConnectionError::Io(os(113)), ("::1", 1883)).to_string(),
            "could not reach the broker at [::1]:1883: host unreachable"
        );
        // At start the error says "cannot reach the broker at URL: " already.
        assert_eq!(
            BrokerError::of(&ConnectionError::Io(os(111)), ("h", 1)).at_start(),
            "connection refused"
        );
    }

    #[test]
    fn a_refusal_says_the_brokers_reason() {
        for (code, reason) in [
            (
                ConnectReturnCode::BadUserNamePassword,
                "bad user name or password",
            ),
            (ConnectReturnCode::NotAuthorized, "not authorized"),
            (
                ConnectReturnCode::BadClientId,
                "the client id is not accepted",
            ),
            (
                ConnectReturnCode::ServiceUnavailable,
                "the service is unavailable",
            ),
            (
                ConnectReturnCode::RefusedProtocolVersion,
                "it does not accept MQTT 3.1.1",
            ),
        ] {
            let e = ConnectionError::ConnectionRefused(code);
            let why = BrokerError::of(&e, ("h", 1));
            assert_eq!(
                why.to_string(),
                format!("the broker refused the connection: {reason}")
            );
            assert_eq!(why.at_start(), why.to_string());
        }
    }
}
