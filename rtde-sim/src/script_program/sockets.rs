//! A script's sockets (`socket_open`, `socket_send_*`, `socket_read_*`, `socket_get_var`):
//! real TCP connections from the simulator to programs on this machine, the way a
//! controller's script reaches a host (the UR Client Library's reverse interface, a
//! user's own server). Loopback only: a simulator reaches nothing beyond its machine.
//!
//! A read blocks its thread, not the tick: it waits, a tick at a time, until the bytes it
//! needs are in or its timeout passes, and then gives what the manual says a failed read
//! gives.

use std::collections::{BTreeMap, HashMap};
use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rtde_urscript::run::{HostCall, Progress, Reply, Value};

/// How long `socket_open` waits for a connection on loopback, where an answer (accepted
/// or refused) is immediate unless the listener's backlog is full.
const CONNECT_TIMEOUT: Duration = Duration::from_millis(200);

/// The script's sockets, by name, and the reads under way, by ticket. Shared by the
/// program's snapshots (`Sim::script_program`), which only look.
#[derive(Clone, Debug, Default)]
pub(super) struct Sockets(Arc<Mutex<Table>>);

#[derive(Debug, Default)]
struct Table {
    open: HashMap<String, Socket>,
    reads: BTreeMap<u64, Reading>,
}

#[derive(Debug)]
struct Socket {
    stream: TcpStream,
    /// Bytes received and not yet read by the script.
    received: Vec<u8>,
    /// The peer closed, or reading failed: what is buffered is all there will be.
    ended: bool,
}

/// A read under way.
#[derive(Clone, Debug)]
struct Reading {
    socket: String,
    what: Wanted,
    /// Ticks left before it times out.
    ticks_left: u64,
}

/// What a read waits for.
#[derive(Clone, Debug)]
enum Wanted {
    /// `socket_read_binary_integer`: this many big-endian 32-bit integers.
    Integers(usize),
    /// `socket_read_ascii_float`: this many numbers written `(1.0,2.5,…)`.
    AsciiFloats(usize),
    /// `socket_read_byte_list`: this many bytes.
    Bytes(usize),
    /// `socket_read_string`: the text between `prefix` and `suffix` (any text, when
    /// both are empty).
    Text { prefix: String, suffix: String },
    /// `socket_read_line`: a line, without its end.
    Line,
    /// `socket_get_var`: the reply `NAME VALUE` to `get NAME`.
    Var(String),
}

impl Sockets {
    fn table(&self) -> std::sync::MutexGuard<'_, Table> {
        // A panic elsewhere leaves the table whole: each change is one insert or remove.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The socket built-ins; `None` for any other. A read waits under the ticket `ticket`
    /// gives it; `dt` is the tick, for its timeout; `say` takes what the script's log
    /// should show (why an open failed).
    pub(super) fn call(
        &self,
        call: &HostCall<'_>,
        dt: f64,
        ticket: &mut dyn FnMut() -> u64,
        say: &mut dyn FnMut(String),
    ) -> Option<Result<Reply, String>> {
        let name = |i: usize| call.arg(i).to_string();
        let int = |i: usize| call.arg(i).int();
        let count = |i: usize| int(i).map(|n| usize::try_from(n).unwrap_or(0));
        let ticks = |i: usize| call.arg(i).number().map(|t| ticks_of(t, dt));
        let mut read = |socket: String, what: Wanted, ticks_left: u64| {
            let t = ticket();
            let read = Reading {
                socket,
                what,
                ticks_left,
            };
            self.table().reads.insert(t, read);
            Reply::Blocked(t)
        };
        let done = |v: Value| Ok(Reply::Done(v));
        Some(match call.name {
            "socket_open" => int(1).and_then(|port| done(self.open(&name(0), port, name(2), say))),
            "socket_close" => {
                self.table().open.remove(&name(0));
                done(Value::None)
            }
            "socket_send_string" => done(self.send(&name(1), name(0).as_bytes())),
            "socket_send_line" => done(self.send(&name(1), format!("{}\n", name(0)).as_bytes())),
            // The manual's byte is the value's low eight bits.
            "socket_send_byte" => {
                int(0).and_then(|b| done(self.send(&name(1), &[b.to_be_bytes()[3]])))
            }
            "socket_send_int" => int(0).and_then(|v| done(self.send(&name(1), &v.to_be_bytes()))),
            "socket_set_var" => int(1).and_then(|v| {
                self.send(&name(2), format!("set {} {v}\n", name(0)).as_bytes());
                done(Value::None)
            }),
            "socket_get_var" => {
                let var = name(0);
                if self.send(&name(1), format!("get {var}\n").as_bytes()) == Value::Bool(true) {
                    Ok(read(
                        name(1),
                        Wanted::Var(var),
                        ticks_of(GET_VAR_TIMEOUT, dt),
                    ))
                } else {
                    done(Value::Int(0))
                }
            }
            "socket_read_binary_integer" => {
                count(0).and_then(|n| ticks(2).map(|t| read(name(1), Wanted::Integers(n), t)))
            }
            "socket_read_ascii_float" => {
                count(0).and_then(|n| ticks(2).map(|t| read(name(1), Wanted::AsciiFloats(n), t)))
            }
            "socket_read_byte_list" => {
                count(0).and_then(|n| ticks(2).map(|t| read(name(1), Wanted::Bytes(n), t)))
            }
            "socket_read_string" => {
                let what = Wanted::Text {
                    prefix: name(1),
                    suffix: name(2),
                };
                ticks(4).map(|t| read(name(0), what, t))
            }
            "socket_read_line" => ticks(1).map(|t| read(name(0), Wanted::Line, t)),
            _ => return None,
        })
    }

