#!/usr/bin/env bash
# Issue 26's side-by-side: SpatialBench's join queries (zones of the top trips, trips per zone of a
# region, pickups near buildings, overlapping buildings, every zone's trips, trips crossing zones,
# 5 nearest buildings) on geoberg tables in arrival order and after CREATE SPATIAL INDEX, beside
# SedonaDB 0.5 and DuckDB 1.5.5 reading the same Parquet files. See spatial_join.py for the data
# and what each column of the printed table means.
#
#   cargo build --release -p geoberg-cli
#   bash cli/bench/spatial_join.sh target/release/geoberg [--scale 1] [--queries q4,q11] [--runs 3]
#                                                         [--work DIR (kept, reused)]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv=${GEOBERG_BENCH_VENV:-$here/../../target/bench-venv}
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check \
  duckdb==1.5.5 duckdb-extension-spatial==1.5.5 sedonadb==0.5.0 geoarrow-pyarrow==0.3.0 \
  spatialbench-cli==0.2.0 numpy==2.4.6 pyarrow==26.0.1
exec "$venv/bin/python" "$here/spatial_join.py" bench "$@"
