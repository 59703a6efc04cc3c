#!/usr/bin/env bash
# CREATE SPATIAL INDEX of the demo's points in one process, then through a scheduler with 1 and
# with 2 executors (one task slot each): the coordinator plans and commits, the executors run
# the key-range tasks. Each statement rewrites every file (a full re-cluster of `rows` points);
# prints the wall time of each and the bytes the parts read.
#
#   cargo build --release -p geoberg-cli --features cluster
#   bash distributed/bench/create_spatial_index.sh [target/release/geoberg] [rows]
set -euo pipefail
geoberg="$(realpath "${1:-target/release/geoberg}")"
rows="${2:-2000000}"
dir="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$dir"' EXIT
cd "$dir"
"$geoberg" --warehouse wh demo --rows "$rows" --files 16 > /dev/null
index="CREATE SPATIAL INDEX FOR demo.points USING hilbert(geom, 16) \
OPTIONS map('target-file-count', '16', 'max-concurrent-file-group-rewrites', '2')"
bytes() { du -sb wh/demo/points/data | cut -f1; }

timed() { # label command...
  local label="$1"; shift
  local start end
  start=$(date +%s.%N)
  "$@" > out.json
  end=$(date +%s.%N)
  printf '%s: %.2f s (%s)\n' "$label" "$(echo "$end - $start" | bc)" \
    "$(grep -o 'its tasks ran in [^"]*' out.json || echo 'in this process')"
}

echo "input: $rows points, $(bytes) bytes of data files before"
timed "one process" "$geoberg" --warehouse wh --json sql "$index"
"$geoberg" --warehouse wh cluster scheduler --bind 127.0.0.1:50550 2> scheduler.log &
sleep 2
for n in 1 2; do
  port=$((50551 + 10 * n))
  "$geoberg" --warehouse wh cluster executor --scheduler 127.0.0.1:50550 --bind "127.0.0.1:$port" \
    --concurrent-tasks 1 2> "executor-$n.log" &
  sleep 2
  timed "cluster, $n executor(s)" "$geoberg" --warehouse wh --scheduler df://127.0.0.1:50550 \
    --json sql "$index"
done
