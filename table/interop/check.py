#!/usr/bin/env python3
"""Interop check: real clients that no one here wrote read what geoberg wrote, and the reverse.

usage: check.py INTEROP_BINARY WORKDIR
  INTEROP_BINARY  the built `interop` example of geoberg-table (cargo build --example interop)
Needs duckdb==1.5.5 + duckdb-extension-{spatial,avro,iceberg}==1.5.5 and
pyiceberg[sql-sqlite,pyarrow]==0.12.0. Exits non-zero on the first mismatch; prints
'N passed, 0 failed' at the end.
"""
import json
import os
import struct
import subprocess
import sys

import pyarrow.parquet as pq
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.expressions import And, GreaterThanOrEqual, LessThanOrEqual

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED_SCRIPT = os.path.join(HERE, "..", "..", "..", "shared", "interop", "pyiceberg_v2_bbox_table.py")
passed = 0


def check(cond, what):
    global passed
    if not cond:
        print(f"FAIL: {what}")
        print(f"{passed} passed, 1 failed")
        sys.exit(1)
    passed += 1
    print(f"ok: {what}")


def duckdb_conn():
    import duckdb

    con = duckdb.connect(config={"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"})
    for name in ["spatial", "avro", "iceberg"]:
        mod = __import__(f"duckdb_extension_{name}")
        path = os.path.join(os.path.dirname(mod.__file__), "extensions", "v1.5.5", f"{name}.duckdb_extension")
        con.execute(f"LOAD '{path}'")
    return con


