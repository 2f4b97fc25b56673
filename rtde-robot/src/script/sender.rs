//! Sending a program to a script port and following its fate over the primary interface
//! and RTDE.

use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use rtde_core::fields::ControllerVersion;
use rtde_core::{
    Client, ConnectOptions, DynamicRecipe, Recipe, RobotMode, RuntimeState, SafetyMode,
    SafetyStatus, Value,
};

use super::Program;
use super::error::ScriptError;
use crate::dashboard::{Command, Dashboard, DashboardOptions, Reply};
use crate::primary::{Decoded, Decoder, PrimaryMessage};
use rtde_robot_proto::ports::{Ports, ScriptPort};

/// A step of [`ScriptSender::send_observed`], for progress output.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Step {
    /// The preconditions hold: the robot's mode and safety status.
    Checked {
        /// The robot's mode.
        mode: RobotMode,
        /// The safety status.
        safety: SafetyStatus,
    },
    /// The primary interface's version message arrived.
    Version(ControllerVersion),
    /// The program's bytes went out.
    Sent {
        /// How many.
        bytes: usize,
        /// Where.
        port: ScriptPort,
    },
    /// The controller said something (a text or key message).
    Said(String),
    /// RTDE reports the program playing.
    Playing,
}

/// Where [`ScriptSender`] checks the preconditions before sending.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Preconditions {
    /// The Dashboard server: remote control (e-Series 5.6 and later), the robot mode and
    /// the safety status.
    Dashboard,
    /// The primary interface's robot state: the robot mode and the safety mode, for a
    /// client that speaks only the primary interface (remote control cannot be read
    /// there).
    PrimaryInterface,
    /// None: the program is sent as it is.
    Unchecked,
}

/// A program that started: RTDE reported it playing, and no exception followed within
/// the settling time (or, with [`ScriptSender::until_end`], before it ended).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Started {
    /// The controller's version, from the primary interface.
    pub version: Option<ControllerVersion>,
    /// From sending to playing.
    pub after: Duration,
    /// How long it played, when it ended while watched: always with
    /// [`ScriptSender::until_end`], and for a program that ends within the settling time.
    pub ended: Option<Duration>,
}

/// Sends programs to a controller's script port and reports their fate.
///
/// Before sending, it checks through the Dashboard server that the controller is in
/// remote control (e-Series 5.6 and later), the arm running and the safety status normal;
/// each failed check is its own error, and nothing is sent. It then reads the primary
/// interface (runtime exceptions, protective stops) and RTDE's `runtime_state` until the
/// program plays, fails, or the timeout passes.
///
/// ```
/// use rtde_robot::dashboard::{Dashboard, DashboardOptions};
/// use rtde_robot::script::{Program, ScriptError, ScriptSender};
///
/// let sim = rtde_sim::Sim::builder().dashboard().script_ports().start().unwrap();
/// let sender = ScriptSender::new(sim.addr().ip()).ports(sim.script_sender_ports().unwrap());
/// let program = Program::new("def hello():\n  textmsg(\"hi\")\nend\n").unwrap();
/// // The arm is powered off: refused before anything is sent.
/// assert!(matches!(sender.send(&program), Err(ScriptError::RobotNotRunning { .. })));
/// # Ok::<(), ScriptError>(())
/// ```
#[derive(Clone, Debug)]
pub struct ScriptSender {
    host: IpAddr,
    ports: Ports,
    port: ScriptPort,
    check: Preconditions,
    timeout: Duration,
    settle: Duration,
    check_script: bool,
    until_end: bool,
}

impl ScriptSender {
    /// A sender to the controller at `host`, on the standard ports, through 30002,
    /// checking the preconditions, waiting 5 s for the program to play and 200 ms after.
    #[must_use]
    pub fn new(host: IpAddr) -> Self {
        ScriptSender {
            host,
            ports: Ports::default(),
            port: ScriptPort::Secondary,
            check: Preconditions::Dashboard,
            timeout: Duration::from_secs(5),
            settle: Duration::from_millis(200),
            check_script: true,
            until_end: false,
        }
    }

