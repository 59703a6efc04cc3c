#!/usr/bin/env bash
# Interop check: builds the `interop` example, installs the pinned clients into a virtualenv,
# and runs check.py (DuckDB and pyiceberg read our tables; we read pyiceberg's).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
venv=${GEOBERG_INTEROP_VENV:-$target/interop-venv}
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check -r "$root/table/interop/requirements.txt"
cargo build --quiet --locked -p geoberg-table --example interop
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$venv/bin/python" "$root/table/interop/check.py" "$target/debug/examples/interop" "$work"
