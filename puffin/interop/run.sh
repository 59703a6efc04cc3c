#!/usr/bin/env bash
# Puffin interop: builds the `puffin_interop` example of geoberg-puffin, installs pyiceberg 0.12 (with
# pyroaring, which wraps CRoaring) into a virtualenv, and runs check.py: pyiceberg reads the
# deletion vectors we write, CRoaring serializes the same bitmaps to the same bytes, and we read
# Puffin files whose bitmaps CRoaring serialized.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
venv=${GEOBERG_PUFFIN_VENV:-$target/puffin-venv}
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check -r "$root/puffin/interop/requirements.txt"
cargo build --quiet --locked -p geoberg-puffin --example puffin_interop
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$venv/bin/python" "$root/puffin/interop/check.py" "$target/debug/examples/puffin_interop" "$work"
