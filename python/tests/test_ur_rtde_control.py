"""ur_rtde 1.6.5's RTDEControlInterface, unmodified, against the simulator: at construction
it uploads its own control script to the secondary interface, and the simulator's URScript
engine runs it; every call below then goes through that script's register protocol. Each
move ends where the same move sent through rtde's motion API (on the simulator's native
command program) ends, within 1e-6: the two run on the simulator's one motion model."""

import os
import subprocess
import sys
import time

import pytest

import rtde_rs
from conftest import sim_at_real_ports, wait_for

if os.environ.get("RTDE_REQUIRE_UR_RTDE"):
    import rtde_control
    import rtde_receive
else:
    rtde_control = pytest.importorskip("rtde_control")
    rtde_receive = pytest.importorskip("rtde_receive")

HOME = [0.0, -1.57, 1.57, -1.57, -1.57, 0.0]
TARGET = [0.2, -1.4, 1.4, -1.57, -1.57, 0.1]
PATH = [[0.3, -1.4, 1.4, -1.57, -1.57, 0.1], [0.4, -1.3, 1.3, -1.57, -1.57, 0.1]]


def close(a, b, tolerance=1e-6):
    return max(abs(x - y) for x, y in zip(a, b)) < tolerance


@pytest.fixture
def controller():
    """A simulator at a controller's real ports, powered on and brakes released; ur_rtde's
    control and receive interfaces on it."""
    with sim_at_real_ports(dashboard=29999, script_ports=30001, still=HOME) as sim:
        dashboard = rtde_rs.Dashboard(sim.host, port=29999)
        dashboard.power_on()
        dashboard.brake_release()
        control = rtde_control.RTDEControlInterface(sim.host)
        receive = rtde_receive.RTDEReceiveInterface(sim.host)
        yield sim, control, receive
        control.disconnect()
        receive.disconnect()
        dashboard.disconnect()


def rtdes_own(moves):
    """Where rtde's motion API ends the same moves, from HOME: the joints after each."""
    with rtde_rs.Sim(version="5.21.0", program="command", deterministic=True, still=HOME) as sim:
        with rtde_rs.Robot(sim.host, port=sim.port, send_program=False) as robot:
            return [move(robot) for move in moves]


def test_its_moves_end_where_rtdes_own_end(controller):
    sim, control, receive = controller
    assert control.isProgramRunning()
    ends = []
    assert control.moveJ(TARGET, 1.0, 1.0)
    ends.append(receive.getActualQ())
    pose = control.getForwardKinematics()
    below = pose[:2] + [pose[2] - 0.05] + pose[3:]
    assert control.moveL(below, 0.25, 1.2)
    ends.append(receive.getActualQ())
    assert control.moveJ_IK(pose, 1.0, 1.0)
    ends.append(receive.getActualQ())
    assert control.moveJ([q + [1.0, 1.0, 0.02 if i == 0 else 0.0] for i, q in enumerate(PATH)])
    ends.append(receive.getActualQ())

    def reached(step):
        return lambda robot: list(step(robot)["q"])

    theirs = rtdes_own(
        [
            reached(lambda r: r.move_j(TARGET, speed=1.0, acceleration=1.0)),
            reached(lambda r: r.move_l(below, speed=0.25, acceleration=1.2)),
            reached(lambda r: r.move_j(r.inverse_kinematics(pose), speed=1.0, acceleration=1.0)),
            reached(lambda r: r.move_j_path([q + [1.0, 1.0, 0.02 if i == 0 else 0.0] for i, q in enumerate(PATH)])),
        ]
    )
    for i, (ours, rtde) in enumerate(zip(ends, theirs)):
        assert close(ours, rtde), (i, ours, rtde)


def test_inverse_kinematics_and_the_safety_limits(controller):
    _, control, _ = controller
    pose = control.getForwardKinematics(TARGET)
    assert close(control.getInverseKinematics(pose, TARGET), TARGET)
    assert control.isPoseWithinSafetyLimits(pose)
    assert not control.isPoseWithinSafetyLimits([3.0, 0.0, 0.5, 0.0, 3.14, 0.0])


