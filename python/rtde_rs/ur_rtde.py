"""ur_rtde's receive, IO and control interfaces and its Dashboard client over rtde_rs.

``RTDEReceiveInterface`` and ``RTDEIOInterface`` run on ``rtde_rs.Client``,
``RTDEControlInterface`` on ``rtde_rs.Robot`` (the command program, sent through the
script port by default) and ``DashboardClient`` on ``rtde_rs.Dashboard``.

A script written for ur_rtde (SDU Robotics) changes its import lines only::

    from rtde_rs.ur_rtde import RTDEReceiveInterface, RTDEIOInterface
    from rtde_rs.ur_rtde import RTDEControlInterface, DashboardClient
    # was: import rtde_receive, rtde_io, rtde_control, dashboard_client
    #      RTDEReceiveInterface = rtde_receive.RTDEReceiveInterface ...

The same class names, signatures and return types (lists, ints, floats, bools). The
register numbering and its lower and upper ranges are ur_rtde's: the receive interface
reads ``output_int_register_12..19`` and ``output_double_register_12..19`` (36..43 with
``use_upper_range_registers=True``), the IO interface writes ``input_int_register_18..22``
and ``input_double_register_18..22`` (42..46). The lower range lies in the registers
fieldbus adapters own; ``check_fieldbus_range=True`` refuses it, as rtde does by default.

Differences, all deliberate:

- arguments are checked before anything is sent: an output index outside the controller's
  outputs, an analog ratio or speed outside 0..1, a NaN raise ``ValueError``
  (``rtde_rs.BadArgumentError``) where ur_rtde would send the value;
- ``setAnalogOutputVoltage(1, ...)`` sets output 1's domain bit (ur_rtde sets bit 0's);
- ``port=`` (keyword only) reaches a controller or simulator on another port than 30004;
- the default recipe's optional fields (``ft_raw_wrench``, ``payload``, ``payload_cog``,
  ``payload_inertia``) are the ones the registry says the connected controller has;
- the IO interface does not write ``input_int_register_23`` (47), which ur_rtde uses to
  talk to its own control script.
"""

import csv
import threading
import time
import warnings

from . import _rtde_rs
from ._rtde_rs import BadArgumentError, Client, Dashboard, RealtimeError, Robot, VersionTooOldError

# The motion defaults, from the one table the native API reads (rtde_robot::motion::defaults).
_D = _rtde_rs.MOTION_DEFAULTS

__all__ = ["RTDEReceiveInterface", "RTDEIOInterface", "RTDEControlInterface", "DashboardClient"]

_PORT = 30004

# ur_rtde's default recipe: every variable below, in this order.
_DEFAULT_VARIABLES = [
    "timestamp",
    "target_q",
    "target_qd",
    "target_qdd",
    "target_current",
    "target_moment",
    "actual_q",
    "actual_qd",
    "actual_current",
    "joint_control_output",
    "actual_TCP_pose",
    "actual_TCP_speed",
    "actual_TCP_force",
    "target_TCP_pose",
    "target_TCP_speed",
    "actual_digital_input_bits",
    "joint_temperatures",
    "actual_execution_time",
    "robot_mode",
    "joint_mode",
    "safety_mode",
    "actual_tool_accelerometer",
    "speed_scaling",
    "target_speed_fraction",
    "actual_momentum",
    "actual_main_voltage",
    "actual_robot_voltage",
    "actual_robot_current",
    "actual_joint_voltage",
    "actual_digital_output_bits",
    "runtime_state",
    "standard_analog_input0",
    "standard_analog_input1",
    "standard_analog_output0",
    "standard_analog_output1",
    "robot_status_bits",
    "safety_status_bits",
]
# Present when the controller has them.
_OPTIONAL_VARIABLES = ["ft_raw_wrench", "payload", "payload_cog", "payload_inertia"]

# ur_rtde's register windows, before the upper range's offset of 24.
_RECEIVE_REGISTERS = range(12, 20)
_IO_REGISTERS = range(18, 23)
_UPPER_OFFSET = 24

