"""Motion from Python: `rtde_rs.Robot` and ur_rtde's `RTDEControlInterface`
(`rtde_rs.ur_rtde`) against the simulator's command program. Moves reach their targets,
the robot's verdicts are their own exception classes, and refused inputs raise before
anything is sent, leaving the simulator untouched.

The simulators play a CB3 (125 Hz): the program's watchdog is 50 cycles, 400 ms there,
which a test machine busy with other builds does not miss by starving the client."""

import _thread
import math
import pathlib
import subprocess
import sys
import threading
import time

import pytest

import rtde_rs
from conftest import wait_for
from rtde_rs.ur_rtde import RTDEControlInterface, RTDEIOInterface

HOME = [0.0, -1.57, 1.57, -1.57, -1.57, 0.0]
TARGET = [0.3, -1.4, 1.4, -1.6, -1.5, 0.2]
# The command program plays; ur_rtde's class attaches to it on the upper registers.
INSTALLED = RTDEControlInterface.FLAG_UPPER_RANGE_REGISTERS


def command_sim(**options):
    return rtde_rs.Sim(version="3.15.8", program="command", deterministic=True, still=HOME, **options)


@pytest.fixture
def sim():
    with command_sim() as s:
        yield s


@pytest.fixture
def control(sim):
    c = RTDEControlInterface(sim.host, flags=INSTALLED, port=sim.port)
    yield c
    c.disconnect()


def close(a, b, tolerance=1e-6):
    return max(abs(x - y) for x, y in zip(a, b)) < tolerance


def test_move_j_and_move_l_reach_their_targets(sim):
    with rtde_rs.Robot(sim.host, port=sim.port, send_program=False) as robot:
        reached = robot.move_j(TARGET, speed=1.0, acceleration=3.0)
        assert close(reached["q"], TARGET, 1e-9)
        assert close(sim.command_program()["q"], TARGET, 1e-9)
        below = list(reached["tcp_pose"])
        below[2] -= 0.1
        down = robot.move_l(below)
        assert close(down["tcp_pose"], below)
        assert close(robot.state()["tcp_pose"], below)


def test_ur_rtdes_moves_paths_and_inverse_kinematics(sim, control):
    assert control.moveJ(TARGET) is True
    assert close(sim.command_program()["q"], TARGET, 1e-9)
    pose = sim.command_program()["tcp_pose"]
    assert close(control.getInverseKinematics(pose), TARGET)
    assert control.getInverseKinematicsHasSolution(pose) is True
    assert control.getInverseKinematicsHasSolution([5.0, 0, 0, 0, 0, 0]) is False

    # A joint path with blends, then a square of straight lines, as ur_rtde writes them.
    path = [HOME + [1.0, 2.0, 0.05], TARGET + [1.0, 2.0, 0.0]]
    assert control.moveJ(path) is True
    assert close(sim.command_program()["q"], TARGET, 1e-9)
    x, y, z = pose[:3]
    corners = [[x + dx, y + dy, z] + pose[3:] + [0.25, 1.2, 0.01] for dx, dy in ((0.05, 0), (0.05, 0.05), (0, 0))]
    corners[-1][-1] = 0.0  # the last waypoint stops
    assert control.moveL(corners) is True
    assert close(sim.command_program()["tcp_pose"], pose)

    assert control.moveJ_IK(pose) is True
    assert close(sim.command_program()["q"], TARGET, 1e-6)

    # The forward kinematics are the simulator's; a TCP offset moves the TCP along the
    # flange's z axis.
    assert close(control.getForwardKinematics(TARGET), pose)
    assert close(control.getActualToolFlangePose(), pose)
    tool = [0, 0, 0.1, 0, 0, 0]
    assert close(control.poseTrans(pose, tool), control.getForwardKinematics(TARGET, tool))
    assert control.moveL_FK(HOME) is True
    assert close(sim.command_program()["q"], HOME, 1e-6)
    assert control.isSteady() is True
    assert control.isProgramRunning() is True


def test_an_asynchronous_move_reports_progress_and_stops_where_stop_j_ends_it(sim, control):
    assert control.getAsyncOperationProgress() == -1
    assert control.moveJ([1.5, -1.57, 1.57, -1.57, -1.57, 0.0], 0.5, 1.0, True) is True
    wait_for(lambda: control.getAsyncOperationProgress() == 0 and not control.isSteady(), "moving")
    control.stopJ(2.0)
    assert control.isSteady() is True
    q = sim.command_program()["q"]
    assert 0.0 < q[0] < 1.5, q  # stopped on the way
    wait_for(lambda: control.getAsyncOperationProgress() == -2, "the end of the async move")


