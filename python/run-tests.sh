#!/usr/bin/env bash
# Builds the rtde_rs wheel (debug: quick to build, and what the tests need), checks that it
# is one abi3 wheel (cp39-abi3), installs it into a fresh virtual environment with maturin,
# pytest, numpy and ur_rtde 1.6.5 (for the parity tests), and runs the Python tests. Then
# runs the same wheel's tests on a second CPython when one is installed (3.9, the oldest
# the wheel serves): $RTDE_SECOND_PYTHON, python3.9 on the PATH, or pyenv's.
set -euo pipefail
cd "$(dirname "$0")/.."

python="${PYTHON:-python3}"
venv=target/python-venv
wheels=target/python-wheels
rm -rf "$venv" "$wheels"
"$python" -m venv "$venv"
pip=("$venv/bin/python" -m pip install --quiet --disable-pip-version-check)
"${pip[@]}" "maturin>=1.9.4,<2" pytest numpy "ur_rtde==1.6.5"

"$venv/bin/maturin" build --quiet -m python/Cargo.toml --out "$wheels" -i "$venv/bin/python"
wheel=("$wheels"/rtde_rs-*.whl)
if [ "${#wheel[@]}" -ne 1 ] || [[ "$(basename "${wheel[0]}")" != *-cp39-abi3-* ]]; then
    echo "expected one cp39-abi3 wheel, found: ${wheel[*]}"
    exit 1
fi
echo "wheel: $(basename "${wheel[0]}")"
"${pip[@]}" --force-reinstall --no-deps "${wheel[0]}"
# From the tests' directory, so that `rtde_rs` is the installed wheel, not the source tree.
(cd python/tests && RTDE_REQUIRE_UR_RTDE=1 timeout 600 "../../$venv/bin/python" -m pytest -q)

second="${RTDE_SECOND_PYTHON:-}"
if [ -z "$second" ] && python3.9 --version >/dev/null 2>&1; then
    second=python3.9
fi
if [ -z "$second" ] && command -v pyenv >/dev/null; then
    for candidate in "$(pyenv root)"/versions/3.9*/bin/python3.9; do
        [ -x "$candidate" ] && second="$candidate" && break
    done
fi
if [ -z "$second" ]; then
    echo "no second CPython found: the abi3 wheel was tested on $("$venv/bin/python" --version) only"
    exit 0
fi
venv2=target/python-venv-2
rm -rf "$venv2"
"$second" -m venv "$venv2"
pip2=("$venv2/bin/python" -m pip install --quiet --disable-pip-version-check)
# ur_rtde's wheels for this interpreter may be missing: the parity tests then skip.
"${pip2[@]}" pytest numpy
"${pip2[@]}" "ur_rtde==1.6.5" || echo "ur_rtde 1.6.5 has no wheel for $("$second" --version): its parity tests skip"
"${pip2[@]}" --no-deps "${wheel[0]}"
echo "the same wheel on $("$venv2/bin/python" --version)"
(cd python/tests && timeout 600 "../../$venv2/bin/python" -m pytest -q)