def test_speed_servo_and_stops_move_the_arm_and_bring_it_to_rest(controller):
    _, control, receive = controller
    start = receive.getActualQ()
    assert control.speedJ([0.2, 0, 0, 0, 0, 0], 0.5, 0.002)
    time.sleep(0.5)
    assert control.speedStop()
    wait_for(lambda: max(map(abs, receive.getActualQd())) == 0.0, "the arm at rest after speedStop")
    assert receive.getActualQ()[0] > start[0] + 0.01

    q = receive.getActualQ()
    last = list(q)
    for i in range(500):
        period = control.initPeriod()
        last = list(q)
        last[0] += 0.0002 * i
        assert control.servoJ(last, 0, 0, 0.002, 0.1, 300)
        control.waitPeriod(period)
    assert control.servoStop()
    wait_for(lambda: close(receive.getActualQ(), last, 1e-3), "the arm at the last servo target")

    assert control.moveJ(TARGET, 0.5, 1.0, True)  # asynchronous
    time.sleep(0.2)
    control.stopJ(2.0)
    wait_for(lambda: max(map(abs, receive.getActualQd())) == 0.0, "the arm at rest after stopJ")
    assert not close(receive.getActualQ(), TARGET, 1e-3)


def test_servo_c_reaches_its_pose_and_the_second_stop_stops_it(controller):
    """ur_rtde 1.6.5 sends servoC as a real-time command (it does not wait, and never clears
    the command register), but its script handles servoC's command (12) as a regular one:
    it signals "done" and waits for the register to clear before it signals "ready". So the
    next call waits for "ready" until its timeout, clears the register and returns False; the
    call after that goes through. A controller runs the script the same way."""
    _, control, receive = controller
    pose = receive.getActualTCPPose()
    target = pose[:2] + [pose[2] - 0.05] + pose[3:]
    assert control.servoC(target, 0.25, 1.2, 0.0)
    wait_for(lambda: close(receive.getActualTCPPose(), target), "the TCP at servoC's pose")
    assert not control.servoStop()
    assert control.servoStop()
    wait_for(lambda: max(map(abs, receive.getActualQd())) == 0.0, "the arm at rest after servoStop")
    assert close(receive.getActualTCPPose(), target)


def test_the_settings_and_modes_reach_the_controller(controller):
    sim, control, receive = controller
    assert control.forceMode([0] * 6, [0, 0, 1, 0, 0, 0], [0, 0, -2, 0, 0, 0], 2, [2, 2, 1.5, 1, 1, 1])
    assert control.forceModeStop()
    assert control.teachMode()
    assert control.endTeachMode()
    assert control.zeroFtSensor()
    assert control.setTcp([0, 0, 0.1, 0, 0, 0])
    wait_for(lambda: close(receive.getTargetTCPPose(), control.getForwardKinematics()), "the TCP pose with the offset")
    assert control.setPayload(1.5, [0, 0, 0.05])
    assert control.isProgramRunning()
    control.stopScript()
    wait_for(lambda: not control.isProgramRunning(), "the script stopped")



def test_the_step_time_is_the_controllers_tick(controller):
    """ur_rtde's getStepTime sends its command and reads the output register at once,
    without waiting for the script to answer (as it does for its real-time commands), so a
    call returns what the script wrote for the call before: the first one finds the
    register as the script started (0), the next one a tick later finds the answer."""
    _, control, _ = controller
    control.getStepTime()
    time.sleep(0.05)
    assert control.getStepTime() == 0.002  # e-Series: 500 Hz


