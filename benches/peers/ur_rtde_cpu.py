"""CPU time of ur_rtde's receive thread per package, for rtde-bench's streaming bench.

Usage: python ur_rtde_cpu.py HOST SECONDS NAME...   (ur_rtde always uses port 30004)

Opens an RTDEReceiveInterface at 500 Hz with the recipe NAME..., finds the threads it
started (those of this process that were not there before), and after a settling second
reads their CPU time from /proc/self/task/<tid>/schedstat (nanoseconds) over SECONDS.
The packages received in that time are counted from the timestamps ur_rtde decoded.
Prints one line:

    ur_rtde <version> threads <n> packages <n> cpu_ns <n> wall_ns <n>

Exits non-zero on any failure.
"""

import os
import sys
import time
from importlib import metadata

import rtde_receive

RATE_HZ = 500.0


def threads():
    return set(os.listdir("/proc/self/task"))


def cpu_ns(tid):
    with open(f"/proc/self/task/{tid}/schedstat") as f:
        return int(f.read().split()[0])


def main():
    host, seconds, names = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
    before = threads()
    receive = rtde_receive.RTDEReceiveInterface(host, RATE_HZ, names)
    if not receive.isConnected():
        raise SystemExit("RTDEReceiveInterface did not connect")
    started = sorted(threads() - before)
    if not started:
        raise SystemExit("RTDEReceiveInterface started no thread")
    time.sleep(1.0)

    t0, c0, w0 = receive.getTimestamp(), {t: cpu_ns(t) for t in started}, time.monotonic_ns()
    time.sleep(seconds)
    t1, c1, w1 = receive.getTimestamp(), {t: cpu_ns(t) for t in started}, time.monotonic_ns()
    receive.disconnect()

    packages = round((t1 - t0) * RATE_HZ)
    if packages <= 0:
        raise SystemExit(f"no packages: timestamps {t0} then {t1}")
    cpu = sum(c1[t] - c0[t] for t in started)
    print(
        f"ur_rtde {metadata.version('ur_rtde')} threads {len(started)} "
        f"packages {packages} cpu_ns {cpu} wall_ns {w1 - w0}",
        flush=True,
    )


if __name__ == "__main__":
    main()
