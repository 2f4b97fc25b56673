//! What can go wrong on a connection, sorted by who can fix it.
//!
//! Every [`Error`] falls in one [`ErrorKind`]:
//!
//! | kind | what happened | what to do |
//! | --- | --- | --- |
//! | [`ErrorKind::Link`] | the connection failed: I/O error, closed by the peer, timed out | reconnect (a timeout waiting for data leaves the connection usable) |
//! | [`ErrorKind::Refused`] | the controller said no: protocol version, `NOT_FOUND`, `IN_USE`, start or pause refused | change the request, or free what is in use |
//! | [`ErrorKind::Unsupported`] | the connected controller cannot do it, found before anything was sent | remove the fields, lower the frequency, or update the controller |
//! | [`ErrorKind::Usage`] | the call itself is wrong: an invalid recipe, a call in the wrong state | fix the calling code |
//! | [`ErrorKind::Protocol`] | the bytes were wrong: undecodable, unexpected, or disagreeing with the recipe | report it: the controller and this crate disagree |
//!
//! ```
//! use rtde_core::{Error, ErrorKind};
//!
//! let err = Error::Closed { mid_frame: true };
//! assert_eq!(err.kind(), ErrorKind::Link);
//! assert_eq!(err.to_string(), "the controller closed the connection in the middle of a package");
//! ```

use std::fmt;
use std::io;
use std::time::Duration;

use rtde_fields::{ControllerVersion, Direction, Generation, WireType};

use crate::diagnosis::{self, InUseOwner};
use crate::protocol::{DecodeError, EncodeError, package_type};
use crate::recipe::PayloadError;
use crate::recipe_error::RecipeError;