    /// Other port numbers (a simulator's).
    #[must_use]
    pub fn ports(mut self, ports: Ports) -> Self {
        self.ports = ports;
        self
    }

    /// The script port to send through; 30002 by default.
    #[must_use]
    pub fn via(mut self, port: ScriptPort) -> Self {
        self.port = port;
        self
    }

    /// Whether to check the preconditions through the Dashboard server first (on by
    /// default; off for a controller whose Dashboard server is not reachable:
    /// [`preconditions`](Self::preconditions) can check them on the primary interface
    /// instead).
    #[must_use]
    pub fn check_preconditions(mut self, check: bool) -> Self {
        self.check = if check {
            Preconditions::Dashboard
        } else {
            Preconditions::Unchecked
        };
        self
    }

    /// Where to check the preconditions: the Dashboard server (the default), the primary
    /// interface's robot state, or nowhere. Each failed check is the same error either
    /// way, and nothing is sent.
    ///
    /// ```
    /// use rtde_robot::script::{Preconditions, Program, ScriptError, ScriptSender};
    ///
    /// // A controller reached on its script ports only: no Dashboard server.
    /// let sim = rtde_sim::Sim::builder().script_ports().start().unwrap();
    /// let mut ports = rtde_robot::script::Ports::default();
    /// ports.primary = sim.script_addr(rtde_robot::script::ScriptPort::Primary).unwrap().port();
    /// ports.secondary = sim.script_addr(rtde_robot::script::ScriptPort::Secondary).unwrap().port();
    /// ports.rtde = sim.addr().port();
    /// let sender = ScriptSender::new(sim.addr().ip())
    ///     .ports(ports)
    ///     .preconditions(Preconditions::PrimaryInterface);
    /// let program = Program::new("def hello():\n  textmsg(\"hi\")\nend\n").unwrap();
    /// // The arm is powered off, as its robot state says.
    /// assert!(matches!(sender.send(&program), Err(ScriptError::RobotNotRunning { .. })));
    /// ```
    #[must_use]
    pub fn preconditions(mut self, check: Preconditions) -> Self {
        self.check = check;
        self
    }

    /// How long to wait for the program to play.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How long a playing program is watched for an exception before it counts as
    /// started.
    #[must_use]
    pub fn settle(mut self, settle: Duration) -> Self {
        self.settle = settle;
        self
    }

    /// Whether to watch the program past its start until it ends (the controller's stop
    /// message), reporting meanwhile what the controller says (its `textmsg` lines among
    /// them) as [`Step::Said`]; [`Started::ended`] then says how long it played. A runtime
    /// exception or a protective stop while it plays is the error, as while it starts.
    /// Off by default: the sender returns once the program has played for the settling
    /// time. No time limit applies to the run; a program that never ends is watched for
    /// ever (run the sender on a thread of its own to give up on it).
    ///
    /// ```
    /// use rtde_robot::script::{Program, ScriptSender};
    ///
    /// let sim = rtde_sim::Sim::builder().dashboard().script_ports().start().unwrap();
    /// let mut dashboard = rtde_robot::dashboard::Dashboard::connect(
    ///     sim.dashboard_addr().unwrap(), Default::default()).unwrap();
    /// dashboard.power_on().unwrap();
    /// dashboard.brake_release().unwrap();
    /// let sender = ScriptSender::new(sim.addr().ip()).ports(sim.script_sender_ports().unwrap());
    /// let program = Program::new("def wave():\n  sleep(0.5)\n  textmsg(\"done\")\nend\n").unwrap();
    /// let started = sender.until_end(true).send(&program).unwrap();
    /// // Measured on this host's clock from the first RTDE package that shows it playing
    /// // to the controller's stop message: about the 0.5 s it slept.
    /// let ended = started.ended.expect("watched to its end");
    /// println!("wave played for {ended:?}");
    /// ```
    #[must_use]
    pub fn until_end(mut self, until_end: bool) -> Self {
        self.until_end = until_end;
        self
    }

