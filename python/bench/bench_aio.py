"""rtde_rs.aio against the threaded API, in one run: packages per second through
`async for` and through `for`, and the event loop's stalls while a client streams.

Usage (from the repository root, with the wheel installed; see docs/python.md):

    python python/bench/bench_aio.py [--runs 3] [--packages 50000] [--seconds 10]

Each run, in this process:

- throughput: `--packages` packages buffered from an unpaced simulator (whose stream is
  then held), then taken one by one as dicts, once by `for package in client` on a
  threaded `rtde_rs.Client` and once by `async for package in client` on an
  `rtde_rs.aio.Client`, each on a connection of its own, timed; their ratio;
- stalls: an `aio.Client` streams at 500 Hz for `--seconds` while the loop-lag probe
  (python/tests/loop_lag.py) hands the loop a callback every millisecond from a thread
  and records how long it waited; the same probe for as long on an idle loop (no client)
  says what the machine itself adds. Each stall is given with the loop thread's time in
  the scheduler's run queue subtracted (the program's stalls) and without (raw).

Prints each run, then the spread over the runs, with the machine, command and commit.
"""

import argparse
import asyncio
import pathlib
import sys
import time

import report

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))

import rtde_rs  # noqa: E402
from loop_lag import LoopLag, LoopSteps  # noqa: E402
from rtde_rs import aio  # noqa: E402

RECIPE = ["timestamp", "actual_q", "actual_qd", "actual_TCP_pose", "robot_mode", "safety_status"]


def buffered(sim, n):
    """A threaded client with `n` packages queued and the stream held."""
    client = rtde_rs.Client(sim.host, RECIPE, 500.0, port=sim.port, queue=n + 1)
    end = time.monotonic() + 120
    while client.stats()["received"] < n + 1 and time.monotonic() < end:
        time.sleep(0.01)
    sim.pause_stream()
    time.sleep(0.2)
    client.recv(timeout=1.0)  # the first one out of the timing
    return client


def threaded_rate(n):
    with rtde_rs.Sim(unpaced=True) as sim:
        client = buffered(sim, n)
        t0 = time.perf_counter()
        for i, _ in enumerate(client, 1):
            if i == n:
                break
        elapsed = time.perf_counter() - t0
        client.close()
    return n / elapsed


async def aio_rate(n):
    with rtde_rs.Sim(unpaced=True) as sim:
        threaded = await asyncio.get_running_loop().run_in_executor(None, buffered, sim, n)
        # The aio client over the very same connection: its `open` would connect again.
        client = aio.Client(sim.host, RECIPE)
        client._inner = threaded
        t0 = time.perf_counter()
        i = 0
        async for _ in client:
            i += 1
            if i == n:
                break
        elapsed = time.perf_counter() - t0
        await client.close()
    return n / elapsed


def quantiles(xs):
    s = sorted(xs)
    return {"p50": s[len(s) // 2], "p99": s[len(s) * 99 // 100], "max": s[-1], "n": len(s)}


async def stalls(seconds, streaming):
    with rtde_rs.Sim() as sim:
        if not streaming:
            async with LoopLag() as lag:
                await asyncio.sleep(seconds)
            return lag, 0
        async with aio.Client(sim.host, RECIPE, 500.0, port=sim.port) as client:
            await client.recv(timeout=2.0)
            received, end = 0, None
            async with LoopLag() as lag:
                end = asyncio.get_running_loop().time() + seconds
                async for _ in client:
                    received += 1
                    if asyncio.get_running_loop().time() >= end:
                        break
            return lag, received


async def steps(seconds):
    """The loop's own steps while an aio client streams at 500 Hz: how long each ran."""
    with rtde_rs.Sim() as sim:
        async with aio.Client(sim.host, RECIPE, 500.0, port=sim.port) as client:
            await client.recv(timeout=2.0)
            async with LoopSteps() as timed:
                end = asyncio.get_running_loop().time() + seconds
                async for _ in client:
                    if asyncio.get_running_loop().time() >= end:
                        break
            return timed.durations


def one_run(n, seconds):
    ours = asyncio.run(aio_rate(n))
    theirs = threaded_rate(n)
    streaming, received = asyncio.run(stalls(seconds, True))
    idle, _ = asyncio.run(stalls(seconds, False))
    step = quantiles(asyncio.run(steps(seconds)))
    s, r, i, ir = (quantiles(x) for x in (streaming.stalls, streaming.raw, idle.stalls, idle.raw))
    return {
        "async for (packages/s)": ours,
        "threaded for (packages/s)": theirs,
        "ratio async/threaded": ours / theirs,
        "packages streamed at 500 Hz": received,
        "stall max, streaming (ms, target <= 1)": s["max"] * 1e3,
        "stall p99, streaming (ms)": s["p99"] * 1e3,
        "stall p50, streaming (ms)": s["p50"] * 1e3,
        "stall max, idle loop (ms)": i["max"] * 1e3,
        "stall p99, idle loop (ms)": i["p99"] * 1e3,
        "raw max, streaming (ms)": r["max"] * 1e3,
        "raw max, idle loop (ms)": ir["max"] * 1e3,
        "probes, streaming": s["n"],
        "longest loop step, streaming (ms, target <= 1)": step["max"] * 1e3,
        "loop step p99, streaming (ms)": step["p99"] * 1e3,
        "loop steps timed": step["n"],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--packages", type=int, default=50_000)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    report.header(f"recipe: {len(RECIPE)} fields; {args.packages} packages per throughput; {args.seconds:.0f} s at 500 Hz")
    report.runs(args.runs, lambda: one_run(args.packages, args.seconds), 42)


if __name__ == "__main__":
    main()
