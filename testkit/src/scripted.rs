//! A scripted fake controller: binds 127.0.0.1:0, accepts connections on a thread of its
//! own, and plays one script of expected client packages and canned replies per connection,
//! encoded with the protocol module. Any difference from a script fails the test in
//! [`FakePeer::finish`]; every wait of the peer is bounded by [`PEER_PATIENCE`].

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rtde_core::protocol::{
    ClientMessage, ControllerMessage, FrameBuffer, HEADER_LEN, MessageLevel, ProtocolVersion,
    TextMessage, package_type,
};

/// How long the peer waits for the client before failing the test instead of hanging.
pub const PEER_PATIENCE: Duration = Duration::from_secs(10);

#[derive(Debug)]
enum Step {
    /// The next package from the client must be exactly these bytes.
    Expect { bytes: Vec<u8>, what: String },
    /// Send these bytes.
    Send(Vec<u8>),
    /// Send `data` from a second thread while reading `inputs` packages from the client.
    Stream { data: Vec<u8>, inputs: usize },
    /// Send nothing for this long.
    Wait(Duration),
    /// Send and read nothing until the test lets go (drops the sender), or for
    /// [`PEER_PATIENCE`] at most.
    Hold(std::sync::mpsc::Receiver<()>),
    /// Tell the test the script got here.
    Reached(std::sync::mpsc::Sender<()>),
    /// Close the connection.
    Close,
    /// Read until the client closes; no package may arrive before that.
    ExpectEof,
}

/// What the peer received on one connection.
#[derive(Debug, Default)]
pub struct Transcript {
    /// Input data packages received during `Stream` steps: (recipe id, values).
    pub inputs: Vec<(u8, Vec<u8>)>,
    /// Every package matched by an `Expect` step, header included, in order.
    pub expected: Vec<Vec<u8>>,
}

impl Transcript {
    /// The packages of type `kind` matched by `Expect` steps.
    pub fn of_type(&self, kind: u8) -> Vec<&[u8]> {
        self.expected
            .iter()
            .filter(|p| p[2] == kind)
            .map(Vec::as_slice)
            .collect()
    }
}

/// A list of steps, each encoded in the protocol version in force when it was added.
#[derive(Debug)]
pub struct Script {
    version: ProtocolVersion,
    steps: Vec<Step>,
}

impl Default for Script {
    fn default() -> Self {
        Self::new()
    }
}

impl Script {
    /// An empty script; packages are encoded as v1 until [`Script::version`] says otherwise
    /// (the layouts of the version negotiation do not depend on it).
    pub fn new() -> Self {
        Script {
            version: ProtocolVersion::V1,
            steps: Vec::new(),
        }
    }

    /// Encodes the following steps in `version`.
    pub fn version(mut self, version: ProtocolVersion) -> Self {
        self.version = version;
        self
    }

    /// The client must send `msg` next.
    pub fn expect(mut self, msg: ClientMessage<'_>) -> Self {
        let mut buf = vec![0u8; 70_000];
        let n = msg
            .encode(self.version, &mut buf)
            .expect("script package encodes");
        buf.truncate(n);
        self.steps.push(Step::Expect {
            bytes: buf,
            what: format!("{msg:?}"),
        });
        self
    }

    /// The peer sends `msg`.
    pub fn reply(mut self, msg: ControllerMessage<'_>) -> Self {
        let bytes = encode(self.version, &msg);
        self.steps.push(Step::Send(bytes));
        self
    }

    /// The peer sends a text message.
    pub fn text(self, message: &str) -> Self {
        // v1 text messages carry no source.
        let source: &[u8] = match self.version {
            ProtocolVersion::V1 => b"",
            ProtocolVersion::V2 => b"fake",
        };
        self.reply(ControllerMessage::TextMessage(TextMessage {
            level: MessageLevel::Warning,
            message: message.as_bytes(),
            source,
        }))
    }

    /// The peer sends raw bytes.
    pub fn raw(mut self, bytes: &[u8]) -> Self {
        self.steps.push(Step::Send(bytes.to_vec()));
        self
    }

    /// The peer sends nothing for `d` (a controller that stalls).
    pub fn wait(mut self, d: Duration) -> Self {
        self.steps.push(Step::Wait(d));
        self
    }

    /// The peer neither sends nor reads (a controller that stopped reading) until `release`
    /// is dropped, or for [`PEER_PATIENCE`] at most.
    pub fn hold(mut self, release: std::sync::mpsc::Receiver<()>) -> Self {
        self.steps.push(Step::Hold(release));
        self
    }

    /// The peer tells the test that the client got this far (connected, say), so the
    /// test acts on it at that point rather than after a guessed delay.
    pub fn reached(mut self, signal: std::sync::mpsc::Sender<()>) -> Self {
        self.steps.push(Step::Reached(signal));
        self
    }

    /// The peer sends `data` while it reads `inputs` input packages from the client.
    pub fn stream(mut self, data: Vec<u8>, inputs: usize) -> Self {
        self.steps.push(Step::Stream { data, inputs });
        self
    }

