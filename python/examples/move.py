"""Power on, release the brakes, send the command program and move, with ur_rtde's names.

    python python/examples/move.py                   # an in-process simulated UR5e
    python python/examples/move.py --robot HOST --i-have-checked-the-workspace

Against a controller the arm moves: 0.1 rad on the base joint and back, then 5 cm down
and up. It needs remote control (e-Series), and moves only with the flag that says you
checked that the workspace is clear.
"""

import argparse
import contextlib
import sys
import time

import rtde_rs
from rtde_rs.ur_rtde import DashboardClient, RTDEControlInterface, RTDEReceiveInterface


def wait_for_mode(dashboard, mode, seconds=30.0):
    end = time.monotonic() + seconds
    while dashboard.robotmode() != f"Robotmode: {mode}":
        if time.monotonic() > end:
            sys.exit(f"the robot did not reach {mode} within {seconds:.0f} s: {dashboard.robotmode()}")
        time.sleep(0.1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robot", help="a controller's address (default: the built-in simulator)")
    parser.add_argument("--i-have-checked-the-workspace", dest="checked", action="store_true")
    args = parser.parse_args()
    if args.robot and not args.checked:
        sys.exit("this example moves the arm: add --i-have-checked-the-workspace once the workspace is clear")
    with contextlib.ExitStack() as stack:
        if args.robot:
            host, options, dashboard_port = args.robot, {}, 29999
        else:
            sim = stack.enter_context(rtde_rs.Sim(dashboard=True, script_ports=True))
            host, dashboard_port = sim.host, sim.dashboard_port
            options = dict(port=sim.port, ports=sim.ports)
            print(f"no --robot given: a simulated controller {sim.controller_version} on {host}")
        dashboard = DashboardClient(host, dashboard_port)
        dashboard.connect()
        print(dashboard.robotmode(), "|", dashboard.safetystatus())
        dashboard.powerOn()
        wait_for_mode(dashboard, "IDLE")
        dashboard.brakeRelease()
        wait_for_mode(dashboard, "RUNNING")
        print(dashboard.robotmode())

        control = RTDEControlInterface(host, **options)  # sends the command program
        stack.callback(control.disconnect)
        receive = RTDEReceiveInterface(host, port=options.get("port", 30004))
        stack.callback(receive.disconnect)
        start = receive.getActualQ()
        control.moveJ([start[0] + 0.1] + start[1:], 0.5, 1.0)
        control.moveJ(start, 0.5, 1.0)
        pose = receive.getActualTCPPose()
        control.moveL(pose[:2] + [pose[2] - 0.05] + pose[3:], 0.1, 0.5)
        control.moveL(pose, 0.1, 0.5)
        print("moved and back to", [round(q, 4) for q in receive.getActualQ()], "steady:", control.isSteady())


if __name__ == "__main__":
    main()
