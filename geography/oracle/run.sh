#!/usr/bin/env bash
# The spherical oracle: geoberg-geography's kernels and geostats' geography bounds against
# spherely (PyPI, Python bindings of s2geography / S2), on thousands of random rows and queries;
# then rows read back through geoberg table scans (table_check.py) against spherely too.
# Sets up its own virtualenv under the target directory; called by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/../.."

venv="${CARGO_TARGET_DIR:-target}/geo-venv"
if ! "$venv/bin/python" -c 'import spherely, s2sphere' >/dev/null 2>&1; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check 'spherely==0.1.1' 's2sphere==0.2.5'
fi
"$venv/bin/python" geography/oracle/check.py "$@"
"$venv/bin/python" geography/oracle/s2_cells_check.py
"$venv/bin/python" geography/oracle/table_check.py
