//! The live view: the Foxglove WebSocket protocol, served from one thread.
//!
//! One thread owns the listening socket, every client's socket and the encoding: a
//! package handed to [`ViewServer::publish`] is encoded once per channel and written to
//! each subscribed client without blocking. A client that reads too slowly fills its
//! socket and then a write buffer of [`ViewOptions::client_buffer`] bytes; the frames
//! that would overflow it are dropped and counted ([`ViewStats::dropped_slow`]), so one
//! slow viewer never holds up the others or the recording. The WebSocket handshake of
//! each new client runs on a short-lived thread of its own.

use std::collections::BTreeMap;
use std::io::{self, ErrorKind};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rtde_kinematics::Arm;
use rtde_record::capture::Header;
use tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tungstenite::http::{HeaderValue, StatusCode};
use tungstenite::protocol::frame::coding::CloseCode;
use tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tungstenite::{Message, WebSocket};

use crate::encode::{Derived, Layout, Timeline};
use crate::error::Error;
use crate::{GAPS_TOPIC, MODES_TOPIC, OUTPUTS_TOPIC, TCP_POSE_TOPIC, TF_TOPIC, schema};

/// The WebSocket subprotocols the view speaks, in the order it prefers them: the name the
/// Foxglove SDK gives the protocol, and the name of its first specification.
pub const SUBPROTOCOLS: [&str; 2] = ["foxglove.sdk.v1", "foxglove.websocket.v1"];

/// The binary opcode of a message on a subscribed channel.
const MESSAGE_DATA: u8 = 0x01;
/// How long the server thread waits for a package before it looks at its clients again.
const POLL: Duration = Duration::from_millis(10);
/// The longest the server waits on a closing client: to take the server's Close, and at
/// shutdown to answer it.
const CLOSE_WAIT: Duration = Duration::from_millis(500);
/// How long a client has to finish its WebSocket handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);
/// Bytes of frames gathered before a write to a client's socket (a package's frames are
/// written together at its end in any case).
const WRITE_BUFFER: usize = 32 << 10;
/// The least a client may have waiting: more than the gathering buffer.
const MIN_CLIENT_BUFFER: usize = 128 << 10;
/// The most latencies kept for [`ViewServer::take_latencies`] (the oldest beyond go).
const LATENCIES_KEPT: usize = 1 << 20;

/// How the view serves.
#[derive(Clone, Debug)]
pub struct ViewOptions {
    addr: SocketAddr,
    arm: Arm,
    robot: String,
    client_buffer: usize,
    queue: usize,
}

impl Default for ViewOptions {
    fn default() -> Self {
        ViewOptions {
            addr: SocketAddr::from(([127, 0, 0, 1], 8765)),
            arm: Arm::UR5E,
            robot: String::from("robot"),
            client_buffer: 1 << 20,
            queue: 4096,
        }
    }
}

impl ViewOptions {
    /// Serve on `127.0.0.1:8765` (Foxglove's default port), a UR5e, 1 MiB per client.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// The address to listen on; port 0 picks a free one ([`ViewServer::addr`] says which).
    /// Anything but loopback lets other machines watch the robot: the protocol has no
    /// authentication.
    #[must_use]
    pub fn addr(mut self, addr: SocketAddr) -> Self {
        self.addr = addr;
        self
    }

    /// The arm whose kinematics give the link frames (the simulator's is the UR5e).
    #[must_use]
    pub fn arm(mut self, arm: Arm) -> Self {
        self.arm = arm;
        self
    }

    /// The robot's name, shown in the viewer's connection details.
    #[must_use]
    pub fn robot(mut self, robot: impl Into<String>) -> Self {
        self.robot = robot.into();
        self
    }

    /// How many bytes of frames a client may have waiting, beyond its socket's buffer,
    /// before frames for it are dropped (at least 128 KiB: a frame larger than this
    /// would never be sent).
    #[must_use]
    pub fn client_buffer(mut self, bytes: usize) -> Self {
        self.client_buffer = bytes.max(MIN_CLIENT_BUFFER);
        self
    }

    /// How many packages may wait for the server thread before [`ViewServer::publish`]
    /// drops them (counted as [`ViewStats::dropped_queue`]).
    #[must_use]
    pub fn queue(mut self, packages: usize) -> Self {
        self.queue = packages.max(1);
        self
    }
}

