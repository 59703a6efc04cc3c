#!/usr/bin/env python3
"""Interop check: real clients that no one here wrote read what geoberg wrote, and the reverse.

usage: check.py INTEROP_BINARY WORKDIR
  INTEROP_BINARY  the built `interop` example of geoberg-table (cargo build --example interop)
Needs duckdb==1.5.5 + duckdb-extension-{spatial,avro,iceberg}==1.5.5 and
pyiceberg[sql-sqlite,pyarrow]==0.12.0. Exits non-zero on the first mismatch; prints
'N passed, 0 failed' at the end.
"""
import decimal
import json
import os
import struct
import subprocess
import sys
import uuid

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
    check(tables == ["nested_v3", "points_v2", "points_v3"], f"pyiceberg lists our tables: {tables}")
    v3 = cat.load_table("geo.points_v3")
    check(v3.metadata.format_version == 3, "pyiceberg loads the v3 geometry table")
    ids = sorted(v3.scan(selected_fields=("id", "name")).to_arrow()["id"].to_pylist())
    check(ids == sorted(rows), "pyiceberg reads the non-geometry columns of the v3 table")

    v2 = cat.load_table("geo.points_v2")
    full = v2.scan().to_arrow()
    # A column without a CRS keeps each value's SRID in the value (seed 004): EWKB, SRID 4326.
    geoms = full["geom"].to_pylist()
    ewkb = [struct.unpack("<I", g[1:5])[0] == 0x20000001 and struct.unpack("<i", g[5:9])[0] == 4326
            for g in geoms]
    check(all(ewkb), f"the v2 values are EWKB points with SRID 4326 ({sum(ewkb)} of {len(geoms)})")
    got = {i: struct.unpack("<dd", g[9:25]) for i, g in zip(full["id"].to_pylist(), geoms)}
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

    # upgrade_geometry (seed 004): the v2 no-CRS table copied to a v3 geometry(4326) table,
    # its manifests then regrouped; pyiceberg and DuckDB read the copy's rows.
    out = subprocess.run([binary, "upgrade", db, "geoberg", os.path.join(work, "warehouse"), "geo.points_v2", "geom", "4326"], check=True,
                         capture_output=True, text=True)
    upgraded = json.loads(out.stdout)
    check(upgraded["copied_rows"] == upgraded["source_rows"] == len(rows), f"geoberg upgrades the v2 table: {upgraded}")
    up = cat.load_table("geo.points_v2_v3")
    check(up.metadata.format_version == 3, "pyiceberg loads the upgraded table as format-version 3")
    ids = sorted(up.scan(selected_fields=("id",)).to_arrow()["id"].to_pylist())
    check(ids == sorted(rows), "pyiceberg reads every row of the upgraded table")
    up_file = next(iter(up.scan().plan_files())).file.file_path.removeprefix("file://")
    geom_col = [c.name for c in pq.ParquetFile(up_file).schema].index("geom")
    logical = str(pq.ParquetFile(up_file).schema.column(geom_col).logical_type)
    check("Geometry" in logical, f"the upgraded column is a GEOMETRY column in Parquet: {logical}")
    res = con.execute(f"SELECT id, ST_AsWKB(geom) FROM iceberg_scan('{upgraded['metadata_location']}') ORDER BY id").fetchall()
    got = {i: struct.unpack("<dd", bytes(w)[5:21]) for i, w in res}
    check(got == rows, "DuckDB iceberg_scan reads every row of the upgraded table identically")
    v2_after = cat.load_table("geo.points_v2")
    check(v2_after.metadata_location == v2.metadata_location, "the source table is untouched")
    check(upgraded["metadata_location"].startswith(f"file://{work}/warehouse/geo/points_v2_v3/"),
          f"the upgraded table sits in the warehouse: {upgraded['metadata_location']}")

    check_nested(cat, written["nested"], con)

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
    check_other_bbox_names(binary, work)
    check_evolved(binary, work, con)
    check_backfilled(binary, work, con)
    print(f"{passed} passed, 0 failed")


