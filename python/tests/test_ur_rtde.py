"""The ur_rtde-compatible classes: every getter against the Rust client's own decoding of
the same package, every IO setter's effect read back from the simulator, ur_rtde's register
windows and its errors."""

import pytest

import rtde_rs
from conftest import settle, wait_for
from rtde_rs.ur_rtde import _GETTERS, RTDEIOInterface, RTDEReceiveInterface


@pytest.fixture
def receive(sim):
    r = RTDEReceiveInterface(sim.host, port=sim.port)
    yield r
    r.disconnect()


def test_every_getter_equals_the_rust_clients_value_of_the_same_package(sim, receive):
    # The interface's own connection: its getters and the client's dict read one package.
    robot = receive._client
    sim.pause_stream()
    settle(robot)
    package = robot.latest()
    assert receive.getTimestamp() == package["timestamp"]
    checked = 0
    for name, field in _GETTERS.items():
        if field not in package:
            with pytest.raises(RuntimeError, match=field):
                getattr(receive, name)()
            continue
        value = getattr(receive, name)()
        assert value == package[field], name
        # ur_rtde's return types: lists, plain ints, floats.
        assert type(value) in (list, int, float, bool), name
        checked += 1
    assert checked >= 37
    bits = package["actual_digital_output_bits"]
    assert [receive.getDigitalOutState(i) for i in range(18)] == [bool(bits >> i & 1) for i in range(18)]
    assert receive.isProtectiveStopped() is False and receive.isEmergencyStopped() is False
    for i in range(12, 20):
        assert receive.getOutputIntRegister(i) == package[f"output_int_register_{i}"]
        assert receive.getOutputDoubleRegister(i) == package[f"output_double_register_{i}"]


def test_the_default_recipe_is_ur_rtdes(receive):
    assert receive.variables[:3] == ["timestamp", "target_q", "target_qd"]
    assert "ft_raw_wrench" in receive.variables  # 5.21 has it
    assert "output_int_register_2" in receive.variables
    assert [f"output_double_register_{i}" for i in range(12, 20)] == receive.variables[-8:]


def test_a_custom_recipe_and_the_getters_outside_it(sim):
    r = RTDEReceiveInterface(sim.host, 125.0, ["timestamp", "actual_q"], port=sim.port)
    try:
        assert r.variables == ["timestamp", "actual_q"]
        assert len(r.getActualQ()) == 6
        with pytest.raises(RuntimeError, match="actual_TCP_pose"):
            r.getActualTCPPose()
        assert r.isConnected()
    finally:
        r.disconnect()
    assert not r.isConnected()


@pytest.mark.parametrize("upper, inside, outside", [(False, 12, 36), (True, 36, 12)])
def test_the_output_register_windows_are_ur_rtdes(sim, upper, inside, outside):
    r = RTDEReceiveInterface(sim.host, port=sim.port, use_upper_range_registers=upper)
    try:
        assert isinstance(r.getOutputIntRegister(inside), int)
        with pytest.raises(ValueError, match="supported range of getOutputIntRegister"):
            r.getOutputIntRegister(outside)
        with pytest.raises(ValueError, match="supported range of getOutputDoubleRegister"):
            r.getOutputDoubleRegister(inside - 1)
    finally:
        r.disconnect()


def test_every_io_setter_takes_effect_on_the_controller(sim):
    io = RTDEIOInterface(sim.host, port=sim.port)
    try:
        assert io.setStandardDigitalOut(2, True) is True
        assert io.setConfigurableDigitalOut(0, True) is True
        assert io.setToolDigitalOut(1, True) is True
        wait_for(lambda: sim.digital_output_bits() == (1 << 2) | (1 << 8) | (1 << 17), "digital outputs")
        io.setStandardDigitalOut(2, False)
        wait_for(lambda: sim.digital_output_bits() == (1 << 8) | (1 << 17), "output 2 off")
        io.setAnalogOutputVoltage(0, 0.3)
        wait_for(lambda: sim.analog_output(0) == 0.3 and sim.analog_output_types() & 1, "voltage 0")
        io.setAnalogOutputCurrent(0, 0.6)
        wait_for(lambda: sim.analog_output(0) == 0.6 and not sim.analog_output_types() & 1, "current 0")
        io.setSpeedSlider(0.4)
        wait_for(lambda: sim.speed_fraction() == 0.4, "speed slider")
        for i in range(18, 23):
            assert io.setInputIntRegister(i, 100 + i) is True
            assert io.setInputDoubleRegister(i, i / 4) is True
        for i in range(18, 23):
            wait_for(lambda: sim.input(f"input_int_register_{i}") == 100 + i, f"int register {i}")
            wait_for(lambda: sim.input(f"input_double_register_{i}") == i / 4, f"double register {i}")
    finally:
        io.disconnect()