/// What the view did so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ViewStats {
    /// Clients connected now.
    pub clients: usize,
    /// Packages published.
    pub packages: u64,
    /// Frames written to clients.
    pub frames: u64,
    /// Frames dropped because their client read too slowly.
    pub dropped_slow: u64,
    /// Packages dropped because the server thread fell behind the publisher.
    pub dropped_queue: u64,
}

#[derive(Debug, Default)]
struct Shared {
    clients: AtomicUsize,
    packages: AtomicU64,
    frames: AtomicU64,
    dropped_slow: AtomicU64,
    dropped_queue: AtomicU64,
    latencies: Mutex<Vec<Duration>>,
}

enum Item {
    Package {
        payload: Vec<u8>,
        arrived: Instant,
        arrived_unix_us: i64,
    },
    Reconnected,
}

/// A Foxglove WebSocket server for one output recipe's packages.
///
/// It advertises `/rtde/outputs` (every field), `/rtde/gaps`, and, when the recipe has
/// what they need, `/tf` (`foxglove.FrameTransforms` from `actual_q`), `/tcp_pose`
/// (`foxglove.PoseInFrame` from `actual_TCP_pose`) and `/rtde/modes` (`robot_mode`,
/// `safety_mode` by name). Each message is stamped with the package's host time by the
/// robot-to-host mapping.
///
/// ```no_run
/// use std::time::{Instant, SystemTime, UNIX_EPOCH};
/// use rtde_record::capture::Header;
/// use rtde_core::{Client, ConnectOptions, DynamicRecipe, Recipe, RTDE_PORT};
/// use rtde_view::{ViewOptions, ViewServer};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let recipe = DynamicRecipe::outputs(["timestamp", "actual_q", "actual_TCP_pose", "robot_mode", "safety_mode"])?;
/// let mut client = Client::connect(("192.168.1.10", RTDE_PORT), ConnectOptions::new())?;
/// client.setup_outputs(recipe.spec(), 125.0)?;
/// let header = Header {
///     protocol: client.protocol_version(),
///     controller: client.controller_version(),
///     frequency: 125.0,
///     recipe_id: client.output_recipe_id(),
///     started_unix_micros: 0,
///     fields: recipe.fields().to_vec(),
/// };
/// let view = ViewServer::start(&header, ViewOptions::new())?;
/// println!("open {} in Foxglove", view.url());
/// client.start()?;
/// loop {
///     let payload = client.recv()?;
///     let now = SystemTime::now().duration_since(UNIX_EPOCH)?.as_micros() as i64;
///     view.publish(payload, Instant::now(), now);
/// }
/// # }
/// ```
#[derive(Debug)]
pub struct ViewServer {
    addr: SocketAddr,
    tx: SyncSender<Item>,
    shared: Arc<Shared>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl ViewServer {
    /// Listens on the options' address and starts serving the stream `header` describes.
    ///
    /// # Errors
    /// [`Error::Bind`] when the address cannot be listened on; [`Error::Io`] when the
    /// server thread cannot start.
    pub fn start(header: &Header, options: ViewOptions) -> Result<ViewServer, Error> {
        let listener = TcpListener::bind(options.addr).map_err(|source| Error::Bind {
            addr: options.addr,
            source,
        })?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let (tx, rx) = mpsc::sync_channel(options.queue);
        let shared = Arc::new(Shared::default());
        let stop = Arc::new(AtomicBool::new(false));
        let layout = Layout::new(&header.fields);
        let derived = Derived::new(&layout, options.arm);
        let channels = channels(header, &derived);
        let server_info = server_info(header, &options.robot);
        let advertise = advertise(&channels);
        let mut server = Server {
            listener,
            rx,
            shared: Arc::clone(&shared),
            stop: Arc::clone(&stop),
            timeline: Timeline::new(header, &layout),
            layout,
            derived,
            channels,
            greeting: Arc::new([server_info, advertise]),
            // A package's frames gather in the client's buffer and go to its socket in one
            // write when the package is done (the flush after each package); what the
            // socket cannot take waits, up to the client's allowance.
            config: WebSocketConfig::default()
                .write_buffer_size(WRITE_BUFFER)
                .max_write_buffer_size(options.client_buffer),
            clients: Vec::new(),
            handshakes: mpsc::channel(),
            handshaking: Arc::new(AtomicUsize::new(0)),
            json: String::with_capacity(4096),
            frame: Vec::with_capacity(4096),
        };
        let thread = std::thread::Builder::new()
            .name("rtde-view".into())
            .spawn(move || server.run())?;
        Ok(ViewServer {
            addr,
            tx,
            shared,
            stop,
            thread: Some(thread),
        })
    }

    /// The address served.
    #[must_use]
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The URL to open in Foxglove or Lichtblick (Open connection → Foxglove WebSocket).
    #[must_use]
    pub fn url(&self) -> String {
        format!("ws://{}", self.addr)
    }

    /// Hands one data package (its values, as [`Client::recv`](rtde_core::Client::recv)
    /// returns them) to the view: `arrived` is when it was received (the latency is
    /// measured from it), `arrived_unix_us` the same moment by the host's clock (µs since
    /// the Unix epoch). Never blocks: a package the server thread has no room for is
    /// dropped and counted.
    pub fn publish(&self, payload: &[u8], arrived: Instant, arrived_unix_us: i64) {
        self.shared.packages.fetch_add(1, Ordering::Relaxed);
        let item = Item::Package {
            payload: payload.to_vec(),
            arrived,
            arrived_unix_us,
        };
        if let Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) = self.tx.try_send(item) {
            self.shared.dropped_queue.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The link to the controller was lost and is back: a new time mapping at the next
    /// package, and a reconnection on the gap channel.
    pub fn reconnected(&self) {
        let _ = self.tx.send(Item::Reconnected);
    }

    /// What the view did so far.
    #[must_use]
    pub fn stats(&self) -> ViewStats {
        let s = &self.shared;
        ViewStats {
            clients: s.clients.load(Ordering::Relaxed),
            packages: s.packages.load(Ordering::Relaxed),
            frames: s.frames.load(Ordering::Relaxed),
            dropped_slow: s.dropped_slow.load(Ordering::Relaxed),
            dropped_queue: s.dropped_queue.load(Ordering::Relaxed),
        }
    }

    /// For each package written to at least one client since the last call: the time from
    /// its arrival to its last frame being written to the clients' sockets.
    #[must_use]
    pub fn take_latencies(&self) -> Vec<Duration> {
        let mut kept = self
            .shared
            .latencies
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        std::mem::take(&mut *kept)
    }

    /// Closes every client's connection and stops serving.
    pub fn shutdown(mut self) {
        self.stop_thread();
    }

    fn stop_thread(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            // The thread handles no input that could make it panic but a bug.
            let _ = thread.join();
        }
    }
}

impl Drop for ViewServer {
    fn drop(&mut self) {
        self.stop_thread();
    }
}

/// A channel the view advertises.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Channel {
    Outputs = 1,
    Gaps = 2,
    Frames = 3,
    Pose = 4,
    Modes = 5,
}

