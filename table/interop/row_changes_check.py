#!/usr/bin/env python3
"""Row-level changes interop: after DELETE and UPDATE in both modes (copy-on-write; merge-on-read
as v3 deletion vectors and v2 position delete files), DuckDB 1.5.5 iceberg_scan and pyiceberg
0.12 read exactly the rows geoberg says the tables hold. Both readers read every kind we write,
so any error fails the check.

usage: row_changes_check.py BINARY WORKDIR   (BINARY: the built `row_changes_interop` example)
"""
import json
import os
import struct
import subprocess
import sys

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
        if name.startswith("v3"):
            # pyiceberg 0.12 cannot read a v3 geometry column ("Cannot promote an binary to
            # geometry"): the other columns are compared.
            arrow = tbl.scan(selected_fields=("id", "name")).to_arrow()
            got = dict(zip(arrow["id"].to_pylist(), arrow["name"].to_pylist()))
            expect = {i: n for i, (n, _, _) in want.items()}
        else:
            arrow = tbl.scan().to_arrow()
            got = {i: (n, *struct.unpack("<dd", g[5:21]))
                   for i, n, g in zip(arrow["id"].to_pylist(), arrow["name"].to_pylist(),
                                      arrow["geom"].to_pylist())}
            expect = want
        check(got == expect, f"pyiceberg reads exactly our rows of {name} ({len(got)})")
        # DuckDB
        # v2 tables hold no-CRS geometry in a binary column: DuckDB sees a BLOB.
        geom = "ST_AsWKB(geom)" if name.startswith("v3") else "geom"
        res = con.execute(f"SELECT id, name, {geom} FROM iceberg_scan('{t['metadata']}')"
                          ).fetchall()
        got = {i: (n, *struct.unpack("<dd", bytes(w)[5:21])) for i, n, w in res}
        check(got == want, f"DuckDB iceberg_scan reads exactly our rows of {name} ({len(got)})")
    print(f"{passed} passed, 0 failed")


if __name__ == "__main__":
    main()