/// Everything that can go wrong on a [`Client`](crate::Client) connection.
///
/// Small (a few words): the variants with long payloads box them. Match on
/// [`Error::kind`] to tell "the controller said no" from "the link broke" from "the bytes were
/// wrong", or on the variants for the details.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    // ---- the link broke ----
    /// The controller's address could not be resolved.
    #[error("could not resolve the controller's address")]
    Resolve {
        /// The resolver's error.
        source: io::Error,
    },
    /// No connection could be made to any resolved address.
    #[error(
        "could not connect to {addr} (RTDE listens on port 30004){}",
        diagnosis::connect_hint(source)
    )]
    Connect {
        /// The addresses tried.
        addr: Box<str>,
        /// The last address's error.
        source: io::Error,
    },
    /// Reading or writing the socket failed.
    #[error("connection failed{}", mid(*.mid_frame))]
    Io {
        /// The socket's error.
        source: io::Error,
        /// Part of a package had arrived when the read failed.
        mid_frame: bool,
    },
    /// The controller closed the connection. It does so, among other reasons, when a client
    /// stops reading and its outputs pile up.
    #[error("the controller closed the connection{}", mid(*.mid_frame))]
    Closed {
        /// Part of a package had arrived: the connection was cut inside it.
        mid_frame: bool,
    },
    /// Nothing (or not a whole package) arrived within the read timeout.
    #[error(
        "timed out after {after:?} waiting for {}{}; raise the read timeout in `ConnectOptions` \
         if the controller is slow (below 2 Hz, say)",
        awaited(*.waiting_for),
        mid(*.mid_frame)
    )]
    Timeout {
        /// The read timeout.
        after: Duration,
        /// The package type awaited: [`package_type::DATA_PACKAGE`] when receiving outputs,
        /// or the request whose reply was due.
        waiting_for: u8,
        /// Part of a package had arrived.
        mid_frame: bool,
    },
    /// An earlier error left the connection unusable (the stream is out of step or closed).
    #[error("the connection was lost by an earlier error; connect again")]
    ConnectionLost,
    /// No fresh output package for the staleness limit
    /// ([`Session::set_staleness`](crate::session::Session::set_staleness): the async
    /// driver's `Connection::staleness`, the background driver's
    /// [`SpawnOptions::staleness`](crate::background::SpawnOptions::staleness)): the controller
    /// stopped sending, or the link stalls. Reported once per silence and per receiver that
    /// waits (the async `Latest::changed` and `Packages::recv`, the background
    /// [`Receiver::recv`](crate::background::Receiver::recv)), as
    /// [`Event::Stale`](crate::Event::Stale) is once; the connection stays, and the next
    /// package makes the stream fresh again ([`Event::Fresh`](crate::Event::Fresh)).
    #[error(
        "no fresh output package for {silent_for:?}: the stream is stale (the staleness \
         limit); the newest package is that old"
    )]
    Stale {
        /// Since the last package (or since START, within the grace period).
        silent_for: Duration,
    },

    // ---- the controller said no ----
    /// The controller accepted neither protocol version 2 nor version 1.
    #[error("the controller refused RTDE protocol versions 2 and 1; is this an RTDE port (30004)?")]
    ProtocolRefused,
    /// The controller refused a recipe: `NOT_FOUND`, `IN_USE`, or input recipe id 0.
    #[error(transparent)]
    SetupRefused(Box<SetupRefused>),
    /// The controller refused START (often: no output recipe set up, or RTDE is in use by a
    /// program that just stopped; its text messages may say why).
    #[error("the controller refused to start; see `Client::text_messages` for its reason")]
    StartRefused,
    /// The controller refused PAUSE.
    #[error("the controller refused to pause; see `Client::text_messages` for its reason")]
    PauseRefused,

    // ---- this controller cannot, found before sending ----
    /// Fields the connected controller's version does not have; nothing was sent.
    #[error(transparent)]
    Unavailable(Box<Unavailable>),
    /// An output frequency above the controller's control-loop rate; nothing was sent.
    #[error(
        "output frequency {asked} Hz is above this controller's maximum of {max} Hz; ask for at \
         most `Client::max_frequency()`"
    )]
    FrequencyTooHigh {
        /// The frequency asked for, in hertz.
        asked: f64,
        /// The controller's maximum, in hertz.
        max: f64,
    },
    /// A frequency other than the control-loop rate on a protocol v1 connection, which cannot
    /// set one; nothing was sent.
    #[error(
        "protocol v1 cannot set the output frequency: this controller sends outputs at its \
         control-loop rate of {rate} Hz; ask for {rate} Hz (`Client::max_frequency()`) and skip \
         packages to go slower, instead of {asked} Hz"
    )]
    FrequencyNotInV1 {
        /// The frequency asked for, in hertz.
        asked: f64,
        /// The control-loop rate, the only one v1 offers.
        rate: f64,
    },

    // ---- this host cannot ----
    /// The operating system refused a real-time option of a background driver (SCHED_FIFO
    /// priority, CPU affinity); the message says why and what to grant.
    #[error(transparent)]
    Realtime(Box<RealtimeRefused>),

    // ---- the call is wrong ----
    /// A recipe the registry rejects: unknown names, wrong direction, wrong types, repeats,
    /// no fields, a name list over 2048 bytes; nothing was sent.
    #[error(transparent)]
    Recipe(Box<RecipeError>),
    /// An output frequency that is not a positive, finite number of hertz.
    #[error("output frequency {asked} Hz is not a positive, finite number of hertz")]
    InvalidFrequency {
        /// The frequency asked for.
        asked: f64,
    },
    /// A call made in the wrong state or with the wrong arguments; the message says which.
    #[error("{0}")]
    Misuse(&'static str),
    /// A request that cannot be encoded (longer than a package can be).
    #[error("cannot encode the request: {0}")]
    Encode(Box<EncodeError>),
    /// A recipe's own decoder refused a payload of the recipe's size.
    #[error("the recipe's decoder refused a payload of its own size: {0}")]
    Payload(PayloadError),

    // ---- the bytes were wrong ----
    /// Bytes that are no valid RTDE package.
    #[error(transparent)]
    Decode(Box<DecodeError>),
    /// A valid package that makes no sense at this point of the conversation.
    #[error(
        "unexpected {} package while waiting for {}",
        package_type::name(*.package_type),
        awaited(*.waiting_for)
    )]
    Unexpected {
        /// The package's type byte.
        package_type: u8,
        /// The package type awaited (see [`Error::Timeout`]).
        waiting_for: u8,
    },
    /// An output data package for another recipe than the one set up.
    #[error(
        "output DATA_PACKAGE carries recipe id {}, but the output recipe set up has id {}",
        id(*.found),
        id(*.expected)
    )]
    WrongRecipeId {
        /// The id set up (`None` in protocol v1).
        expected: Option<u8>,
        /// The id received.
        found: Option<u8>,
    },
    /// An output data package whose values are not the recipe's size.
    #[error(
        "output DATA_PACKAGE holds {found} bytes of values, but the output recipe set up needs \
         {expected}"
    )]
    WrongLength {
        /// The recipe's payload size.
        expected: usize,
        /// The bytes received.
        found: usize,
    },
    /// A setup reply whose types disagree with the recipe.
    #[error(transparent)]
    SetupReply(Box<SetupReplyMismatch>),
}

