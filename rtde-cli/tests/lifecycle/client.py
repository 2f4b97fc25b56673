"""The lifecycle suite's client for the two Python entry points: rtde_rs's own API
(``native``) and ur_rtde's names (``ur_rtde``). The Rust test (lifecycle.rs) starts it
as a process against ``rtde sim``, as the Rust client of the same actions, and reads what
it prints:

    REACHED <i> <q0> ... <q5>   a session's move ended there
    MOVING                      a long move is under way
    ERROR <Kind>                the robot's verdict (ProtectiveStop, Watchdog,
                                ProgramStopped, TargetUnreachable)
    FAILED <message>            anything else; the exit code is then 1

Usage: client.py native|ur_rtde sessions:N|hold|recover (the addresses in RTDE_* variables).
``recover`` starts a long move (or, with RTDE_SINGULAR=1, a line through the base
axis: a protective stop), prints the verdict, waits for a line on stdin (the test has made the robot ready),
recovers and moves again.
"""

import os
import sys
import time

import rtde_rs
from rtde_rs.ur_rtde import RTDEControlInterface, RTDEReceiveInterface

HOST = "127.0.0.1"
PORT = int(os.environ["RTDE_PORT"])
PORTS = {name: int(os.environ[f"RTDE_{name.upper()}_PORT"]) for name in ("dashboard", "primary", "secondary", "realtime")}
TIMEOUT = 20.0


def target(i):
    """Session i's target: each differs from the one before."""
    return [0.2 * (i % 3) - 0.2, -1.57, 1.57, -1.57, -1.57, 0.1 * (i % 2)]


LONG = [2.5, -1.57, 1.57, -1.57, -1.57, 0.0]
# Tool down above the base; a line to its mirror image passes the base axis.
SINGULAR_FROM = [0.4, -0.05, 0.3, 0.0, 3.141592653589793, 0.0]
SINGULAR_TO = [-0.4, -0.05, 0.3, 0.0, 3.141592653589793, 0.0]


class Native:
    def __init__(self):
        self.robot = rtde_rs.Robot(HOST, port=PORT, ports=PORTS, timeout=TIMEOUT)

    def move_j(self, q, speed=2.0, acceleration=4.0):
        return self.robot.move_j(q, speed=speed, acceleration=acceleration)["q"]

    def start_long_move(self):
        self.handle = self.robot.move_j(LONG, speed=0.3, asynchronous=True)

    def wait_long_move(self):
        self.handle.wait(timeout=TIMEOUT)

    def move_l(self, pose):
        self.robot.move_l(pose)

    def inverse_kinematics(self, pose):
        return self.robot.inverse_kinematics(pose, target(0))

    def q(self):
        return self.robot.state()["q"]

    def recover(self):
        self.robot.recover()

    def close(self):
        self.robot.close()


class UrRtde:
    """As a ur_rtde script: a control interface to move, a receive interface to read."""

    def __init__(self):
        self.control = RTDEControlInterface(HOST, port=PORT, ports=PORTS)
        self.receive = RTDEReceiveInterface(HOST, variables=["actual_q", "actual_qd"], port=PORT)

    def move_j(self, q, speed=2.0, acceleration=4.0):
        self.control.moveJ(q, speed, acceleration)
        # Where the arm rests, as the receive interface streams it (its package may trail
        # the control interface's by a cycle).
        deadline = time.monotonic() + 1.0
        while any(self.receive.getActualQd()) and time.monotonic() < deadline:
            time.sleep(0.002)
        return self.q()

    def start_long_move(self):
        self.control.moveJ(LONG, 0.3, 1.4, True)

    def wait_long_move(self):
        # ur_rtde has no wait on an asynchronous move: its progress while the program runs,
        # and the robot's verdict raised by the next call once it stopped.
        deadline = time.monotonic() + TIMEOUT
        while self.control.getAsyncOperationProgress() >= 0 and self.control.isProgramRunning():
            if time.monotonic() > deadline:
                raise TimeoutError("the long move neither ended nor failed")
            time.sleep(0.01)
        self.control.moveJ(self.q())

    def move_l(self, pose):
        self.control.moveL(pose)

    def inverse_kinematics(self, pose):
        return self.control.getInverseKinematics(pose, target(0))

    def q(self):
        return self.receive.getActualQ()

    def recover(self):
        self.control.reuploadScript()

    def close(self):
        self.control.disconnect()
        self.receive.disconnect()


def kind(error):
    name = type(error).__name__
    return name[: -len("Error")] if name.endswith("Error") else name


def sessions(api, count):
    first = int(os.environ.get("RTDE_LIFECYCLE_FIRST", "0"))
    for i in range(first, first + count):
        client = api()
        q = client.move_j(target(i))
        client.close()
        print("REACHED", i, *q, flush=True)


def hold(api):
    client = api()
    client.start_long_move()
    print("MOVING", flush=True)
    time.sleep(60)


def recover(api):
    client = api()
    try:
        if os.environ.get("RTDE_SINGULAR") == "1":
            client.move_j(client.inverse_kinematics(SINGULAR_FROM))
            print("MOVING", flush=True)
            client.move_l(SINGULAR_TO)
        else:
            client.start_long_move()
            print("MOVING", flush=True)
            client.wait_long_move()
        print("FAILED the robot gave no verdict", flush=True)
        sys.exit(1)
    except (rtde_rs.ProtectiveStopError, rtde_rs.WatchdogError, rtde_rs.ProgramStoppedError, rtde_rs.TargetUnreachableError) as e:
        print("ERROR", kind(e), flush=True)
    sys.stdin.readline()
    client.recover()
    q = client.q()
    goal = [q[0] + 0.05, *q[1:]]
    reached = client.move_j(goal, 2.0, 8.0)
    client.close()
    print("REACHED", 0, *reached, flush=True)


def main():
    api = {"native": Native, "ur_rtde": UrRtde}[sys.argv[1]]
    action = sys.argv[2]
    try:
        if action.startswith("sessions:"):
            sessions(api, int(action.split(":")[1]))
        elif action == "hold":
            hold(api)
        elif action == "recover":
            recover(api)
        else:
            raise ValueError(f"unknown action {action}")
    except Exception as e:  # the test reads the line; the traceback goes to stderr
        print("FAILED", kind(e), str(e).replace("\n", " "), flush=True)
        raise


if __name__ == "__main__":
    main()
