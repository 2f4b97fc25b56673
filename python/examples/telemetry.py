"""One second of telemetry into numpy, from the built-in simulator or a controller.

    python python/examples/telemetry.py                  # an in-process simulated UR5e
    python python/examples/telemetry.py --robot HOST     # a real controller (read only)
"""

import argparse
import contextlib

import rtde_rs

FIELDS = ["timestamp", "actual_q", "actual_TCP_pose", "robot_mode", "safety_mode"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robot", help="a controller's address (default: the built-in simulator)")
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        if args.robot:
            host, port = args.robot, 30004
        else:
            sim = stack.enter_context(rtde_rs.Sim())
            host, port = sim.host, sim.port
            print(f"no --robot given: a simulated controller {sim.controller_version} on {host}:{port}")
        robot = stack.enter_context(rtde_rs.Client(host, FIELDS, port=port))
        rows = robot.read(int(robot.frequency), timeout=5.0)  # one second
        q = rows["actual_q"]
        print(f"{len(q)} packages at {robot.frequency:.0f} Hz from controller {robot.controller_version}")
        print("mean joint positions (rad):", q.mean(axis=0).round(4))
        print("joint travel over the second (rad):", (q.max(axis=0) - q.min(axis=0)).round(4))
        latest = robot.latest()
        name = lambda code: getattr(code, "name", code)  # noqa: E731 - an unknown code stays an int
        print("now:", name(latest["robot_mode"]), name(latest["safety_mode"]),
              "TCP at", [round(x, 4) for x in latest["actual_TCP_pose"][:3]])
        stats = robot.stats()
        print(f"received {stats['received']}, skipped {stats['skipped']}, lost {stats['lost']}")


if __name__ == "__main__":
    main()
