#!/usr/bin/env bash
# The scheduler's overhead on a 1% window query: the demo's clustered table queried in one
# process, then through a scheduler with 1 and with 2 executors (one task slot each), each
# statement run RUNS times as a whole `geoberg sql` process; prints the median wall times.
#
#   cargo build --release -p geoberg-cli --features cluster
#   bash distributed/bench/window_overhead.sh [target/release/geoberg] [rows]
set -euo pipefail
geoberg="$(realpath "${1:-target/release/geoberg}")"
rows="${2:-4000000}"
runs="${RUNS:-9}"
dir="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$dir"' EXIT
cd "$dir"
"$geoberg" --warehouse wh demo --rows "$rows" --files 64 > demo.txt
query="$(grep -o 'SELECT count(\*) FROM demo.points WHERE ST_Intersects[^)]*))' demo.txt | head -n 1)"
echo "query: $query"

median() { # command... : median wall seconds of $runs runs
  python3 - "$runs" "$@" <<'PY'
import subprocess, sys, time, statistics
runs = int(sys.argv[1]); cmd = sys.argv[2:]
times = []
for _ in range(runs):
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    times.append(time.perf_counter() - t)
print(f"{statistics.median(times) * 1000:.1f} ms (min {min(times) * 1000:.1f}, max {max(times) * 1000:.1f})")
PY
}

echo "one process: $(median "$geoberg" --warehouse wh sql "$query")"
"$geoberg" --warehouse wh cluster scheduler --bind 127.0.0.1:50450 2> scheduler.log &
sleep 2
for n in 1 2; do
  port=$((50451 + 10 * n))
  "$geoberg" --warehouse wh cluster executor --scheduler 127.0.0.1:50450 --bind "127.0.0.1:$port" \
    --concurrent-tasks 1 2> "executor-$n.log" &
  sleep 2
  "$geoberg" --warehouse wh --scheduler df://127.0.0.1:50450 sql "$query" > /dev/null  # warm-up
  echo "cluster, $n executor(s): $(median "$geoberg" --warehouse wh --scheduler df://127.0.0.1:50450 sql "$query")"
done
