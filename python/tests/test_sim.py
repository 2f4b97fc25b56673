"""The simulator from Python, with the options of `rtde sim`."""

import os

import pytest

import rtde_rs
from conftest import wait_for
from rtde_rs.ur_rtde import DashboardClient


def test_it_plays_the_controller_version_and_arm_asked_for():
    with rtde_rs.Sim(version="3.15.8", arm="ur5") as sim:
        assert sim.controller_version == "3.15.8"
        assert sim.loop_rate == 125
        assert sim.host == "127.0.0.1" and sim.port > 0
        with rtde_rs.Client(sim.host, ["timestamp"], port=sim.port) as robot:
            assert robot.frequency == 125.0


def test_deterministic_runs_repeat_their_values():
    def run():
        with rtde_rs.Sim(deterministic=True) as sim:
            with rtde_rs.Client(sim.host, ["timestamp", "actual_q"], port=sim.port) as robot:
                rows = robot.read(200, timeout=5.0)
                return {round(t, 6): tuple(q) for t, q in zip(rows["timestamp"], rows["actual_q"])}

    a, b = run(), run()
    common = set(a) & set(b)
    assert len(common) >= 100
    assert all(a[t] == b[t] for t in common)


def test_v1_only_still_streams():
    with rtde_rs.Sim(v1_only=True) as sim:
        with rtde_rs.Client(sim.host, ["timestamp"], sim.loop_rate, port=sim.port) as robot:
            robot.recv(timeout=1.0)


def test_a_fault_takes_effect_and_a_bad_one_is_refused():
    with rtde_rs.Sim(faults=["skip-every=10"]) as sim:
        with rtde_rs.Client(sim.host, ["timestamp"], port=sim.port) as robot:
            robot.read(50, timeout=5.0)
            assert robot.stats()["skipped"] >= 3
    with pytest.raises(rtde_rs.BadArgumentError, match="fault `skip-sometimes`"):
        rtde_rs.Sim(faults=["skip-sometimes"])


def test_refuse_unrecorded_answers_not_found():
    # `actual_TCP_acceleration`: no source records its first version (`?` in the registry).
    with rtde_rs.Sim() as sim:
        rtde_rs.Client(sim.host, ["actual_TCP_acceleration"], port=sim.port).close()
    with rtde_rs.Sim(refuse_unrecorded=True) as sim:
        with pytest.raises(rtde_rs.SetupRefusedError, match="NOT_FOUND") as e:
            rtde_rs.Client(sim.host, ["timestamp", "actual_TCP_acceleration"], port=sim.port)
        assert e.value.not_found == ["actual_TCP_acceleration"]


def test_a_fleet_serves_each_robot_on_a_port_of_its_own():
    with rtde_rs.Sim(robots=3) as fleet:
        assert len(fleet.addrs) == 3 and len({p for _, p in fleet.addrs}) == 3
        for host, port in fleet.addrs:
            with rtde_rs.Client(host, ["timestamp"], port=port) as robot:
                robot.recv(timeout=1.0)


def test_an_unknown_arm_or_program_is_refused():
    with pytest.raises(rtde_rs.BadArgumentError, match="unknown arm"):
        rtde_rs.Sim(arm="ur99")
    with pytest.raises(rtde_rs.BadArgumentError, match="program `pick`"):
        rtde_rs.Sim(program="pick")
    with pytest.raises(rtde_rs.BadArgumentError, match="layout `middle`"):
        rtde_rs.Sim(program="command", layout="middle")
    with pytest.raises(rtde_rs.SimulatorError, match="version"):
        rtde_rs.Sim(version="7.1")


def test_stats_count_connections_and_shutdown_closes_them(sim):
    robot = rtde_rs.Client(sim.host, ["timestamp"], port=sim.port)
    robot.recv(timeout=1.0)
    wait_for(lambda: sim.stats()["connections_open"] == 1, "one connection")
    assert sim.stats()["data_packages_sent"] >= 1
    sim.shutdown()
    with pytest.raises(rtde_rs.ConnectionLostError):
        for _ in range(1000):
            robot.recv(timeout=1.0)
    with pytest.raises(rtde_rs.SimulatorError, match="shut down"):
        sim.port


def test_the_command_program_dashboard_and_script_ports_run_when_asked():
    with rtde_rs.Sim(program="command", layout="lower") as sim:
        assert sim.command_program()["state"] == "idle"
        assert sim.dashboard_port is None and sim.ports is None
        assert sim.program() is None  # the servo program's snapshot
    with rtde_rs.Sim(dashboard=True, script_ports=True, local_control=True) as sim:
        assert sim.command_program() is None  # until one is sent
        ports = sim.ports
        assert set(ports) == {"dashboard", "primary", "secondary", "realtime", "rtde"}
        assert ports["dashboard"] == sim.dashboard_port and ports["rtde"] == sim.port
        assert sim.robot_state()["remote_control"] is False
        sim.set_remote_control(True)
        assert sim.robot_state()["remote_control"] is True
        sim.protective_stop("a test")
        assert sim.robot_state()["safety_status"] is rtde_rs.SafetyStatus.PROTECTIVE_STOP


def test_the_robots_own_ports_when_asked():
    # On a loopback address of its own, so that no other simulator holds these ports.
    for n in range(2 + os.getpid() % 200, 255):
        host = f"127.0.0.{n}"
        try:
            sim = rtde_rs.Sim(host=host, port=30004, dashboard=29999, script_ports=30001)
        except Exception:  # noqa: BLE001 - taken: try the next address
            continue
        break
    else:
        pytest.skip("no free 127.0.0.N for the robot's ports")
    with sim:
        assert sim.ports == {"dashboard": 29999, "primary": 30001, "secondary": 30002, "realtime": 30003, "rtde": 30004}
        # A script written for a robot reaches it on the default ports.
        dashboard = DashboardClient(host)
        dashboard.connect()
        assert dashboard.isConnected()
        dashboard.disconnect()
    with pytest.raises(ValueError, match="dashboard must be True, False or a port number"):
        rtde_rs.Sim(dashboard="yes")
