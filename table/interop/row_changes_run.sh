#!/usr/bin/env bash
# Row-level changes interop: DuckDB and pyiceberg read our tables after DELETE and UPDATE in
# both modes. Uses the venv of run.sh (same pins).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
venv=${GEOBERG_INTEROP_VENV:-$target/interop-venv}
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check -r "$root/table/interop/requirements.txt"
cargo build --quiet --locked -p geoberg-table --example row_changes_interop
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$venv/bin/python" "$root/table/interop/row_changes_check.py" "$target/debug/examples/row_changes_interop" "$work"