def test_an_asynchronous_path_reports_the_waypoint_under_way(sim, control):
    waypoints = [[shoulder, -1.57, 1.57, -1.57, -1.57, 0.0, 1.0, 2.0, 0.0] for shoulder in (0.3, 0.6, 0.9)]
    assert control.moveJ(waypoints, True) is True
    seen = []
    while (step := control.getAsyncOperationProgress()) >= 0:
        if not seen or seen[-1] != step:
            seen.append(step)
        time.sleep(0.002)
    assert seen == [0, 1, 2], seen


def test_the_lower_register_range_runs_when_both_sides_use_it():
    with command_sim(layout="lower") as sim:
        with rtde_rs.Robot(sim.host, port=sim.port, send_program=False, layout="lower", timeout=10.0) as robot:
            assert close(robot.move_j(TARGET)["q"], TARGET, 1e-9)
        assert sim.input("input_int_register_0") is not None  # the lower range's watchdog
        assert sim.input("input_int_register_30") is None  # the upper range's


def test_the_io_interface_runs_beside_the_control_interface_on_the_lower_range():
    with command_sim(layout="lower") as sim:
        control = RTDEControlInterface(sim.host, flags=0, port=sim.port)
        io = RTDEIOInterface(sim.host, port=sim.port)
        try:
            assert io.setInputDoubleRegister(18, 1.5) is True
            assert control.moveJ(TARGET) is True
            wait_for(lambda: sim.input("input_double_register_18") == 1.5, "the IO write")
        finally:
            io.disconnect()
            control.disconnect()


def test_a_move_handle_waits_and_reports_progress(sim):
    with rtde_rs.Robot(sim.host, port=sim.port, send_program=False) as robot:
        handle = robot.move_j(TARGET, speed=0.5, asynchronous=True)
        assert isinstance(handle, rtde_rs.MoveHandle)
        wait_for(lambda: 0.0 < handle.progress() < 1.0, "progress under way")
        reached = handle.wait(timeout=20.0)
        assert handle.is_finished()
        assert close(reached["q"], TARGET, 1e-9)
        assert reached["interrupted"] is False
        # A path: the waypoint under way, and one progress figure for the whole path.
        handle = robot.move_j_path([[s, -1.57, 1.57, -1.57, -1.57, 0.0, 1.0, 2.0, 0.0] for s in (0.3, 0.6, 0.9)], asynchronous=True)
        wait_for(lambda: handle.waypoint() == 1, "the second waypoint under way")
        assert 1 / 3 <= handle.progress() <= 2 / 3
        handle.wait(timeout=20.0)
        assert (handle.waypoint(), handle.progress()) == (2, 1.0)
        # A move a stop cuts short says so, where the arm came to rest.
        handle = robot.move_j(HOME, speed=0.5, asynchronous=True)
        wait_for(lambda: 0.0 < handle.progress() < 0.5, "the move under way")
        robot.stop_j(4.0)
        stopped = handle.wait(timeout=20.0)
        assert stopped["interrupted"] is True
        assert close(stopped["q"], robot.state()["q"], 1e-9)
        assert not close(stopped["q"], HOME, 1e-3)