def test_after_a_protective_stop_the_script_is_sent_again_and_moves(controller):
    """ur_rtde's recovery: the protective stop pauses its script (its commands fail), the
    Dashboard unlocks it once the controller allows, `reuploadScript` replaces the paused
    program, and the next move goes where it should."""
    sim, control, receive = controller
    assert control.moveJ(TARGET, 0.3, 0.3, True)  # asynchronous
    time.sleep(0.2)
    sim.protective_stop("a collision, as the test says")
    wait_for(receive.isProtectiveStopped, "the protective stop")
    wait_for(lambda: max(map(abs, receive.getActualQd())) == 0.0, "the arm at rest")
    assert not control.moveJ(HOME, 1.0, 1.0)
    dashboard = rtde_rs.Dashboard(sim.host, port=29999)
    # The controller allows the unlock 5 s after the stop.
    wait_for(lambda: _unlocked(dashboard), "the unlock, once allowed", deadline=10)
    wait_for(lambda: not receive.isProtectiveStopped(), "the stop cleared over RTDE")
    assert control.reuploadScript()
    # ur_rtde does not wait for the program it sent to start.
    wait_for(control.isProgramRunning, "the script sent again")
    assert control.moveJ(HOME, 1.0, 1.0)
    assert close(receive.getActualQ(), HOME)


def _unlocked(dashboard):
    try:
        dashboard.unlock_protective_stop()
        return True
    except rtde_rs.DashboardError:
        return False

def _killed_client(sim, program, while_alive=lambda: None):
    """Runs `program` (a ur_rtde client moving towards TARGET) in a child process until
    it says "moving", then `while_alive()`, then kills the child with SIGKILL."""
    child = subprocess.Popen(
        [sys.executable, "-c", program, sim.host, *map(str, TARGET)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout.readline().strip() == "moving"
        while_alive()
    finally:
        child.kill()
        child.wait()


# A client that starts an asynchronous move and waits to be killed.
KILLED_MID_MOVE = """
import sys, time, rtde_control
control = rtde_control.RTDEControlInterface(sys.argv[1])
control.moveJ([float(q) for q in sys.argv[2:]], 0.3, 0.5, True)
print("moving", flush=True)
time.sleep(60)
"""


def test_the_next_client_takes_over_from_one_killed_mid_move(controller):
    """The controller runs the killed client's program on its own clock, so the next
    RTDEControlInterface finds a script playing: ur_rtde stops it (its own STOP_SCRIPT,
    then the Dashboard's `stop`, which must answer `Stopped` though nothing plays by then)
    and uploads its own."""
    sim, control, receive = controller
    control.disconnect()
    _killed_client(sim, KILLED_MID_MOVE, lambda: time.sleep(0.2))
    assert sim.robot_state()["program_state"] is rtde_rs.RuntimeState.PLAYING
    assert max(map(abs, receive.getActualQd())) > 0.0, "the killed client's move goes on"

    second = rtde_control.RTDEControlInterface(sim.host)
    try:
        assert second.isProgramRunning()
        assert second.moveJ(HOME, 1.0, 1.0)
        assert close(receive.getActualQ(), HOME)
        second.stopScript()
    finally:
        second.disconnect()


# A client that sets ur_rtde's RTDE watchdog, starts an asynchronous move, and kicks the
# watchdog until it is killed.
WATCHDOG_KICKER = """
import sys, time, rtde_control
control = rtde_control.RTDEControlInterface(sys.argv[1])
assert control.setWatchdog(10.0)
control.moveJ([float(q) for q in sys.argv[2:]], 0.3, 0.5, True)
print("moving", flush=True)
while True:
    control.kickWatchdog()
    time.sleep(0.01)
"""


def test_a_killed_client_that_set_the_watchdog_stops_the_program_and_the_arm(controller):
    """ur_rtde's setWatchdog is the controller's rtde_set_watchdog on the command register,
    with the action "stop": once the client dies and 0.1 s (10 Hz) passes without a
    package carrying that register, the controller stops the program and the arm."""
    sim, control, receive = controller
    control.disconnect()

    def kicked_it_plays():
        time.sleep(0.5)
        assert sim.robot_state()["program_state"] is rtde_rs.RuntimeState.PLAYING, "kicked, it plays"

    _killed_client(sim, WATCHDOG_KICKER, kicked_it_plays)
    wait_for(
        lambda: sim.robot_state()["program_state"] is rtde_rs.RuntimeState.STOPPED,
        "the program stopped by the RTDE watchdog",
    )
    wait_for(lambda: max(map(abs, receive.getActualQd())) == 0.0, "the arm at rest")
    assert not close(receive.getActualQ(), TARGET, 1e-3), "stopped before its target"