/// The broad category of an [`Error`]: who can fix it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The connection failed: I/O, closed, timed out.
    Link,
    /// The controller refused a request.
    Refused,
    /// The connected controller cannot do what was asked; found before sending.
    Unsupported,
    /// The call is wrong; nothing was sent.
    Usage,
    /// The bytes received were wrong.
    Protocol,
}

impl Error {
    /// The error of a connection that none of `addrs` accepted: the last address's error,
    /// or a resolution error when there was no address to try. Every driver connects
    /// through this, so they all report a failed connection the same way.
    pub(crate) fn connect_failed(addrs: &[std::net::SocketAddr], last: Option<io::Error>) -> Self {
        match last {
            Some(source) => Error::Connect {
                addr: addrs
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
                    .into(),
                source,
            },
            None => Error::Resolve {
                source: io::Error::new(io::ErrorKind::NotFound, "the address resolved to nothing"),
            },
        }
    }

    /// The error of a write that found no room for `after` (the write timeout of
    /// [`ConnectOptions`](crate::ConnectOptions)): the controller stopped reading. The link is
    /// lost with it, since part of a package may have gone out. Every driver reports it
    /// through this: an [`Error::Io`] whose source is [`io::ErrorKind::TimedOut`].
    pub(crate) fn write_timed_out(after: Option<Duration>) -> Self {
        let message = match after {
            Some(after) => format!(
                "no room to write for {after:?}: the controller stopped reading (the write \
                 timeout of `ConnectOptions`)"
            ),
            None => "no room to write: the controller stopped reading".to_string(),
        };
        Error::Io {
            source: io::Error::new(io::ErrorKind::TimedOut, message),
            mid_frame: false,
        }
    }

    /// The same error again, for a second party to be told of one event (a connection's
    /// end goes to the in-order receiver and to the driver's own result): an I/O error is
    /// rebuilt from its OS code, or else its kind and message; the rest is cloned.
    pub(crate) fn duplicate(&self) -> Self {
        let io = |e: &io::Error| match e.raw_os_error() {
            Some(code) => io::Error::from_raw_os_error(code),
            None => io::Error::new(e.kind(), e.to_string()),
        };
        match self {
            Error::Resolve { source } => Error::Resolve { source: io(source) },
            Error::Connect { addr, source } => Error::Connect {
                addr: addr.clone(),
                source: io(source),
            },
            Error::Io { source, mid_frame } => Error::Io {
                source: io(source),
                mid_frame: *mid_frame,
            },
            Error::Closed { mid_frame } => Error::Closed {
                mid_frame: *mid_frame,
            },
            Error::Timeout {
                after,
                waiting_for,
                mid_frame,
            } => Error::Timeout {
                after: *after,
                waiting_for: *waiting_for,
                mid_frame: *mid_frame,
            },
            Error::ConnectionLost => Error::ConnectionLost,
            Error::Stale { silent_for } => Error::Stale {
                silent_for: *silent_for,
            },
            Error::ProtocolRefused => Error::ProtocolRefused,
            Error::SetupRefused(e) => Error::SetupRefused(e.clone()),
            Error::StartRefused => Error::StartRefused,
            Error::PauseRefused => Error::PauseRefused,
            Error::Unavailable(e) => Error::Unavailable(e.clone()),
            Error::FrequencyTooHigh { asked, max } => Error::FrequencyTooHigh {
                asked: *asked,
                max: *max,
            },
            Error::FrequencyNotInV1 { asked, rate } => Error::FrequencyNotInV1 {
                asked: *asked,
                rate: *rate,
            },
            Error::Realtime(e) => Error::Realtime(e.clone()),
            Error::Recipe(e) => Error::Recipe(e.clone()),
            Error::InvalidFrequency { asked } => Error::InvalidFrequency { asked: *asked },
            Error::Misuse(why) => Error::Misuse(why),
            Error::Encode(e) => Error::Encode(e.clone()),
            Error::Payload(e) => Error::Payload(e.clone()),
            Error::Decode(e) => Error::Decode(e.clone()),
            Error::Unexpected {
                package_type,
                waiting_for,
            } => Error::Unexpected {
                package_type: *package_type,
                waiting_for: *waiting_for,
            },
            Error::WrongRecipeId { expected, found } => Error::WrongRecipeId {
                expected: *expected,
                found: *found,
            },
            Error::WrongLength { expected, found } => Error::WrongLength {
                expected: *expected,
                found: *found,
            },
            Error::SetupReply(e) => Error::SetupReply(e.clone()),
        }
    }