    /// Whether to parse and check the program against the controller's built-ins before
    /// sending it ([`rtde_urscript::check`], at the version the primary interface
    /// reports); on by default. A program that fails is refused with
    /// [`ScriptError::Check`] and nothing is sent. Turn it off for a program that calls a
    /// built-in the checker's table does not list (docs/urscript.md says which it lists):
    /// the controller then compiles it as it is.
    ///
    /// ```
    /// use rtde_robot::script::{Program, ScriptError, ScriptSender};
    ///
    /// let sim = rtde_sim::Sim::builder().dashboard().script_ports().start().unwrap();
    /// let mut dashboard = rtde_robot::dashboard::Dashboard::connect(
    ///     sim.dashboard_addr().unwrap(), Default::default()).unwrap();
    /// dashboard.power_on().unwrap();
    /// dashboard.brake_release().unwrap();
    /// let sender = ScriptSender::new(sim.addr().ip()).ports(sim.script_sender_ports().unwrap());
    /// let program = Program::new("def hello():\n  txetmsg(\"hi\")\nend\n").unwrap();
    /// let err = sender.send(&program).unwrap_err();
    /// assert!(matches!(err, ScriptError::Check { .. }));
    /// assert!(err.to_string().contains("line 2, column 3"), "{err}");
    /// // Unchecked, it is sent, and the controller's compiler answers at the same place.
    /// let err = sender.check_script(false).send(&program).unwrap_err();
    /// assert!(matches!(err, ScriptError::Compile { line: 2, column: 3, .. }), "{err}");
    /// ```
    #[must_use]
    pub fn check_script(mut self, check: bool) -> Self {
        self.check_script = check;
        self
    }

    /// Sends `program` and waits for its fate.
    ///
    /// # Errors
    /// See [`ScriptError`]: a failed precondition or URScript check (nothing sent), a
    /// compile error, a runtime exception with its line and column, a protective stop, a
    /// program that did not start in time, or a link error.
    pub fn send(&self, program: &Program) -> Result<Started, ScriptError> {
        self.send_observed(program, |_| {})
    }

    /// [`ScriptSender::send`], telling `observe` each step.
    ///
    /// # Errors
    /// As [`ScriptSender::send`].
    pub fn send_observed(
        &self,
        program: &Program,
        mut observe: impl FnMut(&Step),
    ) -> Result<Started, ScriptError> {
        if self.check == Preconditions::Dashboard {
            let (mode, safety) = self.dashboard_preconditions()?;
            observe(&Step::Checked { mode, safety });
        }
        let mut primary = self.open(self.ports.primary, ScriptPort::Primary.name())?;
        let mut watch = Watch {
            program: program.name().map(str::to_owned),
            ..Watch::default()
        };
        // The version message comes first on every connection: once it is in, what the
        // program causes is reported on this connection.
        let deadline = Instant::now() + self.timeout;
        while watch.version.is_none() && Instant::now() < deadline {
            watch.primary(&mut primary, &mut observe)?;
        }
        if self.check_script {
            // Without a version message, the newest version the checker knows.
            let version = watch
                .version
                .unwrap_or_else(rtde_urscript::builtins::newest_e_series);
            if let Err(errors) = rtde_urscript::check(program.text(), version) {
                return Err(ScriptError::Check { version, errors });
            }
        }
        if self.check == Preconditions::PrimaryInterface {
            while watch.robot.is_none() && Instant::now() < deadline {
                watch.primary(&mut primary, &mut observe)?;
            }
            let (mode, safety) = watch.robot.ok_or(ScriptError::NoRobotState {
                waited: self.timeout,
            })?;
            check_robot(mode, safety)?;
            observe(&Step::Checked { mode, safety });
        }
        let mut rtde = Rtde::open(SocketAddr::new(self.host, self.ports.rtde), self.timeout)?;
        watch.not_playing = rtde.first_read(&mut watch)? != Some(RuntimeState::Playing);
        watch.replacing = !watch.not_playing;
        let addr_port = self.ports.script(self.port);
        let mut script = self.open(addr_port, self.port.name())?;
        script.write_all(program.text().as_bytes())?;
        script.flush()?;
        let sent = Instant::now();
        observe(&Step::Sent {
            bytes: program.text().len(),
            port: self.port,
        });
        let deadline = sent + self.timeout;
        let mut playing_since: Option<Instant> = None;
        loop {
            watch.primary(&mut primary, &mut observe)?;
            let state = rtde.read(&mut watch)?;
            for text in watch.new_messages() {
                observe(&Step::Said(text));
            }
            match state {
                Some(RuntimeState::Playing)
                    if (watch.not_playing || watch.started_key.is_some())
                        && playing_since.is_none() =>
                {
                    observe(&Step::Playing);
                    playing_since = Some(Instant::now());
                }
                Some(RuntimeState::Playing) => {}
                Some(_) => watch.not_playing = true,
                None => {}
            }
            if let Some(fate) = watch.stopped_fate(playing_since, sent) {
                return fate;
            }
            if let Some(since) = playing_since
                && !self.until_end
                && since.elapsed() >= self.settle
            {
                return Ok(Started {
                    version: watch.version,
                    after: since.duration_since(sent),
                    ended: None,
                });
            }
            if playing_since.is_none() && Instant::now() >= deadline {
                return Err(ScriptError::NotStarted {
                    waited: self.timeout,
                    runtime_state: watch.runtime_state,
                    messages: watch.messages,
                });
            }
        }
    }

