#!/usr/bin/env bash
# A bounded fuzz run of every target: `fuzz/run.sh [SECONDS_PER_TARGET]` (default 60).
# Needs the nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
for target in $(cargo +nightly fuzz list); do
    echo "== $target ($seconds s)"
    cargo +nightly fuzz run "$target" -- -max_total_time="$seconds" -print_final_stats=1 2>&1 |
        grep -E '^(stat::number_of_executed_units|stat::average_exec_per_sec|#[0-9]+ +DONE)|panicked|ERROR' || true
done
