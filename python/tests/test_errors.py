"""Errors: each Rust error arrives as its Python class with the Rust message, and bad
arguments are refused before anything is sent."""

import math
import threading

import pytest

import rtde_rs
from conftest import wait_for


def test_an_unknown_field_names_the_closest_one_before_connecting():
    # Nothing listens on port 9: the recipe is refused before any connection is tried.
    with pytest.raises(rtde_rs.RecipeError, match=r"unknown output field `actual_tcp_pos` \(did you mean `actual_TCP_pose`\?\)"):
        rtde_rs.Client("127.0.0.1", ["timestamp", "actual_tcp_pos"], port=9)
    with pytest.raises(ValueError):
        rtde_rs.Client("127.0.0.1", ["speed_slider_fraction"], port=9)


def test_a_field_too_new_for_the_connected_controller_names_the_version_that_has_it():
    with rtde_rs.Sim(version="5.4.0") as sim:
        with pytest.raises(rtde_rs.VersionTooOldError, match="`ft_raw_wrench` requires e-Series 5.9.0") as e:
            rtde_rs.Client(sim.host, ["timestamp", "ft_raw_wrench"], port=sim.port)
        assert e.value.fields == [("ft_raw_wrench", "5.9.0")]
        assert e.value.controller == "5.4.0"


def test_a_field_too_new_for_the_declared_version_is_refused_before_connecting():
    with pytest.raises(rtde_rs.VersionTooOldError, match="controller is e-Series 5.4.0"):
        rtde_rs.Client("127.0.0.1", ["ft_raw_wrench"], port=9, controller="5.4")
    with pytest.raises(rtde_rs.BadArgumentError, match="controller version"):
        rtde_rs.Client("127.0.0.1", ["timestamp"], port=9, controller="five")


def test_in_use_names_its_likely_owner():
    with rtde_rs.Sim(fieldbus=True) as sim:
        with pytest.raises(rtde_rs.SetupRefusedError, match="fieldbus") as e:
            rtde_rs.Client(sim.host, ["timestamp"], port=sim.port, inputs=["input_int_register_3"])
        assert e.value.in_use == ["input_int_register_3"]
        assert e.value.owners == [("input_int_register_3", "a fieldbus adapter")]


def test_in_use_by_another_client(sim):
    with rtde_rs.Client(sim.host, ["timestamp"], port=sim.port, inputs=["input_int_register_30"]):
        with pytest.raises(rtde_rs.SetupRefusedError, match="IN_USE|in use") as e:
            rtde_rs.Client(sim.host, ["timestamp"], port=sim.port, inputs=["input_int_register_30"])
        assert e.value.owners == [("input_int_register_30", "another RTDE client")]


def test_no_controller_is_a_lost_connection():
    with pytest.raises(rtde_rs.ConnectionLostError, match="30004"):
        rtde_rs.Client("127.0.0.1", ["timestamp"], port=9)
    with pytest.raises(ConnectionError):
        rtde_rs.Client("127.0.0.1", ["timestamp"], port=9)


def test_a_reconnection_brings_the_stream_back_and_counts_it():
    with rtde_rs.Sim(faults=["close-mid-frame=data:50"]) as sim:
        with rtde_rs.Client(sim.host, ["timestamp"], port=sim.port, reconnect=5) as robot:
            wait_for(lambda: robot.stats()["reconnects"] >= 1, "a reconnection")
            assert robot.recv(timeout=2.0)["timestamp"] >= 0.0
            assert any("Reconnect" in e for e in robot.events())


def test_without_reconnection_a_cut_link_is_a_lost_connection():
    with rtde_rs.Sim(faults=["close-mid-frame=data:50"]) as sim:
        with rtde_rs.Client(sim.host, ["timestamp"], port=sim.port) as robot:
            with pytest.raises(rtde_rs.ConnectionLostError):
                for _ in range(1000):
                    robot.recv(timeout=2.0)


