"""Type stubs of the extension module (kept next to it; tests/test_stubs.py checks that
every name here exists in the module and every public name of the module is here)."""

import enum
from types import TracebackType
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

import numpy.typing as npt

__version__: str
SAFETY_PROTECTIVE_STOPPED: int
SAFETY_EMERGENCY_STOPPED: int

class RtdeError(Exception): ...
class ConnectionLostError(RtdeError, ConnectionError): ...
class RtdeTimeoutError(RtdeError, TimeoutError): ...
class StaleError(RtdeError): ...

class SetupRefusedError(RtdeError):
    not_found: List[str]
    in_use: List[str]
    owners: List[Tuple[str, str]]

class VersionTooOldError(RtdeError):
    controller: str
    fields: List[Tuple[str, Optional[str]]]

class BadArgumentError(RtdeError, ValueError): ...
class RecipeError(BadArgumentError, ValueError): ...
class ProtocolError(RtdeError): ...
class RealtimeError(RtdeError, PermissionError): ...
class SimulatorError(RtdeError): ...

class RobotMode(enum.IntEnum):
    NO_CONTROLLER = -1
    DISCONNECTED = 0
    CONFIRM_SAFETY = 1
    BOOTING = 2
    POWER_OFF = 3
    POWER_ON = 4
    IDLE = 5
    BACKDRIVE = 6
    RUNNING = 7
    UPDATING_FIRMWARE = 8

class SafetyMode(enum.IntEnum):
    NORMAL = 1
    REDUCED = 2
    PROTECTIVE_STOP = 3
    RECOVERY = 4
    SAFEGUARD_STOP = 5
    SYSTEM_EMERGENCY_STOP = 6
    ROBOT_EMERGENCY_STOP = 7
    VIOLATION = 8
    FAULT = 9
    VALIDATE_JOINT_ID = 10
    UNDEFINED_SAFETY_MODE = 11
    AUTOMATIC_MODE_SAFEGUARD_STOP = 12
    SYSTEM_THREE_POSITION_ENABLING_STOP = 13

class SafetyStatus(enum.IntEnum):
    NORMAL = 1
    REDUCED = 2
    PROTECTIVE_STOP = 3
    RECOVERY = 4
    SAFEGUARD_STOP = 5
    SYSTEM_EMERGENCY_STOP = 6
    ROBOT_EMERGENCY_STOP = 7
    VIOLATION = 8
    FAULT = 9
    VALIDATE_JOINT_ID = 10
    UNDEFINED_SAFETY_MODE = 11
    AUTOMATIC_MODE_SAFEGUARD_STOP = 12
    SYSTEM_THREE_POSITION_ENABLING_STOP = 13

class RuntimeState(enum.IntEnum):
    STOPPING = 0
    STOPPED = 1
    PLAYING = 2
    PAUSING = 3
    PAUSED = 4
    RESUMING = 5

class JointMode(enum.IntEnum):
    SHUTTING_DOWN_MODE = 236
    PART_D_CALIBRATION_MODE = 237
    BACKDRIVE_MODE = 238
    POWER_OFF_MODE = 239
    READY_FOR_POWER_OFF_MODE = 240
    NOT_RESPONDING_MODE = 245
    MOTOR_INITIALISATION_MODE = 246
    BOOTING_MODE = 247
    PART_D_CALIBRATION_ERROR_MODE = 248
    BOOTLOADER_MODE = 249
    CALIBRATION_MODE = 250
    VIOLATION_MODE = 251
    FAULT_MODE = 252
    RUNNING_MODE = 253
    IDLE_MODE = 255

class ToolMode(enum.IntEnum):
    BOOTLOADER_MODE = 249
    RUNNING_MODE = 253
    IDLE_MODE = 255

class ProgramStatus(enum.IntEnum):
    WAITING = 0
    RUNNING = 1
    WATCHDOG_STOPPED = 2
    HANDSHAKE_STOPPED = 3

_Value = Any
"""A field's value: float, int (an enum member for mode fields), bool, or a list."""

class Getter:
    """The newest value of one output field, as a callable."""

    @property
    def name(self) -> str: ...
    def __call__(self) -> _Value: ...