    /// The peer closes the connection.
    pub fn close(mut self) -> Self {
        self.steps.push(Step::Close);
        self
    }

    /// The client must send nothing more before it closes the connection.
    pub fn expect_eof(mut self) -> Self {
        self.steps.push(Step::ExpectEof);
        self
    }

    /// Protocol v2 accepted, then the controller's version.
    pub fn handshake_v2(self, controller: &str) -> Self {
        self.version(ProtocolVersion::V1)
            .expect(ClientMessage::RequestProtocolVersion { version: 2 })
            .reply(ControllerMessage::ProtocolVersionReply { accepted: true })
            .version(ProtocolVersion::V2)
            .expect(ClientMessage::GetUrcontrolVersion)
            .reply(ControllerMessage::UrcontrolVersion(
                controller.parse().expect("a controller version"),
            ))
    }

    /// Protocol v2 refused and v1 accepted (a v1-only controller), then the controller's
    /// version.
    pub fn handshake_v1(self, controller: &str) -> Self {
        self.version(ProtocolVersion::V1)
            .expect(ClientMessage::RequestProtocolVersion { version: 2 })
            .reply(ControllerMessage::ProtocolVersionReply { accepted: false })
            .expect(ClientMessage::RequestProtocolVersion { version: 1 })
            .reply(ControllerMessage::ProtocolVersionReply { accepted: true })
            .expect(ClientMessage::GetUrcontrolVersion)
            .reply(ControllerMessage::UrcontrolVersion(
                controller.parse().expect("a controller version"),
            ))
    }

    /// SETUP_OUTPUTS of `names` in protocol v1 (no frequency), answered with `types` (and no
    /// recipe id).
    pub fn setup_outputs_v1(self, names: &str, types: &str) -> Self {
        self.expect(ClientMessage::SetupOutputs {
            frequency: None,
            names,
        })
        .reply(ControllerMessage::SetupOutputsReply {
            recipe_id: None,
            types,
        })
    }

    /// SETUP_OUTPUTS of `names` at `frequency` (v2), answered with `types` and `recipe_id`.
    pub fn setup_outputs(self, frequency: f64, names: &str, recipe_id: u8, types: &str) -> Self {
        self.expect(ClientMessage::SetupOutputs {
            frequency: Some(frequency),
            names,
        })
        .reply(ControllerMessage::SetupOutputsReply {
            recipe_id: Some(recipe_id),
            types,
        })
    }

    /// SETUP_INPUTS of `names`, answered with `types` and `recipe_id`.
    pub fn setup_inputs(self, names: &str, recipe_id: u8, types: &str) -> Self {
        self.expect(ClientMessage::SetupInputs { names })
            .reply(ControllerMessage::SetupInputsReply { recipe_id, types })
    }

    /// START, accepted.
    pub fn start(self) -> Self {
        self.expect(ClientMessage::Start)
            .reply(ControllerMessage::StartReply { accepted: true })
    }

    /// PAUSE, accepted.
    pub fn pause(self) -> Self {
        self.expect(ClientMessage::Pause)
            .reply(ControllerMessage::PauseReply { accepted: true })
    }
}

/// Encodes one controller package.
pub fn encode(version: ProtocolVersion, msg: &ControllerMessage<'_>) -> Vec<u8> {
    let mut buf = vec![0u8; 70_000];
    let n = msg
        .encode(version, &mut buf)
        .expect("script package encodes");
    buf.truncate(n);
    buf
}

/// A v2 output data package of recipe `recipe_id` with these values.
pub fn data_v2(recipe_id: u8, values: &[u8]) -> Vec<u8> {
    encode(
        ProtocolVersion::V2,
        &ControllerMessage::DataPackage {
            recipe_id: Some(recipe_id),
            payload: values,
        },
    )
}

/// The values of a `timestamp, actual_q` package: the time, then six doubles.
pub fn timestamp_and_q(t: f64, q: f64) -> Vec<u8> {
    let mut v = t.to_be_bytes().to_vec();
    for _ in 0..6 {
        v.extend_from_slice(&q.to_be_bytes());
    }
    v
}

/// The fake controller, running.
#[derive(Debug)]
pub struct FakePeer {
    /// Where it listens.
    pub addr: SocketAddr,
    thread: JoinHandle<Result<Vec<Transcript>, String>>,
}

impl FakePeer {
    /// Binds 127.0.0.1:0 and plays `script` on the first connection.
    pub fn start(script: Script) -> FakePeer {
        Self::start_many(vec![script])
    }