    /// The category: link, refused, unsupported, usage or protocol.
    #[must_use]
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Resolve { .. }
            | Error::Connect { .. }
            | Error::Io { .. }
            | Error::Closed { .. }
            | Error::Timeout { .. }
            | Error::ConnectionLost
            | Error::Stale { .. } => ErrorKind::Link,
            Error::ProtocolRefused
            | Error::SetupRefused(_)
            | Error::StartRefused
            | Error::PauseRefused => ErrorKind::Refused,
            Error::Unavailable(_)
            | Error::FrequencyTooHigh { .. }
            | Error::FrequencyNotInV1 { .. }
            | Error::Realtime(_) => ErrorKind::Unsupported,
            Error::Recipe(_)
            | Error::InvalidFrequency { .. }
            | Error::Misuse(_)
            | Error::Encode(_)
            | Error::Payload(_) => ErrorKind::Usage,
            Error::Decode(_)
            | Error::Unexpected { .. }
            | Error::WrongRecipeId { .. }
            | Error::WrongLength { .. }
            | Error::SetupReply(_) => ErrorKind::Protocol,
        }
    }

    /// Whether this is a read timeout.
    #[must_use]
    pub fn is_timeout(&self) -> bool {
        matches!(self, Error::Timeout { .. })
    }

    /// Whether the connection was cut or failed with part of a package received.
    #[must_use]
    pub fn is_mid_frame(&self) -> bool {
        matches!(
            self,
            Error::Io {
                mid_frame: true,
                ..
            } | Error::Closed { mid_frame: true }
                | Error::Timeout {
                    mid_frame: true,
                    ..
                }
        )
    }
}

impl From<DecodeError> for Error {
    fn from(e: DecodeError) -> Self {
        Error::Decode(Box::new(e))
    }
}

impl From<PayloadError> for Error {
    fn from(e: PayloadError) -> Self {
        Error::Payload(e)
    }
}

impl From<RecipeError> for Error {
    fn from(e: RecipeError) -> Self {
        Error::Recipe(Box::new(e))
    }
}

fn mid(mid_frame: bool) -> &'static str {
    if mid_frame {
        " in the middle of a package"
    } else {
        ""
    }
}

/// What a wait was for, from the package type awaited.
fn awaited(kind: u8) -> Awaited {
    Awaited(kind)
}

struct Awaited(u8);

impl fmt::Display for Awaited {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            package_type::DATA_PACKAGE => f.write_str("an output DATA_PACKAGE"),
            kind => write!(f, "the reply to {}", package_type::name(kind)),
        }
    }
}

fn id(id: Option<u8>) -> IdText {
    IdText(id)
}

struct IdText(Option<u8>);

impl fmt::Display for IdText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(id) => write!(f, "{id}"),
            None => f.write_str("none (protocol v1)"),
        }
    }
}

/// How people name a generation in prose: `CB3`, `e-Series`, `PolyScope X`.
pub(crate) fn generation_name(g: Generation) -> &'static str {
    match g {
        Generation::Cb3 => "CB3",
        Generation::ESeries => "e-Series",
        Generation::PolyScopeX => "PolyScope X",
    }
}

/// A controller version as people say it: `CB3 3.15.8`, or just the number.
struct Controller(ControllerVersion);

