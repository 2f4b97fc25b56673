"""Universal Robots RTDE on a Rust core.

- ``Client``: a connection over rtde-core's background driver: checked recipes,
  ``latest()``, every package in order (``recv``, iteration), bulk reads into numpy
  (``read``, ``drain``), the typed writer, stats.
- ``Sim``: the simulator, in-process on 127.0.0.1.
- ``ServoLoop``: the control kit (a Python function per package, the deadline accounting)
  and ur_rtde's ``initPeriod`` / ``servoJ`` / ``waitPeriod`` idiom.
- ``Robot``: motion commands over the command program (moves, paths, speeds, stops,
  servoing, force and teach mode), each checked before anything is sent.
- ``Dashboard``: the Dashboard server (port 29999), with typed replies.
- ``rtde_rs.ur_rtde``: ur_rtde's ``RTDEReceiveInterface``, ``RTDEIOInterface``,
  ``RTDEControlInterface`` and ``DashboardClient``.
- ``rtde_rs.aio``: ``Client``, ``Robot`` and ``Dashboard`` for asyncio (``async with``,
  ``async for``, awaited moves and Dashboard commands), over the classes above.

Example::

    import rtde_rs

    with rtde_rs.Sim() as sim:
        with rtde_rs.Client(sim.host, ["timestamp", "actual_q", "robot_mode"], port=sim.port) as robot:
            print(robot.recv(timeout=1.0))
            block = robot.read(500)         # one second at 500 Hz
            print(block["actual_q"].shape)  # (500, 6)
"""

from ._rtde_rs import (
    BadArgumentError,
    Client,
    ConnectionLostError,
    Dashboard,
    DashboardError,
    Getter,
    Handshake,
    JointMode,
    MotionError,
    MoveHandle,
    ProgramStatus,
    ProgramStoppedError,
    ProtectiveStopError,
    ProtocolError,
    RealtimeError,
    RecipeError,
    Robot,
    RobotMode,
    RtdeError,
    RtdeTimeoutError,
    RuntimeState,
    SafetyMode,
    SafetyStatus,
    ScriptError,
    ServoLoop,
    SetupRefusedError,
    Sim,
    SimulatorError,
    StaleError,
    TargetUnreachableError,
    ToolMode,
    VersionTooOldError,
    WatchdogError,
    __version__,
    field_names,
    pose_trans,
)

__all__ = [
    "BadArgumentError",
    "Client",
    "ConnectionLostError",
    "Dashboard",
    "DashboardError",
    "Getter",
    "Handshake",
    "JointMode",
    "MotionError",
    "MoveHandle",
    "ProgramStatus",
    "ProgramStoppedError",
    "ProtectiveStopError",
    "ProtocolError",
    "RealtimeError",
    "RecipeError",
    "Robot",
    "RobotMode",
    "RtdeError",
    "RtdeTimeoutError",
    "RuntimeState",
    "SafetyMode",
    "SafetyStatus",
    "ScriptError",
    "ServoLoop",
    "SetupRefusedError",
    "Sim",
    "SimulatorError",
    "StaleError",
    "TargetUnreachableError",
    "ToolMode",
    "VersionTooOldError",
    "WatchdogError",
    "__version__",
    "field_names",
    "pose_trans",
]