def main():
    binary, work = sys.argv[1], os.path.abspath(sys.argv[2])
    os.makedirs(work, exist_ok=True)
    db = os.path.join(work, "geoberg.db")
    if os.path.exists(db):
        os.remove(db)
    out = subprocess.run([binary, "write", db, os.path.join(work, "warehouse")], check=True, capture_output=True, text=True)
    written = json.loads(out.stdout)
    rows = {r["id"]: (r["x"], r["y"]) for r in written["rows"]}

    # pyiceberg's SqlCatalog opens our SQLite file.
    cat = SqlCatalog("geoberg", uri=f"sqlite:///{db}", warehouse=f"file://{work}/warehouse")
    tables = sorted(t[1] for t in cat.list_tables("geo"))
    check(tables == ["points_v2", "points_v3"], f"pyiceberg lists our tables: {tables}")
    v3 = cat.load_table("geo.points_v3")
    check(v3.metadata.format_version == 3, "pyiceberg loads the v3 geometry table")
    ids = sorted(v3.scan(selected_fields=("id", "name")).to_arrow()["id"].to_pylist())
    check(ids == sorted(rows), "pyiceberg reads the non-geometry columns of the v3 table")

    v2 = cat.load_table("geo.points_v2")
    full = v2.scan().to_arrow()
    got = {i: struct.unpack("<dd", g[5:21]) for i, g in zip(full["id"].to_pylist(), full["geom"].to_pylist())}
    check(got == rows, "pyiceberg reads every column of the v2 legacy table")
    window = And(GreaterThanOrEqual("bbox_max_x", 20.0), LessThanOrEqual("bbox_min_x", 29.0))
    planned = list(v2.scan(row_filter=window).plan_files())
    check(len(planned) == 1, f"pyiceberg prunes v2 files on the bbox columns: {len(planned)} of 8")

    data_file = v3.scan().plan_files().__iter__().__next__().file.file_path.removeprefix("file://")
    logical = str(pq.ParquetFile(data_file).schema.column(2).logical_type)
    check("Geometry" in logical, f"pyarrow sees the GEOMETRY logical type: {logical}")

    con = duckdb_conn()
    meta = v3.metadata_location
    res = con.execute(f"SELECT id, ST_AsWKB(geom) FROM iceberg_scan('{meta}') ORDER BY id").fetchall()
    got = {i: struct.unpack("<dd", bytes(w)[5:21]) for i, w in res}
    check(got == rows, "DuckDB iceberg_scan reads every row of the v3 table identically")
    q = (f"SELECT id FROM iceberg_scan('{meta}') WHERE "
         "ST_Intersects(geom, ST_GeomFromText('POLYGON((20 -5, 29 -5, 29 5, 20 5, 20 -5))')) ORDER BY id")
    hits = [r[0] for r in con.execute(q).fetchall()]
    expect = sorted(i for i, (x, y) in rows.items() if 20 <= x <= 29 and -5 <= y <= 5)
    check(hits == expect, f"DuckDB ST_Intersects returns exactly the right rows ({len(hits)})")

    # CREATE SPATIAL INDEX: the REPLACE snapshot reads the same rows in pyiceberg and DuckDB.
    out = subprocess.run([binary, "rewrite", db, "geoberg", "geo.points_v3", "12"], check=True,
                         capture_output=True, text=True)
    rewrite = json.loads(out.stdout)
    check(rewrite["rewritten_data_files_count"] == 8, f"geoberg rewrites the v3 table: {rewrite}")
    v3 = cat.load_table("geo.points_v3")
    check(v3.current_snapshot().summary.operation.value == "replace", "pyiceberg sees a replace snapshot")
    files = list(v3.scan().plan_files())
    check(len(files) == rewrite["added_data_files_count"], f"pyiceberg plans the {len(files)} rewritten files")
    ids = sorted(v3.scan(selected_fields=("id", "name")).to_arrow()["id"].to_pylist())
    check(ids == sorted(rows), "pyiceberg reads every row after the rewrite")
    meta = v3.metadata_location
    res = con.execute(f"SELECT id, ST_AsWKB(geom) FROM iceberg_scan('{meta}') ORDER BY id").fetchall()
    got = {i: struct.unpack("<dd", bytes(w)[5:21]) for i, w in res}
    check(got == rows, "DuckDB iceberg_scan reads every row of the rewritten table identically")

    # The reverse: geoberg reads and prunes a table pyiceberg wrote.
    pywh = os.path.join(work, "pyiceberg")
    made = json.loads(subprocess.run([sys.executable, SHARED_SCRIPT, pywh, "--rows", "4000", "--files", "8"],
                                     check=True, capture_output=True, text=True).stdout)
    pyt = SqlCatalog(made["catalog_name"], uri=made["catalog_uri"], warehouse=f"file://{pywh}").load_table(made["table"])
    arrow = pyt.scan(selected_fields=("id", "geom")).to_arrow()
    located = {i: struct.unpack("<dd", g[5:21]) for i, g in zip(arrow["id"].to_pylist(), arrow["geom"].to_pylist()) if g}
    expect = sorted(i for i, (x, y) in located.items() if 0 <= x <= 10 and 0 <= y <= 10)
    out = subprocess.run([binary, "scan", os.path.join(pywh, "catalog.db"), made["catalog_name"], made["table"],
                          "geom", "0", "0", "10", "10"], check=True, capture_output=True, text=True)
    scan = json.loads(out.stdout)
    check(scan["files_total"] == made["files"], "geoberg loads the pyiceberg v2 table")
    check(scan["ids"] == expect, f"geoberg's window scan of the pyiceberg table returns exactly {len(expect)} rows")

    # CREATE SPATIAL INDEX on the table pyiceberg wrote; pyiceberg then reads the same rows and
    # its own bbox-column filter plans fewer files.
    box = And(And(GreaterThanOrEqual("bbox_max_x", 0.0), LessThanOrEqual("bbox_min_x", 10.0)),
              And(GreaterThanOrEqual("bbox_max_y", 0.0), LessThanOrEqual("bbox_min_y", 10.0)))
    before = len(list(pyt.scan(row_filter=box).plan_files()))
    all_ids = sorted(arrow["id"].to_pylist())
    subprocess.run([binary, "rewrite", os.path.join(pywh, "catalog.db"), made["catalog_name"], made["table"], "16"],
                   check=True, capture_output=True, text=True)
    pyt = pyt.refresh()
    after_rows = pyt.scan(selected_fields=("id", "geom")).to_arrow()
    check(sorted(after_rows["id"].to_pylist()) == all_ids, "pyiceberg reads every row of its table after our index")
    relocated = {i: struct.unpack("<dd", g[5:21]) for i, g in zip(after_rows["id"].to_pylist(), after_rows["geom"].to_pylist()) if g}
    check(relocated == located, "every geometry is unchanged after our index")
    after = len(list(pyt.scan(row_filter=box).plan_files()))
    check(after < before, f"pyiceberg's bbox filter plans fewer files after our index: {before} -> {after}")
    print(f"{passed} passed, 0 failed")


if __name__ == "__main__":
    main()