    /// Binds 127.0.0.1:0 and plays `scripts[i]` on the `i`th connection; stops listening
    /// after the last (later connections are refused).
    pub fn start_many(scripts: Vec<Script>) -> FakePeer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local address");
        let thread = std::thread::spawn(move || {
            let mut transcripts = Vec::new();
            for (i, script) in scripts.into_iter().enumerate() {
                let stream = accept(&listener).map_err(|e| format!("connection {i}: {e}"))?;
                let transcript =
                    play(stream, script.steps).map_err(|e| format!("connection {i}: {e}"))?;
                transcripts.push(transcript);
            }
            Ok(transcripts)
        });
        FakePeer { addr, thread }
    }

    /// Waits for the script to end and fails the test if the client strayed from it.
    /// Drop or close the client first when the script ends with [`Script::expect_eof`].
    pub fn finish(self) -> Transcript {
        self.finish_all()
            .into_iter()
            .next()
            .expect("one connection's transcript")
    }

    /// [`FakePeer::finish`] for every connection.
    pub fn finish_all(self) -> Vec<Transcript> {
        match self.thread.join() {
            Ok(Ok(transcripts)) => transcripts,
            Ok(Err(e)) => panic!("fake controller: {e}"),
            Err(_) => panic!("fake controller panicked"),
        }
    }
}

/// Accepts the next connection within [`PEER_PATIENCE`], so a client that never comes
/// fails the test instead of hanging it.
fn accept(listener: &TcpListener) -> Result<TcpStream, String> {
    listener
        .set_nonblocking(true)
        .map_err(|e| format!("listener: {e}"))?;
    let deadline = Instant::now() + PEER_PATIENCE;
    loop {
        match listener.accept() {
            Ok((stream, _)) => {
                stream
                    .set_nonblocking(false)
                    .map_err(|e| format!("accepted socket: {e}"))?;
                return Ok(stream);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if Instant::now() >= deadline {
                    return Err(format!("no client connected within {PEER_PATIENCE:?}"));
                }
                // Polling the peer's own listener, not waiting for a server.
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(e) => return Err(format!("accept: {e}")),
        }
    }
}

/// Reads the client's packages.
struct Reader {
    stream: TcpStream,
    frames: FrameBuffer,
}

impl Reader {
    /// The next whole package as bytes, header included; `None` at EOF.
    fn next(&mut self) -> Result<Option<Vec<u8>>, String> {
        loop {
            if let Some(frame) = self
                .frames
                .next_frame()
                .map_err(|e| format!("client sent garbage: {e}"))?
            {
                let len = u16::try_from(HEADER_LEN + frame.payload.len()).expect("u16 size");
                let mut bytes = len.to_be_bytes().to_vec();
                bytes.push(frame.kind);
                bytes.extend_from_slice(frame.payload);
                return Ok(Some(bytes));
            }
            match self.stream.read(self.frames.spare()) {
                Ok(0) => {
                    return if self.frames.buffered().is_empty() {
                        Ok(None)
                    } else {
                        Err("client closed in the middle of a package".into())
                    };
                }
                Ok(n) => self.frames.commit(n),
                Err(e) => return Err(format!("reading from the client: {e}")),
            }
        }
    }
}

fn play(stream: TcpStream, steps: Vec<Step>) -> Result<Transcript, String> {
    stream
        .set_read_timeout(Some(PEER_PATIENCE))
        .map_err(|e| e.to_string())?;
    let mut writer = stream.try_clone().map_err(|e| e.to_string())?;
    let mut reader = Reader {
        stream,
        frames: FrameBuffer::new(),
    };
    let mut transcript = Transcript::default();
    for (i, step) in steps.into_iter().enumerate() {
        match step {
            Step::Expect { bytes, what } => match reader.next()? {
                Some(got) if got == bytes => transcript.expected.push(got),
                Some(got) => {
                    return Err(format!(
                        "step {i}: expected {what} {bytes:02x?}, got {got:02x?} ({})",
                        package_type::name(got[2])
                    ));
                }
                None => return Err(format!("step {i}: expected {what}, the client closed")),
            },
            Step::Send(bytes) => writer
                .write_all(&bytes)
                .map_err(|e| format!("step {i}: sending: {e}"))?,
            Step::Stream { data, inputs } => {
                let mut data_writer = writer.try_clone().map_err(|e| e.to_string())?;
                let sender = std::thread::spawn(move || data_writer.write_all(&data));
                for n in 0..inputs {
                    let Some(got) = reader.next()? else {
                        return Err(format!("step {i}: the client closed after {n} inputs"));
                    };
                    if got[2] != package_type::DATA_PACKAGE {
                        return Err(format!(
                            "step {i}: expected an input DATA_PACKAGE, got {}",
                            package_type::name(got[2])
                        ));
                    }
                    transcript.inputs.push((got[3], got[4..].to_vec()));
                }
                sender
                    .join()
                    .map_err(|_| "sender panicked".to_string())?
                    .map_err(|e| format!("step {i}: streaming: {e}"))?;
            }
            Step::Wait(d) => std::thread::sleep(d),
            Step::Hold(release) => {
                let _ = release.recv_timeout(PEER_PATIENCE);
            }
            Step::Reached(signal) => {
                let _ = signal.send(());
            }
            Step::Close => {
                let _ = writer.shutdown(Shutdown::Both);
                return Ok(transcript);
            }
            Step::ExpectEof => {
                if let Some(got) = reader.next()? {
                    return Err(format!(
                        "step {i}: expected the client to send nothing more, got {} {got:02x?}",
                        package_type::name(got[2])
                    ));
                }
            }
        }
    }
    Ok(transcript)
}