class Client:
    """A connection to a controller's RTDE interface over a background reader thread."""

    def __init__(
        self,
        host: str,
        fields: Sequence[str],
        frequency: Optional[float] = None,
        *,
        port: int = 30004,
        drop_unavailable: bool = False,
        inputs: Optional[Sequence[Union[str, Sequence[str]]]] = None,
        io: bool = False,
        int_registers: Optional[Tuple[int, int]] = None,
        double_registers: Optional[Tuple[int, int]] = None,
        bit_registers: Optional[Tuple[int, int]] = None,
        controller: Optional[str] = None,
        reconnect: Optional[int] = None,
        staleness: Optional[float] = None,
        staleness_grace: float = 2.0,
        queue: int = 1024,
        connect_timeout: float = 5.0,
        read_timeout: float = 1.0,
        realtime_priority: Optional[int] = None,
        cpu: Optional[int] = None,
    ) -> None: ...
    @property
    def fields(self) -> List[str]: ...
    @property
    def dropped(self) -> List[Tuple[str, str]]: ...
    @property
    def frequency(self) -> float: ...
    @property
    def controller_version(self) -> str: ...
    @property
    def state(self) -> str: ...
    @property
    def is_stale(self) -> bool: ...
    @property
    def is_closed(self) -> bool: ...
    def latest(self) -> Optional[Dict[str, _Value]]: ...
    def getter(self, name: str, typed: bool = True) -> Getter: ...
    def recv(self, timeout: Optional[float] = None) -> Dict[str, _Value]: ...
    def read(self, n: int, timeout: Optional[float] = None) -> Dict[str, npt.NDArray[Any]]: ...
    def drain(self) -> Dict[str, npt.NDArray[Any]]: ...
    def __iter__(self) -> Iterator[Dict[str, _Value]]: ...
    def __next__(self) -> Dict[str, _Value]: ...
    def send(self, values: Mapping[str, _Value]) -> None: ...
    def set_standard_digital_output(self, index: int, on: bool) -> None: ...
    def set_configurable_digital_output(self, index: int, on: bool) -> None: ...
    def set_tool_digital_output(self, index: int, on: bool) -> None: ...
    def set_analog_output(self, index: int, ratio: float, domain: Optional[str] = None) -> None: ...
    def set_speed_slider(self, fraction: float) -> None: ...
    def set_int_register(self, index: int, value: int) -> None: ...
    def set_double_register(self, index: int, value: float) -> None: ...
    def set_bit_register(self, index: int, on: bool) -> None: ...
    def stats(self) -> Dict[str, int]: ...
    def events(self) -> List[str]: ...
    def text_messages(self) -> List[str]: ...
    def close(self) -> None: ...
    def __enter__(self) -> "Client": ...
    def __exit__(
        self,
        exc_type: Optional[type],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> bool: ...

class Sim:
    """A simulated controller in this process, on 127.0.0.1 at a free port."""

    def __init__(
        self,
        version: str = "5.21.0",
        arm: str = "ur5e",
        *,
        deterministic: bool = False,
        seed: Optional[int] = None,
        unpaced: bool = False,
        v1_only: bool = False,
        fieldbus: bool = False,
        faults: Optional[Sequence[str]] = None,
        refuse_unrecorded: bool = False,
        program: Optional[str] = None,
        robots: int = 1,
        still: Optional[Sequence[float]] = None,
        speed: Optional[float] = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None: ...
    @property
    def host(self) -> str: ...
    @property
    def port(self) -> int: ...
    @property
    def addrs(self) -> List[Tuple[str, int]]: ...
    @property
    def controller_version(self) -> str: ...
    @property
    def loop_rate(self) -> int: ...
    @property
    def seed(self) -> int: ...
    def input(self, name: str) -> Optional[_Value]: ...
    def digital_output_bits(self) -> int: ...
    def speed_fraction(self) -> float: ...
    def analog_output(self, index: int) -> float: ...
    def analog_output_types(self) -> int: ...
    def stats(self) -> Dict[str, int]: ...
    def wait_for_connections(self, n: int, timeout: float) -> bool: ...
    def pause_stream(self) -> None: ...
    def resume_stream(self) -> None: ...
    def program(self) -> Optional[Dict[str, Any]]: ...
    def shutdown(self) -> None: ...
    def __enter__(self) -> "Sim": ...
    def __exit__(
        self,
        exc_type: Optional[type],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> bool: ...

class Handshake:
    """The waypoint handshake as the loop's function sees it in one cycle."""

    @property
    def current(self) -> int: ...
    @property
    def acked(self) -> int: ...
    @property
    def ready(self) -> bool: ...
    def advance(self) -> bool: ...

class ServoLoop:
    """The control kit over the servo program: a Python function per package."""

    def __init__(
        self,
        host: str,
        *,
        port: int = 30004,
        frequency: Optional[float] = None,
        timeout: float = 1.0,
        connect_timeout: float = 5.0,
    ) -> None: ...
    def run(
        self,
        f: Callable[[Dict[str, Any], Handshake], Optional[Sequence[float]]],
        cycles: int,
    ) -> Dict[str, Union[int, float]]: ...
    def init_period(self) -> float: ...
    def wait_period(self, t: float) -> None: ...
    def servo_j(self, q: Sequence[float]) -> bool: ...
    def stats(self) -> Dict[str, Union[int, float]]: ...
    @property
    def status(self) -> Optional[ProgramStatus]: ...
    def close(self) -> None: ...
    def __enter__(self) -> "ServoLoop": ...
    def __exit__(
        self,
        exc_type: Optional[type],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> bool: ...

def field_names(direction: str = "output") -> List[str]: ...
def _panic_for_test(message: str) -> None: ...
