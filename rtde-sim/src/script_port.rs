//! The script ports (30001–30003 on a controller): programs in, robot messages out.
//!
//! Every program, rtde's own included, is checked against the
//! controller's version and run by the URScript engine
//! ([`ScriptProgram`](crate::script_program::ScriptProgram)), `runtime_state` PLAYING while
//! it runs. A compile error is answered as the controller answers it: the primary
//! interface's runtime exception with its line and column, a text message, and the
//! program not started; a runtime error likewise, and the program stopped.
//!
//! Programs: a block from a `def name():` or `sec name():` line at column 0 to the next
//! `end` at column 0 is one program; any other line is a program of its own.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use rtde_robot_proto::ports::ScriptPort;
use rtde_robot_proto::primary::{Layout, PrimaryMessage};

use rtde_robot_proto::realtime::RealtimeLayout;
use rtde_robot_proto::script::Program;

use crate::controller::Shared;
use crate::fault::Fault;
use crate::robot_state::RobotState;
use crate::source::Tick;
use crate::state_report::Report;

/// How often a connection looks for robot messages to send.
const POLL: Duration = Duration::from_millis(10);

/// Serves a primary interface (30001) connection.
pub(crate) fn serve_primary(stream: TcpStream, shared: &Arc<Shared>) {
    serve(stream, shared, ScriptPort::Primary, Takes::Programs);
}

/// Serves a secondary interface (30002) connection.
pub(crate) fn serve_secondary(stream: TcpStream, shared: &Arc<Shared>) {
    serve(stream, shared, ScriptPort::Secondary, Takes::Programs);
}

/// Serves a real-time interface (30003) connection.
pub(crate) fn serve_realtime(stream: TcpStream, shared: &Arc<Shared>) {
    serve(stream, shared, ScriptPort::RealTime, Takes::Programs);
}

/// Serves a read-only primary interface (30011) connection.
pub(crate) fn serve_primary_read_only(stream: TcpStream, shared: &Arc<Shared>) {
    serve(stream, shared, ScriptPort::Primary, Takes::Nothing);
}

/// Serves a read-only secondary interface (30012) connection.
pub(crate) fn serve_secondary_read_only(stream: TcpStream, shared: &Arc<Shared>) {
    serve(stream, shared, ScriptPort::Secondary, Takes::Nothing);
}

/// Serves a read-only real-time interface (30013) connection.
pub(crate) fn serve_realtime_read_only(stream: TcpStream, shared: &Arc<Shared>) {
    serve(stream, shared, ScriptPort::RealTime, Takes::Nothing);
}

/// Whether a connection runs the programs it receives: the read-only copies of the ports
/// send the same and drop what they are sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Takes {
    Programs,
    Nothing,
}

fn serve(mut stream: TcpStream, shared: &Arc<Shared>, port: ScriptPort, takes: Takes) {
    let booted = shared.config.booted_at;
    let millis = || u64::try_from(booted.elapsed().as_millis()).unwrap_or(u64::MAX);
    let _ = stream.set_nodelay(true);
    // A client that does not read keeps its connection (ur_rtde's script client sends its
    // programs on 30003 and never reads): writes wait briefly, and what does not go out
    // waits in the backlog (see `Backlog`).
    if stream.set_write_timeout(Some(WRITE_WAIT)).is_err() {
        return;
    }
    let mut backlog = Backlog::default();
    // Robot messages from now on: a new connection hears what happens next.
    let mut told = shared
        .controller()
        .robot
        .as_ref()
        .map_or(0, |r| r.primary_messages().len());
    let mut out = Vec::new();
    if port.sends_version() {
        PrimaryMessage::Version {
            project: "URControl".into(),
            version: shared.config.version,
            build_date: "01-01-2026, 00:00:00".into(),
        }
        .encode(millis(), &mut out);
        backlog.add(&out, shared);
    }
    let mut streaming = Streaming::new(shared, port);
    let mut text = String::new();
    let mut pending = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        if shared.is_shutting_down() {
            return;
        }
        if stream
            .set_read_timeout(Some(streaming.wait(shared)))
            .is_err()
        {
            return;
        }
        match stream.read(&mut buf) {
            Ok(0) => return,
            Ok(_) if takes == Takes::Nothing => {}
            Ok(n) => pending.extend_from_slice(&buf[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                ) => {}
            Err(_) => return,
        }
        // Whole lines only: a program's bytes may arrive in pieces.
        if let Some(end) = pending.iter().rposition(|&b| b == b'\n') {
            let lines: Vec<u8> = pending.drain(..=end).collect();
            text.push_str(&String::from_utf8_lossy(&lines));
            for program in take_programs(&mut text) {
                run(&program, shared);
            }
        }
        out.clear();
        if port.sends_messages()
            && let Some(robot) = shared.controller().robot.as_ref()
        {
            for message in robot.primary_messages().get(told..).unwrap_or_default() {
                message.encode(millis(), &mut out);
            }
            told = robot.primary_messages().len();
        }
        if backlog.is_full() {
            // Nothing more would go out: the packages due are left out unmade.
            streaming.skip_due(shared);
        } else {
            streaming.due(shared, &mut out);
        }
        backlog.add(&out, shared);
        if backlog.send(&mut stream).is_err() {
            return;
        }
    }
}

