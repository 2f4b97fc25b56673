"""The Pythonic client against the in-process simulator: latest, in-order, bulk reads,
typed values, the writer, stats, the context manager."""

import numpy as np
import pytest

import rtde_rs
from conftest import assert_in_order, settle, wait_for

FIELDS = ["timestamp", "actual_q", "actual_TCP_pose", "robot_mode", "safety_mode", "joint_mode",
          "runtime_state", "actual_digital_output_bits", "speed_scaling"]


def test_latest_never_blocks_and_recv_returns_every_package_in_order(sim):
    with rtde_rs.Client(sim.host, FIELDS, port=sim.port) as robot:
        first = robot.recv(timeout=1.0)
        stamps = [first["timestamp"]] + [robot.recv(timeout=1.0)["timestamp"] for _ in range(49)]
        assert_in_order(stamps, robot)
        assert robot.latest()["timestamp"] >= stamps[-1]
        assert robot.stats()["received"] >= 50


def test_values_are_typed_as_the_controller_documents_them(sim):
    with rtde_rs.Client(sim.host, FIELDS, port=sim.port) as robot:
        p = robot.recv(timeout=1.0)
        assert isinstance(p["timestamp"], float)
        assert isinstance(p["actual_q"], list) and len(p["actual_q"]) == 6
        assert p["robot_mode"] is rtde_rs.RobotMode.RUNNING
        assert p["safety_mode"] is rtde_rs.SafetyMode.NORMAL
        assert p["runtime_state"] in set(rtde_rs.RuntimeState)
        assert all(isinstance(m, rtde_rs.JointMode) for m in p["joint_mode"])
        assert isinstance(p["actual_digital_output_bits"], int)


def test_read_gives_one_array_per_field_one_row_per_package(sim):
    with rtde_rs.Client(sim.host, FIELDS, port=sim.port) as robot:
        block = robot.read(100, timeout=5.0)
        assert set(block) == set(FIELDS)
        assert block["timestamp"].shape == (100,) and block["timestamp"].dtype == np.float64
        assert block["actual_q"].shape == (100, 6) and block["actual_q"].dtype == np.float64
        assert block["joint_mode"].shape == (100, 6) and block["joint_mode"].dtype == np.int32
        assert block["actual_digital_output_bits"].dtype == np.uint64
        assert_in_order(block["timestamp"], robot)
        # The next receive continues where the rows leave off.
        after = robot.recv(timeout=1.0)
        assert_in_order([block["timestamp"][-1], after["timestamp"]], robot)


def test_a_bulk_read_and_a_dict_decode_the_same_package_alike(sim):
    with rtde_rs.Client(sim.host, FIELDS, port=sim.port) as robot:
        wait_for(lambda: robot.stats()["received"] >= 5, "5 packages")
        sim.pause_stream()
        settle(robot)
        rows, last = robot.drain(), robot.latest()
        for field in FIELDS:
            row = rows[field][-1]
            assert (row.tolist() if row.ndim else row.item()) == last[field], field


def test_drain_takes_what_is_queued_without_waiting(sim):
    with rtde_rs.Client(sim.host, ["timestamp"], port=sim.port) as robot:
        wait_for(lambda: robot.stats()["received"] >= 20, "20 packages")
        rows = robot.drain()
        assert len(rows["timestamp"]) >= 20
        assert len(robot.drain()["timestamp"]) < 20


def test_iteration_yields_packages_in_order(sim):
    with rtde_rs.Client(sim.host, ["timestamp"], port=sim.port) as robot:
        stamps = []
        for package in robot:
            stamps.append(package["timestamp"])
            if len(stamps) == 10:
                break
        assert_in_order(stamps, robot)


def test_a_getter_reads_the_newest_value_of_its_field(sim):
    with rtde_rs.Client(sim.host, FIELDS, port=sim.port) as robot:
        robot.recv(timeout=1.0)
        sim.pause_stream()
        settle(robot)
        latest = robot.latest()
        assert robot.getter("actual_q")() == latest["actual_q"]
        assert robot.getter("actual_tcp_pose")() == latest["actual_TCP_pose"], "case-insensitive"
        assert robot.getter("robot_mode")() is rtde_rs.RobotMode.RUNNING
        plain = robot.getter("robot_mode", typed=False)()
        assert type(plain) is int and plain == 7
        with pytest.raises(rtde_rs.BadArgumentError, match="not an output field"):
            robot.getter("target_q")


