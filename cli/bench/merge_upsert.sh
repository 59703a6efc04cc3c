#!/usr/bin/env bash
# Issue 29's MERGE of a 100 k-row upsert feed: 50 k updates spread over the demo's 4 M-point
# clustered table (every file touched) and 50 k inserts, copy-on-write and merge-on-read, three
# runs each on a fresh copy of the table; prints each MERGE's run time, the whole process's wall
# time and peak RSS, what it wrote, and checks the final counts.
#
#   cargo build --release -p geoberg-cli
#   bash cli/bench/merge_upsert.sh target/release/geoberg
set -euo pipefail
G=$(realpath "$1"); W=$(mktemp -d); cd "$W"
"$G" --warehouse wh demo --rows 4000000 --files 64 --svg-dir . > demo.log
"$G" --warehouse wh sql "CREATE TABLE demo.feed AS SELECT id, arrival_ts, 'XX' AS state, geom FROM demo.points WHERE id % 80 = 0 UNION ALL SELECT id + 1000000000 AS id, arrival_ts, 'YY' AS state, geom FROM demo.points WHERE id % 80 = 1" > /dev/null
"$G" --warehouse wh sql "SELECT count(*) AS feed_rows FROM demo.feed; SELECT count(*) AS table_rows FROM demo.points; SHOW TBLPROPERTIES demo.points ('format-version')"
cp -a wh wh.base
merge="MERGE INTO demo.points t USING demo.feed s ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
for run in 1 2 3; do
  for mode in copy-on-write merge-on-read; do
    rm -rf wh && cp -a wh.base wh
    "$G" --warehouse wh sql "ALTER TABLE demo.points SET TBLPROPERTIES ('write.merge.mode' = '$mode')" > /dev/null
    /usr/bin/time -f "%e s wall %M KB" -o t.txt "$G" --warehouse wh sql --timing "$merge" > m.log
    echo "$mode run $run: $(grep 'Run Time' m.log) whole process $(cat t.txt); $(grep -i 'row' m.log | head -2 | tr '\n' ' ')"
  done
done
"$G" --warehouse wh sql "SELECT count(*) AS rows_after, sum(CASE WHEN state = 'XX' THEN 1 ELSE 0 END) AS updated, sum(CASE WHEN state = 'YY' THEN 1 ELSE 0 END) AS inserted FROM demo.points"
rm -rf "$W"