def as_uuid(v):
    """pyarrow gives a uuid as UUID (extension type) or 16 bytes, DuckDB as UUID."""
    if isinstance(v, (bytes, bytearray)):
        return str(uuid.UUID(bytes=bytes(v)))
    return str(v)


def check_nested(cat, rows, con):
    """Our struct / list / map / decimal / uuid / fixed / time columns, read by pyiceberg and DuckDB."""
    want = {r["id"]: r for r in rows}
    t = cat.load_table("geo.nested_v3")
    check(len(list(t.scan().plan_files())) == 3, "pyiceberg plans the 3 files of the nested table")
    schema = t.schema()
    ids = {f.name: f.field_id for f in schema.fields}
    nested_ids = [schema.find_field(n).field_id for n in ["s.a", "s.b", "tags.element", "attrs.key", "attrs.value"]]
    check(len(set(nested_ids) | set(ids.values())) == len(nested_ids) + len(ids),
          f"every nested field has its own id: {ids} {nested_ids}")
    got = t.scan(selected_fields=("id", "s", "tags", "attrs", "price", "uid", "raw", "t")).to_arrow().to_pylist()
    ok = len(got) == len(want)
    for r in got:
        w = want[r["id"]]
        attrs = [[k, v] for k, v in r["attrs"]] if r["attrs"] is not None else None
        t_us = r["t"].hour * 3_600_000_000 + r["t"].minute * 60_000_000 + r["t"].second * 1_000_000 + r["t"].microsecond
        row_ok = (r["s"] == {"a": w["a"], "b": w["b"]} and r["tags"] == w["tags"] and attrs == w["attrs"]
                  and r["price"] == decimal.Decimal(w["price"]) and as_uuid(r["uid"]) == w["uid"]
                  and bytes(r["raw"]).hex() == w["raw"] and t_us == w["t_us"])
        if not row_ok:
            print(f"  pyiceberg row {r} vs {w}")
        ok = ok and row_ok
    check(ok, f"pyiceberg reads every nested, decimal, uuid, fixed and time value ({len(got)} rows)")
    # pyiceberg prunes on a struct field's bounds (files hold ids 0-9, 10-19, 20-29).
    from pyiceberg.expressions import GreaterThanOrEqual as Ge
    planned = list(t.scan(row_filter=Ge("s.a", 42)).plan_files())
    check(len(planned) == 1, f"pyiceberg prunes on the bounds of s.a: {len(planned)} of 3 files")

    meta = t.metadata_location
    res = con.execute(
        f"SELECT id, s.a, s.b, tags, attrs, CAST(price AS VARCHAR), CAST(uid AS VARCHAR), t, ST_AsWKB(geom) "
        f"FROM iceberg_scan('{meta}') ORDER BY id").fetchall()
    ok = len(res) == len(want)
    for (i, a, b, tags, attrs, price, uid, tm, g) in res:
        w = want[i]
        attrs = sorted([[k, v] for k, v in attrs.items()]) if attrs is not None else None
        t_us = tm.hour * 3_600_000_000 + tm.minute * 60_000_000 + tm.second * 1_000_000 + tm.microsecond
        row_ok = ((a, b) == (w["a"], w["b"]) and tags == w["tags"] and attrs == sorted(w["attrs"])
                  and decimal.Decimal(price) == decimal.Decimal(w["price"]) and uid == w["uid"]
                  and t_us == w["t_us"] and struct.unpack("<dd", bytes(g)[5:21]) == (w["x"], w["y"]))
        if not row_ok:
            print(f"  DuckDB row {(i, a, b, tags, attrs, price, uid, tm)} vs {w}")
        ok = ok and row_ok
    check(ok, f"DuckDB iceberg_scan reads every nested, decimal, uuid and time value ({len(res)} rows)")