/// How long one write waits for room in the client's buffers.
const WRITE_WAIT: Duration = Duration::from_millis(1);

/// The most bytes a connection holds for a client that reads slowly or not at all: about
/// 1.7 s of 30003's stream. Past it, new messages are left out whole (counted), so a
/// client that catches up reads a stream with a gap, never a message cut in two.
const BACKLOG_LIMIT: usize = 1 << 20;

/// What is yet to go out on a connection.
#[derive(Default)]
struct Backlog(Vec<u8>);

impl Backlog {
    fn is_full(&self) -> bool {
        self.0.len() >= BACKLOG_LIMIT
    }

    /// Queues `messages` (whole ones, encoded one after another), or leaves them out when
    /// the backlog is full.
    fn add(&mut self, messages: &[u8], shared: &Shared) {
        if messages.is_empty() {
            return;
        }
        if self.is_full() {
            shared
                .counters
                .script_port_skipped
                .fetch_add(1, Ordering::Relaxed);
        } else {
            self.0.extend_from_slice(messages);
        }
    }

    /// Writes what the client's buffers take now; an error when the link is gone.
    fn send(&mut self, stream: &mut TcpStream) -> std::io::Result<()> {
        if self.0.is_empty() {
            return Ok(());
        }
        match stream.write(&self.0) {
            Ok(0) => Err(ErrorKind::WriteZero.into()),
            Ok(n) => {
                self.0.drain(..n);
                Ok(())
            }
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                ) =>
            {
                Ok(())
            }
            Err(e) => Err(e),
        }
    }
}

/// How long a connection that fell behind (its thread woke late) still sends every
/// real-time package it missed; further behind, it sends the newest only.
const CATCH_UP: Duration = Duration::from_millis(250);

/// A connection's stream of robot state (30001, 30002: about every 100 ms) or real-time
/// packages (30003: every control cycle), on the controller's clock.
struct Streaming {
    port: ScriptPort,
    report: Report,
    /// The next tick that carries a package.
    next: u64,
    /// Ticks between packages.
    every: u64,
    rate: u32,
    state_layout: Layout,
    realtime_layout: RealtimeLayout,
}

impl Streaming {
    fn new(shared: &Shared, port: ScriptPort) -> Self {
        let rate = shared.config.loop_rate;
        let version = shared.config.version;
        Streaming {
            port,
            report: Report::new(),
            next: shared.config.clock.tick_at(Instant::now()),
            every: match port {
                ScriptPort::RealTime => 1,
                // 10 Hz: 50 ticks on e-Series, 12 (96 ms) on CB3's 125 Hz loop.
                ScriptPort::Primary | ScriptPort::Secondary => u64::from(rate / 10).max(1),
            },
            rate,
            state_layout: Layout::of(version),
            realtime_layout: RealtimeLayout::of(version),
        }
    }

    /// How long to wait for the client before the next package is due.
    fn wait(&self, shared: &Shared) -> Duration {
        let due = shared.config.clock.instant_of(self.next);
        due.saturating_duration_since(Instant::now())
            .clamp(Duration::from_millis(1), POLL)
    }

    /// Passes over the packages that have come due, counting them as left out.
    fn skip_due(&mut self, shared: &Shared) {
        let now = shared.config.clock.tick_at(Instant::now());
        if now < self.next {
            return;
        }
        let skipped = (now - self.next) / self.every + 1;
        self.next += skipped * self.every;
        shared
            .counters
            .script_port_skipped
            .fetch_add(skipped, Ordering::Relaxed);
    }

    /// Appends the packages that have come due to `out`. Packages keep to a grid of
    /// ticks, each sampled at its own tick, as RTDE's paced streams do: robot state
    /// messages' timestamps step by exactly the period.
    fn due(&mut self, shared: &Shared, out: &mut Vec<u8>) {
        let clock = shared.config.clock;
        let now = clock.tick_at(Instant::now());
        if now < self.next {
            return;
        }
        // Behind by more than the catch-up window (real-time) or a period (robot state,
        // a snapshot: the newest only), the stream skips to the newest tick on its grid.
        let window = match self.port {
            ScriptPort::RealTime => clock.ticks_in(CATCH_UP),
            ScriptPort::Primary | ScriptPort::Secondary => 0,
        };
        let newest = now - (now - self.next) % self.every;
        let mut tick = if newest - self.next > window {
            newest
        } else {
            self.next
        };
        while tick <= now {
            self.report.sample(shared, Tick::new(tick, self.rate));
            match self.port {
                ScriptPort::RealTime => self.report.realtime().encode(self.realtime_layout, out),
                ScriptPort::Primary | ScriptPort::Secondary => {
                    self.report.robot_state().encode(self.state_layout, out);
                }
            }
            tick += self.every;
        }
        self.next = tick;
    }
}