def test_the_upper_range_writes_registers_42_to_46(sim):
    io = RTDEIOInterface(sim.host, port=sim.port, use_upper_range_registers=True)
    try:
        io.setInputIntRegister(42, 5)
        io.setInputDoubleRegister(46, 0.5)
        wait_for(lambda: sim.input("input_int_register_42") == 5, "int register 42")
        wait_for(lambda: sim.input("input_double_register_46") == 0.5, "double register 46")
        with pytest.raises(ValueError, match=r"supported range of setInputIntRegister\(\) is \[42-46\]"):
            io.setInputIntRegister(18, 1)
    finally:
        io.disconnect()


def test_the_io_interfaces_arguments_are_checked_before_sending(sim):
    io = RTDEIOInterface(sim.host, port=sim.port)
    try:
        before = sim.stats()["input_packages_applied"]
        with pytest.raises(ValueError, match=r"\[18-22\], when using lower range, you specified: 23"):
            io.setInputIntRegister(23, 1)
        with pytest.raises(ValueError):
            io.setInputDoubleRegister(-1, 1.0)
        with pytest.raises(ValueError, match="NaN"):
            io.setInputDoubleRegister(18, float("nan"))
        with pytest.raises(ValueError, match="0..=1"):
            io.setAnalogOutputVoltage(0, 1.2)
        with pytest.raises(ValueError, match="NaN"):
            io.setSpeedSlider(float("nan"))
        with pytest.raises(ValueError):
            io.setStandardDigitalOut(8, True)
        with pytest.raises(TypeError):
            io.setInputIntRegister("18", 1)
        assert sim.stats()["input_packages_applied"] == before
    finally:
        io.disconnect()


def test_the_fieldbus_range_check_is_an_opt_in(sim):
    with pytest.raises(rtde_rs.BadArgumentError, match="reserved for fieldbus adapters"):
        RTDEIOInterface(sim.host, port=sim.port, check_fieldbus_range=True)
    io = RTDEIOInterface(sim.host, port=sim.port, use_upper_range_registers=True, check_fieldbus_range=True)
    try:
        io.setInputIntRegister(44, 9)
        wait_for(lambda: sim.input("input_int_register_44") == 9, "int register 44")
    finally:
        io.disconnect()


def test_init_period_and_wait_period_pace_a_loop(receive):
    import time

    start = time.perf_counter()
    for _ in range(50):
        t = receive.initPeriod()
        receive.waitPeriod(t)
    assert time.perf_counter() - start >= 50 / 500


def test_file_recording_writes_rows_with_ur_rtdes_header(sim, tmp_path):
    r = RTDEReceiveInterface(sim.host, 500.0, ["timestamp", "actual_q"], port=sim.port)
    try:
        path = tmp_path / "rec.csv"
        assert r.startFileRecording(str(path)) is True
        import time

        time.sleep(0.1)
        assert r.stopFileRecording() is True
    finally:
        r.disconnect()
    lines = path.read_text().splitlines()
    assert lines[0] == "timestamp," + ",".join(f"actual_q_{i}" for i in range(6))
    assert len(lines) >= 10
    assert len(lines[1].split(",")) == 7


def test_a_refused_real_time_priority_is_a_warning_as_in_ur_rtde(sim):
    # SCHED_FIFO priorities end at 99: the system refuses 150 whoever runs this.
    with pytest.warns(RuntimeWarning, match="real-time priority 150"):
        r = RTDEReceiveInterface(sim.host, port=sim.port, rt_priority=150)
    try:
        assert r.isConnected() and len(r.getActualQ()) == 6
    finally:
        r.disconnect()
