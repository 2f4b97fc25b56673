//! How a motion session connects, and what both drivers do before RTDE: read the arm's
//! kinematics off the controller and send the command program.

use std::net::SocketAddr;
use std::time::Duration;

use rtde_core::ConnectOptions;
use rtde_kinematics::Arm;
use rtde_robot_proto::ports::ScriptPort;
use rtde_robot_proto::programs::command::{CommandLayout, command_program};

use crate::motion::error::MotionError;
use crate::motion::kinematics::Kinematics;
use crate::script::{Program, ScriptSender};

/// Where the command program comes from.
///
/// ```no_run
/// use rtde_robot::motion::{MotionOptions, ProgramSource, Robot};
/// use rtde_robot::script::ScriptSender;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let host = "192.168.1.10".parse()?; // an example address
/// let send = ProgramSource::Send(ScriptSender::new(host));
/// let robot = Robot::connect((host, 30004), MotionOptions::new().source(send))?;
/// # let _ = robot; Ok(()) }
/// ```
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub enum ProgramSource {
    /// Attach to the command program already running on the controller: installed from
    /// the pendant (`rtde_command.script`, its header says how) and playing, or
    /// the simulator's `SimBuilder::command_program`.
    #[default]
    Installed,
    /// Send the command program, on the registers of the layout in use
    /// ([`command_program`](super::command_program)), through this sender (which checks
    /// remote control and the robot's state through the Dashboard server first), wait
    /// until it plays, then attach.
    Send(ScriptSender),
}

/// How [`Robot::connect`](super::Robot::connect) connects.
///
/// ```
/// use rtde_robot_proto::programs::command::CommandLayout;
/// use rtde_robot::motion::{Arm, MotionOptions};
/// let options = MotionOptions::new().arm(Arm::UR10E).layout(CommandLayout::LOWER);
/// # let _ = options;
/// ```
#[derive(Clone, Debug)]
pub struct MotionOptions {
    layout: CommandLayout,
    arm: Option<Arm>,
    primary_port: Option<u16>,
    source: ProgramSource,
    connect: ConnectOptions,
    timeout: Duration,
}

impl Default for MotionOptions {
    fn default() -> Self {
        MotionOptions {
            layout: CommandLayout::UPPER,
            arm: None,
            primary_port: Some(ScriptPort::Primary.default_port()),
            source: ProgramSource::Installed,
            connect: ConnectOptions::new().read_timeout(Some(Duration::from_secs(2))),
            timeout: Duration::from_secs(60),
        }
    }
}

impl MotionOptions {
    /// The defaults: the upper register range, a UR5e, the installed program, 60 s per
    /// command.
    #[must_use]
    pub fn new() -> Self {
        MotionOptions::default()
    }

    /// The registers the program uses.
    #[must_use]
    pub fn layout(mut self, layout: CommandLayout) -> Self {
        self.layout = layout;
        self
    }

    /// The arm, named: [`Robot::connect`](super::Robot::connect) refuses a controller whose primary interface
    /// says it is another model, and computes with this model's nominal table when the
    /// controller's calibration cannot be read. Unnamed (the default), the arm is the
    /// controller's, or a UR5e when it cannot be read.
    #[must_use]
    pub fn arm(mut self, arm: Arm) -> Self {
        self.arm = Some(arm);
        self
    }

    /// Where to read the controller's calibrated kinematics: its primary interface's
    /// port on the same host (30001 by default), or `None` to compute with the nominal
    /// table of [`arm`](Self::arm). [`Robot::kinematics`](super::Robot::kinematics) says which it uses.
    #[must_use]
    pub fn primary_port(mut self, port: Option<u16>) -> Self {
        self.primary_port = port;
        self
    }

    /// Where the program comes from.
    #[must_use]
    pub fn source(mut self, source: ProgramSource) -> Self {
        self.source = source;
        self
    }

    /// The RTDE connection's options.
    #[must_use]
    pub fn connect_options(mut self, options: ConnectOptions) -> Self {
        self.connect = options;
        self
    }

    /// How long a blocking command, or [`MoveHandle::wait`](super::MoveHandle::wait), waits for the robot.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }
}

impl MotionOptions {
    pub(crate) fn layout_in_use(&self) -> CommandLayout {
        self.layout
    }

    pub(crate) fn rtde(&self) -> &ConnectOptions {
        &self.connect
    }

    pub(crate) fn command_timeout(&self) -> Duration {
        self.timeout
    }
}

/// What precedes RTDE, blocking: the arm's kinematics read off the controller at `addr`,
/// and the command program sent when the options say so.
pub(crate) fn prepare(
    addr: SocketAddr,
    options: &MotionOptions,
) -> Result<Kinematics, MotionError> {
    let kinematics = kinematics_of(addr, options)?;
    if let ProgramSource::Send(sender) = &options.source {
        let program = Program::new(&command_program(options.layout))
            .map_err(|e| MotionError::Invalid(e.to_string()))?;
        sender.send(&program)?;
    }
    Ok(kinematics)
}

/// Why a session attached to no program.
pub(crate) const NOT_PLAYING: &str =
    "runtime_state is not PLAYING: start rtde_command.script on the pendant first";

/// The arm a robot computes with: the controller's calibrated one, read off its primary
/// interface, which must be the model named if one is; else the named model's nominal
/// table, or a UR5e's.
fn kinematics_of(addr: SocketAddr, options: &MotionOptions) -> Result<Kinematics, MotionError> {
    let fallback = options.arm.unwrap_or(Arm::UR5E);
    let unnamed = if options.arm.is_none() {
        "; no arm named (MotionOptions::arm), so a UR5e is assumed"
    } else {
        ""
    };
    let kinematics = match options.primary_port {
        Some(port) => Kinematics::read(SocketAddr::new(addr.ip(), port), fallback),
        None => Kinematics::Nominal {
            arm: fallback,
            why: "reading the controller's calibration was turned off".into(),
        },
    };
    match (kinematics, options.arm) {
        (Kinematics::Calibrated(controller), Some(named)) if controller.name != named.name => {
            Err(MotionError::Invalid(format!(
                "the controller's arm is a {}, not the {} named (MotionOptions::arm): name the \
                 right one, or none to use the controller's",
                controller.name, named.name
            )))
        }
        (Kinematics::Nominal { arm, why }, _) => Ok(Kinematics::Nominal {
            arm,
            why: format!("{why}{unnamed}"),
        }),
        (kinematics, _) => Ok(kinematics),
    }
}
