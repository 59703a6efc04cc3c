#!/usr/bin/env bash
# Issue 29's side-by-side: a 2 M-point CREATE SPATIAL INDEX as one whole geoberg process, against
# DuckDB's `COPY (... ORDER BY ST_Hilbert(...)) TO` zstd Parquet and SedonaDB's `ORDER BY
# sd_order(...)` to Parquet, all reading the same 10 zstd Parquet parts of uniform random points
# (id, WKB geometry). Runs alternate; each line is a whole process: wall seconds, CPU seconds
# (user + system) and peak RSS.
# The last lines are the medians and geoberg's ratio to each engine: DuckDB, measured in the same
# minutes on the same machine, is the baseline that makes a slip visible whatever the load (the
# regression guard of issue 29; BENCHMARKS.md records the ratios).
#
#   cargo build --release -p geoberg-cli
#   bash cli/bench/create_spatial_index.sh target/release/geoberg [rows] [runs]
set -euo pipefail
geoberg=$(realpath "$1")
rows=${2:-2000000}
runs=${3:-3}
here=$(cd "$(dirname "$0")" && pwd)
venv=${GEOBERG_BENCH_VENV:-$here/../../target/bench-venv}
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check \
  duckdb==1.5.5 duckdb-extension-spatial==1.5.5 sedonadb==0.5.0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
mkdir parts
"$venv/bin/python" "$here/side_by_side.py" gen parts "$rows" 10
# geoberg's table: the same parts imported as 10 data files.
for part in parts/*.parquet; do
  "$geoberg" --warehouse wh import "$part" --table bench.points --geometry-column geom:4326 >/dev/null
done
cp -a wh wh.base

measure() {
  local label=$1
  shift
  /usr/bin/time -f "%e %M %U %S" -o time.txt "$@" >/dev/null 2>engine.log || {
    cat engine.log
    exit 1
  }
  read -r wall kb user system <time.txt
  cpu=$(awk -v u="$user" -v s="$system" 'BEGIN { printf "%.2f", u + s }')
  printf '%-9s %6s s wall  %6s s CPU  %5d MB peak RSS\n' "$label" "$wall" "$cpu" $((kb / 1024))
  echo "$wall $((kb / 1024)) $cpu" >>"$label.times"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "$rows points, 10 zstd Parquet parts, $runs alternating runs"
for _ in $(seq "$runs"); do
  rm -rf wh && cp -a wh.base wh
  measure geoberg "$geoberg" --warehouse wh sql \
    "CREATE SPATIAL INDEX FOR bench.points USING hilbert(geom, 16)"
  measure duckdb "$venv/bin/python" "$here/side_by_side.py" duckdb parts duckdb.parquet
  measure sedonadb "$venv/bin/python" "$here/side_by_side.py" sedonadb parts sedonadb.parquet
done

for engine in geoberg duckdb sedonadb; do
  wall=$(cut -d' ' -f1 "$engine.times" | median)
  rss=$(cut -d' ' -f2 "$engine.times" | median)
  cpu=$(cut -d' ' -f3 "$engine.times" | median)
  eval "${engine}_wall=$wall"
  printf 'median %-9s %6s s wall  %6s s CPU  %5s MB peak RSS\n' "$engine" "$wall" "$cpu" "$rss"
done
awk -v g="$geoberg_wall" -v d="$duckdb_wall" -v s="$sedonadb_wall" \
  'BEGIN { printf "geoberg / duckdb %.2f, geoberg / sedonadb %.2f (wall, medians)\n", g / d, g / s }'
