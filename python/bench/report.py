"""What the Python benchmarks print alike: the machine, command and commit a run names, each
run's figures, and their spread over the runs."""

import os
import platform
import statistics
import subprocess
import sys


def machine():
    """The CPU model (as /proc/cpuinfo names it), the CPU count and the commit."""
    model = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            model = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    except OSError:
        commit = "?"
    return model, os.cpu_count(), commit


def header(workload):
    """The lines that name a run: machine, command, and `workload` (what each run does)."""
    model, cpus, commit = machine()
    print(f"machine: {model}, {cpus} CPUs; Python {platform.python_version()}; commit {commit}")
    print(f"command: python {' '.join(sys.argv)}")
    print(f"{workload}\n")


def runs(count, one_run, width):
    """Calls `one_run()` `count` times, printing each run's figures (a dict) as it ends, then
    the min / median / max of each numeric figure."""
    done = []
    for i in range(count):
        done.append(one_run())
        print(f"run {i + 1}:")
        for k, v in done[-1].items():
            print(f"  {k:{width}} {v:.3f}" if isinstance(v, float) else f"  {k:{width}} {v}")
        print(flush=True)
    print(f"spread over {len(done)} runs (min / median / max):")
    for k in done[0]:
        values = [r[k] for r in done]
        if isinstance(values[0], (int, float)):
            print(f"  {k:{width}} {min(values):.3f} / {statistics.median(values):.3f} / {max(values):.3f}")
