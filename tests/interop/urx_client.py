"""Reads the simulator's secondary (30002) and real-time (30003) interfaces with python-urx
(PyPI `urx`), a client nobody here wrote.

Usage: python urx_client.py HOST   (urx always uses ports 30002 and 30003)

Prints, for tests/interop_urx.rs to check, repr() of each float exactly:
    realtime <time> <q0> ... <q5>        twenty real-time packages' controller time and q
    secondary <robot mode> <q0> ... <q5>  one robot state's robot mode and joint positions
    cartesian <x> <y> <z> <rx> <ry> <rz>  the same state's TCP pose
Exits non-zero on any failure.
"""

import sys
import time

from urx.urrtmon import URRTMonitor
from urx.ursecmon import SecondaryMonitor

DEADLINE_S = 5.0


def main():
    host = sys.argv[1]

    realtime = URRTMonitor(host)
    realtime.daemon = True
    realtime.start()
    # Its own waits have no timeout: poll with ours.
    end = time.monotonic() + DEADLINE_S
    seen = {}
    while len(seen) < 20:
        if time.monotonic() > end:
            raise SystemExit(f"only {len(seen)} real-time packages within {DEADLINE_S} s")
        data = realtime.get_all_data(wait=False)
        if data and data.get("ctrltimestamp") is not None:
            seen[float(data["ctrltimestamp"])] = [float(x) for x in data["qActual"]]
        time.sleep(0.001)
    realtime.stop()
    for t in sorted(seen):
        print("realtime", repr(t), *(repr(float(x)) for x in seen[t]), flush=True)

    # Raises unless a robot state with robot mode data arrives within 0.5 s.
    secondary = SecondaryMonitor(host)
    data = secondary.get_all_data(wait=True)
    joints = data["JointData"]
    print(
        "secondary",
        data["RobotModeData"]["robotMode"],
        *(repr(joints[f"q_actual{i}"]) for i in range(6)),
        flush=True,
    )
    cartesian = data["CartesianInfo"]
    print("cartesian", *(repr(cartesian[k]) for k in ("X", "Y", "Z", "Rx", "Ry", "Rz")), flush=True)
    secondary.close()


if __name__ == "__main__":
    main()
