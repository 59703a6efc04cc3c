#!/usr/bin/env python3
"""Row-level changes interop: after DELETE and UPDATE in both modes (copy-on-write; merge-on-read
as v3 deletion vectors and v2 position delete files), DuckDB 1.5.5 iceberg_scan and pyiceberg
0.12 read exactly the rows geoberg says the tables hold. Both readers read every kind we write,
so any error fails the check. geoberg's metadata tables (snapshots, history, refs, manifests,
files, partitions) hold what pyiceberg's `table.inspect` reads from the same metadata.

usage: row_changes_check.py BINARY WORKDIR   (BINARY: the built `row_changes_interop` example)
"""
import json
import os
import struct
import datetime
import subprocess
import sys

import pyarrow.parquet as pq

from pyiceberg.catalog.sql import SqlCatalog

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check import duckdb_conn  # noqa: E402

passed = 0


def check(cond, what):
    global passed
    if not cond:
        print(f"FAIL: {what}")
        print(f"{passed} passed, 1 failed")
        sys.exit(1)
    passed += 1
    print(f"ok: {what}")


# Per metadata table, the columns compared with pyiceberg's `inspect` (ours add Iceberg Java's
# `referenced_data_file`; timestamps are compared as instants: ours are `timestamptz` as in
# Iceberg Java, pyiceberg's carry no zone).
INSPECTED = {
    "snapshots": ["committed_at", "snapshot_id", "parent_id", "operation", "manifest_list",
                  "summary"],
    "history": ["made_current_at", "snapshot_id", "parent_id", "is_current_ancestor"],
    "refs": ["name", "type", "snapshot_id", "max_reference_age_in_ms", "min_snapshots_to_keep",
             "max_snapshot_age_in_ms"],
    "manifests": ["content", "path", "length", "partition_spec_id", "added_snapshot_id",
                  "added_data_files_count", "existing_data_files_count",
                  "deleted_data_files_count", "added_delete_files_count",
                  "existing_delete_files_count", "deleted_delete_files_count",
                  "partition_summaries"],
    "files": ["content", "file_path", "file_format", "spec_id", "record_count",
              "file_size_in_bytes", "column_sizes", "value_counts", "null_value_counts",
              "nan_value_counts", "lower_bounds", "upper_bounds", "key_metadata",
              "split_offsets", "equality_ids", "sort_order_id", "readable_metrics"],
    "partitions": ["record_count", "file_count", "total_data_file_size_in_bytes",
                   "position_delete_record_count", "position_delete_file_count",
                   "equality_delete_record_count", "equality_delete_file_count",
                   "last_updated_at", "last_updated_snapshot_id"],
}


def comparable(v):
    """A value of either table in one form: maps sorted, instants in naive UTC, geometry bounds
    as Iceberg's bound bytes (ours are WKB points: a 5-byte header, then the same doubles)."""
    if isinstance(v, datetime.datetime):
        return v.astimezone(datetime.timezone.utc).replace(tzinfo=None) if v.tzinfo else v
    if isinstance(v, list) and v and isinstance(v[0], tuple):
        return sorted(comparable(x) for x in v)
    if isinstance(v, (list, tuple)):
        return type(v)(comparable(x) for x in v)
    if isinstance(v, dict):
        return {k: comparable(x) for k, x in v.items()}
    if isinstance(v, bytes) and len(v) == 21 and v[:5] == b"\x01\x01\x00\x00\x00":
        return v[5:]
    return v


def column(table, name):
    return sorted((comparable(v) for v in table.column(name).to_pylist()), key=repr)


def point_xy(wkb):
    """x, y of a little-endian WKB point: ISO, or EWKB (a v2 column without a CRS keeps each
    value's SRID in the value, so its points carry 4326 after the type code)."""
    code = struct.unpack("<I", wkb[1:5])[0]
    if code & 0x20000000:
        assert struct.unpack("<i", wkb[5:9])[0] == 4326, wkb[:9].hex()
        return struct.unpack("<dd", wkb[9:25])
    return struct.unpack("<dd", wkb[5:21])


def check_inspect(name, tbl, paths):
    for which, columns in INSPECTED.items():
        theirs = getattr(tbl.inspect, which)()
        ours = pq.read_table(paths[which])
        check(ours.num_rows == theirs.num_rows,
              f"{name}.{which}: {ours.num_rows} rows, as pyiceberg's inspect")
        differ = [c for c in columns if column(ours, c) != column(theirs, c)]
        check(not differ, f"{name}.{which}: {', '.join(columns)} as pyiceberg's "
                          f"(differ: {differ})")


def main():
    binary, work = sys.argv[1], os.path.abspath(sys.argv[2])
    os.makedirs(work, exist_ok=True)
    db = os.path.join(work, "rc.db")
    out = subprocess.run([binary, db, os.path.join(work, "warehouse")], check=True,
                         capture_output=True, text=True)
    tables = json.loads(out.stdout)
    cat = SqlCatalog("geoberg", uri=f"sqlite:///{db}", warehouse=f"file://{work}/warehouse")
    con = duckdb_conn()
    for name, t in tables.items():
        want = {r[0]: (r[1], r[2], r[3]) for r in t["rows"]}
        mor = name.endswith("_mor")
        check((t["delete_files"] > 0) == mor, f"{name}: {t['delete_files']} delete files")
        # pyiceberg
        tbl = cat.load_table(f"rc.{name}")
        check_inspect(name, tbl, t["inspect"])
        if name.startswith("v3"):
            # pyiceberg 0.12 cannot read a v3 geometry column ("Cannot promote an binary to
            # geometry"): the other columns are compared.
            arrow = tbl.scan(selected_fields=("id", "name")).to_arrow()
            got = dict(zip(arrow["id"].to_pylist(), arrow["name"].to_pylist()))
            expect = {i: n for i, (n, _, _) in want.items()}
        else:
            arrow = tbl.scan().to_arrow()
            got = {i: (n, *point_xy(g))
                   for i, n, g in zip(arrow["id"].to_pylist(), arrow["name"].to_pylist(),
                                      arrow["geom"].to_pylist())}
            expect = want
        check(got == expect, f"pyiceberg reads exactly our rows of {name} ({len(got)})")
        # DuckDB
        # v2 tables hold no-CRS geometry in a binary column: DuckDB sees a BLOB.
        geom = "ST_AsWKB(geom)" if name.startswith("v3") else "geom"
        res = con.execute(f"SELECT id, name, {geom} FROM iceberg_scan('{t['metadata']}')"
                          ).fetchall()
        got = {i: (n, *point_xy(bytes(w))) for i, n, w in res}
        check(got == want, f"DuckDB iceberg_scan reads exactly our rows of {name} ({len(got)})")
    print(f"{passed} passed, 0 failed")


if __name__ == "__main__":
    main()
