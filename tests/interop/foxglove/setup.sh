#!/usr/bin/env bash
# Installs Foxglove's TypeScript libraries (package-lock.json, exactly) into
# target/interop-node and prints a `node` there that finds them, for the tests that run
# the scripts beside this file (RTDE_FOXGLOVE_NODE):
#   rtde-view/tests/foxglove_typescript.rs   the live view and MCAP files
#   rtde-cli/tests/view_clients.rs           100 viewers of `rtde view` in turn
# Fails loudly when node or npm is missing or a package cannot be installed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../../.."
dir="$PWD/target/interop-node"
node="$(command -v node)" || { echo "node (v20 or later) is not installed" >&2; exit 1; }
mkdir -p "$dir"
cp "$here/package.json" "$here/package-lock.json" "$dir/"
# No install scripts: none of these packages needs one (protobufjs's only checks its CLI).
(cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
cat >"$dir/node" <<WRAPPER
#!/bin/sh
NODE_PATH="$dir/node_modules" exec "$node" "\$@"
WRAPPER
chmod +x "$dir/node"
"$dir/node" -e 'for (const m of ["@foxglove/ws-protocol", "@mcap/core", "@mcap/support", "ajv", "protobufjs", "ws"]) require(m)'
echo "$dir/node"