def test_speeds_servoing_and_the_settings_reach_the_program(sim, control):
    assert control.speedJ([0.2, 0, 0, 0, 0, 0], 1.0) is True
    wait_for(lambda: abs(sim.command_program()["qd"][0] - 0.2) < 1e-9, "joint 0 at 0.2 rad/s")
    assert control.speedStop(5.0) is True
    assert control.isSteady() is True
    assert control.speedL([0, 0, -0.02, 0, 0, 0], 0.5) is True
    wait_for(lambda: sim.command_program()["state"] == "moving", "moving down")
    control.stopL(1.0)
    assert control.isSteady() is True

    q = sim.command_program()["q"]
    target = [q[0] + 0.01] + q[1:]
    for _ in range(20):
        t = control.initPeriod()
        assert control.servoJ(target, 0.0, 0.0, 0.008, 0.1, 300) is True
        control.waitPeriod(t)
    wait_for(lambda: close(sim.command_program()["q"], target, 1e-4), "the servo target")
    assert control.servoStop() is True

    assert control.setTcp([0, 0, 0.1, 0, 0, 0]) is True
    assert control.setPayload(1.5, [0, 0, 0.05]) is True
    assert control.zeroFtSensor() is True
    program = sim.command_program()
    assert program["tcp_offset"] == [0, 0, 0.1, 0, 0, 0] == control.getTCPOffset()
    assert close(control.getForwardKinematics(), program["tcp_pose"])
    # The flange is the TCP without its offset.
    assert close(control.poseTrans(control.getActualToolFlangePose(), [0, 0, 0.1, 0, 0, 0]), program["tcp_pose"])
    assert program["payload"] == (1.5, [0, 0, 0.05])
    assert control.teachMode() is True
    assert sim.command_program()["teach_mode"] is True
    assert control.endTeachMode() is True
    assert sim.command_program()["teach_mode"] is False
    frame = sim.command_program()["tcp_pose"]
    assert control.forceMode(frame, [0, 0, 1, 0, 0, 0], [0, 0, -10, 0, 0, 0], 2, [0.1, 0.1, 0.15, 0.35, 0.35, 0.35])
    assert sim.command_program()["force_mode"] is True
    assert control.forceModeStop() is True
    assert sim.command_program()["force_mode"] is False


# Each refused call, ur_rtde's way; none may reach the program.
REFUSED = [
    ("moveJ", ([math.nan] + HOME[1:],), ValueError, "not a finite number"),
    ("moveJ", (TARGET, 10.0), ValueError, "joint speed"),
    ("moveJ", (TARGET, 1.0, 0.0), ValueError, "must be > 0 and ≤ 40 rad/s²"),
    ("moveL", ([5.0, 0, 0.3, 0, 3.14, 0],), ValueError, "reach"),
    ("moveL", ([[0.4, 0, 0.3, 0, 3.14, 0, 0.25, 1.2, 0.0], [5.0, 0, 0.3, 0, 3.14, 0, 0.25, 1.2, 0.0]],), ValueError, "reach"),
    ("speedJ", ([0, 0, 0, 0, 0, math.inf], 1.0), ValueError, "not a finite number"),
    ("servoJ", (TARGET, 0, 0, 0.008, 0.5, 300), ValueError, "lookahead"),
    ("setPayload", (100.0, [0, 0, 0]), ValueError, "payload mass"),
    ("forceMode", ([0] * 6, [0, 0, 2, 0, 0, 0], [0] * 6, 2, [0.1] * 6), ValueError, "selection vector"),
    ("forceMode", ([0] * 6, [0, 0, 1, 0, 0, 0], [0] * 6, 7, [0.1] * 6), ValueError, "force mode type 7"),
    ("moveJ", ([0.0] * 5,), ValueError, "length 6"),
    ("moveJ", ([None] * 6,), TypeError, "real number"),
]


@pytest.mark.parametrize(("method", "arguments", "error", "message"), REFUSED)
def test_refused_inputs_raise_before_anything_is_sent(sim, control, method, arguments, error, message):
    before = sim.command_program()
    with pytest.raises(error, match=message):
        getattr(control, method)(*arguments)
    time.sleep(0.05)  # what was sent would reach the program within a few ticks
    after = sim.command_program()
    assert after["handshake"] == before["handshake"]
    assert after["q"] == before["q"]
    assert after["state"] == "idle"


def test_a_protective_stop_mid_move_is_its_own_exception():
    with command_sim(faults=["protective-stop=200ms"]) as sim:
        with rtde_rs.Robot(sim.host, port=sim.port, send_program=False) as robot:
            with pytest.raises(rtde_rs.ProtectiveStopError, match="protective stop") as e:
                robot.move_j([1.0] + HOME[1:], speed=0.5)
            assert isinstance(e.value, rtde_rs.MotionError)
            assert isinstance(e.value, RuntimeError)  # what ur_rtde's users catch
            assert sim.command_program()["protective_stopped"] is True


def test_a_runtime_stop_mid_move_is_program_stopped():
    with command_sim(faults=["runtime-stop=200ms"]) as sim:
        control = RTDEControlInterface(sim.host, flags=INSTALLED, port=sim.port)
        with pytest.raises(rtde_rs.ProgramStoppedError, match="was stopped"):
            control.moveJ([1.0] + HOME[1:], 0.5)
        assert control.isProgramRunning() is False
        control.disconnect()