    fn open(&self, port: u16, name: &'static str) -> Result<TcpStream, ScriptError> {
        let addr = SocketAddr::new(self.host, port);
        let stream = TcpStream::connect_timeout(&addr, self.timeout).map_err(|source| {
            ScriptError::Connect {
                port: name,
                addr,
                source,
            }
        })?;
        stream.set_nodelay(true)?;
        Ok(stream)
    }

    /// Remote control, the arm running, the safety status normal: each its own error.
    fn dashboard_preconditions(&self) -> Result<(RobotMode, SafetyStatus), ScriptError> {
        let addr = SocketAddr::new(self.host, self.ports.dashboard);
        let options = DashboardOptions::new().rtde_port(Some(self.ports.rtde));
        let mut dashboard = Dashboard::connect(addr, options)?;
        let version = dashboard.controller_version();
        if Command::IsInRemoteControl.spec().check(version).is_ok()
            && !dashboard.is_in_remote_control()?
        {
            return Err(ScriptError::NotInRemoteControl);
        }
        let mode = dashboard.robot_mode()?;
        check_robot(mode, SafetyStatus::Normal)?;
        let safety = if Command::SafetyStatus.spec().check(version).is_ok() {
            dashboard.safety_status()?
        } else {
            match dashboard.execute(&Command::SafetyMode)? {
                Reply::SafetyMode(m) => SafetyStatus::from_code(m.code()),
                _ => SafetyStatus::Normal,
            }
        };
        check_robot(mode, safety)?;
        Ok((mode, safety))
    }
}

/// The arm running and the safety status normal, wherever they were read: each its own
/// error.
fn check_robot(mode: RobotMode, safety: SafetyStatus) -> Result<(), ScriptError> {
    if mode != RobotMode::Running {
        return Err(ScriptError::RobotNotRunning { mode });
    }
    if safety != SafetyStatus::Normal {
        return Err(ScriptError::SafetyStop { status: safety });
    }
    Ok(())
}

/// What has been seen since the program went out.
#[derive(Debug, Default)]
struct Watch {
    decoder: Decoder,
    version: Option<ControllerVersion>,
    /// The robot mode and safety status of the newest robot state message.
    robot: Option<(RobotMode, SafetyStatus)>,
    runtime_state: Option<RuntimeState>,
    messages: Vec<String>,
    reported: usize,
    not_playing: bool,
    /// The program sent: the name a controller's start and stop messages carry.
    program: Option<String>,
    /// When the controller said the program started (`PROGRAM_XXX_STARTED`).
    started_key: Option<Instant>,
    /// The controller said the program stopped (`PROGRAM_XXX_STOPPED`).
    stopped_key: bool,
    /// A program was playing when this one was sent: the controller stops it first, and
    /// its stop message may carry the same name (the same program sent again).
    replacing: bool,
}