def test_staleness_is_raised_once_per_silence(sim):
    with rtde_rs.Client(sim.host, ["timestamp"], port=sim.port, staleness=0.05, staleness_grace=2.0) as robot:
        robot.recv(timeout=1.0)
        sim.pause_stream()
        with pytest.raises(rtde_rs.StaleError, match="stale"):
            for _ in range(1000):
                robot.recv(timeout=2.0)
        assert robot.is_stale
        with pytest.raises(rtde_rs.RtdeTimeoutError):
            robot.recv(timeout=0.1)  # told once: the next wait times out
        sim.resume_stream()
        robot.recv(timeout=2.0)
        wait_for(lambda: not robot.is_stale, "a fresh stream")


def test_a_timeout_is_a_timeout_error(sim):
    with rtde_rs.Client(sim.host, ["timestamp"], port=sim.port) as robot:
        sim.pause_stream()
        robot.drain()
        with pytest.raises(TimeoutError):
            for _ in range(1000):
                robot.recv(timeout=0.05)


@pytest.fixture
def writer(sim):
    with rtde_rs.Client(sim.host, ["timestamp"], port=sim.port, io=True, int_registers=(24, 24),
                        double_registers=(24, 24), inputs=["input_int_register_30"]) as robot:
        yield robot


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda r: r.set_standard_digital_output(-1, True), "index -1 is negative"),
        (lambda r: r.set_standard_digital_output(8, True), "no standard digital output 8"),
        (lambda r: r.set_tool_digital_output(2, True), "no tool digital output 2"),
        (lambda r: r.set_int_register(-3, 1), "index -3 is negative"),
        (lambda r: r.set_int_register(3, 1), "reserved for fieldbus adapters"),
        (lambda r: r.set_int_register(25, 1), "no recipe for `input_int_register_25`"),
        (lambda r: r.set_analog_output(0, 1.5, "voltage"), "0..=1"),
        (lambda r: r.set_analog_output(0, -0.1, "current"), "0..=1"),
        (lambda r: r.set_analog_output(0, math.nan, "voltage"), "NaN"),
        (lambda r: r.set_analog_output(0, 0.5, "watts"), "analog domain"),
        (lambda r: r.set_speed_slider(math.nan), "NaN"),
        (lambda r: r.set_speed_slider(2.0), "0..=1"),
        (lambda r: r.set_double_register(24, math.inf), "finite"),
        (lambda r: r.send({"input_int_register_30": 2**31}), "does not fit"),
        (lambda r: r.send({"input_int_register_30": "7"}), "takes an int"),
        (lambda r: r.send({"input_int_register_31": 1}), "no input recipe"),
    ],
)
def test_bad_arguments_are_refused_before_anything_is_sent(sim, writer, call, match):
    before = sim.stats()["input_packages_applied"]
    with pytest.raises(rtde_rs.BadArgumentError, match=match):
        call(writer)
    with pytest.raises(ValueError):
        call(writer)
    assert sim.stats()["input_packages_applied"] == before


@pytest.mark.parametrize(
    "call",
    [
        lambda r: r.set_standard_digital_output("3", True),
        lambda r: r.set_speed_slider("fast"),
        lambda r: r.set_int_register(24, 1.5),
        lambda r: r.recv(timeout="soon"),
    ],
)
def test_wrong_types_are_type_errors(writer, call):
    with pytest.raises(TypeError):
        call(writer)


@pytest.mark.parametrize("bad", [0.0, -1.0, math.nan, math.inf])
def test_bad_durations_are_refused(sim, bad):
    with pytest.raises(rtde_rs.BadArgumentError, match="seconds"):
        rtde_rs.Client(sim.host, ["timestamp"], port=sim.port, read_timeout=bad)


def test_a_rust_panic_is_a_python_exception_not_an_abort():
    with pytest.raises(BaseException, match="on purpose") as e:
        rtde_rs._rtde_rs._panic_for_test("on purpose")
    assert type(e.value).__name__ == "PanicException"
    # The interpreter goes on, threads and all.
    t = threading.Thread(target=lambda: None)
    t.start()
    t.join()