struct Advertised {
    channel: Channel,
    topic: &'static str,
    schema_name: &'static str,
    schema: String,
}

fn channels(header: &Header, derived: &Derived) -> Vec<Advertised> {
    let mut all = vec![
        Advertised {
            channel: Channel::Outputs,
            topic: OUTPUTS_TOPIC,
            schema_name: schema::OUTPUTS,
            schema: schema::outputs(&header.fields),
        },
        Advertised {
            channel: Channel::Gaps,
            topic: GAPS_TOPIC,
            schema_name: schema::GAP,
            schema: schema::GAP_SCHEMA.to_owned(),
        },
    ];
    if derived.has_frames() {
        all.push(Advertised {
            channel: Channel::Frames,
            topic: TF_TOPIC,
            schema_name: schema::FRAME_TRANSFORMS,
            schema: schema::frame_transforms(),
        });
    }
    if derived.has_pose() {
        all.push(Advertised {
            channel: Channel::Pose,
            topic: TCP_POSE_TOPIC,
            schema_name: schema::POSE_IN_FRAME,
            schema: schema::pose_in_frame(),
        });
    }
    if derived.has_modes() {
        all.push(Advertised {
            channel: Channel::Modes,
            topic: MODES_TOPIC,
            schema_name: schema::MODES,
            schema: schema::MODES_SCHEMA.to_owned(),
        });
    }
    all
}

fn json_string(s: &str) -> String {
    serde_json::Value::from(s).to_string()
}

fn server_info(header: &Header, robot: &str) -> String {
    let names: Vec<&str> = header.fields.iter().map(|f| f.name()).collect();
    let metadata = BTreeMap::from([
        ("robot", robot.to_owned()),
        ("controller", header.controller.to_string()),
        ("frequency", header.frequency.to_string()),
        ("fields", names.join(",")),
    ]);
    let metadata: Vec<String> = metadata
        .iter()
        .map(|(k, v)| format!("{}:{}", json_string(k), json_string(v)))
        .collect();
    format!(
        "{{\"op\":\"serverInfo\",\"name\":{},\"capabilities\":[],\"metadata\":{{{}}}}}",
        json_string(&format!("rtde view: {robot}")),
        metadata.join(",")
    )
}

