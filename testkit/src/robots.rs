//! Every motion driver behind one trait, so that each scenario is written once and run by
//! [`every_driver!`] against the blocking [`Robot`] and the tokio [`AsyncRobot`] (its
//! futures awaited on a multi-threaded runtime of its own, whose workers run its keeper
//! task while the test thread waits, as an application's runtime does).

use std::net::SocketAddr;
use std::sync::Arc;

use rtde_core::{Client, ConnectOptions, DynamicRecipe, Recipe, RobotMode, Value};
use rtde_robot::dashboard::Dashboard;
use rtde_robot::motion::{
    AsyncMoveHandle, AsyncRobot, ForceMode, JointMove, Kinematics, LinearMove, MotionError,
    MotionOptions, MoveHandle, Reached, Robot, RobotState,
};
use tokio::runtime::Runtime;

/// Powers the robot on and releases its brakes over its Dashboard server, waiting for
/// each: a robot ready for a program.
///
/// # Panics
/// When the Dashboard refuses, or the robot does not get there within 10 s.
pub fn run_robot(dashboard: &mut Dashboard) {
    let wait = std::time::Duration::from_secs(10);
    dashboard.power_on().unwrap();
    dashboard
        .wait_for_robot_mode(RobotMode::Idle, wait)
        .unwrap();
    dashboard.brake_release().unwrap();
    dashboard
        .wait_for_robot_mode(RobotMode::Running, wait)
        .unwrap();
}

/// The motion a newly connected RTDE observer reads: `actual_q`, `actual_qd` and
/// `runtime_state` from its first package.
///
/// # Panics
/// When the controller at `addr` does not stream them.
#[must_use]
pub fn observe(addr: SocketAddr) -> ([f64; 6], [f64; 6], u32) {
    let mut client = Client::connect(addr, ConnectOptions::new()).unwrap();
    let mut outputs = DynamicRecipe::outputs(["actual_q", "actual_qd", "runtime_state"]).unwrap();
    client.setup_outputs(outputs.spec(), 125.0).unwrap();
    client.start().unwrap();
    client.recv_into(&mut outputs).unwrap();
    client.close().unwrap();
    observed(&outputs)
}

/// `actual_q`, `actual_qd` and `runtime_state` from a recipe of those three.
///
/// # Panics
/// When `outputs` holds other values.
#[must_use]
pub fn observed(outputs: &DynamicRecipe) -> ([f64; 6], [f64; 6], u32) {
    match outputs.values() {
        [
            Value::Vector6d(q),
            Value::Vector6d(qd),
            Value::Uint32(state),
        ] => (*q, *qd, *state),
        other => panic!("not actual_q, actual_qd, runtime_state: {other:?}"),
    }
}

/// A command under way, whichever driver started it.
pub trait Handle {
    /// [`MoveHandle::wait`].
    fn wait(self) -> Result<Reached, MotionError>;
    /// [`MoveHandle::is_finished`].
    fn is_finished(&self) -> bool;
    /// [`MoveHandle::progress`].
    fn progress(&self) -> f64;
    /// [`MoveHandle::waypoint`].
    fn waypoint(&self) -> usize;
}

impl Handle for MoveHandle {
    fn wait(self) -> Result<Reached, MotionError> {
        MoveHandle::wait(self)
    }
    fn is_finished(&self) -> bool {
        MoveHandle::is_finished(self)
    }
    fn progress(&self) -> f64 {
        MoveHandle::progress(self)
    }
    fn waypoint(&self) -> usize {
        MoveHandle::waypoint(self)
    }
}

/// An [`AsyncMoveHandle`] awaited on its robot's runtime.
#[derive(Debug)]
pub struct OnTokioHandle {
    handle: AsyncMoveHandle,
    runtime: Arc<Runtime>,
}

