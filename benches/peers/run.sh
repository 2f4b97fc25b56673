#!/usr/bin/env bash
# The streaming bench with ur_rtde next to rtde, in one invocation: installs ur_rtde from
# PyPI into target/interop-venv (tests/interop/setup.sh), then runs
# `cargo bench -p rtde-bench --bench streaming -- --peer <that python>`.
# Extra arguments go to the bench: benches/peers/run.sh --seconds 10
set -euo pipefail
cd "$(dirname "$0")/../.."
python="$(tests/interop/setup.sh)"
exec cargo bench -p rtde-bench --bench streaming -- --peer "$python" "$@"