impl Watch {
    /// Reads what the primary interface has sent; an exception or a protective stop ends
    /// the watch.
    fn primary(
        &mut self,
        stream: &mut TcpStream,
        observe: &mut impl FnMut(&Step),
    ) -> Result<(), ScriptError> {
        stream.set_read_timeout(Some(Duration::from_millis(5)))?;
        match stream.read(self.decoder.read_buf()) {
            Ok(0) => {}
            Ok(n) => self.decoder.filled(n),
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                ) => {}
            Err(e) => return Err(e.into()),
        }
        self.absorb(observe)
    }

    /// Decodes the whole messages buffered; an exception or a protective stop ends the
    /// watch.
    fn absorb(&mut self, observe: &mut impl FnMut(&Step)) -> Result<(), ScriptError> {
        while let Some(decoded) = self.decoder.poll()? {
            let message = match decoded {
                Decoded::State { state, .. } => {
                    if let (Some(mode), Some(board)) = (&state.robot_mode, &state.masterboard) {
                        let safety = SafetyStatus::from_code(i32::from(board.safety_mode));
                        self.robot = Some((mode.mode(), safety));
                    }
                    continue;
                }
                Decoded::Message(message) => message,
                _ => continue,
            };
            match message {
                PrimaryMessage::Version { version, .. } => {
                    self.version = Some(version);
                    observe(&Step::Version(version));
                }
                PrimaryMessage::RuntimeException { line, column, text } => {
                    let compile = ["compile_error", "syntax_error"]
                        .iter()
                        .any(|p| text.starts_with(p));
                    return Err(if compile {
                        ScriptError::Compile { line, column, text }
                    } else {
                        ScriptError::Runtime { line, column, text }
                    });
                }
                PrimaryMessage::SafetyMode {
                    mode: SafetyMode::ProtectiveStop,
                    ..
                } => {
                    return Err(ScriptError::ProtectiveStop {
                        reason: self.messages.last().cloned(),
                    });
                }
                PrimaryMessage::Key { title, text, .. } => {
                    // Another program's end (the one ours replaced) is not ours, nor is a
                    // stop before ours started while a program of the same name played.
                    let ours = self.program.as_ref().is_none_or(|name| *name == text);
                    if title.ends_with("_STARTED") && ours {
                        self.started_key.get_or_insert_with(Instant::now);
                    }
                    if title.ends_with("_STOPPED")
                        && ours
                        && (self.started_key.is_some() || !self.replacing)
                    {
                        self.stopped_key = true;
                    }
                    self.note(format!("{title} {text}"));
                }
                PrimaryMessage::Text(text) => self.note(text),
                _ => {}
            }
        }
        Ok(())
    }

    /// The program's fate once the controller said it stopped: it ran if it had started,
    /// by RTDE (`playing_since`) or by the controller's word (a short program can end
    /// between two RTDE packages), and never will if not. `None` while it has not stopped.
    fn stopped_fate(
        &mut self,
        playing_since: Option<Instant>,
        sent: Instant,
    ) -> Option<Result<Started, ScriptError>> {
        if !self.stopped_key {
            return None;
        }
        Some(match playing_since.or(self.started_key) {
            Some(since) => Ok(Started {
                version: self.version,
                after: since.saturating_duration_since(sent),
                ended: Some(since.elapsed()),
            }),
            None => Err(ScriptError::NotStarted {
                waited: sent.elapsed(),
                runtime_state: self.runtime_state,
                messages: std::mem::take(&mut self.messages),
            }),
        })
    }

    /// Keeps a message once: controllers say the same over RTDE and the primary interface.
    fn note(&mut self, message: String) {
        if !self.messages.contains(&message) {
            self.messages.push(message);
        }
    }

    fn new_messages(&mut self) -> Vec<String> {
        let new = self.messages[self.reported..].to_vec();
        self.reported = self.messages.len();
        new
    }
}

/// The RTDE link that reports the runtime state and the safety mode.
struct Rtde {
    client: Client,
    recipe: DynamicRecipe,
}

/// How long one look at the RTDE link waits for a package, once it streams: the watch
/// looks at the script port's answers between looks.
const LOOK: Duration = Duration::from_millis(20);