# Each getter: its name and the field it reads (ur_rtde's receive interface).
_GETTERS = {
    "getTimestamp": "timestamp",
    "getTargetQ": "target_q",
    "getTargetQd": "target_qd",
    "getTargetQdd": "target_qdd",
    "getTargetCurrent": "target_current",
    "getTargetMoment": "target_moment",
    "getActualQ": "actual_q",
    "getActualQd": "actual_qd",
    "getActualCurrent": "actual_current",
    "getJointControlOutput": "joint_control_output",
    "getActualTCPPose": "actual_TCP_pose",
    "getActualTCPSpeed": "actual_TCP_speed",
    "getActualTCPForce": "actual_TCP_force",
    "getTargetTCPPose": "target_TCP_pose",
    "getTargetTCPSpeed": "target_TCP_speed",
    "getActualDigitalInputBits": "actual_digital_input_bits",
    "getJointTemperatures": "joint_temperatures",
    "getActualExecutionTime": "actual_execution_time",
    "getRobotMode": "robot_mode",
    "getRobotStatus": "robot_status_bits",
    "getJointMode": "joint_mode",
    "getSafetyMode": "safety_mode",
    "getSafetyStatusBits": "safety_status_bits",
    "getActualToolAccelerometer": "actual_tool_accelerometer",
    "getSpeedScaling": "speed_scaling",
    "getTargetSpeedFraction": "target_speed_fraction",
    "getActualMomentum": "actual_momentum",
    "getActualMainVoltage": "actual_main_voltage",
    "getActualRobotVoltage": "actual_robot_voltage",
    "getActualRobotCurrent": "actual_robot_current",
    "getActualJointVoltage": "actual_joint_voltage",
    "getActualDigitalOutputBits": "actual_digital_output_bits",
    "getRuntimeState": "runtime_state",
    "getStandardAnalogInput0": "standard_analog_input0",
    "getStandardAnalogInput1": "standard_analog_input1",
    "getStandardAnalogOutput0": "standard_analog_output0",
    "getStandardAnalogOutput1": "standard_analog_output1",
    "getPayload": "payload",
    "getPayloadCog": "payload_cog",
    "getPayloadInertia": "payload_inertia",
    "getFtRawWrench": "ft_raw_wrench",
}


def _missing(name, field):
    def getter(self):
        raise RuntimeError(f"unable to get state data for specified key: {field}")

    getter.__name__ = name
    getter.__doc__ = f"The newest ``{field}`` (ur_rtde's ``{name}``)."
    return getter


def _connect(host, fields, frequency, rt_priority, **options):
    """A Client; a real-time priority the system refuses is a warning, as in ur_rtde."""
    if rt_priority:
        try:
            return Client(host, fields, frequency, realtime_priority=rt_priority, **options)
        except RealtimeError as e:
            warnings.warn(f"failed to set real-time priority {rt_priority}: {e}", RuntimeWarning, stacklevel=3)
    return Client(host, fields, frequency, **options)


def _given(values):
    """Whether a vector argument was given: ur_rtde's "empty means none", for lists,
    tuples and numpy arrays alike (an array has no single truth value)."""
    return values is not None and len(values) > 0


def _flat(values):
    """A vector argument's values in order: a numpy array of any shape flattened."""
    ravel = getattr(values, "ravel", None)
    return list(ravel()) if ravel is not None else list(values)


def _vector(values):
    """A vector argument as a list of floats: lists, tuples and numpy arrays of any float
    dtype and any shape that holds the right number of values (``(6,)``, ``(1, 6)``)."""
    out = []
    for i, x in enumerate(_flat(values)):
        try:
            out.append(float(x))
        except (TypeError, ValueError):
            raise TypeError(f"element [{i}] must be a real number, not {x!r}") from None
    return out


def _is_path(target):
    """Whether a move's target is a path: rows of a target with its speed, acceleration
    and blend (a list of lists, or a 2-D array), rather than one target."""
    if not _given(target) or not hasattr(target[0], "__len__"):
        return False
    return len(target[0]) > 6


def _wait_period(t_cycle_start, period):
    """Sleeps until one period after ``t_cycle_start`` (a ``time.perf_counter()`` value)."""
    left = t_cycle_start + period - time.perf_counter()
    if left > 0:
        time.sleep(left)


