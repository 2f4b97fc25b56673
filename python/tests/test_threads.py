"""Threads and the GIL: a pure-Python thread makes progress while another blocks in a
receive, and a script that exits without closing never crashes."""

import subprocess
import sys
import threading
import time

import rtde_rs

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
        robot.drain()
        alone = count_for(0.2)
        blocked = threading.Event()

        def receive():
            blocked.set()
            try:
                robot.recv(timeout=1.0)
            except rtde_rs.RtdeTimeoutError:
                pass

        t = threading.Thread(target=receive)
        t.start()
        blocked.wait()
        time.sleep(0.05)  # the receive is waiting now
        beside = count_for(0.5)
        t.join()
        # Holding the GIL through the wait would leave this thread a switch interval
        # (5 ms) now and then: far below half of its rate alone.
        assert beside > 0.5 * alone * 0.5 / 0.2, (alone, beside)


def test_fifty_runs_that_exit_without_closing_never_crash():
    failures = []
    for run in range(50):
        done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60)
        if done.returncode != 0 or "read" not in done.stdout or "panicked" in done.stderr:
            failures.append((run, done.returncode, done.stderr[-500:]))
    assert failures == []