/// The whole programs at the start of `text`, removed from it; an unfinished block stays.
fn take_programs(text: &mut String) -> Vec<String> {
    let mut programs = Vec::new();
    let mut consumed = 0;
    // The block under way: where it starts and how deep its nesting is.
    let mut block: Option<(usize, usize)> = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let statement = line.trim();
        match &mut block {
            Some((from, depth)) => {
                if statement == "end" {
                    *depth -= 1;
                    if *depth == 0 {
                        programs.push(text[*from..offset].to_owned());
                        consumed = offset;
                        block = None;
                    }
                } else if opens_block(statement) {
                    *depth += 1;
                }
            }
            None if statement.starts_with("def ") || statement.starts_with("sec ") => {
                block = Some((start, 1));
            }
            None => {
                if !statement.is_empty() && !statement.starts_with('#') {
                    programs.push(line.to_owned());
                }
                consumed = offset;
            }
        }
    }
    text.drain(..consumed);
    programs
}

/// Whether a statement opens a block that an `end` closes (`def`, `if`, `while`, …);
/// `elif` and `else` continue the block they are in.
fn opens_block(statement: &str) -> bool {
    let code = statement.split('#').next().unwrap_or("").trim_end();
    code.ends_with(':') && !code.starts_with("elif") && !code.starts_with("else")
}

/// One program arrived: a fault's exception, the program started, or a message that it
/// was not run.
fn run(source: &str, shared: &Shared) {
    // A block is a program with a name; a single line is sent as itself.
    let block = source.starts_with("def ") || source.starts_with("sec ");
    let program = Program::new(source).ok().filter(|_| block);
    let name = program
        .as_ref()
        .and_then(|p| p.name().map(str::to_owned))
        .unwrap_or_else(|| source.trim().to_owned());
    let exception = shared.config.faults.iter().find_map(|f| match f {
        Fault::RuntimeException { line, column } => Some((
            *line,
            *column,
            format!("runtime_exception: {name} failed (fault runtime-exception)"),
        )),
        Fault::CompileError { line, column } => Some((
            *line,
            *column,
            format!("compile_error_name_not_found: {name} (fault compile-error)"),
        )),
        _ => None,
    });
    let mut controller = shared.controller();
    let Some(robot) = controller.robot.as_mut() else {
        return;
    };
    if let Some((line, column, text)) = exception {
        robot.tell_primary(PrimaryMessage::RuntimeException {
            line: i32::try_from(line).unwrap_or(i32::MAX),
            column: i32::try_from(column).unwrap_or(i32::MAX),
            text,
        });
        robot.stop_program();
        return;
    }
    if let Some(why) = robot.why_not_play() {
        not_run(robot, &name, format!("program {name} not started: {why}"));
        return;
    }
    let started = controller.start_script_program(&name, source, shared.config.version);
    let Some(robot) = controller.robot.as_mut() else {
        return;
    };
    match started {
        Ok(()) => started_program(robot, name),
        // A compile error, as the controller reports one: the runtime exception
        // with its line and column, and the program not started.
        Err((line, column, text)) => {
            robot.say(format!("program {name} not started: {text}"));
            robot.tell_primary(PrimaryMessage::RuntimeException {
                line: i32::try_from(line).unwrap_or(i32::MAX),
                column: i32::try_from(column).unwrap_or(i32::MAX),
                text,
            });
            robot.stop_program();
        }
    }
}

/// A program that started plays, and the primary interface says so, as a controller's
/// does for any program it starts.
fn started_program(robot: &mut RobotState, name: String) {
    robot.start_program();
    robot.tell_primary(PrimaryMessage::Key {
        code: 0,
        argument: 0,
        title: "PROGRAM_XXX_STARTED".into(),
        text: name,
    });
}

/// A program that will not run says why, then ends as a controller reports a program's
/// end on the primary interface, so that a sender knows its fate at once rather than
/// after its timeout.
fn not_run(robot: &mut RobotState, name: &str, why: String) {
    robot.say(why);
    robot.tell_primary(PrimaryMessage::Key {
        code: 0,
        argument: 0,
        title: "PROGRAM_XXX_STOPPED".into(),
        text: name.to_owned(),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_and_lines_are_programs_and_unfinished_blocks_wait() {
        let nested = "def a():\ndef f():\n  return 1\nend\nif f() == 1: # one\n  x = 1\nelse:\n  x = 2\nend\nend\n";
        let mut text = format!("set_digital_out(0, True)\n# note\n{nested}def b():\n");
        let programs = take_programs(&mut text);
        assert_eq!(programs, ["set_digital_out(0, True)\n", nested]);
        assert_eq!(text, "def b():\n");
        text.push_str("end\n");
        assert_eq!(take_programs(&mut text), ["def b():\nend\n"]);
        assert!(text.is_empty());
    }
}