def test_an_unreachable_point_on_the_line_is_a_protective_stop(sim):
    with rtde_rs.Robot(sim.host, port=sim.port, send_program=False) as robot:
        start = robot.move_j(HOME)["tcp_pose"]
        across = list(start)
        across[0], across[1] = -start[0], -start[1]  # through the base's axis
        with pytest.raises(rtde_rs.ProtectiveStopError):
            robot.move_l(across)


def test_the_gil_is_released_while_a_move_blocks(sim):
    with rtde_rs.Robot(sim.host, port=sim.port, send_program=False) as robot:
        ticks = []
        done = threading.Event()

        def count():
            while not done.is_set():
                ticks.append(time.monotonic())

        thread = threading.Thread(target=count)
        thread.start()
        try:
            start = time.monotonic()
            robot.move_j(TARGET, speed=0.5)  # about a second
            end = time.monotonic()
        finally:
            done.set()
            thread.join()
        during = [t for t in ticks if start + 0.1 < t < end - 0.1]
        assert end - start > 0.5
        # The pure-Python thread ran all along the move: no stall of 50 ms or more.
        assert len(during) > 1000
        assert max(b - a for a, b in zip(during, during[1:])) < 0.05


def test_ctrl_c_during_a_blocking_move_stops_the_arm(sim):
    with rtde_rs.Robot(sim.host, port=sim.port, send_program=False) as robot:
        timer = threading.Timer(0.3, _thread.interrupt_main)
        timer.start()
        start = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            robot.move_j([2.0] + HOME[1:], speed=0.3)  # about 7 s
        timer.join()
        assert time.monotonic() - start < 3.0
        assert robot.state()["steady"] is True
        assert 0.0 < sim.command_program()["q"][0] < 1.0  # stopped on the way


def test_the_connection_closes_reconnects_and_stops_the_script(sim, control):
    assert control.isConnected() is True
    control.disconnect()
    assert control.isConnected() is False
    with pytest.raises(rtde_rs.ConnectionLostError, match="closed by this program"):
        control.moveJ(TARGET)
    assert control.reconnect() is True
    assert control.moveJ(TARGET) is True
    control.stopScript()
    assert control.isConnected() is False
    assert control.isProgramRunning() is False
    # Without the client, the program's watchdog stops it (the simulator runs its program
    # while some client streams).
    with rtde_rs.Client(sim.host, ["timestamp"], port=sim.port):
        wait_for(lambda: sim.command_program()["state"] == "stopped", "the watchdog")
    assert "watchdog" in sim.command_program()["messages"][-1]


def test_flags_rtde_does_not_support_are_refused():
    with pytest.raises(ValueError, match="FLAG_CUSTOM_SCRIPT"):
        RTDEControlInterface("127.0.0.1", flags=RTDEControlInterface.FLAG_CUSTOM_SCRIPT)


def test_the_program_is_sent_through_the_script_port_by_default():
    with rtde_rs.Sim(version="3.15.8", dashboard=True, script_ports=True, deterministic=True, still=HOME) as sim:
        assert sim.command_program() is None
        # Powered off: refused through the Dashboard before anything is sent.
        with pytest.raises(rtde_rs.ScriptError, match="power"):
            RTDEControlInterface(sim.host, port=sim.port, ports=sim.ports)
        assert sim.command_program() is None

        dashboard = rtde_rs.Dashboard(sim.host, sim.dashboard_port)
        dashboard.power_on()
        wait_for(lambda: dashboard.robot_mode() == rtde_rs.RobotMode.IDLE, "idle")
        dashboard.brake_release()
        wait_for(lambda: dashboard.robot_mode() == rtde_rs.RobotMode.RUNNING, "running")
        control = RTDEControlInterface(sim.host, port=sim.port, ports=sim.ports)  # FLAGS_DEFAULT
        try:
            assert sim.robot_state()["program_state"] is rtde_rs.RuntimeState.PLAYING
            assert control.moveJ(TARGET) is True
            assert close(sim.command_program()["q"], TARGET, 1e-9)
            # The lower range, as ur_rtde's default: the program's watchdog register.
            assert sim.input("input_int_register_0") is not None
            assert sim.input("input_int_register_30") is None
        finally:
            control.disconnect()