impl Handle for OnTokioHandle {
    fn wait(self) -> Result<Reached, MotionError> {
        self.runtime.block_on(self.handle.wait())
    }
    fn is_finished(&self) -> bool {
        self.handle.is_finished()
    }
    fn progress(&self) -> f64 {
        self.handle.progress()
    }
    fn waypoint(&self) -> usize {
        self.handle.waypoint()
    }
}

/// An [`AsyncRobot`] on a runtime of its own.
#[derive(Debug)]
pub struct OnTokio {
    robot: Option<AsyncRobot>,
    runtime: Arc<Runtime>,
}

impl OnTokio {
    fn robot(&self) -> &AsyncRobot {
        self.robot.as_ref().expect("the robot is open until close")
    }
}

/// What a scenario needs of a driver: [`Robot`]'s API, blocking.
pub trait Driver: Sized + std::fmt::Debug + Commands {
    /// Its handle on a command under way.
    type Handle: Handle;
    /// The driver's name in failure messages.
    const NAME: &'static str;
    /// [`Robot::connect`].
    fn connect(addr: SocketAddr, options: MotionOptions) -> Result<Self, MotionError>;
    /// [`Robot::recover`].
    fn recover(self) -> Result<Self, MotionError>;
    /// [`Robot::close`].
    fn close(self) -> Result<(), MotionError>;
    /// [`Robot::kinematics`].
    fn kinematics(&self) -> &Kinematics;
    /// [`Robot::state`].
    fn state(&self) -> RobotState;
    /// [`Robot::inverse_kinematics`].
    fn inverse_kinematics(
        &self,
        pose: &[f64; 6],
        near: Option<[f64; 6]>,
    ) -> Result<[f64; 6], MotionError>;
    /// [`Robot::start_move_j`].
    fn start_move_j(&self, target: JointMove) -> Result<Self::Handle, MotionError>;
    /// [`Robot::start_move_l`].
    fn start_move_l(&self, target: LinearMove) -> Result<Self::Handle, MotionError>;
    /// [`Robot::start_move_j_path`].
    fn start_move_j_path(&self, path: &[JointMove]) -> Result<Self::Handle, MotionError>;
}

impl Driver for Robot {
    type Handle = MoveHandle;
    const NAME: &'static str = "Robot";
    fn connect(addr: SocketAddr, options: MotionOptions) -> Result<Self, MotionError> {
        Robot::connect(addr, options)
    }
    fn recover(self) -> Result<Self, MotionError> {
        Robot::recover(self)
    }
    fn close(self) -> Result<(), MotionError> {
        Robot::close(self)
    }
    fn kinematics(&self) -> &Kinematics {
        Robot::kinematics(self)
    }
    fn state(&self) -> RobotState {
        Robot::state(self)
    }
    fn inverse_kinematics(
        &self,
        pose: &[f64; 6],
        near: Option<[f64; 6]>,
    ) -> Result<[f64; 6], MotionError> {
        Robot::inverse_kinematics(self, pose, near)
    }
    fn start_move_j(&self, target: JointMove) -> Result<MoveHandle, MotionError> {
        Robot::start_move_j(self, target)
    }
    fn start_move_l(&self, target: LinearMove) -> Result<MoveHandle, MotionError> {
        Robot::start_move_l(self, target)
    }
    fn start_move_j_path(&self, path: &[JointMove]) -> Result<MoveHandle, MotionError> {
        Robot::start_move_j_path(self, path)
    }
}

fn runtime() -> Arc<Runtime> {
    Arc::new(
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a tokio runtime"),
    )
}