class RTDEReceiveInterface:
    """ur_rtde's ``RTDEReceiveInterface`` over ``rtde_rs.Client``.

    Streams ``variables`` (ur_rtde's default recipe when empty) at ``frequency`` hertz
    (500 on e-Series, 125 on CB3 when negative). Each getter returns the newest value, as a
    list, int, float or bool, as ur_rtde's does; a getter whose field is not in the recipe
    raises ``RuntimeError`` as ur_rtde's does.
    """

    def __init__(
        self,
        hostname,
        frequency=-1.0,
        variables=[],  # noqa: B006 - ur_rtde's signature; never mutated
        verbose=False,
        use_upper_range_registers=False,
        rt_priority=0,
        *,
        port=_PORT,
    ):
        self._hostname = hostname
        self._port = port
        self._requested = list(variables)
        self._upper = bool(use_upper_range_registers)
        self._verbose = verbose
        self._rt_priority = rt_priority
        self._frequency = None if frequency is None or frequency < 0 else float(frequency)
        self._recording = None
        self._connect()

    def _connect(self):
        offset = _UPPER_OFFSET if self._upper else 0
        if self._requested:
            fields, optional = self._requested, False
        else:
            registers = [f"output_int_register_{2 + offset}"]
            registers += [f"output_int_register_{i + offset}" for i in _RECEIVE_REGISTERS]
            registers += [f"output_double_register_{i + offset}" for i in _RECEIVE_REGISTERS]
            fields, optional = _DEFAULT_VARIABLES + _OPTIONAL_VARIABLES + registers, True
        self._client = _connect(
            self._hostname,
            fields,
            self._frequency,
            self._rt_priority,
            port=self._port,
            drop_unavailable=optional,
            queue=0,
        )
        self.variables = self._client.fields
        self._period = 1.0 / self._client.frequency
        for name, field in _GETTERS.items():
            if field in self.variables:
                setattr(self, name, self._client.getter(field, typed=False))
        self._registers = {
            f: self._client.getter(f, typed=False)
            for f in self.variables
            if f.startswith("output_int_register_") or f.startswith("output_double_register_")
        }
        # ur_rtde's constructor returns once the first package has arrived.
        deadline = time.monotonic() + 5.0
        while self._client.latest() is None:
            if time.monotonic() > deadline:
                raise _rtde_rs.RtdeTimeoutError("no package arrived within 5 s of connecting")
            time.sleep(0.0005)
        if self._verbose:
            print(f"RTDEReceiveInterface: connected, {len(self.variables)} variables at {self._client.frequency} Hz")

    # --- the connection ------------------------------------------------------------

    def isConnected(self):
        """Whether the connection is up."""
        return not self._client.is_closed

    def disconnect(self):
        """Closes the connection."""
        self._client.close()

    def reconnect(self):
        """Connects again with the same recipe; returns whether it is connected."""
        self._client.close()
        self._connect()
        return self.isConnected()

    def initPeriod(self):
        """The start of a cycle, for ``waitPeriod``."""
        return time.perf_counter()

    def waitPeriod(self, t_cycle_start):
        """Sleeps until one period (1 / frequency) after ``t_cycle_start``."""
        _wait_period(t_cycle_start, self._period)

    # --- values computed from fields ----------------------------------------------

    def getDigitalOutState(self, output_id):
        """Whether digital output ``output_id`` (bit of ``actual_digital_output_bits``) is on."""
        return bool(self.getActualDigitalOutputBits() >> output_id & 1)

    def getDigitalInState(self, input_id):
        """Whether digital input ``input_id`` (bit of ``actual_digital_input_bits``) is on."""
        return bool(self.getActualDigitalInputBits() >> input_id & 1)

    def isProtectiveStopped(self):
        """Whether the robot is protective stopped (``safety_status_bits``)."""
        return bool(self.getSafetyStatusBits() & _rtde_rs.SAFETY_PROTECTIVE_STOPPED)

    def isEmergencyStopped(self):
        """Whether the robot is emergency stopped (``safety_status_bits``)."""
        return bool(self.getSafetyStatusBits() & _rtde_rs.SAFETY_EMERGENCY_STOPPED)

    def getSpeedScalingCombined(self):
        """``speed_scaling`` times ``target_speed_fraction``."""
        return self.getSpeedScaling() * self.getTargetSpeedFraction()

    def _register(self, kind, output_id):
        window = range(_RECEIVE_REGISTERS.start + (_UPPER_OFFSET if self._upper else 0),
                       _RECEIVE_REGISTERS.stop + (_UPPER_OFFSET if self._upper else 0))
        if output_id not in window:
            which = "upper" if self._upper else "lower"
            raise BadArgumentError(
                f"The supported range of get{kind}Register() is [{window.start}-{window.stop - 1}], "
                f"when using {which} range, you specified: {output_id}"
            )
        field = f"output_{kind.lower().replace('output', '')}_register_{output_id}"
        getter = self._registers.get(field)
        if getter is None:
            raise RuntimeError(f"unable to get state data for specified key: {field}")
        return getter()

    def getOutputIntRegister(self, output_id):
        """``output_int_register_{output_id}``: 12..19, or 36..43 in the upper range."""
        return self._register("OutputInt", output_id)

    def getOutputDoubleRegister(self, output_id):
        """``output_double_register_{output_id}``: 12..19, or 36..43 in the upper range."""
        return self._register("OutputDouble", output_id)

    # --- recording ------------------------------------------------------------------

    def startFileRecording(self, filename, variables=[]):  # noqa: B006 - ur_rtde's signature
        """Records ``variables`` (all by default) to a CSV file once per period, as
        ur_rtde does, from a thread of its own; ``stopFileRecording`` ends it."""
        names = list(variables) or list(self.variables)
        unknown = [n for n in names if n not in self.variables]
        if unknown:
            raise RuntimeError(f"unable to get state data for specified key: {unknown[0]}")
        stop = threading.Event()
        handle = open(filename, "w", newline="")  # noqa: SIM115 - closed by stopFileRecording
        writer = csv.writer(handle)
        header = []
        for n in names:
            value = self._client.latest()[n]
            header += [f"{n}_{i}" for i in range(len(value))] if isinstance(value, list) else [n]
        writer.writerow(header)

        def record():
            while not stop.is_set():
                start = time.perf_counter()
                package = self._client.latest()
                row = []
                for n in names:
                    v = package[n]
                    row += [f"{x:.6f}" if isinstance(x, float) else x for x in v] if isinstance(v, list) else [
                        f"{v:.6f}" if isinstance(v, float) else int(v)
                    ]
                writer.writerow(row)
                _wait_period(start, self._period)

        thread = threading.Thread(target=record, name="rtde_rs-recording", daemon=True)
        self._recording = (stop, thread, handle)
        thread.start()
        return True

    def stopFileRecording(self):
        """Ends the recording ``startFileRecording`` began and closes its file."""
        if self._recording is None:
            return True
        stop, thread, handle = self._recording
        stop.set()
        thread.join()
        handle.close()
        self._recording = None
        return True


