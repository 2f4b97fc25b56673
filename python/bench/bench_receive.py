"""rtde_rs against ur_rtde 1.6.5's RTDEReceiveInterface, side by side on one simulator.

Usage (from the repository root, with the release wheel and ur_rtde installed; see
docs/python.md):

    python python/bench/bench_receive.py [--seconds 30] [--runs 3] [--calls 100000]

Each run starts one simulator (rtde_rs.Sim, 500 Hz, on 127.0.0.N:30004, since ur_rtde
always connects to port 30004) and two client processes at once, one per library, each
streaming the same recipe (the reference recipe of docs/performance.md) for `--seconds`:

- CPU per package: the client process's user + system CPU (all its threads, from
  getrusage) over the window, divided by the packages the simulator sent in it;
- getActualQ() call time, p50 and p99: `--calls` calls, each timed on its own with
  perf_counter_ns (the timer's own cost is in both);
- packages lost: rtde_rs counts them (lost while the link was down, or overflowed), and
  apart from them the packages the simulator skipped (its clock thread starved on a busy
  machine: not sent, so not lost by a client); ur_rtde keeps no count;
- resident memory of each client process at the window's start, every tenth of it, and
  its end;

and, in a third process, the bulk read: 100,000 packages of the reference recipe buffered
from an unpaced simulator (whose stream is then held), then one `read(100000)` into numpy,
timed (after a `read(1)`, so that numpy's first use is not in it).

Prints each run, then the spread over the runs, with the machine, command and commit.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import time

import report

RECIPE = [
    "timestamp",
    "actual_q",
    "actual_qd",
    "actual_TCP_pose",
    "actual_TCP_speed",
    "actual_TCP_force",
    "actual_digital_input_bits",
    "actual_digital_output_bits",
    "robot_mode",
    "safety_status",
]
FREQUENCY = 500.0
BULK = 100_000


def rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def cpu_s():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def call_times(getter, calls):
    """Each call timed on its own, in ns: p50, p99."""
    clock = time.perf_counter_ns
    times = []
    for _ in range(calls):
        t0 = clock()
        getter()
        times.append(clock() - t0)
    times.sort()
    return times[len(times) // 2], times[len(times) * 99 // 100]


def child(library, host, seconds, calls):
    """One client process: connect, stream `seconds`, then time getActualQ."""
    if library == "ur_rtde":
        import rtde_receive

        receive = rtde_receive.RTDEReceiveInterface(host, FREQUENCY, RECIPE)
        lost = lambda: None  # noqa: E731 - ur_rtde keeps no count
    else:
        from rtde_rs.ur_rtde import RTDEReceiveInterface

        receive = RTDEReceiveInterface(host, FREQUENCY, RECIPE)
        client = receive._client

        def lost():
            s = client.stats()
            return {"skipped": s["skipped"], "lost": s["lost"] + s["overflowed"]}

    time.sleep(1.0)  # past the connection's start
    ts0, cpu0, rss0, wall0 = receive.getTimestamp(), cpu_s(), rss_kib(), time.perf_counter()
    end = wall0 + seconds
    rss, next_sample = [], wall0 + seconds / 10
    while time.perf_counter() < end:
        time.sleep(min(0.2, max(0.0, end - time.perf_counter())))
        if time.perf_counter() >= next_sample:
            rss.append(rss_kib())
            next_sample += seconds / 10
    ts1, cpu1, rss1, wall1 = receive.getTimestamp(), cpu_s(), rss_kib(), time.perf_counter()
    packages = round((ts1 - ts0) * FREQUENCY)
    p50, p99 = call_times(receive.getActualQ, calls)
    out = {
        "library": library,
        "packages": packages,
        "cpu_s": cpu1 - cpu0,
        "wall_s": wall1 - wall0,
        "cpu_us_per_package": (cpu1 - cpu0) / packages * 1e6 if packages else float("nan"),
        "get_actual_q_p50_ns": p50,
        "get_actual_q_p99_ns": p99,
        "lost": lost(),
        "rss_start_kib": rss0,
        "rss_end_kib": rss1,
        "rss_samples_kib": rss,
    }
    receive.disconnect()
    print(json.dumps(out), flush=True)


def bulk():
    """100,000 packages buffered from an unpaced simulator, read into numpy at once."""
    import rtde_rs

    with rtde_rs.Sim(unpaced=True) as sim:
        with rtde_rs.Client(sim.host, RECIPE, FREQUENCY, port=sim.port, queue=BULK + 1) as robot:
            end = time.monotonic() + 120
            while robot.stats()["received"] < BULK + 1 and time.monotonic() < end:
                time.sleep(0.01)
            sim.pause_stream()
            time.sleep(0.2)
            # One package first, so that numpy's import and first array are not timed.
            robot.read(1)
            t0 = time.perf_counter()
            rows = robot.read(BULK, timeout=5.0)
            elapsed = time.perf_counter() - t0
            n = len(rows["timestamp"])
            assert rows["actual_q"].shape == (n, 6)
    print(json.dumps({"rows": n, "seconds": elapsed, "packages_per_s": n / elapsed}), flush=True)


def sim_on_port_30004():
    import rtde_rs

    for n in range(2, 250):
        try:
            return rtde_rs.Sim(host=f"127.0.0.{n}", port=30004)
        except rtde_rs.SimulatorError:
            continue
    raise SystemExit("no free 127.0.0.N:30004 for the simulator")


def one_run(seconds, calls):
    sim = sim_on_port_30004()
    try:
        me = [sys.executable, os.path.abspath(__file__)]
        procs = {
            lib: subprocess.Popen(
                me + ["--child", lib, sim.host, str(seconds), str(calls)], stdout=subprocess.PIPE, text=True
            )
            for lib in ("rtde_rs", "ur_rtde")
        }
        results = {}
        for lib, p in procs.items():
            out, _ = p.communicate(timeout=seconds + 120)
            if p.returncode != 0:
                raise SystemExit(f"the {lib} client failed ({p.returncode})")
            results[lib] = json.loads(out.strip().splitlines()[-1])
        sent = sim.stats()["data_packages_sent"]
    finally:
        sim.shutdown()
    b = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--bulk"], capture_output=True, text=True, timeout=300
    )
    if b.returncode != 0:
        raise SystemExit(f"the bulk read failed: {b.stderr[-2000:]}")
    results["bulk"] = json.loads(b.stdout.strip().splitlines()[-1])
    results["sim_packages_sent"] = sent
    return results


def figures(r):
    ours, theirs = r["rtde_rs"], r["ur_rtde"]
    return {
        "cpu per package, rtde_rs (us)": ours["cpu_us_per_package"],
        "cpu per package, ur_rtde (us)": theirs["cpu_us_per_package"],
        "cpu ratio rtde_rs/ur_rtde (target <= 0.1)": ours["cpu_us_per_package"] / theirs["cpu_us_per_package"],
        "getActualQ p50, rtde_rs (ns)": ours["get_actual_q_p50_ns"],
        "getActualQ p50, ur_rtde (ns)": theirs["get_actual_q_p50_ns"],
        "getActualQ p99, rtde_rs (ns)": ours["get_actual_q_p99_ns"],
        "getActualQ p99, ur_rtde (ns)": theirs["get_actual_q_p99_ns"],
        "p50 ratio (target <= 1)": ours["get_actual_q_p50_ns"] / theirs["get_actual_q_p50_ns"],
        "p99 ratio (target <= 1)": ours["get_actual_q_p99_ns"] / theirs["get_actual_q_p99_ns"],
        "packages in the window, rtde_rs": ours["packages"],
        "packages lost by rtde_rs (target 0)": ours["lost"]["lost"],
        "packages the simulator skipped (its clock starved)": ours["lost"]["skipped"],
        "bulk read (packages/s, target >= 1e6)": r["bulk"]["packages_per_s"],
        "rss start, every tenth, end: rtde_rs (KiB)": " ".join(
            str(x) for x in [ours["rss_start_kib"], *ours["rss_samples_kib"], ours["rss_end_kib"]]
        ),
        "rss start, every tenth, end: ur_rtde (KiB)": " ".join(
            str(x) for x in [theirs["rss_start_kib"], *theirs["rss_samples_kib"], theirs["rss_end_kib"]]
        ),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument("--child", nargs=4, metavar=("LIBRARY", "HOST", "SECONDS", "CALLS"))
    parser.add_argument("--bulk", action="store_true")
    args = parser.parse_args()
    if args.child:
        lib, host, seconds, calls = args.child
        return child(lib, host, float(seconds), int(calls))
    if args.bulk:
        return bulk()

    report.header(f"recipe: {len(RECIPE)} fields at {FREQUENCY:.0f} Hz for {args.seconds:.0f} s per run")
    report.runs(args.runs, lambda: figures(one_run(args.seconds, args.calls)), 45)


if __name__ == "__main__":
    main()
