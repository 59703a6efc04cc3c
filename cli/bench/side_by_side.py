"""The 2 M-point sort-and-write of issue 29, for the engines geoberg is compared with.

    side_by_side.py gen <dir> <rows> <files>   write <files> zstd Parquet parts of uniform random
                                               points (id BIGINT, geom WKB) into <dir>
    side_by_side.py duckdb <dir> <out>         DuckDB: COPY (... ORDER BY ST_Hilbert) TO zstd Parquet
    side_by_side.py sedonadb <dir> <out>       SedonaDB: ORDER BY sd_order(geom) to Parquet

Each engine step prints its own seconds; cli/bench/create_spatial_index.sh times whole processes.
"""

import os
import sys
import time


def duckdb_connection():
    import duckdb
    import duckdb_extension_spatial  # the pinned extension, no download

    con = duckdb.connect(config={"autoinstall_known_extensions": "false"})
    path = os.path.join(
        os.path.dirname(duckdb_extension_spatial.__file__),
        "extensions",
        "v" + duckdb.__version__,
        "spatial.duckdb_extension",
    )
    con.execute(f"LOAD '{path}'")
    return con


def gen(folder, rows, files):
    con = duckdb_connection()
    per = -(-rows // files)
    for i in range(files):
        lo, hi = i * per, min(rows, (i + 1) * per)
        con.execute(
            f"""COPY (SELECT i AS id,
                       ST_AsWKB(ST_Point(hash(i, 1) / 18446744073709551616.0 * 360 - 180,
                                         hash(i, 2) / 18446744073709551616.0 * 170 - 85)) AS geom
                FROM range({lo}, {hi}) t(i))
                TO '{folder}/part-{i:02}.parquet' (FORMAT parquet, COMPRESSION zstd)"""
        )


def duckdb_sort(folder, out):
    con = duckdb_connection()
    start = time.perf_counter()
    con.execute(
        f"""COPY (SELECT * FROM read_parquet('{folder}/part-*.parquet')
                  ORDER BY ST_Hilbert(ST_GeomFromWKB(geom),
                                      ST_Extent(ST_MakeEnvelope(-180, -90, 180, 90))))
            TO '{out}' (FORMAT parquet, COMPRESSION zstd)"""
    )
    print(f"duckdb {time.perf_counter() - start:.3f} s")


def sedonadb_sort(folder, out):
    import warnings

    warnings.simplefilter("ignore")
    import sedonadb

    sd = sedonadb.connect()
    start = time.perf_counter()
    sd.read_parquet(f"{folder}/part-*.parquet").to_view("points")
    sd.sql(
        "SELECT * FROM points ORDER BY sd_order(ST_GeomFromWKB(geom))"
    ).to_parquet(out)
    print(f"sedonadb {time.perf_counter() - start:.3f} s")


if __name__ == "__main__":
    mode, folder = sys.argv[1], sys.argv[2]
    if mode == "gen":
        gen(folder, int(sys.argv[3]), int(sys.argv[4]))
    elif mode == "duckdb":
        duckdb_sort(folder, sys.argv[3])
    elif mode == "sedonadb":
        sedonadb_sort(folder, sys.argv[3])
    else:
        sys.exit(f"unknown mode {mode}")
