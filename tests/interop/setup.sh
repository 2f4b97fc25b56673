#!/usr/bin/env bash
# Installs the Python packages of an interoperability test into target/interop-venv and
# prints that environment's Python. Fails loudly when a package cannot be installed.
#   tests/interop/setup.sh          ur_rtde (SDU Robotics), for tests/interop_ur_rtde.rs
#                                   (its RTDE clients and its DashboardClient)
#   tests/interop/setup.sh mcap     mcap and its protobuf decoder, for rtde-view/tests/python_mcap.rs
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=target/interop-venv
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
pip() { "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$@"; }
case "${1:-ur_rtde}" in
    ur_rtde)
        pip "ur_rtde==1.6.5"
        "$venv/bin/python" -c "import rtde_receive, rtde_io, dashboard_client"
        ;;
    mcap)
        pip "mcap==1.6.0" "mcap-protobuf-support==0.6.0"
        "$venv/bin/python" -c "import mcap.reader, mcap_protobuf.decoder"
        ;;
    *)
        echo "unknown profile: $1 (ur_rtde or mcap)" >&2
        exit 2
        ;;
esac
echo "$PWD/$venv/bin/python"
