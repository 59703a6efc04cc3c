#!/usr/bin/env bash
# A spatial join on a cluster against one process: the demo's clustered points (ROWS, 4 M by
# default) joined with 1,000 zones (circles of radius 0.5 degree around every 4,000th point),
# counted per zone. Run in one process, then through a scheduler with 1 and with 2 executors
# (TASKS task slots each, 1 by default); each statement RUNS times as a whole `geoberg sql`
# process; prints the median wall times and the cluster's plan.
#
#   cargo build --release -p geoberg-cli --features cluster
#   bash distributed/bench/spatial_join.sh [target/release/geoberg] [rows]
set -euo pipefail
geoberg="$(realpath "${1:-target/release/geoberg}")"
rows="${2:-4000000}"
runs="${RUNS:-5}"
tasks="${TASKS:-1}"
dir="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$dir"' EXIT
cd "$dir"
"$geoberg" --warehouse wh demo --rows "$rows" --files 64 > /dev/null
"$geoberg" --warehouse wh sql "CREATE TABLE demo.zones AS SELECT id AS zid, \
  ST_Buffer(geom, 0.5) AS zone FROM demo.points WHERE id % 4000 = 0" > /dev/null
query="SELECT count(*) AS pairs, count(DISTINCT z.zid) AS zones FROM demo.points p \
  JOIN demo.zones z ON ST_Intersects(p.geom, z.zone)"
echo "query: $query"
"$geoberg" --warehouse wh sql "$query"

median() { # command... : median wall seconds of $runs runs
  python3 - "$runs" "$@" <<'PY'
import subprocess, sys, time, statistics
runs = int(sys.argv[1]); cmd = sys.argv[2:]
times = []
for _ in range(runs):
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    times.append(time.perf_counter() - t)
print(f"{statistics.median(times) * 1000:.0f} ms (min {min(times) * 1000:.0f}, max {max(times) * 1000:.0f})")
PY
}

echo "one process: $(median "$geoberg" --warehouse wh sql "$query")"
"$geoberg" --warehouse wh cluster scheduler --bind 127.0.0.1:50550 2> scheduler.log &
sleep 2
for n in 1 2; do
  port=$((50551 + 10 * n))
  "$geoberg" --warehouse wh cluster executor --scheduler 127.0.0.1:50550 --bind "127.0.0.1:$port" \
    --concurrent-tasks "$tasks" 2> "executor-$n.log" &
  sleep 2
  "$geoberg" --warehouse wh --scheduler df://127.0.0.1:50550 sql "$query"  # warm-up, and the rows
  echo "cluster, $n executor(s): $(median "$geoberg" --warehouse wh --scheduler df://127.0.0.1:50550 sql "$query")"
done
"$geoberg" --warehouse wh --scheduler df://127.0.0.1:50550 sql "EXPLAIN $query" | grep -E "SpatialJoin|Stage|GeobergScanExec" | cut -c1-160
