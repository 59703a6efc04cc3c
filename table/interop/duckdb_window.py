"""Times DuckDB 1.5.5 on a geoberg table: a window count with ST_Intersects and with &&.

Usage: python duckdb_window.py <warehouse> <namespace.table> <minx> <miny> <maxx> <maxy> [runs]
(the interop venv of table/interop/run.sh has duckdb and its extensions). The table's metadata
location comes from the warehouse's SQLite catalog; each query runs `runs` times (default 7),
the median is printed with the count, as Markdown rows.
"""
import os
import sqlite3
import statistics
import sys
import time

from check import duckdb_conn


def main():
    warehouse, name = sys.argv[1], sys.argv[2]
    minx, miny, maxx, maxy = (float(v) for v in sys.argv[3:7])
    runs = int(sys.argv[7]) if len(sys.argv) > 7 else 7
    namespace, table = name.split(".")
    db = sqlite3.connect(os.path.join(warehouse, "catalog.db"))
    (meta,) = db.execute(
        "SELECT metadata_location FROM iceberg_tables WHERE table_namespace = ? AND table_name = ?",
        (namespace, table),
    ).fetchone()
    con = duckdb_conn()
    envelope = f"ST_MakeEnvelope({minx}, {miny}, {maxx}, {maxy})"
    for label, predicate in [
        ("ST_Intersects", f"ST_Intersects(geom, {envelope})"),
        ("&&", f"geom && {envelope}"),
    ]:
        q = f"SELECT count(*) FROM iceberg_scan('{meta}') WHERE {predicate}"
        times, count = [], None
        for _ in range(runs):
            start = time.perf_counter()
            (count,) = con.execute(q).fetchone()
            times.append(time.perf_counter() - start)
        print(f"| DuckDB 1.5.5 iceberg_scan, {label} | {count} | {statistics.median(times) * 1e3:.1f} ms |")


if __name__ == "__main__":
    main()