impl fmt::Display for Controller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.generation() {
            Some(g) => write!(f, "{} {}", generation_name(g), self.0),
            None => write!(f, "{}", self.0),
        }
    }
}

/// A recipe the controller refused, with every field it named.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetupRefused {
    pub(crate) direction: Direction,
    pub(crate) recipe_id: Option<u8>,
    pub(crate) not_found: Vec<&'static str>,
    pub(crate) in_use: Vec<&'static str>,
    pub(crate) reason: Option<String>,
}

impl SetupRefused {
    /// The controller's own explanation: the text message it sent while the setup was
    /// pending, if any.
    #[must_use]
    pub fn reason(&self) -> Option<&str> {
        self.reason.as_deref()
    }

    /// Whether the refused recipe was an output or an input recipe.
    #[must_use]
    pub fn direction(&self) -> Direction {
        self.direction
    }

    /// The recipe id in the reply (0 for a refused input recipe; `None` for v1 outputs).
    #[must_use]
    pub fn recipe_id(&self) -> Option<u8> {
        self.recipe_id
    }

    /// The fields the controller answered `NOT_FOUND` for, in recipe order.
    #[must_use]
    pub fn not_found(&self) -> &[&'static str] {
        &self.not_found
    }

    /// The fields the controller answered `IN_USE` for, in recipe order.
    #[must_use]
    pub fn in_use(&self) -> &[&'static str] {
        &self.in_use
    }

    /// The `IN_USE` fields that are registers in the range reserved for fieldbus adapters.
    pub fn in_use_fieldbus_registers(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.in_use_owners()
            .filter(|(_, owner)| *owner == InUseOwner::FieldbusAdapter)
            .map(|(name, _)| name)
    }

    /// Each `IN_USE` field with the kind of writer that most likely holds it (a guess from
    /// the field, see [`InUseOwner::likely_for`]), in recipe order.
    ///
    /// ```
    /// # fn f(refused: &rtde_core::SetupRefused) {
    /// use rtde_core::diagnosis::InUseOwner;
    ///
    /// for (field, owner) in refused.in_use_owners() {
    ///     if owner == InUseOwner::RosDriver {
    ///         eprintln!("`{field}`: is the ROS driver still running?");
    ///     }
    /// }
    /// # }
    /// ```
    pub fn in_use_owners(&self) -> impl Iterator<Item = (&'static str, InUseOwner)> + '_ {
        self.in_use
            .iter()
            .map(|&name| (name, InUseOwner::likely_for(name)))
    }
}

impl fmt::Display for SetupRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the controller refused the {} recipe", self.direction)?;
        if self.not_found.is_empty() && self.in_use.is_empty() {
            return match &self.reason {
                Some(reason) => write!(f, " as a whole: \"{reason}\""),
                None => f.write_str(" without naming a field; `Client::text_messages` may say why"),
            };
        }
        f.write_str(":")?;
        if !self.not_found.is_empty() {
            write!(
                f,
                " {} {} NOT_FOUND (this controller does not know {}; check the spelling and the \
                 controller version)",
                List(&self.not_found),
                is_are(self.not_found.len()),
                it_them(self.not_found.len()),
            )?;
        }
        if !self.in_use.is_empty() {
            if !self.not_found.is_empty() {
                f.write_str(";")?;
            }
            write!(
                f,
                " {} {} IN_USE (another writer holds {})",
                List(&self.in_use),
                is_are(self.in_use.len()),
                it_them(self.in_use.len()),
            )?;
            for owner in InUseOwner::ALL {
                let held: Vec<&str> = self
                    .in_use_owners()
                    .filter(|(_, o)| *o == owner)
                    .map(|(name, _)| name)
                    .collect();
                if !held.is_empty() {
                    write!(
                        f,
                        "; {} {} probably held by {}",
                        List(&held),
                        is_are(held.len()),
                        owner.hint()
                    )?;
                }
            }
        }
        // The controller's own words, when it sent any with the refusal (a replay names
        // the capture that lacks the field).
        if let Some(reason) = &self.reason {
            write!(f, "; the controller said: \"{reason}\"")?;
        }
        Ok(())
    }
}

impl std::error::Error for SetupRefused {}

