"""Fixtures: a simulator per test, in this process, on a free loopback port."""

import time

import pytest

import rtde_rs

# Every wait in these tests is bounded by this.
DEADLINE_S = 5.0


@pytest.fixture
def sim():
    with rtde_rs.Sim(deterministic=True) as s:
        yield s


def wait_for(predicate, what, deadline=DEADLINE_S):
    """Polls `predicate` until it is true, at most `deadline` seconds."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if predicate():
            return
        time.sleep(0.002)
    raise AssertionError(f"timed out waiting for {what}")


def settle(robot):
    """Waits until no new package has arrived for 50 ms (the stream is paused)."""
    last = [None, 0]

    def settled():
        stamp = robot.latest()["timestamp"]
        if stamp != last[0]:
            last[0], last[1] = stamp, 0
        last[1] += 1
        return last[1] >= 25

    wait_for(settled, "the stream to stop")


def assert_in_order(stamps, robot):
    """Timestamps one period apart, or whole periods where the simulator skipped ticks (its
    clock thread starved on a busy machine): each such hole counted as `skipped`."""
    import numpy as np

    period = 1.0 / robot.frequency
    gaps = np.diff(np.asarray(stamps))
    steps = np.round(gaps / period)
    assert (steps >= 1).all() and np.allclose(gaps, steps * period), gaps
    assert (steps - 1).sum() <= robot.stats()["skipped"], gaps


def sim_at_real_ports(**options):
    """A simulator on a loopback address of its own (127.0.0.N) at RTDE's port 30004: ur_rtde
    always connects there (and, for its control interface, to the Dashboard at 29999 and
    the script ports at 30001-30003, given as `dashboard=29999, script_ports=30001`)."""
    for n in range(2, 250):
        try:
            return rtde_rs.Sim(host=f"127.0.0.{n}", port=30004, deterministic=True, **options)
        except rtde_rs.SimulatorError:
            continue
    raise AssertionError("no free 127.0.0.N:30004 for the simulator")