    /// How the read of `ticket` stands, once per tick; `None` when no read has it.
    pub(super) fn poll(&self, ticket: u64) -> Option<Progress> {
        let mut table = self.table();
        let Table { open, reads } = &mut *table;
        let read = reads.get_mut(&ticket)?;
        let got = match open.get_mut(&read.socket) {
            Some(socket) => {
                socket.receive();
                read.what.take(&mut socket.received, socket.ended)
            }
            None => Some(read.what.failed()),
        };
        let progress = match got {
            Some(value) => Progress::Done(value),
            None if read.ticks_left <= 1 => Progress::Done(read.what.failed()),
            None => {
                read.ticks_left -= 1;
                return Some(Progress::Waiting);
            }
        };
        reads.remove(&ticket);
        Some(progress)
    }

    /// A read's thread was killed or the program stopped.
    pub(super) fn cancel(&self, ticket: u64) {
        self.table().reads.remove(&ticket);
    }

    fn open(&self, address: &str, port: i32, name: String, say: &mut dyn FnMut(String)) -> Value {
        match connect(address, port) {
            Ok(stream) => {
                let socket = Socket {
                    stream,
                    received: Vec::new(),
                    ended: false,
                };
                // A name opened again is a new connection, as on the controller.
                self.table().open.insert(name, socket);
                Value::Bool(true)
            }
            Err(why) => {
                say(format!("socket_open({address}, {port}) failed: {why}"));
                Value::Bool(false)
            }
        }
    }

    /// Sends `bytes` whole; `False` when the socket is not open or the peer is gone.
    fn send(&self, name: &str, bytes: &[u8]) -> Value {
        let mut table = self.table();
        let Some(socket) = table.open.get_mut(name) else {
            return Value::Bool(false);
        };
        Value::Bool(socket.send(bytes))
    }
}

/// `socket_get_var`'s wait for its reply: the manual gives it no timeout parameter.
const GET_VAR_TIMEOUT: f64 = 2.0;

/// A timeout in seconds as ticks of `dt`; a timeout past what ticks count is for ever.
fn ticks_of(seconds: f64, dt: f64) -> u64 {
    let ticks = (seconds.max(0.0) / dt).ceil();
    if ticks.is_nan() || ticks >= 1e15 {
        return u64::MAX;
    }
    // Within 0..1e15 just above: whole, not negative, exact in a u64.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let ticks = ticks as u64;
    ticks
}

/// Connects to `address:port`, refusing any address that is not this machine's loopback.
fn connect(address: &str, port: i32) -> Result<TcpStream, String> {
    let port = u16::try_from(port).map_err(|_| format!("{port} is no port number"))?;
    let addrs: Vec<SocketAddr> = (address, port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve `{address}`: {e}"))?
        .collect();
    let Some(addr) = addrs.into_iter().find(|a| is_loopback(a.ip())) else {
        return Err(format!(
            "`{address}` is not a loopback address: the simulator connects only to this machine"
        ));
    };
    let stream = TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT).map_err(|e| e.to_string())?;
    // The tick never waits on a socket: reads take what has arrived.
    stream.set_nonblocking(true).map_err(|e| e.to_string())?;
    stream.set_nodelay(true).map_err(|e| e.to_string())?;
    Ok(stream)
}

fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => {
            v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}

impl Socket {
    /// Takes in what has arrived, without waiting.
    fn receive(&mut self) {
        let mut chunk = [0u8; 4096];
        while !self.ended {
            match self.stream.read(&mut chunk) {
                Ok(0) => self.ended = true,
                Ok(n) => self.received.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(_) => self.ended = true,
            }
        }
    }

