#!/usr/bin/env python3
"""Interop on a PostgreSQL catalog: pyiceberg 0.12's SqlCatalog lists and loads the tables geoberg
wrote there and reads their rows; then it creates and appends to a table of its own, which the
Rust driver (examples/postgres_interop.rs) loads with geoberg afterwards.

usage: postgres_check.py URI WAREHOUSE WRITTEN_JSON
  URI           postgresql+psycopg2://user@host:port/db of the catalog database
  WAREHOUSE     the warehouse directory geoberg wrote under
  WRITTEN_JSON  {"rows": [{"id", "x", "y"}...], "v3_metadata": ..., "v2_metadata": ...}
Needs pyiceberg[sql-postgres,pyarrow]==0.12.0 and psycopg2-binary. Exits non-zero on the first
mismatch; prints 'N passed, 0 failed' at the end.
"""
import json
import struct
import sys

import pyarrow as pa
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

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
    uri, warehouse, written = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    check(uri.startswith("postgresql+psycopg2://"), f"catalog URI {uri}")
    rows = {r["id"]: (r["x"], r["y"]) for r in written["rows"]}

    cat = SqlCatalog("geoberg", uri=uri, warehouse=f"file://{warehouse}")
    check(("geo",) in cat.list_namespaces(), f"pyiceberg lists our namespace: {cat.list_namespaces()}")
    tables = sorted(t[1] for t in cat.list_tables("geo"))
    check(tables == ["points_v2", "points_v3"], f"pyiceberg lists our tables on PostgreSQL: {tables}")

    v3 = cat.load_table("geo.points_v3")
    check(v3.metadata_location == written["v3_metadata"], "pyiceberg loads the pointer geoberg committed (v3)")
    check(v3.metadata.format_version == 3, "the v3 geometry table loads as format version 3")
    got = v3.scan(selected_fields=("id", "name")).to_arrow()
    check(sorted(got["id"].to_pylist()) == sorted(rows), "pyiceberg reads every id of the v3 table")
    names = dict(zip(got["id"].to_pylist(), got["name"].to_pylist()))
    check(all(names[i] == f"p{i}" for i in rows), "and every name")

    v2 = cat.load_table("geo.points_v2")
    check(v2.metadata_location == written["v2_metadata"], "pyiceberg loads the pointer geoberg committed (v2)")
    full = v2.scan().to_arrow()
    # A column without a CRS keeps each value's SRID in the value: EWKB points when labelled.
    def xy(g):
        at = 9 if struct.unpack("<I", g[1:5])[0] & 0x20000000 else 5
        return struct.unpack("<dd", g[at:at + 16])
    geoms = {i: xy(g) for i, g in zip(full["id"].to_pylist(), full["geom"].to_pylist())}
    check(geoms == rows, "pyiceberg reads every geometry of the v2 table")
    check(len(list(v2.scan().plan_files())) == 4, "pyiceberg plans the 4 data files geoberg appended")

    # The reverse direction: pyiceberg commits to the same catalog, geoberg reads it.
    schema = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "name", StringType()))
    mine = cat.create_table("geo.from_pyiceberg", schema=schema)
    data = pa.table({"id": pa.array(range(100), pa.int64()), "name": [f"n{i}" for i in range(100)]},
                    schema=pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string())]))
    mine.append(data.slice(0, 60))
    mine.append(data.slice(60))
    check(len(cat.load_table("geo.from_pyiceberg").scan().to_arrow()) == 100, "pyiceberg commits its own table twice")
    print(f"{passed} passed, 0 failed")


if __name__ == "__main__":
    main()