impl Driver for OnTokio {
    type Handle = OnTokioHandle;
    const NAME: &'static str = "AsyncRobot";
    fn connect(addr: SocketAddr, options: MotionOptions) -> Result<Self, MotionError> {
        let runtime = runtime();
        let robot = runtime.block_on(AsyncRobot::connect(addr, options))?;
        Ok(OnTokio {
            robot: Some(robot),
            runtime,
        })
    }
    fn recover(mut self) -> Result<Self, MotionError> {
        let robot = self.robot.take().expect("open");
        let robot = self.runtime.block_on(robot.recover())?;
        Ok(OnTokio {
            robot: Some(robot),
            runtime: Arc::clone(&self.runtime),
        })
    }
    fn close(mut self) -> Result<(), MotionError> {
        let robot = self.robot.take().expect("open");
        self.runtime.block_on(robot.close())
    }
    fn kinematics(&self) -> &Kinematics {
        self.robot().kinematics()
    }
    fn state(&self) -> RobotState {
        self.robot().state()
    }
    fn inverse_kinematics(
        &self,
        pose: &[f64; 6],
        near: Option<[f64; 6]>,
    ) -> Result<[f64; 6], MotionError> {
        self.robot().inverse_kinematics(pose, near)
    }
    fn start_move_j(&self, target: JointMove) -> Result<OnTokioHandle, MotionError> {
        let handle = self.runtime.block_on(self.robot().start_move_j(target))?;
        Ok(OnTokioHandle {
            handle,
            runtime: Arc::clone(&self.runtime),
        })
    }
    fn start_move_l(&self, target: LinearMove) -> Result<OnTokioHandle, MotionError> {
        let handle = self.runtime.block_on(self.robot().start_move_l(target))?;
        Ok(OnTokioHandle {
            handle,
            runtime: Arc::clone(&self.runtime),
        })
    }
    fn start_move_j_path(&self, path: &[JointMove]) -> Result<OnTokioHandle, MotionError> {
        let handle = self
            .runtime
            .block_on(self.robot().start_move_j_path(path))?;
        Ok(OnTokioHandle {
            handle,
            runtime: Arc::clone(&self.runtime),
        })
    }
}

/// The commands that wait for their outcome, declared once and delegated to each driver.
macro_rules! commands {
    ($( $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty; )*) => {
        /// The commands that wait for their outcome, as [`Robot`] has them.
        pub trait Commands {
            $(
                #[doc = concat!("`Robot::", stringify!($name), "`.")]
                fn $name(&self, $($arg: $ty),*) -> Result<$ret, MotionError>;
            )*
        }
        impl Commands for Robot {
            $( fn $name(&self, $($arg: $ty),*) -> Result<$ret, MotionError> {
                Robot::$name(self, $($arg),*)
            } )*
        }
        impl Commands for OnTokio {
            $( fn $name(&self, $($arg: $ty),*) -> Result<$ret, MotionError> {
                self.runtime.block_on(self.robot().$name($($arg),*))
            } )*
        }
    };
}

commands! {
    move_j(target: JointMove) -> Reached;
    move_l(target: LinearMove) -> Reached;
    move_j_path(path: &[JointMove]) -> Reached;
    move_l_path(path: &[LinearMove]) -> Reached;
    speed_j(qd: [f64; 6], accel: f64) -> ();
    speed_l(xd: [f64; 6], accel: f64) -> ();
    stop_j(decel: f64) -> ();
    stop_l(decel: f64) -> ();
    servo_j(q: [f64; 6], time: f64, lookahead: f64, gain: f64) -> ();
    servo_stop(decel: f64) -> ();
    zero_ft_sensor() -> ();
    set_tcp(offset: [f64; 6]) -> ();
    set_payload(mass: f64, cog: [f64; 3]) -> ();
    teach_mode() -> ();
    end_teach_mode() -> ();
    force_mode(mode: &ForceMode) -> ();
    end_force_mode() -> ();
}

/// Runs each scenario (a function generic over [`Driver`]) as a test per driver, in the
/// modules `blocking` and `tokio`.
#[macro_export]
macro_rules! every_driver {
    ($($scenario:ident),* $(,)?) => {
        mod blocking {
            $( #[test] fn $scenario() { super::$scenario::<rtde_robot::motion::Robot>() } )*
        }
        mod tokio {
            $( #[test] fn $scenario() { super::$scenario::<$crate::robots::OnTokio>() } )*
        }
    };
}