    /// Writes `bytes` whole. The socket does not block the tick: a peer that stops
    /// reading for longer than a short while loses the rest, and the send reports it.
    fn send(&mut self, bytes: &[u8]) -> bool {
        let mut left = bytes;
        let mut stalls = 0;
        while !left.is_empty() {
            match self.stream.write(left) {
                Ok(0) => return false,
                Ok(n) => left = &left[n..],
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock && stalls < SEND_STALLS => {
                    stalls += 1;
                    std::thread::sleep(Duration::from_micros(100));
                }
                Err(_) => return false,
            }
        }
        true
    }
}

/// How many times a send waits 100 µs for a full socket buffer before it gives up.
const SEND_STALLS: u32 = 10;

impl Wanted {
    /// Takes what this read needs from `buf` when it has all of it; `ended`: nothing more
    /// will come, so a read that cannot be met fails now.
    fn take(&self, buf: &mut Vec<u8>, ended: bool) -> Option<Value> {
        let got = match self {
            Wanted::Integers(n) => take_bytes(buf, n * 4).map(|bytes| {
                let ints = bytes
                    .chunks_exact(4)
                    .map(|c| Value::Int(i32::from_be_bytes([c[0], c[1], c[2], c[3]])));
                counted(*n, ints)
            }),
            Wanted::Bytes(n) => take_bytes(buf, *n)
                .map(|bytes| counted(*n, bytes.into_iter().map(|b| Value::Int(i32::from(b))))),
            Wanted::AsciiFloats(n) => take_between(buf, "(", ")").map(|text| {
                let numbers: Vec<f64> = text
                    .split(',')
                    .filter_map(|x| x.trim().parse().ok())
                    .collect();
                if numbers.len() == *n {
                    counted(*n, numbers.into_iter().map(Value::Float))
                } else {
                    self.failed()
                }
            }),
            // Without a suffix, whatever has come after the prefix.
            Wanted::Text { prefix, suffix } if suffix.is_empty() => {
                let start = find(buf, prefix.as_bytes(), 0)? + prefix.len();
                (buf.len() > start).then(|| {
                    let text = String::from_utf8_lossy(&buf[start..]).into_owned();
                    buf.clear();
                    Value::str(&text)
                })
            }
            Wanted::Text { prefix, suffix } => {
                take_between(buf, prefix, suffix).map(|t| Value::str(&t))
            }
            Wanted::Line => take_between(buf, "", "\n")
                .map(|line| Value::str(line.strip_suffix('\r').unwrap_or(&line))),
            Wanted::Var(var) => take_between(buf, "", "\n").map(|line| {
                let mut words = line.split_whitespace();
                match (words.next(), words.next().and_then(|v| v.parse().ok())) {
                    (Some(name), Some(v)) if name == var => Value::Int(v),
                    _ => Value::Int(0),
                }
            }),
        };
        got.or_else(|| ended.then(|| self.failed()))
    }

    /// What the manual says a read gives when it times out or fails.
    fn failed(&self) -> Value {
        match self {
            Wanted::Integers(n) => counted_failure(*n, Value::Int(-1)),
            Wanted::AsciiFloats(n) => counted_failure(*n, Value::Float(-1.0)),
            Wanted::Bytes(_) => Value::list(vec![Value::Int(0)]),
            Wanted::Text { .. } | Wanted::Line => Value::str(""),
            Wanted::Var(_) => Value::Int(0),
        }
    }
}

/// `[n, v1, …, vn]`, the shape of every counted read.
fn counted(n: usize, values: impl Iterator<Item = Value>) -> Value {
    let count = i32::try_from(n).unwrap_or(i32::MAX);
    Value::list(std::iter::once(Value::Int(count)).chain(values).collect())
}

/// `[0, x, …, x]`: nothing read, the places kept.
fn counted_failure(n: usize, x: Value) -> Value {
    Value::list(
        std::iter::once(Value::Int(0))
            .chain(std::iter::repeat_n(x, n))
            .collect(),
    )
}

/// The first `n` bytes, once `buf` has them.
fn take_bytes(buf: &mut Vec<u8>, n: usize) -> Option<Vec<u8>> {
    (buf.len() >= n).then(|| buf.drain(..n).collect())
}

/// The text between the first `prefix` and the `suffix` after it, once both are in; what
/// comes before the prefix and the two markers are dropped with it.
fn take_between(buf: &mut Vec<u8>, prefix: &str, suffix: &str) -> Option<String> {
    let start = find(buf, prefix.as_bytes(), 0)? + prefix.len();
    let end = find(buf, suffix.as_bytes(), start)?;
    let text = String::from_utf8_lossy(&buf[start..end]).into_owned();
    buf.drain(..end + suffix.len());
    Some(text)
}

fn find(haystack: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    if needle.is_empty() {
        return Some(from);
    }
    haystack
        .get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|i| i + from)
}
