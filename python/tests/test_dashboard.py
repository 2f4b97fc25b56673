"""The Dashboard server from Python: `rtde_rs.Dashboard` and ur_rtde's `DashboardClient`
(`rtde_rs.ur_rtde`) against the simulator's Dashboard server and its robot state machine."""

import socket
import time

import pytest

import rtde_rs
from conftest import wait_for
from rtde_rs.ur_rtde import DashboardClient
from rtde_rs import RobotMode, RuntimeState, SafetyStatus


@pytest.fixture
def sim():
    with rtde_rs.Sim(dashboard=True, deterministic=True, unlock_delay=0.05) as s:
        yield s


def running(dashboard):
    dashboard.power_on()
    dashboard.wait_for_robot_mode(RobotMode.IDLE, 10)
    dashboard.brake_release()
    dashboard.wait_for_robot_mode(RobotMode.RUNNING, 10)


def test_a_wait_for_a_mode_ends_in_it_or_says_where_the_robot_is(sim):
    d = rtde_rs.Dashboard(sim.host, sim.dashboard_port)
    with pytest.raises(rtde_rs.DashboardError, match="POWER_OFF"):
        d.wait_for_robot_mode(RobotMode.RUNNING, 0.2)
    with pytest.raises(rtde_rs.BadArgumentError):
        d.wait_for_robot_mode(99)
    d.power_on()
    d.wait_for_robot_mode(RobotMode.IDLE, 10)
    assert d.robot_mode() is RobotMode.IDLE


def test_the_robot_is_powered_on_released_and_runs_a_program(sim):
    d = rtde_rs.Dashboard(sim.host, sim.dashboard_port)
    assert d.controller_version == "5.21.0"
    assert d.robot_mode() is RobotMode.POWER_OFF
    assert d.safety_status() is SafetyStatus.NORMAL
    running(d)
    assert sim.robot_state()["robot_mode"] is RobotMode.RUNNING

    assert d.load("/programs/pick.urp") is None
    assert d.loaded_program() == "/programs/pick.urp"
    assert d.program_state() == (RuntimeState.STOPPED, "pick.urp")
    assert d.running() is False
    d.play()
    assert d.running() is True
    assert d.program_state() == (RuntimeState.PLAYING, "pick.urp")
    assert sim.robot_state()["program_state"] is RuntimeState.PLAYING
    d.pause()
    assert d.program_state()[0] is RuntimeState.PAUSED
    d.stop()
    assert d.program_state()[0] is RuntimeState.STOPPED
    d.add_to_log("from Python")
    assert sim.robot_state()["log"] == ["from Python"]
    assert d.polyscope_version() == "5.21.0.0"
    assert d.execute("robotmode") is RobotMode.RUNNING
    assert d.execute("power off") == "Powering off"
    wait_for(lambda: d.robot_mode() == RobotMode.POWER_OFF, "powered off")


def test_a_refusal_raises_with_the_controllers_words_and_the_state_is_unchanged(sim):
    d = rtde_rs.Dashboard(sim.host, sim.dashboard_port)
    with pytest.raises(rtde_rs.DashboardError, match="Failed to execute: play") as e:
        d.play()  # powered off, nothing loaded
    assert isinstance(e.value, RuntimeError)
    assert (e.value.command, e.value.reply) == ("play", "Failed to execute: play")
    with pytest.raises(rtde_rs.DashboardError, match="File not found: pick.txt"):
        d.load("pick.txt")
    assert d.loaded_program() is None
    assert sim.robot_state()["program_state"] is RuntimeState.STOPPED


def test_a_protective_stop_is_seen_and_unlocked(sim):
    d = rtde_rs.Dashboard(sim.host, sim.dashboard_port)
    running(d)
    sim.protective_stop("a collision")
    assert d.safety_status() is SafetyStatus.PROTECTIVE_STOP
    time.sleep(0.1)  # the simulator's unlock delay, 50 ms here (5 s on a controller)
    d.unlock_protective_stop()
    assert d.safety_status() is SafetyStatus.NORMAL


def test_bad_arguments_and_missing_commands_raise_before_sending():
    with rtde_rs.Sim(version="3.15.8", dashboard=True, deterministic=True) as sim:
        d = rtde_rs.Dashboard(sim.host, sim.dashboard_port)
        with pytest.raises(rtde_rs.VersionTooOldError, match="is in remote control"):
            d.is_in_remote_control()  # e-Series 5.6 and later only
        with pytest.raises(rtde_rs.BadArgumentError, match="unknown Dashboard command"):
            d.execute("fly")
        with pytest.raises(rtde_rs.BadArgumentError, match="unknown user role"):
            d.set_user_role("admin")
        assert sim.robot_state()["robot_mode"] is RobotMode.POWER_OFF
        assert d.is_connected()  # nothing was sent, so the connection is untouched
        # ur_rtde answers False before 5.6, with a warning.
        client = DashboardClient(sim.host, sim.dashboard_port)
        client.connect()
        with pytest.warns(RuntimeWarning, match="is in remote control"):
            assert client.isInRemoteControl() is False


def test_no_dashboard_server_is_a_connection_error():
    with socket.socket() as s:  # a port nothing listens on once closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(rtde_rs.ConnectionLostError, match="cannot reach the Dashboard server"):
        rtde_rs.Dashboard("127.0.0.1", port, connect_timeout=1.0, rtde_port=None)


def test_the_dashboard_client_speaks_ur_rtdes_names_and_strings(sim):
    client = DashboardClient(sim.host, sim.dashboard_port)
    assert client.isConnected() is False
    client.connect()
    assert client.isConnected() is True
    assert client.robotmode() == "Robotmode: POWER_OFF"
    client.powerOn()
    client.brakeRelease()
    wait_for(lambda: client.robotmode() == "Robotmode: RUNNING", "running")
    assert client.safetystatus() == "Safetystatus: NORMAL"
    assert client.safetymode() == "Safetymode: NORMAL"
    assert client.getLoadedProgram() == "No program loaded"
    client.loadURP("pick.urp")
    assert client.getLoadedProgram() == "Loaded program: pick.urp"
    client.play()
    assert client.running() is True
    assert client.programState() == "PLAYING pick.urp"
    client.stop()
    assert client.programState() == "STOPPED pick.urp"
    assert client.isProgramSaved() is True
    assert client.isInRemoteControl() is True
    assert client.polyscopeVersion() == "5.21.0.0"
    client.send("robotmode\n")
    assert client.receive() == "Robotmode: RUNNING"
    client.send("popup hello")
    assert client.receive() == "showing popup"
    assert sim.robot_state()["popup"] == "hello"
    with pytest.raises(RuntimeError, match="Failed to execute: play"):
        client.loadURP("pick.urp")
        client.powerOff()
        client.play()
    client.disconnect()
    assert client.isConnected() is False
    with pytest.raises(rtde_rs.ConnectionLostError, match="connect"):
        client.play()


def test_typed_replies_print_by_name(sim):
    # An IntEnum prints as its number since Python 3.11; these print as their names.
    mode = rtde_rs.Dashboard(sim.host, sim.dashboard_port).robot_mode()
    assert isinstance(mode, RobotMode)
    assert str(mode) == f"RobotMode.{mode.name}"
    assert f"{mode}" == str(mode)
    assert str(RuntimeState.PLAYING) == "RuntimeState.PLAYING"
    assert int(mode) == mode.value