fn advertise(channels: &[Advertised]) -> String {
    let list: Vec<String> = channels
        .iter()
        .map(|c| {
            format!(
                "{{\"id\":{},\"topic\":{},\"encoding\":\"{}\",\"schemaName\":{},\"schema\":{},\"schemaEncoding\":\"{}\"}}",
                c.channel as u32,
                json_string(c.topic),
                schema::MESSAGE_ENCODING,
                json_string(c.schema_name),
                json_string(&c.schema),
                schema::SCHEMA_ENCODING
            )
        })
        .collect();
    format!("{{\"op\":\"advertise\",\"channels\":[{}]}}", list.join(","))
}

/// One connected client: its socket and its subscriptions (subscription id, channel).
struct Client {
    socket: WebSocket<TcpStream>,
    subscriptions: Vec<(u32, Channel)>,
}

/// The server thread's state.
struct Server {
    listener: TcpListener,
    rx: Receiver<Item>,
    shared: Arc<Shared>,
    stop: Arc<AtomicBool>,
    layout: Layout,
    timeline: Timeline,
    derived: Derived,
    channels: Vec<Advertised>,
    greeting: Arc<[String; 2]>,
    config: WebSocketConfig,
    clients: Vec<Client>,
    handshakes: (Sender<WebSocket<TcpStream>>, Receiver<WebSocket<TcpStream>>),
    /// Handshakes under way, on their threads.
    handshaking: Arc<AtomicUsize>,
    json: String,
    frame: Vec<u8>,
}

impl Server {
    fn run(&mut self) {
        // New connections and the clients' requests are looked at every `POLL`, not at
        // every package: each look is a system call per socket.
        let mut polled = Instant::now();
        while !self.stop.load(Ordering::Acquire) {
            if polled.elapsed() >= POLL {
                self.accept();
                self.read_requests();
                polled = Instant::now();
            }
            match self.rx.recv_timeout(POLL) {
                Ok(Item::Package {
                    payload,
                    arrived,
                    arrived_unix_us,
                }) => self.package(&payload, arrived, arrived_unix_us),
                Ok(Item::Reconnected) => self.timeline.reconnected(),
                Err(RecvTimeoutError::Timeout) => {}
                // The publisher is gone: serve until stopped, with nothing new.
                Err(RecvTimeoutError::Disconnected) => std::thread::sleep(POLL),
            }
        }
        self.close_all();
    }

