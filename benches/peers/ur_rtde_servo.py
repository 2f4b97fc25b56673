"""ur_rtde's control interface servoing at 500 Hz, for rtde-bench's sim_cpu bench.

Usage: python ur_rtde_servo.py HOST SECONDS   (ur_rtde uses the controller's real ports:
30004 RTDE, 29999 Dashboard, 30001-30003 script ports)

Constructs an RTDEControlInterface against HOST (which uploads ur_rtde's own control
script to the controller), moves to a start pose with moveJ, then runs servoJ at 500 Hz
with initPeriod/waitPeriod for SECONDS: a small sinusoid around the start pose, with the
lookahead and gain of ur_rtde's servoJ example. Then servoStop and stopScript. The bench
measures the controller's CPU between the two marker lines this prints; the last line is
the summary:

    servoing
    servoed
    ur_rtde <version> cycles <n> misses <n> worst_ms <x>

A miss is a cycle whose servoJ call returned after its 2 ms period had ended. Exits
non-zero on any failure (a call that returns false, the script no longer running).
"""

import math
import sys
import time
from importlib import metadata

import rtde_control

PERIOD = 1.0 / 500
START = [0.0, -1.57, 1.57, -1.57, -1.57, 0.0]
# ur_rtde's servoJ example: speed and acceleration are not used by servoj, lookahead 0.1 s,
# gain 300.
VELOCITY, ACCELERATION, LOOKAHEAD, GAIN = 0.5, 0.5, 0.1, 300
# 0.05 rad at 0.5 Hz on the base and wrist 3: the arm moves, well within its limits.
AMPLITUDE, FREQUENCY = 0.05, 0.5


def say(line):
    print(line, flush=True)


def target(t):
    offset = AMPLITUDE * math.sin(2 * math.pi * FREQUENCY * t)
    q = list(START)
    q[0] += offset
    q[5] -= offset
    return q


def servo(control, seconds):
    """Runs the servo loop; returns (cycles, misses, worst cycle in seconds)."""
    cycles, misses, worst = 0, 0, 0.0
    total = round(seconds / PERIOD)
    say("servoing")
    for i in range(total):
        period = control.initPeriod()
        began = time.perf_counter()
        if not control.servoJ(target(i * PERIOD), VELOCITY, ACCELERATION, PERIOD, LOOKAHEAD, GAIN):
            raise SystemExit(f"servoJ returned false at cycle {i}")
        took = time.perf_counter() - began
        worst = max(worst, took)
        misses += took > PERIOD
        cycles += 1
        control.waitPeriod(period)
    say("servoed")
    return cycles, misses, worst


def main():
    host, seconds = sys.argv[1], float(sys.argv[2])
    control = rtde_control.RTDEControlInterface(host)
    if not control.isConnected() or not control.isProgramRunning():
        raise SystemExit("RTDEControlInterface did not connect or its script is not running")
    if not control.moveJ(START, 1.0, 1.0):
        raise SystemExit("moveJ to the start pose returned false")
    cycles, misses, worst = servo(control, seconds)
    running = control.isProgramRunning()
    if not control.servoStop():
        raise SystemExit("servoStop returned false")
    control.stopScript()
    control.disconnect()
    if not running:
        raise SystemExit("the control script stopped during the servo loop")
    say(f"ur_rtde {metadata.version('ur_rtde')} cycles {cycles} misses {misses} worst_ms {worst * 1e3:.3f}")


if __name__ == "__main__":
    main()
