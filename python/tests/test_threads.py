"""Threads and the GIL: a pure-Python thread makes progress while another blocks in a
receive, and a script that exits without closing never crashes."""

import subprocess
import sys
import threading
import time

import pytest

import rtde_rs
from conftest import settle

SCRIPT = """
import rtde_rs
sim = rtde_rs.Sim()
robot = rtde_rs.Client(sim.host, ["timestamp", "actual_q"], port=sim.port)
robot.recv(timeout=2.0)
robot.read(5, timeout=2.0)
q = robot.getter("actual_q")
assert len(q()) == 6
print("read", flush=True)
# no close: the interpreter's exit tears everything down
"""


def count_for(seconds):
    """Increments a counter in pure Python for `seconds`; returns the count."""
    n, end = 0, time.perf_counter() + seconds
    while time.perf_counter() < end:
        n += 1
    return n


def test_a_python_thread_runs_while_another_blocks_in_a_receive(sim):
    with rtde_rs.Client(sim.host, ["timestamp"], port=sim.port) as robot:
        robot.recv(timeout=1.0)
        sim.pause_stream()
        settle(robot)
        robot.drain()
        rate_alone = count_for(0.2) / 0.2
        counts, stop, started = [0], threading.Event(), threading.Event()

        def count():
            started.set()
            while not stop.is_set():
                counts[0] += 1

        t = threading.Thread(target=count)
        t.start()
        started.wait()
        before, t0 = counts[0], time.perf_counter()
        with pytest.raises(rtde_rs.RtdeTimeoutError):
            robot.recv(timeout=0.5)  # nothing comes: the stream is held
        waited, during = time.perf_counter() - t0, counts[0] - before
        stop.set()
        t.join()
        # Holding the GIL through the wait would leave the counter nothing until it ends.
        assert during > 0.25 * rate_alone * waited, (rate_alone, waited, during)


def test_fifty_runs_that_exit_without_closing_never_crash():
    failures = []
    for run in range(50):
        done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60)
        if done.returncode != 0 or "read" not in done.stdout or "panicked" in done.stderr:
            failures.append((run, done.returncode, done.stderr[-500:]))
    assert failures == []