def test_every_public_method_is_ur_rtdes_or_listed():
    rtde_control = pytest.importorskip("rtde_control")
    theirs = {n for n in dir(rtde_control.RTDEControlInterface) if not n.startswith("_")}
    mine = {n for n in dir(RTDEControlInterface) if not n.startswith("_")}
    assert mine <= theirs, mine - theirs


def test_the_move_example_runs_against_the_simulator():
    example = pathlib.Path(__file__).parent.parent / "examples" / "move.py"
    run = subprocess.run([sys.executable, str(example)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "moved and back" in run.stdout and "steady: True" in run.stdout
    refused = subprocess.run(
        [sys.executable, str(example), "--robot", "192.0.2.1"], capture_output=True, text=True, timeout=60
    )
    assert refused.returncode != 0 and "--i-have-checked-the-workspace" in refused.stderr


def test_the_kinematics_are_the_controllers_calibrated_arm():
    with command_sim(arm="ur5", calibration="random:4", dashboard=True, script_ports=True) as sim:
        with rtde_rs.Robot(sim.host, port=sim.port, send_program=False, ports=sim.ports, arm="ur5") as robot:
            assert robot.kinematics == "the controller's calibrated UR5 table"
            reached = robot.move_j(TARGET, speed=1.0, acceleration=3.0)
            # The host's kinematics meet the controller's pose: the calibration was read.
            assert close(robot.forward_kinematics(TARGET, [0.0] * 6), reached["tcp_pose"], 1e-9)
            assert close(robot.inverse_kinematics(reached["tcp_pose"], HOME), TARGET, 1e-9)


def test_without_the_primary_interface_the_nominal_table_says_why():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    with command_sim(arm="ur5") as sim:
        with rtde_rs.Robot(
            sim.host, port=sim.port, send_program=False, ports={"primary": closed}, arm="ur5"
        ) as robot:
            assert robot.kinematics.startswith("the nominal UR5 table (could not connect"), robot.kinematics


def test_ur_rtdes_api_takes_numpy_arrays_wherever_it_takes_a_list(sim, control):
    np = pytest.importorskip("numpy")
    assert control.moveJ(np.array(TARGET)) is True
    assert close(sim.command_program()["q"], TARGET, 1e-9)
    pose = np.array(sim.command_program()["tcp_pose"], dtype=np.float32)
    # Any float dtype, and a single row where a vector goes.
    assert close(control.getInverseKinematics(pose, np.array([TARGET])), TARGET, 1e-3)
    assert close(control.getForwardKinematics(np.array(TARGET), np.zeros(6)), sim.command_program()["tcp_pose"])
    path = np.array([HOME + [1.0, 2.0, 0.05], TARGET + [1.0, 2.0, 0.0]])
    assert control.moveJ(path) is True
    assert close(sim.command_program()["q"], TARGET, 1e-9)
    assert control.setTcp(np.zeros((1, 6))) is True
    assert control.setPayload(1.0, np.array([0.0, 0.0, 0.05])) is True
    assert control.moveL_FK(np.array(HOME)) is True
    assert close(sim.command_program()["q"], HOME, 1e-6)


def test_reupload_script_sends_the_program_again_after_it_stopped():
    with rtde_rs.Sim(version="3.15.8", dashboard=True, script_ports=True, still=HOME) as sim:
        dashboard = rtde_rs.Dashboard(sim.host, sim.dashboard_port)
        dashboard.power_on()
        dashboard.brake_release()
        control = RTDEControlInterface(sim.host, port=sim.port, ports=sim.ports)
        try:
            assert control.moveJ(TARGET) is True
            control.stopScript()
            assert control.reuploadScript() is True
            assert control.moveJ(HOME) is True
            assert close(sim.command_program()["q"], HOME, 1e-9)
        finally:
            control.disconnect()


def test_the_native_api_takes_numpy_arrays_of_any_shape_that_fits(sim):
    np = pytest.importorskip("numpy")
    with rtde_rs.Robot(sim.host, port=sim.port, send_program=False) as robot:
        reached = robot.move_j(np.array([TARGET], dtype=np.float32), speed=1.0, acceleration=3.0)
        assert close(reached["q"], TARGET, 1e-6)
        pose = robot.forward_kinematics(np.array(reached["q"]).reshape(6, 1), np.zeros((1, 6)))
        assert close(pose, reached["tcp_pose"], 1e-9)
        with pytest.raises(ValueError, match="length 6"):
            robot.move_j(np.zeros(5))
