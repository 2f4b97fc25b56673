"""Talks to an RTDE controller with ur_rtde (SDU Robotics), a client nobody here wrote.

Usage: python ur_rtde_client.py HOST   (ur_rtde always uses port 30004)

Prints what it read, one record per line, for tests/interop_ur_rtde.rs to check:
    sample <timestamp> <q0> ... <q5>      repr() of each float, exact
    dout <bits> <after>                   digital output bits after a write through ur_rtde
Exits non-zero on any failure.
"""

import sys
import time

import rtde_io
import rtde_receive

DEADLINE_S = 5.0


def wait_for(predicate, what):
    end = time.monotonic() + DEADLINE_S
    while time.monotonic() < end:
        if predicate():
            return
        time.sleep(0.005)
    raise SystemExit(f"timed out waiting for {what}")


def main():
    host = sys.argv[1]
    receive = rtde_receive.RTDEReceiveInterface(
        host, 500.0, ["timestamp", "actual_q", "actual_digital_output_bits"]
    )
    if not receive.isConnected():
        raise SystemExit("RTDEReceiveInterface did not connect")

    last = -1.0
    for _ in range(20):
        wait_for(lambda: receive.getTimestamp() > last, "a new package")
        # One package's values: the same timestamp and joint positions twice in a row, so
        # a package arriving between two reads is never mixed with the one before it.
        while True:
            before, q = receive.getTimestamp(), receive.getActualQ()
            if (receive.getTimestamp(), receive.getActualQ()) == (before, q):
                break
        last = before
        print("sample", repr(before), *(repr(x) for x in q), flush=True)

    io = rtde_io.RTDEIOInterface(host)
    if not io.setStandardDigitalOut(3, True):
        raise SystemExit("setStandardDigitalOut(3, True) failed")
    wait_for(lambda: receive.getActualDigitalOutputBits() & 0b1000, "digital output 3 on")
    on = receive.getActualDigitalOutputBits()
    if not io.setStandardDigitalOut(3, False):
        raise SystemExit("setStandardDigitalOut(3, False) failed")
    wait_for(lambda: not receive.getActualDigitalOutputBits() & 0b1000, "digital output 3 off")
    off = receive.getActualDigitalOutputBits()
    print("dout", on, off, flush=True)

    io.disconnect()
    receive.disconnect()


if __name__ == "__main__":
    main()