def check_evolved(binary, work, con):
    """A table evolved by geoberg after data was written (a column added after `id`, `name`
    renamed to `label`, `old` dropped, then more rows): both readers see the current columns,
    nulls for the old rows in the added column, and the old rows' values under the new name."""
    wh = os.path.join(work, "evolved")
    db = os.path.join(wh, "catalog.db")
    os.makedirs(wh, exist_ok=True)
    out = subprocess.run([binary, "evolve", db, os.path.join(wh, "warehouse")], check=True,
                         capture_output=True, text=True)
    made = json.loads(out.stdout)
    expect = [(r["id"], r["score"], r["label"]) for r in made["rows"]]
    check(made["columns"] == ["id", "score", "label", "geom"], f"geoberg's evolved schema: {made['columns']}")

    cat = SqlCatalog("geoberg", uri=f"sqlite:///{db}", warehouse=f"file://{wh}/warehouse")
    t = cat.load_table("geo.evolved")
    names = [f.name for f in t.schema().fields]
    check(names == ["id", "score", "label", "geom"], f"pyiceberg sees the evolved columns: {names}")
    got = t.scan(selected_fields=("id", "score", "label")).to_arrow().sort_by("id")
    rows = list(zip(got["id"].to_pylist(), got["score"].to_pylist(), got["label"].to_pylist()))
    check(rows == expect, "pyiceberg reads nulls for the added column in old files and old values under the new name")

    meta = made["metadata_location"]
    cols = [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM iceberg_scan('{meta}')").fetchall()]
    check(cols == ["id", "score", "label", "geom"], f"DuckDB sees the evolved columns: {cols}")
    res = con.execute(f"SELECT id, score, label, ST_X(geom) FROM iceberg_scan('{meta}') ORDER BY id").fetchall()
    check([(i, s, l) for i, s, l, _ in res] == expect, "DuckDB reads the evolved table identically")
    check([x for *_, x in res] == [r["x"] for r in made["rows"]], "DuckDB reads every geometry of the evolved table")


def check_backfilled(binary, work, con):
    """Seed 002 on a geoberg table: bbox columns added before the geometry and backfilled per
    partition. pyiceberg and DuckDB see them in place, read every bbox value equal to the
    point's coordinates (from the generator, and from DuckDB's own ST_X / ST_Y of the WKB), and
    pyiceberg's planner reads the files geoberg counted for the bbox-range query: fewer than all."""
    from pyiceberg.expressions import And, GreaterThanOrEqual as Ge, LessThanOrEqual as Le

    wh = os.path.join(work, "backfilled")
    db = os.path.join(wh, "catalog.db")
    os.makedirs(wh, exist_ok=True)
    out = subprocess.run([binary, "backfill", db, os.path.join(wh, "warehouse")], check=True,
                         capture_output=True, text=True)
    made = json.loads(out.stdout)
    want_cols = ["id", "day", "bbox_min_x", "bbox_min_y", "bbox_max_x", "bbox_max_y", "geom"]
    check(made["columns"] == want_cols, f"geoberg's backfilled schema: {made['columns']}")
    check(made["partitions_backfilled"] == 3, f"three partitions backfilled: {made['partitions_backfilled']}")
    points = {r["id"]: (r["x"], r["y"]) for r in made["rows"]}

    cat = SqlCatalog("geoberg", uri=f"sqlite:///{db}", warehouse=f"file://{wh}/warehouse")
    t = cat.load_table("geo.telemetry")
    check([f.name for f in t.schema().fields] == want_cols, "pyiceberg sees the bbox columns before the geometry")
    got = t.scan(selected_fields=("id", "bbox_min_x", "bbox_min_y", "bbox_max_x", "bbox_max_y")).to_arrow().to_pylist()
    check(len(got) == len(points) and all(
        (r["bbox_min_x"], r["bbox_min_y"]) == points[r["id"]] == (r["bbox_max_x"], r["bbox_max_y"]) for r in got),
        f"pyiceberg reads every backfilled bbox value as its point ({len(got)} rows)")
    x0, y0, x1, y1 = made["window"]
    box = And(And(Ge("bbox_max_x", x0), Le("bbox_min_x", x1)), And(Ge("bbox_max_y", y0), Le("bbox_min_y", y1)))
    planned = len(list(t.scan(row_filter=box).plan_files()))
    total = len(list(t.scan().plan_files()))
    check(total == made["files_total"], f"pyiceberg plans the {total} files geoberg reports")
    check(planned == made["files_read_after"] and planned < total,
          f"pyiceberg's bbox filter reads the files geoberg counted: {planned} of {total} "
          f"(before the backfill: {made['files_read_before']})")
    inside = sorted(i for i, (x, y) in points.items() if x0 <= x <= x1 and y0 <= y <= y1)
    found = sorted(t.scan(row_filter=box, selected_fields=("id",)).to_arrow()["id"].to_pylist())
    check(found == inside, f"pyiceberg's bbox filter finds every point in the window ({len(inside)})")

    meta = made["metadata_location"]
    res = con.execute(
        f"SELECT count(*) FILTER (WHERE bbox_min_x = ST_X(geom) AND bbox_max_x = ST_X(geom) "
        f"AND bbox_min_y = ST_Y(geom) AND bbox_max_y = ST_Y(geom)), count(*) FROM iceberg_scan('{meta}')").fetchone()
    check(res[0] == res[1] == len(points), f"DuckDB: every bbox value equals ST_X / ST_Y of its geometry ({res})")


def check_other_bbox_names(binary, work):
    """A pyiceberg v2 table whose bbox columns are bbox_xmin, bbox_ymin, bbox_xmax, bbox_ymax
    (not the seed names): geoberg prunes on them."""
    import pyarrow as pa
    from pyiceberg.schema import Schema
    from pyiceberg.types import BinaryType, DoubleType, LongType, NestedField

    wh = os.path.join(work, "pyiceberg_xmin")
    os.makedirs(wh, exist_ok=True)
    cat = SqlCatalog("other", uri=f"sqlite:///{wh}/catalog.db", warehouse=f"file://{wh}")
    cat.create_namespace_if_not_exists("legacy")
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "bbox_xmin", DoubleType(), required=False),
        NestedField(3, "bbox_ymin", DoubleType(), required=False),
        NestedField(4, "bbox_xmax", DoubleType(), required=False),
        NestedField(5, "bbox_ymax", DoubleType(), required=False),
        NestedField(6, "geom", BinaryType(), required=False),
    )
    t = cat.create_table("legacy.xmin_points", schema=schema, properties={"format-version": "2"})
    located = {}
    for band in range(6):  # one file per 60-degree band of longitude
        ids, xs, ys = [], [], []
        for i in range(50):
            x, y = -180 + band * 60 + (i % 10) * 5.5, -40 + (i // 10) * 20
            ids.append(band * 100 + i); xs.append(float(x)); ys.append(float(y))
            located[band * 100 + i] = (x, y)
        t.append(pa.Table.from_arrays(
            [pa.array(ids, pa.int64()), pa.array(xs), pa.array(ys), pa.array(xs), pa.array(ys),
             pa.array([struct.pack("<BIdd", 1, 1, x, y) for x, y in zip(xs, ys)], pa.large_binary())],
            schema=schema.as_arrow()))
    expect = sorted(i for i, (x, y) in located.items() if -50 <= x <= -10 and -30 <= y <= 30)
    out = subprocess.run([binary, "scan", os.path.join(wh, "catalog.db"), "other", "legacy.xmin_points",
                          "geom", "-50", "-30", "-10", "30"], check=True, capture_output=True, text=True)
    scan = json.loads(out.stdout)
    check(scan["ids"] == expect, f"geoberg's window scan of the bbox_xmin table returns exactly {len(expect)} rows")
    check(scan["files_total"] == 6 and scan["files_read"] <= 2,
          f"geoberg prunes on bbox_xmin... columns: {scan['files_read']} of {scan['files_total']} files read")
    check(any("bbox_xmin" in r for r in scan["reasons"]), f"explain names the columns: {scan['reasons']}")


if __name__ == "__main__":
    main()