for _name, _field in _GETTERS.items():
    setattr(RTDEReceiveInterface, _name, _missing(_name, _field))


class RTDEIOInterface:
    """ur_rtde's ``RTDEIOInterface`` over ``rtde_rs.Client``: digital and analog outputs,
    the speed slider, and the input registers in ur_rtde's numbering (18..22, or 42..46
    with ``use_upper_range_registers=True``). Each setter returns True once sent."""

    def __init__(
        self,
        hostname,
        verbose=False,
        use_upper_range_registers=False,
        rt_priority=0,
        *,
        port=_PORT,
        check_fieldbus_range=False,
    ):
        self._hostname = hostname
        self._port = port
        self._upper = bool(use_upper_range_registers)
        self._checked = bool(check_fieldbus_range)
        self._rt_priority = rt_priority
        self._connect()

    def _connect(self):
        offset = _UPPER_OFFSET if self._upper else 0
        self._window = range(_IO_REGISTERS.start + offset, _IO_REGISTERS.stop + offset)
        first, last = self._window.start, self._window.stop - 1
        if self._checked:
            # rtde's own writer: it refuses registers outside the external clients' range.
            registers = dict(int_registers=(first, last), double_registers=(first, last))
            inputs = []
        else:
            registers = {}
            inputs = [f"input_int_register_{i}" for i in self._window]
            inputs += [f"input_double_register_{i}" for i in self._window]
        # An input-only connection still needs an output recipe to start; `timestamp` is
        # the smallest.
        self._client = _connect(
            self._hostname,
            ["timestamp"],
            None,
            self._rt_priority,
            port=self._port,
            io=True,
            inputs=inputs,
            queue=0,
            **registers,
        )

    def isConnected(self):
        """Whether the connection is up."""
        return not self._client.is_closed

    def disconnect(self):
        """Closes the connection."""
        self._client.close()

    def reconnect(self):
        """Connects again; returns True."""
        self._client.close()
        self._connect()
        return True

    def setStandardDigitalOut(self, output_id, signal_level):
        """Standard digital output ``output_id`` (0..7) on or off."""
        self._client.set_standard_digital_output(output_id, bool(signal_level))
        return True

    def setConfigurableDigitalOut(self, output_id, signal_level):
        """Configurable digital output ``output_id`` (0..7) on or off."""
        self._client.set_configurable_digital_output(output_id, bool(signal_level))
        return True

    def setToolDigitalOut(self, output_id, signal_level):
        """Tool digital output ``output_id`` (0 or 1) on or off."""
        self._client.set_tool_digital_output(output_id, bool(signal_level))
        return True

    def setAnalogOutputVoltage(self, output_id, voltage_ratio):
        """Standard analog output ``output_id`` as a voltage, at ``voltage_ratio`` (0..1) of 0-10 V."""
        self._client.set_analog_output(output_id, voltage_ratio, "voltage")
        return True

    def setAnalogOutputCurrent(self, output_id, current_ratio):
        """Standard analog output ``output_id`` as a current, at ``current_ratio`` (0..1) of 4-20 mA."""
        self._client.set_analog_output(output_id, current_ratio, "current")
        return True

    def setSpeedSlider(self, speed):
        """The speed slider at ``speed`` (0..1)."""
        self._client.set_speed_slider(speed)
        return True

    def _register_field(self, kind, input_id):
        if isinstance(input_id, bool) or not isinstance(input_id, int):
            raise TypeError(f"set{kind}Register(): input_id must be an int, not {type(input_id).__name__}")
        if input_id not in self._window:
            which = "upper" if self._upper else "lower"
            raise BadArgumentError(
                f"The supported range of set{kind}Register() is [{self._window.start}-{self._window.stop - 1}], "
                f"when using {which} range, you specified: {input_id}"
            )
        return f"input_{kind.lower().replace('input', '')}_register_{input_id}"

    def setInputIntRegister(self, input_id, value):
        """``input_int_register_{input_id}``: 18..22, or 42..46 in the upper range."""
        field = self._register_field("InputInt", input_id)
        if self._checked:
            self._client.set_int_register(input_id, value)
        else:
            self._client.send({field: value})
        return True

    def setInputDoubleRegister(self, input_id, value):
        """``input_double_register_{input_id}``: 18..22, or 42..46 in the upper range."""
        field = self._register_field("InputDouble", input_id)
        if self._checked:
            self._client.set_double_register(input_id, value)
        else:
            self._client.send({field: value})
        return True


