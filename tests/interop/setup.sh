#!/usr/bin/env bash
# Installs the Python packages of an interoperability test into target/interop-venv and
# prints that environment's Python. Fails loudly when a package cannot be installed.
#   tests/interop/setup.sh          ur_rtde (SDU Robotics), for tests/interop_ur_rtde.rs
#                                   (its RTDE clients and its DashboardClient)
#   tests/interop/setup.sh mcap     mcap and its protobuf decoder, for rtde-view/tests/python_mcap.rs
#   tests/interop/setup.sh urx      python-urx, for tests/interop_urx.rs (its secondary and
#                                   real-time monitors); without its dependencies' extras:
#                                   math3d 4 pulls matplotlib, which urx's monitors never use
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
    urx)
        pip "numpy>=1.24,<3"
        pip --no-deps "urx==0.11.0" "math3d==4.0.0"
        "$venv/bin/python" -c "import urx.urrtmon, urx.ursecmon"
        ;;
    *)
        echo "unknown profile: $1 (ur_rtde, mcap or urx)" >&2
        exit 2
        ;;
esac
echo "$PWD/$venv/bin/python"
