#!/usr/bin/env bash
# Installs ur_rtde (SDU Robotics) into target/interop-venv for tests/interop_ur_rtde.rs
# (its RTDE clients and its DashboardClient).
# Fails loudly when the package cannot be installed.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=target/interop-venv
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "ur_rtde==1.6.5"
"$venv/bin/python" -c "import rtde_receive, rtde_io, dashboard_client"
echo "$PWD/$venv/bin/python"
