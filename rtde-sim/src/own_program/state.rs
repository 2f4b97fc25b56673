//! What rtde's own programs report as they run on the engine: read from the registers they
//! write and the arm they move, as a client of the robot would see them, for tests and
//! tools that ask the simulator.

use rtde_core::Value;
use rtde_robot_proto::programs::command::{CommandLayout, Failure, ProgramState, int_out};
use rtde_robot_proto::programs::servo::{self, ProgramStatus};

use crate::robot_program::Program;
use crate::script_program::ScriptProgram;

/// A snapshot of `rtde_command.script` as it runs: its joints, its handshake, the modes it
/// was given and why it stopped. From [`Sim::command_program`](crate::Sim::command_program).
///
/// ```
/// let sim = rtde_sim::Sim::builder().command_program().start().unwrap();
/// let program = sim.command_program().unwrap();
/// assert_eq!(program.handshake(), (0, 0)); // no command taken yet
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct CommandProgramState {
    q: [f64; 6],
    qd: [f64; 6],
    tcp_pose: [f64; 6],
    tcp_offset: [f64; 6],
    payload: (f64, [f64; 3]),
    teach_mode: bool,
    force_mode: bool,
    state: ProgramState,
    failure: Failure,
    handshake: (i32, i32),
    protective_stopped: bool,
    ticks: u64,
    messages: Vec<String>,
}

/// An output integer register the program wrote; 0 until it has.
fn int(p: &ScriptProgram, name: &str) -> i32 {
    match p.output(name) {
        Some(Value::Int32(v)) => v,
        _ => 0,
    }
}

impl CommandProgramState {
    /// The command program `program` on the registers of `layout`; `robot_stopped`: the
    /// robot is in a protective stop (which pauses a program on the engine rather than
    /// stopping it).
    pub(crate) fn of(
        program: &Program,
        layout: CommandLayout,
        robot_stopped: bool,
    ) -> Option<Self> {
        let Program::Script(p) = program else {
            return None;
        };
        let out = |offset: u8| int(p, &layout.int_output(offset));
        Some(CommandProgramState {
            q: p.q(),
            qd: p.qd(),
            tcp_pose: p.tcp_pose(),
            tcp_offset: p.tcp_offset(),
            payload: p.payload(),
            teach_mode: p.in_freedrive(),
            force_mode: p.in_force_mode(),
            state: ProgramState::from_register(out(int_out::STATE)),
            failure: Failure::from_register(out(int_out::FAILURE)),
            handshake: (out(int_out::ACCEPTED), out(int_out::DONE)),
            protective_stopped: p.is_protective_stopped() || robot_stopped,
            ticks: p.ticks(),
            messages: p.messages().to_vec(),
        })
    }

    /// Joint positions.
    #[must_use]
    pub fn q(&self) -> [f64; 6] {
        self.q
    }

    /// Joint velocities.
    #[must_use]
    pub fn qd(&self) -> [f64; 6] {
        self.qd
    }

    /// The TCP pose, with the TCP offset.
    #[must_use]
    pub fn tcp_pose(&self) -> [f64; 6] {
        self.tcp_pose
    }

    /// The TCP offset `set_tcp` gave.
    #[must_use]
    pub fn tcp_offset(&self) -> [f64; 6] {
        self.tcp_offset
    }

    /// The payload `set_payload` gave: mass (kg) and centre of gravity (m).
    #[must_use]
    pub fn payload(&self) -> (f64, [f64; 3]) {
        self.payload
    }

    /// Whether the program is in teach mode.
    #[must_use]
    pub fn in_teach_mode(&self) -> bool {
        self.teach_mode
    }

    /// Whether the program is in force mode.
    #[must_use]
    pub fn in_force_mode(&self) -> bool {
        self.force_mode
    }

    /// The state the program reports (its state register).
    #[must_use]
    pub fn state(&self) -> ProgramState {
        self.state
    }

    /// Why the program stopped (its failure register).
    #[must_use]
    pub fn failure(&self) -> Failure {
        self.failure
    }

    /// `(accepted, done)`: the last command taken and the last finished.
    #[must_use]
    pub fn handshake(&self) -> (i32, i32) {
        self.handshake
    }

    /// Whether a protective stop holds the program.
    #[must_use]
    pub fn is_protective_stopped(&self) -> bool {
        self.protective_stopped
    }

    /// The ticks the program ran.
    #[must_use]
    pub fn ticks(&self) -> u64 {
        self.ticks
    }

    /// Every message the program logged, oldest first.
    #[must_use]
    pub fn messages(&self) -> &[String] {
        &self.messages
    }
}

/// A snapshot of `rtde_servo.script` as it runs: its joints, its handshake and why it
/// stopped. From [`Sim::program`](crate::Sim::program).
///
/// ```
/// use rtde_robot_proto::programs::servo::ProgramStatus;
///
/// let sim = rtde_sim::Sim::builder().servo_program().start().unwrap();
/// let program = sim.program().unwrap();
/// assert_eq!((program.acked(), program.status()), (0, ProgramStatus::Waiting));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ServoProgramState {
    q: [f64; 6],
    setpoint: [f64; 6],
    acked: i32,
    status: ProgramStatus,
    ticks: u64,
    messages: Vec<String>,
}

impl ServoProgramState {
    pub(crate) fn of(program: &Program) -> Option<Self> {
        let Program::Script(p) = program else {
            return None;
        };
        let out = |register: u8| int(p, &format!("output_int_register_{register}"));
        Some(ServoProgramState {
            q: p.q(),
            setpoint: p.setpoint(),
            acked: out(servo::ACK_REGISTER),
            status: ProgramStatus::from_register(out(servo::STATUS_REGISTER)),
            ticks: p.ticks(),
            messages: p.messages().to_vec(),
        })
    }

    /// Joint positions.
    #[must_use]
    pub fn q(&self) -> [f64; 6] {
        self.q
    }

    /// The joint target the arm tracks (`target_q`'s goal).
    #[must_use]
    pub fn setpoint(&self) -> [f64; 6] {
        self.setpoint
    }

    /// The id of the last waypoint taken (`output_int_register_24`).
    #[must_use]
    pub fn acked(&self) -> i32 {
        self.acked
    }

    /// The program's status (`output_int_register_25`).
    #[must_use]
    pub fn status(&self) -> ProgramStatus {
        self.status
    }

    /// The ticks the program ran.
    #[must_use]
    pub fn ticks(&self) -> u64 {
        self.ticks
    }

    /// Every message the program logged, oldest first: why it stopped.
    #[must_use]
    pub fn messages(&self) -> &[String] {
        &self.messages
    }
}
