#!/usr/bin/env bash
# Interop on a PostgreSQL catalog: builds the `postgres_interop` example (which starts its own
# PostgreSQL server through geoberg-testkit), installs the pinned clients into the interop
# virtualenv and runs postgres_check.py through it. Needs PostgreSQL (.ci/install-servers).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
venv=${GEOBERG_INTEROP_VENV:-$target/interop-venv}
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check -r "$root/table/interop/postgres_requirements.txt"
cargo build --quiet --locked -p geoberg-table --example postgres_interop
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$target/debug/examples/postgres_interop" "$venv/bin/python" "$root/table/interop/postgres_check.py" "$work"