impl Rtde {
    /// The link, its handshake and first package given the sender's whole timeout: a busy
    /// controller or a slow network answers in more than a look's time.
    fn open(addr: SocketAddr, timeout: Duration) -> Result<Rtde, ScriptError> {
        let options = ConnectOptions::new()
            .connect_timeout(timeout)
            .read_timeout(Some(timeout));
        let mut client = Client::connect(addr, options)?;
        let recipe = DynamicRecipe::outputs(["runtime_state", "safety_mode"])
            .map_err(|e| ScriptError::Io(std::io::Error::other(e.to_string())))?;
        client.setup_outputs(recipe.spec(), 125.0)?;
        client.start()?;
        Ok(Rtde { client, recipe })
    }

    /// The runtime state before the program is sent, from the first package; then each
    /// look waits [`LOOK`] at most.
    fn first_read(&mut self, watch: &mut Watch) -> Result<Option<RuntimeState>, ScriptError> {
        let state = self.read(watch)?;
        self.client.set_read_timeout(Some(LOOK))?;
        Ok(state)
    }

    /// The newest runtime state, if a package came; a protective stop ends the watch.
    fn read(&mut self, watch: &mut Watch) -> Result<Option<RuntimeState>, ScriptError> {
        match self.client.recv_latest_into(&mut self.recipe) {
            Ok(()) => {}
            Err(rtde_core::Error::Timeout { .. }) => return Ok(None),
            Err(e) => return Err(e.into()),
        }
        let texts: Vec<String> = self.client.text_messages().map(|t| t.message).collect();
        for text in texts {
            watch.note(text);
        }
        if let Some(Value::Int32(mode)) = self.recipe.get("safety_mode")
            && SafetyMode::from_code(*mode) == SafetyMode::ProtectiveStop
        {
            return Err(ScriptError::ProtectiveStop {
                reason: watch.messages.last().cloned(),
            });
        }
        let state = match self.recipe.get("runtime_state") {
            Some(Value::Uint32(code)) => Some(RuntimeState::from_code(*code)),
            _ => None,
        };
        watch.runtime_state = state.or(watch.runtime_state);
        Ok(state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hands `messages` to the watch's decoder, as a read would.
    fn feed(watch: &mut Watch, messages: &[PrimaryMessage]) {
        let mut bytes = Vec::new();
        for m in messages {
            m.encode(0, &mut bytes);
        }
        feed_bytes(watch, &bytes);
    }

    fn feed_bytes(watch: &mut Watch, bytes: &[u8]) {
        watch.decoder.read_buf()[..bytes.len()].copy_from_slice(bytes);
        watch.decoder.filled(bytes.len());
    }

    fn watch_of(messages: &[PrimaryMessage]) -> (Watch, Result<(), ScriptError>, Vec<Step>) {
        let mut watch = Watch::default();
        feed(&mut watch, messages);
        let mut steps = Vec::new();
        let result = watch.absorb(&mut |s| steps.push(s.clone()));
        (watch, result, steps)
    }

    /// A controller's key message (`PROGRAM_XXX_STARTED`, say) about program `text`.
    fn key(title: &str, text: &str) -> PrimaryMessage {
        PrimaryMessage::Key {
            code: 0,
            argument: 0,
            title: title.into(),
            text: text.into(),
        }
    }

    #[test]
    fn the_primary_interface_alone_decides_each_fate() {
        let version = PrimaryMessage::Version {
            project: "URControl".into(),
            version: ControllerVersion::new(5, 21, 0, 0),
            build_date: String::new(),
        };
        let (watch, result, steps) = watch_of(std::slice::from_ref(&version));
        assert!(result.is_ok());
        assert_eq!(steps, [Step::Version(ControllerVersion::new(5, 21, 0, 0))]);
        assert_eq!(watch.version, Some(ControllerVersion::new(5, 21, 0, 0)));

        let exception = |text: &str| PrimaryMessage::RuntimeException {
            line: 7,
            column: 3,
            text: text.into(),
        };
        let (_, result, _) = watch_of(&[version.clone(), exception("syntax_error_on_line:7")]);
        assert!(matches!(
            result,
            Err(ScriptError::Compile {
                line: 7,
                column: 3,
                ..
            })
        ));
        let (_, result, _) = watch_of(&[exception("not_a_function: f")]);
        assert!(matches!(
            result,
            Err(ScriptError::Runtime {
                line: 7,
                column: 3,
                ..
            })
        ));

        let stop = PrimaryMessage::SafetyMode {
            code: 0,
            argument: 0,
            mode: SafetyMode::ProtectiveStop,
        };
        let said = PrimaryMessage::Text("a collision".into());
        let (_, result, _) = watch_of(&[said, stop]);
        assert!(
            matches!(&result, Err(ScriptError::ProtectiveStop { reason: Some(r) }) if r == "a collision"),
            "{result:?}"
        );

        let (watch, result, _) = watch_of(&[key("PROGRAM_XXX_STARTED", "pick")]);
        assert!(result.is_ok());
        assert!(watch.started_key.is_some());
        assert_eq!(watch.messages, ["PROGRAM_XXX_STARTED pick"]);
    }

    #[test]
    fn only_the_programs_own_start_and_stop_count() {
        let mut watch = Watch {
            program: Some("pick".into()),
            ..Watch::default()
        };
        feed(
            &mut watch,
            &[
                key("PROGRAM_XXX_STOPPED", "previous"),
                key("PROGRAM_XXX_STARTED", "previous"),
            ],
        );
        watch.absorb(&mut |_| {}).unwrap();
        assert!(!watch.stopped_key && watch.started_key.is_none());
        feed(
            &mut watch,
            &[
                key("PROGRAM_XXX_STARTED", "pick"),
                key("PROGRAM_XXX_STOPPED", "pick"),
            ],
        );
        watch.absorb(&mut |_| {}).unwrap();
        assert!(watch.stopped_key && watch.started_key.is_some());
    }

    #[test]
    fn sent_again_over_itself_the_old_runs_stop_is_not_the_new_ones() {
        let mut watch = Watch {
            program: Some("pick".into()),
            replacing: true,
            ..Watch::default()
        };
        feed(&mut watch, &[key("PROGRAM_XXX_STOPPED", "pick")]);
        watch.absorb(&mut |_| {}).unwrap();
        assert!(!watch.stopped_key, "the stop of the run it replaced");
        feed(
            &mut watch,
            &[
                key("PROGRAM_XXX_STARTED", "pick"),
                key("PROGRAM_XXX_STOPPED", "pick"),
            ],
        );
        watch.absorb(&mut |_| {}).unwrap();
        assert!(watch.stopped_key && watch.started_key.is_some());
    }

    #[test]
    fn a_stop_ends_the_wait_as_a_run_if_the_program_started_and_as_not_started_if_not() {
        let sent = Instant::now();
        let mut running = Watch::default();
        assert!(running.stopped_fate(None, sent).is_none(), "still running");

        let mut never = Watch {
            stopped_key: true,
            messages: vec!["not run".into()],
            ..Watch::default()
        };
        assert!(matches!(
            never.stopped_fate(None, sent),
            Some(Err(ScriptError::NotStarted { messages, .. })) if messages == ["not run"]
        ));

        let mut short = Watch {
            stopped_key: true,
            started_key: Some(sent),
            ..Watch::default()
        };
        assert!(matches!(short.stopped_fate(None, sent), Some(Ok(_))));
        let mut seen_playing = Watch {
            stopped_key: true,
            ..Watch::default()
        };
        assert!(matches!(
            seen_playing.stopped_fate(Some(sent), sent),
            Some(Ok(_))
        ));
    }

    #[test]
    fn half_a_message_waits_for_the_rest() {
        let mut bytes = Vec::new();
        PrimaryMessage::Text("hello".into()).encode(0, &mut bytes);
        let mut watch = Watch::default();
        feed_bytes(&mut watch, &bytes[..8]);
        watch.absorb(&mut |_| {}).unwrap();
        assert!(watch.messages.is_empty());
        feed_bytes(&mut watch, &bytes[8..]);
        watch.absorb(&mut |_| {}).unwrap();
        assert_eq!(watch.messages, ["hello"]);
    }
}