    /// Says goodbye to every client (1001, going away) and waits, [`CLOSE_WAIT`] at most
    /// in all, for each one's Close, so that each sees a clean close rather than a reset.
    fn close_all(&mut self) {
        let deadline = Instant::now() + CLOSE_WAIT;
        // A viewer whose handshake is done, or under way, has been told it is connected
        // (or soon will be): it gets the goodbye too, not a reset.
        while self.handshaking.load(Ordering::Acquire) > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        self.take_handshaken();
        let going_away = CloseFrame {
            code: CloseCode::Away,
            reason: "the view is shutting down".into(),
        };
        for client in &mut self.clients {
            let _ = client.socket.close(Some(going_away.clone()));
            flush_blocking(&mut client.socket);
        }
        for mut client in self.clients.drain(..) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero()
                || client
                    .socket
                    .get_mut()
                    .set_read_timeout(Some(left))
                    .is_err()
            {
                continue;
            }
            // Until its Close comes (then tungstenite says ConnectionClosed) or time is up,
            // also for a client that keeps sending: each read may return at once.
            while Instant::now() < deadline && client.socket.read().is_ok() {}
        }
        self.shared.clients.store(0, Ordering::Relaxed);
    }

    /// Takes new connections to their handshake, and the handshaken ones in.
    fn accept(&mut self) {
        loop {
            match self.listener.accept() {
                Ok((stream, _)) => {
                    let done = self.handshakes.0.clone();
                    let greeting = Arc::clone(&self.greeting);
                    let config = self.config;
                    let pending = Pending::new(&self.handshaking);
                    // A client that never finishes its handshake costs its own thread only.
                    let _ = std::thread::Builder::new()
                        .name("rtde-view-handshake".into())
                        .spawn(move || {
                            let _pending = pending;
                            if let Ok(socket) = handshake(stream, config, &greeting) {
                                let _ = done.send(socket);
                            }
                        });
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                // A connection that failed before it was accepted: the next one may not.
                Err(_) => break,
            }
        }
        self.take_handshaken();
    }

    /// Takes in the clients whose handshake is done.
    fn take_handshaken(&mut self) {
        while let Ok(socket) = self.handshakes.1.try_recv() {
            self.clients.push(Client {
                socket,
                subscriptions: Vec::new(),
            });
        }
        self.shared
            .clients
            .store(self.clients.len(), Ordering::Relaxed);
    }

    fn package(&mut self, payload: &[u8], arrived: Instant, arrived_unix_us: i64) {
        if payload.len() != self.layout.size() {
            return;
        }
        let placed = self.timeline.place(payload, arrived_unix_us);
        let wanted = |c: Channel, clients: &[Client]| {
            clients
                .iter()
                .any(|cl| cl.subscriptions.iter().any(|&(_, ch)| ch == c))
        };
        let mut written = 0u64;
        for advertised in 0..self.channels.len() {
            let channel = self.channels[advertised].channel;
            if !wanted(channel, &self.clients) {
                continue;
            }
            self.json.clear();
            let has = match channel {
                Channel::Outputs => {
                    self.layout.outputs_json(payload, &mut self.json);
                    true
                }
                Channel::Gaps => placed.gap.is_some_and(|g| {
                    g.json(&mut self.json);
                    true
                }),
                Channel::Frames => {
                    self.derived
                        .frames_json(payload, placed.log_time, &mut self.json)
                }
                Channel::Pose => self
                    .derived
                    .pose_json(payload, placed.log_time, &mut self.json),
                Channel::Modes => self.derived.modes_json(payload, &mut self.json),
            };
            if has {
                written += self.send(channel, placed.log_time);
            }
        }
        let mut gone = Vec::new();
        for (i, client) in self.clients.iter_mut().enumerate() {
            if let Err(e) = client.socket.flush()
                && !would_block(&e)
            {
                gone.push(i);
            }
        }
        self.remove(&gone);
        if written > 0 {
            let mut kept = self
                .shared
                .latencies
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if kept.len() < LATENCIES_KEPT {
                kept.push(arrived.elapsed());
            }
        }
    }

    /// Writes the message in `self.json` to every client subscribed to `channel`; returns
    /// the frames written.
    fn send(&mut self, channel: Channel, log_time: u64) -> u64 {
        let mut written = 0;
        let mut gone = Vec::new();
        for (i, client) in self.clients.iter_mut().enumerate() {
            for &(id, _) in client.subscriptions.iter().filter(|(_, c)| *c == channel) {
                self.frame.clear();
                self.frame.push(MESSAGE_DATA);
                self.frame.extend_from_slice(&id.to_le_bytes());
                self.frame.extend_from_slice(&log_time.to_le_bytes());
                self.frame.extend_from_slice(self.json.as_bytes());
                match client.socket.write(Message::binary(self.frame.clone())) {
                    Ok(()) => written += 1,
                    Err(tungstenite::Error::WriteBufferFull(_)) => {
                        self.shared.dropped_slow.fetch_add(1, Ordering::Relaxed);
                    }
                    // Queued; the socket takes it when it can.
                    Err(e) if would_block(&e) => written += 1,
                    Err(_) => {
                        gone.push(i);
                        break;
                    }
                }
            }
        }
        self.shared.frames.fetch_add(written, Ordering::Relaxed);
        self.remove(&gone);
        written
    }

    /// Reads what the clients sent: subscriptions, and closed connections.
    fn read_requests(&mut self) {
        let mut gone = Vec::new();
        for (i, client) in self.clients.iter_mut().enumerate() {
            loop {
                match client.socket.read() {
                    Ok(Message::Text(text)) => request(client, text.as_str(), &self.channels),
                    Ok(Message::Close(_)) => {
                        // tungstenite has queued the answering Close; RFC 6455 §5.5.1 wants
                        // it sent before the connection ends, or the viewer sees 1006.
                        flush_blocking(&mut client.socket);
                        gone.push(i);
                        break;
                    }
                    // A ping's pong is queued; the next read or package sends it.
                    Ok(_) => {}
                    Err(e) if would_block(&e) => break,
                    Err(_) => {
                        gone.push(i);
                        break;
                    }
                }
            }
        }
        self.remove(&gone);
    }

    fn remove(&mut self, gone: &[usize]) {
        for &i in gone.iter().rev() {
            self.clients.swap_remove(i);
        }
        self.shared
            .clients
            .store(self.clients.len(), Ordering::Relaxed);
    }
}

