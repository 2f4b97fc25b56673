"""The control kit from Python: a function per package, the deadline accounting, and
ur_rtde's initPeriod / servoJ / waitPeriod idiom, over the simulator's servo program."""

import math

import pytest

import rtde_rs

HOME = [0.0, -1.57, 1.57, -1.57, -1.57, 0.0]


@pytest.fixture
def servo():
    # The clock at a quarter of the wall clock's speed: the watchdog's 50 cycles are 400 ms,
    # which no stall of a busy test machine reaches.
    with rtde_rs.Sim(program="servo", still=HOME, speed=0.25) as sim:
        yield sim


def test_the_function_decides_each_cycle_and_the_robot_follows(servo):
    target = [q + 0.05 for q in HOME]
    seen = []

    def decide(state, handshake):
        seen.append(state["timestamp"])
        handshake.advance()
        return target

    with rtde_rs.ServoLoop(servo.host, port=servo.port) as loop:
        stats = loop.run(decide, 250)
        assert stats["cycles"] == 250
        assert 0 <= stats["misses"] <= 500 and stats["max_response"] > 0
        assert loop.status is rtde_rs.ProgramStatus.RUNNING
    assert len(seen) == 250
    program = servo.program()
    assert program["acked"] >= 1
    assert max(abs(a - b) for a, b in zip(program["q"], target)) < 1e-3


def test_none_holds_the_last_target_and_an_exception_ends_the_loop(servo):
    calls = []

    def decide(state, handshake):
        calls.append(1)
        if len(calls) == 1:
            handshake.advance()
            return state["actual_q"]
        if len(calls) == 5:
            raise KeyError("mine")
        return None

    with rtde_rs.ServoLoop(servo.host, port=servo.port) as loop:
        with pytest.raises(KeyError, match="mine"):
            loop.run(decide, 100)
        assert loop.stats()["cycles"] == 5
        with pytest.raises(rtde_rs.BadArgumentError, match="finite"):
            loop.run(lambda s, h: [math.nan] * 6, 1)


def test_init_period_servo_j_wait_period(servo):
    with rtde_rs.ServoLoop(servo.host, port=servo.port) as loop:
        for i in range(125):
            t = loop.init_period()
            q = [h + 0.1 * math.sin(i / 125 * math.pi / 2) for h in HOME]
            assert loop.servo_j(q) is True
            loop.wait_period(t)
        assert loop.stats()["cycles"] == 125
    program = servo.program()
    assert program["acked"] >= 2
    assert program["status"] is rtde_rs.ProgramStatus.RUNNING
    assert max(abs(a - b) for a, b in zip(program["q"], HOME)) > 0.05
    # Closed by this program: a cycle after it says so, not that the link was lost.
    with pytest.raises(rtde_rs.ConnectionLostError, match="closed by this program"):
        loop.servo_j(HOME)


def test_the_watchdog_stops_the_robot_when_the_loop_stops(servo):
    import time

    with rtde_rs.ServoLoop(servo.host, port=servo.port) as loop:
        loop.run(lambda s, h: (h.advance(), s["actual_q"])[1], 10)
        time.sleep(1.0)  # 250 of the simulator's cycles: past its watchdog
    assert servo.program()["status"] is rtde_rs.ProgramStatus.WATCHDOG_STOPPED


LOOP_AND_WATCH = """
import threading, rtde_rs
HOME = [0.0, -1.57, 1.57, -1.57, -1.57, 0.0]
with rtde_rs.Sim(program="servo", still=HOME, speed=0.25) as sim, rtde_rs.ServoLoop(sim.host, port=sim.port) as loop:
    runner = threading.Thread(target=loop.run, args=(lambda s, h: (h.advance(), HOME)[1], 300))
    runner.start()
    while runner.is_alive():
        loop.stats()
        loop.status
    runner.join()
    assert loop.stats()["cycles"] == 300
print("done")
"""


def test_another_thread_may_watch_a_running_loop():
    # In a process of its own: a deadlock between the cycle (which calls Python) and the
    # watcher (which holds the GIL) would hang it, and the timeout ends it.
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", LOOP_AND_WATCH], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "done" in done.stdout, done.stderr[-2000:]