fn is_are(n: usize) -> &'static str {
    if n == 1 { "is" } else { "are" }
}

fn it_them(n: usize) -> &'static str {
    if n == 1 { "it" } else { "them" }
}

/// Names in backticks, separated by commas.
struct List<'a>(&'a [&'a str]);

impl fmt::Display for List<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, name) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "`{name}`")?;
        }
        Ok(())
    }
}

/// Fields that the connected controller's version does not have, each with the version
/// that would.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unavailable {
    pub(crate) direction: Direction,
    pub(crate) controller: ControllerVersion,
    pub(crate) fields: Vec<UnavailableField>,
}

impl Unavailable {
    /// Whether the fields were asked for as outputs or inputs.
    #[must_use]
    pub fn direction(&self) -> Direction {
        self.direction
    }

    /// The connected controller's version.
    #[must_use]
    pub fn controller(&self) -> ControllerVersion {
        self.controller
    }

    /// Every field the controller lacks, in recipe order.
    #[must_use]
    pub fn fields(&self) -> &[UnavailableField] {
        &self.fields
    }
}

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the controller cannot provide {} of the requested {} fields: ",
            self.fields.len(),
            self.direction
        )?;
        for (i, field) in self.fields.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "`{}` ", field.name)?;
            match field.needs {
                Some(v) => write!(f, "requires {}", Controller(v))?,
                None => match self.controller.generation() {
                    Some(g) => write!(f, "does not exist on {} or later", generation_name(g))?,
                    None => f.write_str("does not exist on this controller")?,
                },
            }
            write!(f, " (controller is {})", Controller(self.controller))?;
        }
        f.write_str("; remove them from the recipe or update the controller")
    }
}

impl std::error::Error for Unavailable {}

/// One field a controller lacks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnavailableField {
    pub(crate) name: &'static str,
    pub(crate) needs: Option<ControllerVersion>,
}

impl UnavailableField {
    /// The field's name.
    #[must_use]
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The first version that has the field, on the controller's generation or the next one
    /// that has it; `None` when no such generation has it.
    #[must_use]
    pub fn needs(&self) -> Option<ControllerVersion> {
        self.needs
    }
}

/// A setup reply whose types disagree with the recipe: the client refuses to decode data
/// with a layout it does not trust.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetupReplyMismatch {
    pub(crate) direction: Direction,
    pub(crate) requested: usize,
    pub(crate) answered: usize,
    pub(crate) types: Vec<TypeMismatch>,
}

impl SetupReplyMismatch {
    /// The recipe's direction.
    #[must_use]
    pub fn direction(&self) -> Direction {
        self.direction
    }

    /// How many fields were requested.
    #[must_use]
    pub fn requested(&self) -> usize {
        self.requested
    }

    /// How many types the reply named.
    #[must_use]
    pub fn answered(&self) -> usize {
        self.answered
    }

    /// The fields whose type differs, in recipe order (empty when the counts differ).
    #[must_use]
    pub fn types(&self) -> &[TypeMismatch] {
        &self.types
    }
}

impl fmt::Display for SetupReplyMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let package = match self.direction {
            Direction::Output => "SETUP_OUTPUTS",
            Direction::Input => "SETUP_INPUTS",
        };
        if self.requested != self.answered {
            return write!(
                f,
                "the controller's {package} reply names {} types for {} requested fields",
                self.answered, self.requested
            );
        }
        write!(
            f,
            "the controller's {package} reply disagrees with the recipe: "
        )?;
        for (i, m) in self.types.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(
                f,
                "`{}` is `{}` on the controller but `{}` in the recipe",
                m.name, m.found, m.expected
            )?;
        }
        f.write_str(
            "; the registry may be wrong for this controller version: please report it with \
             the controller version",
        )
    }
}

impl std::error::Error for SetupReplyMismatch {}

/// One field whose type in a setup reply differs from the recipe's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeMismatch {
    pub(crate) name: &'static str,
    pub(crate) expected: WireType,
    pub(crate) found: Box<str>,
}

impl TypeMismatch {
    /// The field.
    #[must_use]
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The recipe's (and registry's) type.
    #[must_use]
    pub fn expected(&self) -> WireType {
        self.expected
    }

    /// What the controller answered, verbatim.
    #[must_use]
    pub fn found(&self) -> &str {
        &self.found
    }
}