def test_the_typed_writer_changes_what_it_names_and_nothing_else(sim):
    with rtde_rs.Client(sim.host, ["actual_digital_output_bits"], port=sim.port, io=True,
                        int_registers=(24, 25), double_registers=(24, 24), bit_registers=(64, 64)) as robot:
        robot.recv(timeout=1.0)
        robot.set_standard_digital_output(3, True)
        robot.set_configurable_digital_output(1, True)
        robot.set_tool_digital_output(0, True)
        wait_for(lambda: sim.digital_output_bits() == (1 << 3) | (1 << 9) | (1 << 16), "the outputs")
        robot.set_standard_digital_output(3, False)
        wait_for(lambda: sim.digital_output_bits() == (1 << 9) | (1 << 16), "output 3 off")
        wait_for(lambda: robot.latest()["actual_digital_output_bits"] == (1 << 9) | (1 << 16), "the read-back")
        robot.set_speed_slider(0.25)
        wait_for(lambda: sim.speed_fraction() == 0.25, "the speed slider")
        robot.set_analog_output(1, 0.5, "voltage")
        wait_for(lambda: sim.analog_output(1) == 0.5 and sim.analog_output_types() == 0b10, "analog 1")
        robot.set_int_register(24, -7)
        robot.set_double_register(24, 1.25)
        robot.set_bit_register(64, True)
        wait_for(lambda: sim.input("input_int_register_24") == -7, "int register 24")
        wait_for(lambda: sim.input("input_double_register_24") == 1.25, "double register 24")
        wait_for(lambda: sim.input("input_bit_register_64") is True, "bit register 64")


def test_send_writes_an_input_recipe_by_its_fields(sim):
    with rtde_rs.Client(sim.host, ["timestamp"], port=sim.port,
                        inputs=["input_int_register_30", ["input_double_register_30", "input_double_register_31"]]) as robot:
        robot.send({"input_int_register_30": 12})
        robot.send({"input_double_register_31": 2.5, "input_double_register_30": -1.0})
        wait_for(lambda: sim.input("input_int_register_30") == 12, "int register 30")
        wait_for(lambda: sim.input("input_double_register_30") == -1.0
                 and sim.input("input_double_register_31") == 2.5, "double registers")


def test_close_ends_the_connection_and_the_context_manager_closes(sim):
    robot = rtde_rs.Client(sim.host, ["timestamp"], port=sim.port)
    with robot:
        robot.recv(timeout=1.0)
        assert robot.state == "running"
    assert robot.is_closed
    assert sim.wait_for_connections(0, 5.0)
    # Closed by this program, and said so: not a link lost to an error.
    with pytest.raises(rtde_rs.ConnectionLostError, match="closed by this program"):
        robot.stats()
    robot.close()  # twice is fine


def test_the_declared_and_connected_versions_and_frequency(sim):
    with rtde_rs.Client(sim.host, ["timestamp"], 125.0, port=sim.port, controller="5.21") as robot:
        assert robot.controller_version == "5.21.0"
        assert robot.frequency == 125.0
        assert robot.fields == ["timestamp"]


def test_drop_unavailable_leaves_out_what_the_controller_lacks():
    with rtde_rs.Sim(version="5.4.0") as sim:
        with rtde_rs.Client(sim.host, ["timestamp", "ft_raw_wrench"], port=sim.port, drop_unavailable=True) as robot:
            assert robot.fields == ["timestamp"]
            assert robot.dropped == [("ft_raw_wrench", "requires 5.9.0")]


def test_field_names_lists_the_registry():
    outputs = rtde_rs.field_names()
    assert "actual_TCP_pose" in outputs and "speed_slider_fraction" not in outputs
    assert "speed_slider_fraction" in rtde_rs.field_names("input")