class RTDEControlInterface:
    """ur_rtde's ``RTDEControlInterface`` over ``rtde_rs.Robot``: the motion commands of
    rtde's command program (``rtde_command.script``).

    As ur_rtde's constructor uploads its script, this one sends the command program
    through the script port (``FLAG_UPLOAD_SCRIPT``, in ``FLAGS_DEFAULT``): the Dashboard
    server is asked first whether the robot is in remote control, powered on, its brakes
    released and not stopped. Without that flag, the program must already play
    (installed from the pendant, or ``rtde_rs.Sim(program="command")``).
    ``FLAG_UPPER_RANGE_REGISTERS`` puts it on the upper registers (int 30-39, double
    30-47), else on the lower range (int 0-9, double 0-17), as ur_rtde does. The lower
    range leaves the IO interface's registers 18-22 free; the upper range holds its
    upper doubles 42-46.

    Every value is checked before anything is sent (``ValueError``:
    ``rtde_rs.BadArgumentError``). The robot's verdicts raise ``RuntimeError``s
    (``rtde_rs.ProtectiveStopError``, ``WatchdogError``, ``ProgramStoppedError``,
    ``TargetUnreachableError``) with the controller's words, where ur_rtde returns False.
    ``port=`` and ``ports=`` (keyword only) reach a controller or simulator on other ports
    than 30004 and the Dashboard's and script ports (``Sim.ports``).
    """

    FLAG_UPLOAD_SCRIPT = 0x01
    FLAG_USE_EXT_UR_CAP = 0x02
    FLAG_VERBOSE = 0x04
    FLAG_UPPER_RANGE_REGISTERS = 0x08
    FLAG_NO_WAIT = 0x10
    FLAG_CUSTOM_SCRIPT = 0x20
    FLAG_NO_EXT_FT = 0x40
    FLAG_DISABLE_REMOTE_CONTROL_CHECK = 0x80
    FLAGS_DEFAULT = FLAG_UPLOAD_SCRIPT

    # Flags with no meaning here: rtde's program has no external F/T input, waits for
    # nothing it could skip, and is not started through a URCap.
    _IGNORED = FLAG_VERBOSE | FLAG_NO_WAIT | FLAG_NO_EXT_FT
    _UNSUPPORTED = {
        FLAG_USE_EXT_UR_CAP: "FLAG_USE_EXT_UR_CAP (rtde's program is not started through a URCap)",
        FLAG_CUSTOM_SCRIPT: "FLAG_CUSTOM_SCRIPT (rtde sends its own command program)",
        FLAG_DISABLE_REMOTE_CONTROL_CHECK: "FLAG_DISABLE_REMOTE_CONTROL_CHECK (the script port "
        "needs remote control on e-Series; rtde always checks it first)",
    }

    def __init__(
        self,
        hostname,
        frequency=-1.0,
        flags=FLAGS_DEFAULT,
        ur_cap_port=50002,
        rt_priority=0,
        *,
        port=_PORT,
        ports=None,
        arm=None,
    ):
        for flag, why in self._UNSUPPORTED.items():
            if flags & flag:
                raise BadArgumentError(f"flag {why} is not supported")
        if isinstance(frequency, bool) or not isinstance(frequency, (int, float)) or frequency != frequency:
            raise BadArgumentError(f"frequency must be a number, not {frequency!r}")
        if rt_priority:
            warnings.warn(
                f"rt_priority={rt_priority} is not applied: rtde_rs.Robot's threads run at normal priority",
                RuntimeWarning,
                stacklevel=2,
            )
        self._hostname = hostname
        self._flags = flags
        self._options = dict(
            port=port,
            ports=ports,
            send_program=bool(flags & self.FLAG_UPLOAD_SCRIPT),
            layout="upper" if flags & self.FLAG_UPPER_RANGE_REGISTERS else "lower",
            arm=arm,
        )
        # ur_rtde's period: 1 / frequency, and the e-Series' 500 Hz when negative.
        self._period = 1.0 / (500.0 if frequency <= 0 else float(frequency))
        self._handle = None
        self._async_ended = 0
        self._robot = Robot(hostname, **self._options)

    # --- the connection -------------------------------------------------------------

    def isConnected(self):
        """Whether the connection is open (until ``disconnect`` or ``stopScript``)."""
        return self._robot.is_open

    def disconnect(self):
        """Closes the connection; the program's watchdog then stops the arm."""
        self._robot.close()

    def reconnect(self):
        """Closes and connects again (sending the program again with
        ``FLAG_UPLOAD_SCRIPT``); returns True."""
        self._robot.close()
        self._robot = Robot(self._hostname, **self._options)
        return True

    def reuploadScript(self):
        """Sends the command program again, replacing a stopped one (after a protective
        stop is unlocked, a watchdog stop, an unreachable target), and reconnects to it;
        returns True. Raises the precondition's error while the robot cannot run it."""
        self._robot.close()
        self._robot = Robot(self._hostname, **{**self._options, "send_program": True})
        return True

    def stopScript(self):
        """Ends the program: the connection closes and the program's watchdog stops it."""
        self._robot.close()

    def isProgramRunning(self):
        """Whether the controller plays a program (its runtime state; the connection open),
        as ur_rtde's: false once it stopped, whoever stopped it."""
        if not self._robot.is_open:
            return False
        state = self._robot.state()
        return state["playing"] and state["program"] != "stopped"

    def isSteady(self):
        """Whether every joint is at rest (slower than 1 mrad/s)."""
        return self._robot.state()["steady"]

    def initPeriod(self):
        """The start of a cycle, for ``waitPeriod``."""
        return time.perf_counter()

    def waitPeriod(self, t_cycle_start):
        """Sleeps until one period (1 / frequency) after ``t_cycle_start``."""
        _wait_period(t_cycle_start, self._period)

    # --- moves ----------------------------------------------------------------------

    def _move(self, single, path, target, speed, acceleration, asynchronous, defaults):
        # ur_rtde's two overloads: (target, speed, acceleration, asynchronous) and
        # (path, asynchronous), where a path is a list of [target..., speed, accel, blend].
        if _is_path(target):
            if isinstance(speed, bool):
                asynchronous = speed
            elif speed != defaults[0] or acceleration != defaults[1]:
                raise TypeError("a path takes (path, asynchronous=False): each waypoint carries its speed")
            result = path([_vector(w) for w in target], asynchronous=asynchronous)
        else:
            result = single(_vector(target), speed, acceleration, asynchronous=asynchronous)
        if asynchronous:
            self._handle = result
        return True

    def moveJ(self, q, speed=_D["joint_speed"], acceleration=_D["joint_acceleration"], asynchronous=False):
        """Moves to joint positions ``q`` (rad), or through a path of
        ``[q0..q5, speed, acceleration, blend]`` waypoints (``moveJ(path, asynchronous)``).
        Blocks until the arm is there unless ``asynchronous``; returns True."""
        r = self._robot
        return self._move(r.move_j, r.move_j_path, q, speed, acceleration, asynchronous, (_D["joint_speed"], _D["joint_acceleration"]))

    def moveL(self, pose, speed=_D["tool_speed"], acceleration=_D["tool_acceleration"], asynchronous=False):
        """Moves the TCP along a straight line to ``pose``, or through a path of
        ``[x, y, z, rx, ry, rz, speed, acceleration, blend]`` waypoints; returns True."""
        r = self._robot
        return self._move(r.move_l, r.move_l_path, pose, speed, acceleration, asynchronous, (_D["tool_speed"], _D["tool_acceleration"]))

    def moveJ_IK(self, pose, speed=_D["joint_speed"], acceleration=_D["joint_acceleration"], asynchronous=False):
        """Moves in joint space to the joints that put the TCP at ``pose`` (the solution
        nearest the current joints, computed on the host); returns True."""
        q = self._robot.inverse_kinematics(_vector(pose))
        return self.moveJ(q, speed, acceleration, asynchronous)

    def getAsyncOperationProgress(self):
        """The index of the waypoint under way while an asynchronous move runs (0 for one
        target); below 0 when none runs, alternating between -1 and -2 each time one ends,
        as ur_rtde's."""
        if self._handle is not None:
            if not self._handle.is_finished():
                return self._handle.waypoint()
            self._handle = None
            self._async_ended += 1
        return -1 - self._async_ended % 2

    # --- speeds and stops -------------------------------------------------------------

    def speedJ(self, qd, acceleration=_D["speed_j_acceleration"], time=0.0):
        """Accelerates the joints to ``qd`` (rad/s), kept until the next command; returns
        True. ``time`` is not used: the speed holds until another command."""
        self._robot.speed_j(_vector(qd), acceleration)
        return True

    def speedL(self, xd, acceleration=_D["speed_l_acceleration"], time=0.0):
        """Accelerates the TCP to ``xd`` (m/s, rad/s), kept until the next command."""
        self._robot.speed_l(_vector(xd), acceleration)
        return True

    def speedStop(self, a=_D["stop_deceleration"]):
        """Ends speed mode, decelerating the joints at ``a`` (rad/s²); returns True."""
        self._robot.stop_j(a)
        return True

    def stopJ(self, a=_D["stop_j_deceleration"], asynchronous=False):
        """Decelerates the joints to rest at ``a`` (rad/s²). Returns once the arm rests,
        ``asynchronous`` or not."""
        self._robot.stop_j(a)

    def stopL(self, a=_D["stop_deceleration"], asynchronous=False):
        """Decelerates the TCP to rest at ``a`` (m/s²). Returns once the arm rests."""
        self._robot.stop_l(a)

    def servoJ(self, q, speed, acceleration, time, lookahead_time, gain):
        """One servo target (URScript ``servoj``); ``speed`` and ``acceleration`` are
        unused, as in URScript. Returns True."""
        self._robot.servo_j(_vector(q), time, lookahead_time, gain)
        return True

    def servoStop(self, a=_D["stop_deceleration"]):
        """Ends servoing, decelerating at ``a`` (rad/s²); returns True."""
        self._robot.servo_stop(a)
        return True

    # --- modes and settings -----------------------------------------------------------

    def forceMode(self, task_frame, selection_vector, wrench, type, limits):  # noqa: A002 - ur_rtde's name
        """Starts force mode (URScript ``force_mode``); returns True."""
        self._robot.force_mode(
            _vector(task_frame),
            [int(x) for x in _flat(selection_vector)],
            _vector(wrench),
            type,
            _vector(limits),
        )
        return True

    def forceModeStop(self):
        """Ends force mode; returns True."""
        self._robot.end_force_mode()
        return True

    def zeroFtSensor(self):
        """Zeroes the force/torque sensor; returns True."""
        self._robot.zero_ft_sensor()
        return True

    def teachMode(self):
        """Starts teach mode (the arm moves by hand); returns True."""
        self._robot.teach_mode()
        return True

    def endTeachMode(self):
        """Ends teach mode; returns True."""
        self._robot.end_teach_mode()
        return True

    def setTcp(self, tcp_offset):
        """Sets the TCP offset from the flange; returns True."""
        self._robot.set_tcp(_vector(tcp_offset))
        return True

    def setPayload(self, mass, cog=[]):  # noqa: B006 - ur_rtde's signature; never mutated
        """Sets the payload's mass (kg) and centre of gravity (m); an empty ``cog`` is the
        flange's origin (ur_rtde keeps the current one). Returns True."""
        self._robot.set_payload(mass, _vector(cog) if _given(cog) else [0.0, 0.0, 0.0])
        return True

    # --- kinematics -------------------------------------------------------------------

    def getInverseKinematics(self, x, qnear=[], max_position_error=1e-10, max_orientation_error=1e-10):  # noqa: B006
        """The joints that put the TCP at ``x``, nearest ``qnear`` (the current joints when
        empty); computed on the host on the controller's calibrated arm when its primary
        interface could be read (``kinematics`` says), so the error bounds are met to
        1e-9. An unreachable pose raises ``ValueError``."""
        return self._robot.inverse_kinematics(_vector(x), _vector(qnear) if _given(qnear) else None)

    def getForwardKinematics(self, q=[], tcp_offset=[]):  # noqa: B006 - ur_rtde's signature
        """The TCP pose of joints ``q`` (the current ones when empty) with ``tcp_offset``
        (the one set with ``setTcp`` when empty), on the controller's calibrated arm when
        its primary interface could be read (``kinematics`` says which)."""
        return self._robot.forward_kinematics(
            _vector(q) if _given(q) else None, _vector(tcp_offset) if _given(tcp_offset) else None
        )

    def getActualToolFlangePose(self):
        """The flange's pose at the current joints."""
        return self._robot.forward_kinematics(None, [0.0] * 6)

    def getTCPOffset(self):
        """The TCP offset set with ``setTcp`` (zero until then)."""
        return self._robot.tcp_offset

    def poseTrans(self, p_from, p_from_to):
        """``p_from_to``, given in the frame ``p_from``, in the base frame (URScript's
        ``pose_trans``)."""
        return _rtde_rs.pose_trans(p_from, p_from_to)

    def moveL_FK(self, q, speed=_D["tool_speed"], acceleration=_D["tool_acceleration"], asynchronous=False):
        """Moves the TCP along a straight line to the pose of joints ``q``; returns True."""
        return self.moveL(self.getForwardKinematics(q), speed, acceleration, asynchronous)

    def getInverseKinematicsHasSolution(
        self, x, qnear=[], max_position_error=1e-10, max_orientation_error=1e-10  # noqa: B006
    ):
        """Whether some joints put the TCP at ``x``."""
        try:
            self.getInverseKinematics(x, qnear)
        except BadArgumentError:
            return False
        return True


