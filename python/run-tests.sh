#!/usr/bin/env bash
# Builds the rtde_rs wheel once (debug: quick to build, and what the tests need) for
# manylinux2014 (glibc 2.17) with maturin's zig linker, and checks with auditwheel that
# neither its tag nor its symbol versions need a newer glibc (Ubuntu 18.04 and 20.04
# robot PCs). That one wheel, a cp39-abi3 wheel, is installed into a fresh virtual
# environment with maturin, pytest, numpy and ur_rtde 1.6.5 (for the parity tests), and
# the Python tests run on it. Then the same wheel's tests run on a second CPython when
# one is installed (3.9, the oldest the wheel serves): $RTDE_SECOND_PYTHON, python3.9 on
# the PATH, or pyenv's. Last, the sdist: built by maturin, installed by pip from source
# into a fresh virtual environment (so it must hold every workspace crate it needs), and
# run.
set -euo pipefail
cd "$(dirname "$0")/.."

python="${PYTHON:-python3}"
venv=target/python-venv
wheels=target/python-wheels
rm -rf "$venv" "$wheels"
"$python" -m venv "$venv"
pip=("$venv/bin/python" -m pip install --quiet --disable-pip-version-check)
# ziglang is the zig linker maturin looks for (`python -m ziglang`, so the venv's python
# first on the PATH); auditwheel reads the wheel's tag and symbol versions.
"${pip[@]}" "maturin>=1.9.4,<2" pytest numpy "ur_rtde==1.6.5" ziglang auditwheel
PATH="$PWD/$venv/bin:$PATH" "$venv/bin/maturin" build --quiet --zig --compatibility manylinux2014 \
    -m python/Cargo.toml --out "$wheels" -i "$venv/bin/python"
wheel=("$wheels"/rtde_rs-*.whl)
if [ "${#wheel[@]}" -ne 1 ] || [[ "$(basename "${wheel[0]}")" != *-cp39-abi3-manylinux2014_x86_64* ]]; then
    echo "expected one cp39-abi3 manylinux2014 wheel, found: ${wheel[*]}"
    exit 1
fi
echo "wheel: $(basename "${wheel[0]}")"
python/check-glibc.sh "$venv/bin/auditwheel" "${wheel[0]}" 2.17
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
else
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
fi

echo "== the sdist, installed by pip from source into a fresh virtual environment"
sdists=target/python-sdist
venv3=target/python-venv-sdist
rm -rf "$sdists" "$venv3"
"$venv/bin/maturin" sdist -m python/Cargo.toml --out "$sdists"
sdist=("$sdists"/rtde_rs-*.tar.gz)
"$python" -m venv "$venv3"
# A debug build (`--profile dev`, passed to maturin by pip's build), in a directory of its
# own that is removed after: the check is that the sdist builds from itself alone, and a
# release build would double this step's time. pip fetches maturin into its isolated build
# environment, as it would for a user.
CARGO_TARGET_DIR="$PWD/target/python-sdist-build" MATURIN_PEP517_ARGS="--profile dev" \
    "$venv3/bin/python" -m pip install --quiet --disable-pip-version-check "${sdist[0]}"
rm -rf target/python-sdist-build
(cd python/examples && "../../$venv3/bin/python" aio.py)
echo "the sdist $(basename "${sdist[0]}") built from source and ran python/examples/aio.py"
