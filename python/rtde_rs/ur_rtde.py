"""ur_rtde's receive and IO interfaces over ``rtde_rs.Client``.

A script written for ur_rtde (SDU Robotics) changes its import lines only::

    from rtde_rs.ur_rtde import RTDEReceiveInterface, RTDEIOInterface
    # was: import rtde_receive, rtde_io
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
from ._rtde_rs import BadArgumentError, Client, RealtimeError

__all__ = ["RTDEReceiveInterface", "RTDEIOInterface"]

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