class DashboardClient:
    """ur_rtde's ``DashboardClient`` over ``rtde_rs.Dashboard`` (port 29999).

    As in ur_rtde, the constructor does not connect: call ``connect()``. The queries
    return the controller's reply lines (``robotmode()`` gives ``"Robotmode: RUNNING"``),
    and a refused ``loadURP``, ``play``, ``stop``, ``pause`` or ``unlockProtectiveStop``
    raises ``RuntimeError`` (``rtde_rs.DashboardError``) quoting the controller, as
    ur_rtde's do. Unlike ur_rtde, every other refusal raises too, and a command the
    controller's version lacks raises ``rtde_rs.VersionTooOldError`` with nothing sent.
    """

    def __init__(self, hostname, port=29999, verbose=False):
        self._hostname = hostname
        self._port = port
        self._verbose = verbose
        self._dashboard = None
        self._last = None

    def _d(self):
        if self._dashboard is None or not self._dashboard.is_connected():
            raise _rtde_rs.ConnectionLostError("the Dashboard client is not connected: call connect() first")
        return self._dashboard

    def connect(self, timeout_ms=2000):
        """Connects and reads the server's greeting, within ``timeout_ms``."""
        if isinstance(timeout_ms, bool) or not isinstance(timeout_ms, int) or timeout_ms <= 0:
            raise BadArgumentError(f"timeout_ms must be a positive int, not {timeout_ms!r}")
        # ur_rtde waits 2.5 s for each reply.
        self._dashboard = Dashboard(
            self._hostname, self._port, connect_timeout=timeout_ms / 1000.0, timeout=2.5, reconnect=False
        )
        if self._verbose:
            print(f"Connected to the Dashboard server at {self._hostname}:{self._port}")

    def isConnected(self):
        """Whether the connection is open."""
        return self._dashboard is not None and self._dashboard.is_connected()

    def disconnect(self):
        """Closes the connection."""
        if self._dashboard is not None:
            self._dashboard.disconnect()

    def send(self, str):  # noqa: A002 - ur_rtde's name
        """Sends a command by its words and keeps its reply for ``receive()``: the
        controller's line for the commands that act, and for the queries the string
        their method returns (``"Robotmode: RUNNING"``). A text that is no Dashboard
        command raises ``ValueError`` before sending; a refusal raises, as everywhere here."""
        words = str.strip()
        query = _QUERIES.get(words)
        self._last = getattr(self, query)() if query else _reply_text(self._d().execute(words))

    def receive(self):
        """The reply to the last ``send``."""
        last, self._last = self._last, None
        if last is None:
            raise RuntimeError("no reply to receive: send a command first")
        return last

    def loadURP(self, urp_name):
        """``load <urp_name>``."""
        self._d().load(urp_name)

    def play(self):
        """``play``."""
        self._d().play()

    def stop(self):
        """``stop``."""
        self._d().stop()

    def pause(self):
        """``pause``."""
        self._d().pause()

    def quit(self):
        """``quit``: the server closes the connection."""
        self._d().quit()

    def shutdown(self):
        """``shutdown``: the controller shuts down."""
        self._d().shutdown()

    def running(self):
        """Whether a program runs."""
        return self._d().running()

    def popup(self, text):
        """``popup <text>``."""
        self._d().popup(text)

    def closePopup(self):
        """``close popup``."""
        self._d().close_popup()

    def closeSafetyPopup(self):
        """``close safety popup``."""
        self._d().close_safety_popup()

    def powerOn(self):
        """``power on``."""
        self._d().power_on()

    def powerOff(self):
        """``power off``."""
        self._d().power_off()

    def brakeRelease(self):
        """``brake release``."""
        self._d().brake_release()

    def unlockProtectiveStop(self):
        """``unlock protective stop`` (refused until 5 s after the stop)."""
        self._d().unlock_protective_stop()

    def restartSafety(self):
        """``restart safety``."""
        self._d().restart_safety()

    def polyscopeVersion(self):
        """The software version, ``"5.21.0.0"``."""
        return self._d().polyscope_version()

    def programState(self):
        """``programState``'s reply: ``"PLAYING pick.urp"``, ``"STOPPED"``."""
        return _reply_text(self._d().program_state())

    def robotmode(self):
        """``robotmode``'s reply: ``"Robotmode: RUNNING"``."""
        return "Robotmode: " + _name(self._d().robot_mode())

    def safetymode(self):
        """``safetymode``'s reply: ``"Safetymode: NORMAL"``."""
        return "Safetymode: " + _name(self._d().safety_mode())

    def safetystatus(self):
        """``safetystatus``'s reply: ``"Safetystatus: NORMAL"``."""
        return "Safetystatus: " + _name(self._d().safety_status())

    def getLoadedProgram(self):
        """``get loaded program``'s reply: ``"Loaded program: <path>"`` or
        ``"No program loaded"``."""
        return _reply_text(self._d().loaded_program(), loaded=True)

    def isProgramSaved(self):
        """Whether the loaded program is saved."""
        return self._d().is_program_saved()

    def isInRemoteControl(self):
        """Whether the controller is in remote control; False, with a warning, before
        5.6, which cannot say (as ur_rtde)."""
        try:
            return self._d().is_in_remote_control()
        except VersionTooOldError as e:
            warnings.warn(str(e), RuntimeWarning, stacklevel=2)
            return False

    def getRobotModel(self):
        """``get robot model``: ``"UR5"``."""
        return self._d().robot_model()

    def getSerialNumber(self):
        """``get serial number`` (5.6 and later)."""
        return self._d().serial_number()

    def setUserRole(self, role):
        """``setUserRole <role>`` (CB3): ``"programmer"``, ``"operator"``, ``"none"``,
        ``"locked"`` or ``"restricted"`` (or anything whose ``name`` is one)."""
        self._d().set_user_role(getattr(role, "name", role))

    def addToLog(self, message):
        """``addToLog <message>``."""
        self._d().add_to_log(message)


# The queries whose reply ur_rtde returns as a line: `send` answers them through their
# methods, so that `receive` gives the same line.
_QUERIES = {
    "robotmode": "robotmode",
    "safetymode": "safetymode",
    "safetystatus": "safetystatus",
    "programState": "programState",
    "get loaded program": "getLoadedProgram",
    "PolyscopeVersion": "polyscopeVersion",
}


def _name(member):
    """An enum member's name; a code no member has as a number."""
    return getattr(member, "name", str(member))


def _reply_text(value, loaded=False):
    """A typed reply as the controller's line, for ur_rtde's string results."""
    if loaded:
        return "No program loaded" if value is None else f"Loaded program: {value}"
    if isinstance(value, tuple):
        state, program = value
        return _name(state) if program is None else f"{_name(state)} {program}"
    if isinstance(value, bool):
        return "true" if value else "false"
    return _name(value) if hasattr(value, "name") else str(value)