/// A real-time option the operating system refused, from
/// [`Client::spawn`](crate::Client::spawn).
///
/// ```
/// # use rtde_core::error::RealtimeRefused;
/// fn explain(refused: &RealtimeRefused) -> String {
///     format!("{} ({})", refused.asked(), refused.grant())
/// }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RealtimeRefused {
    pub(crate) asked: String,
    pub(crate) cause: String,
    pub(crate) grant: &'static str,
}

impl RealtimeRefused {
    /// What was asked: `SCHED_FIFO priority 80`, `CPU affinity to CPU 3`.
    #[must_use]
    pub fn asked(&self) -> &str {
        &self.asked
    }

    /// The operating system's reason.
    #[must_use]
    pub fn cause(&self) -> &str {
        &self.cause
    }

    /// What to grant or change for it to work.
    #[must_use]
    pub fn grant(&self) -> &'static str {
        self.grant
    }
}

impl fmt::Display for RealtimeRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the operating system refused {}: {}; {}",
            self.asked, self.cause, self.grant
        )
    }
}

impl std::error::Error for RealtimeRefused {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_stay_small() {
        // Every Result on the receive path carries one; boxing keeps it to a few words.
        assert!(
            size_of::<Error>() <= 32,
            "Error is {} bytes",
            size_of::<Error>()
        );
    }

    fn in_use(names: &[&'static str]) -> SetupRefused {
        SetupRefused {
            direction: Direction::Input,
            recipe_id: Some(0),
            not_found: vec![],
            in_use: names.to_vec(),
            reason: None,
        }
    }

    #[test]
    fn in_use_on_fieldbus_registers_says_who_probably_holds_them() {
        let e = in_use(&["input_int_register_3", "input_int_register_30"]);
        assert_eq!(
            e.in_use_fieldbus_registers().collect::<Vec<_>>(),
            ["input_int_register_3"]
        );
        let text = e.to_string();
        assert!(text.contains("`input_int_register_3`, `input_int_register_30` are IN_USE"));
        assert!(text.contains("`input_int_register_3` is probably held by an enabled EtherNet/IP"));
        assert!(text.contains("PROFINET or Modbus"));
        assert!(text.contains("24..47"));
        assert!(text.contains("64..127"));
        assert!(text.contains("`input_int_register_30` is probably held by another RTDE client"));
    }

    #[test]
    fn in_use_hints_name_each_owner_class() {
        let e = in_use(&[
            "tool_digital_output_mask",
            "tool_digital_output",
            "speed_slider_mask",
            "standard_digital_output",
            "external_force_torque",
            "input_double_register_30",
        ]);
        let owners: Vec<InUseOwner> = e.in_use_owners().map(|(_, o)| o).collect();
        assert_eq!(
            owners,
            [
                InUseOwner::GripperUrcap,
                InUseOwner::GripperUrcap,
                InUseOwner::RosDriver,
                InUseOwner::RosDriver,
                InUseOwner::ForceTorqueUrcap,
                InUseOwner::AnotherClient,
            ]
        );
        let text = e.to_string();
        for expected in [
            "`tool_digital_output_mask`, `tool_digital_output` are probably held by a gripper \
             URCap such as OnRobot's",
            "`speed_slider_mask`, `standard_digital_output` are probably held by the Universal \
             Robots ROS driver",
            "`external_force_torque` is probably held by a force/torque sensor URCap",
            "`input_double_register_30` is probably held by another RTDE client, or an earlier \
             session of this program that has not closed",
        ] {
            assert!(text.contains(expected), "{expected:?} not in {text:?}");
        }
        assert!(!text.contains("fieldbus adapters;"), "{text}");
    }

    #[test]
    fn a_refused_connection_says_rtde_may_be_disabled() {
        let e = Error::Connect {
            addr: "127.0.0.1:30004".into(),
            source: io::Error::from(io::ErrorKind::ConnectionRefused),
        };
        let text = e.to_string();
        assert!(
            text.contains("RTDE may be disabled in the robot's security settings"),
            "{text}"
        );
        assert!(text.contains("PolyScope X"), "{text}");
    }
}
