#!/usr/bin/env bash
# A bench with ur_rtde next to rtde, in one invocation: installs ur_rtde from PyPI into
# target/interop-venv (tests/interop/setup.sh), then runs
# `cargo bench -p rtde-bench --bench BENCH -- --peer <that python>`.
#   benches/peers/run.sh [--bench streaming|sim_cpu] [bench arguments]
# The bench is streaming unless named; the other arguments go to it:
#   benches/peers/run.sh --seconds 10
#   benches/peers/run.sh --bench sim_cpu --seconds 10 --rounds 3
set -euo pipefail
cd "$(dirname "$0")/../.."
bench=streaming
if [ "${1:-}" = "--bench" ]; then
    bench="${2:?--bench needs a name: streaming or sim_cpu}"
    shift 2
fi
python="$(tests/interop/setup.sh)"
exec cargo bench -p rtde-bench --bench "$bench" -- --peer "$python" "$@"