/// A handshake under way, counted from its accept until its thread has handed the socket
/// over (or given up): at shutdown, the server waits for it.
struct Pending(Arc<AtomicUsize>);

impl Pending {
    fn new(count: &Arc<AtomicUsize>) -> Pending {
        count.fetch_add(1, Ordering::AcqRel);
        Pending(Arc::clone(count))
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Sends what tungstenite has queued (a Close) before the socket is dropped, waiting at
/// most [`CLOSE_WAIT`]: a client that reads nothing cannot hold the server longer.
fn flush_blocking(socket: &mut WebSocket<TcpStream>) {
    let stream = socket.get_mut();
    if stream.set_nonblocking(false).is_ok() && stream.set_write_timeout(Some(CLOSE_WAIT)).is_ok() {
        let _ = socket.flush();
    }
}

fn would_block(e: &tungstenite::Error) -> bool {
    matches!(e, tungstenite::Error::Io(io) if io.kind() == ErrorKind::WouldBlock)
}

/// A client's request: `subscribe` and `unsubscribe`; anything else is ignored, as the
/// protocol allows a server without the capabilities it names.
fn request(client: &mut Client, text: &str, channels: &[Advertised]) {
    let Ok(json) = serde_json::from_str::<serde_json::Value>(text) else {
        return;
    };
    match json.get("op").and_then(serde_json::Value::as_str) {
        Some("subscribe") => {
            let list = json
                .get("subscriptions")
                .and_then(serde_json::Value::as_array);
            for s in list.into_iter().flatten() {
                let id = s
                    .get("id")
                    .and_then(serde_json::Value::as_u64)
                    .and_then(|id| u32::try_from(id).ok());
                let channel = s
                    .get("channelId")
                    .and_then(serde_json::Value::as_u64)
                    .and_then(|c| channels.iter().find(|a| a.channel as u64 == c));
                if let (Some(id), Some(channel)) = (id, channel)
                    && !client.subscriptions.iter().any(|&(i, _)| i == id)
                {
                    client.subscriptions.push((id, channel.channel));
                }
            }
        }
        Some("unsubscribe") => {
            let ids = json
                .get("subscriptionIds")
                .and_then(serde_json::Value::as_array);
            for id in ids
                .into_iter()
                .flatten()
                .filter_map(serde_json::Value::as_u64)
            {
                client.subscriptions.retain(|&(i, _)| u64::from(i) != id);
            }
        }
        _ => {}
    }
}

/// The WebSocket handshake with the Foxglove subprotocol, then the server info and the
/// channels; the socket is left non-blocking for the server thread.
fn handshake(
    stream: TcpStream,
    config: WebSocketConfig,
    greeting: &[String; 2],
) -> Result<WebSocket<TcpStream>, io::Error> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(HANDSHAKE_TIMEOUT))?;
    stream.set_write_timeout(Some(HANDSHAKE_TIMEOUT))?;
    stream.set_nodelay(true)?;
    // The error type is tungstenite's callback's, a whole HTTP response.
    #[allow(clippy::result_large_err)]
    let choose = |request: &Request, mut response: Response| {
        let offered: Vec<&str> = request
            .headers()
            .get_all("Sec-WebSocket-Protocol")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .collect();
        match SUBPROTOCOLS.iter().find(|p| offered.contains(p)) {
            Some(p) => {
                response
                    .headers_mut()
                    .insert("Sec-WebSocket-Protocol", HeaderValue::from_static(p));
                Ok(response)
            }
            None => {
                let mut refusal = ErrorResponse::new(Some(format!(
                    "this is a Foxglove WebSocket server: ask for subprotocol {}",
                    SUBPROTOCOLS.join(" or ")
                )));
                *refusal.status_mut() = StatusCode::BAD_REQUEST;
                Err(refusal)
            }
        }
    };
    let mut socket = tungstenite::accept_hdr_with_config(stream, choose, Some(config))
        .map_err(|e| io::Error::other(e.to_string()))?;
    for text in greeting {
        socket
            .send(Message::text(text.clone()))
            .map_err(|e| io::Error::other(e.to_string()))?;
    }
    socket.get_mut().set_nonblocking(true)?;
    Ok(socket)
}
