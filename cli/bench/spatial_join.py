"""SpatialBench's join queries on geoberg tables, beside SedonaDB 0.5 and DuckDB 1.5.5 reading the
same Parquet files (issue 26).

    spatial_join.py bench <geoberg> [--scale 1] [--zones 100000] [--runs 3] [--timeout 300]
                          [--queries q4,q6,...] [--work DIR]
    spatial_join.py engine <duckdb|sedonadb> <data> <query> <runs>
    spatial_join.py sql <geoberg|duckdb|sedonadb> <query>   print a query as that engine runs it

Data: SpatialBench's own generator (`spatialbench-cli`, PyPI) writes the trips (6 M at scale 1,
in 16 Parquet parts) and buildings (20 k at scale 1); its zone table is a download of Overture
division areas, so the zones here are generated: a world grid of `--zones` cells whose shared
edges are jittered into 33-vertex polygons that still tile the plane (every point is in exactly
one zone, as in a level of administrative divisions), in random order, in 4 parts.

geoberg imports the parts as they are ("arrival order"), then a copy of the warehouse gets
`CREATE SPATIAL INDEX ... hilbert(<geometry>, 16)` on all three tables ("clustered"). SedonaDB
and DuckDB read the Parquet parts through `read_parquet`. Every query runs `--runs` times in one
process per engine; the table prints the median of the runs, the process's peak RSS, and whether
the rows equal SedonaDB's (floats to 6 significant digits). geoberg's files read are its scans'
planning-time counts, and `EXPLAIN ANALYZE`'s `files_skipped_by_join` says how many more the join's
build side kept from being read.
"""

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

# The queries of SpatialBench (docs/queries.md in apache/sedona-spatialbench) that join tables,
# with every output column named and durations and decimals averaged as DOUBLE so the three
# engines print the same types. GEOM(x) is ST_GeomFromWKB(x) on the Parquet files and the
# column itself on geoberg's geometry(4326) columns.
QUERIES = {
    "q4": (
        "zones of the top 1000 trips by tip (ST_Within)",
        """SELECT z.z_zonekey AS zonekey, z.z_name AS zone_name, COUNT(*) AS trip_count
FROM {zone} z
JOIN (SELECT t.t_pickuploc FROM {trip} t ORDER BY t.t_tip DESC, t.t_tripkey ASC LIMIT 1000) top_trips
  ON ST_Within(GEOM(top_trips.t_pickuploc), GEOM(z.z_boundary))
GROUP BY z.z_zonekey, z.z_name
ORDER BY trip_count DESC, zonekey ASC""",
    ),
    "q6": (
        "trips per zone for the zones meeting a 0.9 x 0.9 degree box (selective)",
        """SELECT z.z_zonekey AS zonekey, COUNT(t.t_tripkey) AS total_pickups,
       AVG(CAST(t.t_distance AS DOUBLE)) AS avg_distance,
       AVG(date_part('epoch', t.t_dropofftime) - date_part('epoch', t.t_pickuptime)) AS avg_duration
FROM {trip} t, {zone} z
WHERE ST_Intersects(ST_GeomFromText('POLYGON((-112.2110 34.4197, -111.3110 34.4197, -111.3110 35.3197, -112.2110 35.3197, -112.2110 34.4197))'),
                    GEOM(z.z_boundary))
  AND ST_Within(GEOM(t.t_pickuploc), GEOM(z.z_boundary))
GROUP BY z.z_zonekey
ORDER BY total_pickups DESC, zonekey ASC""",
    ),
    "q8": (
        "pickups within 0.0045 degrees (~500 m) of each building (ST_DWithin)",
        """SELECT b.b_buildingkey AS buildingkey, b.b_name AS building_name, COUNT(*) AS nearby_pickup_count
FROM {trip} t
JOIN {building} b ON ST_DWithin(GEOM(t.t_pickuploc), GEOM(b.b_boundary), 0.0045)
GROUP BY b.b_buildingkey, b.b_name
ORDER BY nearby_pickup_count DESC, buildingkey ASC
LIMIT 100""",
    ),
    "q9": (
        "overlapping buildings by intersection over union (polygon self-join)",
        """WITH b1 AS (SELECT b_buildingkey AS id, GEOM(b_boundary) AS geom FROM {building}),
b2 AS (SELECT b_buildingkey AS id, GEOM(b_boundary) AS geom FROM {building}),
pairs AS (
  SELECT b1.id AS building_1, b2.id AS building_2, ST_Area(b1.geom) AS area1, ST_Area(b2.geom) AS area2,
         ST_Area(ST_Intersection(b1.geom, b2.geom)) AS overlap_area
  FROM b1 JOIN b2 ON b1.id < b2.id AND ST_Intersects(b1.geom, b2.geom))
SELECT building_1, building_2, area1, area2, overlap_area,
       CASE WHEN (area1 + area2 - overlap_area) = 0 THEN 1.0
            ELSE overlap_area / (area1 + area2 - overlap_area) END AS iou
FROM pairs
ORDER BY iou DESC, building_1 ASC, building_2 ASC
LIMIT 100""",
    ),
    "q10": (
        "every zone with its trips' statistics (LEFT JOIN, ST_Within)",
        """SELECT z.z_zonekey AS zonekey,
       AVG(date_part('epoch', t.t_dropofftime) - date_part('epoch', t.t_pickuptime)) AS avg_duration,
       AVG(CAST(t.t_distance AS DOUBLE)) AS avg_distance, COUNT(t.t_tripkey) AS num_trips
FROM {zone} z
LEFT JOIN {trip} t ON ST_Within(GEOM(t.t_pickuploc), GEOM(z.z_boundary))
GROUP BY z.z_zonekey
ORDER BY avg_duration DESC NULLS LAST, zonekey ASC
LIMIT 100""",
    ),
    "q11": (
        "trips whose pickup and dropoff zones differ (two point-in-polygon joins)",
        """SELECT COUNT(*) AS cross_zone_trip_count
FROM {trip} t
JOIN {zone} pickup_zone ON ST_Within(GEOM(t.t_pickuploc), GEOM(pickup_zone.z_boundary))
JOIN {zone} dropoff_zone ON ST_Within(GEOM(t.t_dropoffloc), GEOM(dropoff_zone.z_boundary))
WHERE pickup_zone.z_zonekey != dropoff_zone.z_zonekey""",
    ),
    "q12": (
        "pickups ranked by mean distance to their 5 nearest buildings (ST_KNN)",
        """WITH knn AS (
  SELECT t.t_tripkey AS tripkey, ST_Distance(GEOM(t.t_pickuploc), GEOM(b.b_boundary)) AS distance_to_building
  FROM {trip} t JOIN {building} b ON ST_KNN(GEOM(t.t_pickuploc), GEOM(b.b_boundary), 5, FALSE))
SELECT tripkey, AVG(distance_to_building) AS avg_distance_to_5_nearest
FROM knn
GROUP BY tripkey
ORDER BY avg_distance_to_5_nearest DESC, tripkey ASC
LIMIT 100""",
    ),
}

# DuckDB has no KNN join operator; a LATERAL top-5 per pickup is a different query.
NOT_IN = {"duckdb": {"q12"}}

# table -> (the geometry its CREATE SPATIAL INDEX orders by, its geometry columns). SpatialBench's
# buildings reach past longitude 180 (to 180.77), outside the default curve bounds of EPSG:4326,
# so their curve gets bounds that cover them.
TABLES = {"trip": ("t_pickuploc", "t_pickuploc,t_dropoffloc"), "zone": ("z_boundary", "z_boundary"),
          "building": ("b_boundary, 16, -180, -90, 181, 90", "b_boundary")}


def sql_for(engine, name):
    text = QUERIES[name][1]
    if engine == "geoberg":
        text = text.replace("GEOM(", "(")
        return text.format(**{t: f"bench.{t}" for t in TABLES})
    return text.replace("GEOM(", "ST_GeomFromWKB(").format(**{t: t for t in TABLES})


# ---------------------------------------------------------------------------------------------
# data


def zones(folder, count, parts, seed=7):
    """A world grid of about `count` jittered 33-vertex polygons that tile lon [-180, 180] x
    lat [-60, 80] (shared edges are computed once, so neighbours meet exactly), shuffled."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    nx = max(1, round((count * 360 / 140) ** 0.5))
    ny = max(1, count // nx)
    dx, dy = 360 / nx, 140 / ny
    cx = -180 + np.arange(nx + 1)[:, None] * dx + rng.uniform(-0.15, 0.15, (nx + 1, ny + 1)) * dx
    cy = -60 + np.arange(ny + 1)[None, :] * dy + rng.uniform(-0.15, 0.15, (nx + 1, ny + 1)) * dy
    cx[0, :], cx[-1, :] = -180, 180
    cy[:, 0], cy[:, -1] = -60, 80
    s = np.arange(1, 8) / 8  # 7 interior points per edge
    bump = np.sin(np.pi * s)
    # Horizontal edge (i, j) -> (i + 1, j): interior points moved in y; vertical edges in x.
    hx = cx[:-1, :, None] + (cx[1:, :, None] - cx[:-1, :, None]) * s
    hy = cy[:-1, :, None] + (cy[1:, :, None] - cy[:-1, :, None]) * s
    hy = hy + rng.uniform(-0.1, 0.1, hy.shape) * dy * bump
    hy[:, 0, :], hy[:, -1, :] = -60, 80
    vx = cx[:, :-1, None] + (cx[:, 1:, None] - cx[:, :-1, None]) * s
    vy = cy[:, :-1, None] + (cy[:, 1:, None] - cy[:, :-1, None]) * s
    vx = vx + rng.uniform(-0.1, 0.1, vx.shape) * dx * bump
    vx[0, :, :], vx[-1, :, :] = -180, 180

    def corner(a, b):
        return np.stack([cx[a, b], cy[a, b]], -1)[..., None, :]

    def edge(x, y):
        return np.stack([x, y], -1)

    i0, j0 = np.arange(nx)[:, None], np.arange(ny)[None, :]
    ring = np.concatenate(
        [
            corner(i0, j0), edge(hx[:, :-1], hy[:, :-1]),  # bottom, west to east
            corner(i0 + 1, j0), edge(vx[1:, :], vy[1:, :]),  # east, south to north
            corner(i0 + 1, j0 + 1), edge(hx[:, 1:], hy[:, 1:])[:, :, ::-1],  # top, back west
            corner(i0, j0 + 1), edge(vx[:-1, :], vy[:-1, :])[:, :, ::-1],  # west, back south
            corner(i0, j0),
        ],
        axis=2,
    ).reshape(nx * ny, 33, 2)
    header = b"\x01" + (3).to_bytes(4, "little") + (1).to_bytes(4, "little") + (33).to_bytes(4, "little")
    wkb = [header + r.astype("<f8").tobytes() for r in ring]
    order = rng.permutation(nx * ny)
    os.makedirs(folder, exist_ok=True)
    for p, chunk in enumerate(np.array_split(order, parts)):
        table = pa.table(
            {
                "z_zonekey": pa.array(chunk + 1, pa.int64()),
                "z_name": pa.array([f"zone-{k + 1}" for k in chunk]),
                "z_boundary": pa.array([wkb[k] for k in chunk], pa.binary()),
            }
        )
        pq.write_table(table, f"{folder}/zone.{p + 1}.parquet", compression="zstd")
    return nx * ny


def spatialbench(venv_bin, data, scale):
    cli = os.path.join(venv_bin, "spatialbench-cli")
    for table, parts in [("trip", 16), ("building", 2)]:
        subprocess.run([cli, "-s", str(scale), "-T", table, "--parts", str(parts), "-o", data],
                       check=True, stdout=subprocess.DEVNULL)


def geoberg_tables(geoberg, data, wh):
    for table, (_, columns) in TABLES.items():
        for part in sorted(os.listdir(f"{data}/{table}")):
            subprocess.run([geoberg, "--warehouse", wh, "import", f"{data}/{table}/{part}",
                            "--table", f"bench.{table}", "--geometry-column", columns, "--srid", "4326"],
                           check=True, stdout=subprocess.DEVNULL)


def cluster(geoberg, wh):
    for table, (column, _) in TABLES.items():
        curve = column if "," in column else f"{column}, 16"
        statement = f"CREATE SPATIAL INDEX FOR bench.{table} USING hilbert({curve})"
        start = time.perf_counter()
        subprocess.run([geoberg, "--warehouse", wh, "sql", statement], check=True,
                       stdout=subprocess.DEVNULL)
        print(f"  {statement}: {time.perf_counter() - start:.1f} s", flush=True)


# ---------------------------------------------------------------------------------------------
# engines


def duckdb_connection():
    import duckdb
    import duckdb_extension_spatial  # the pinned extension, no download

    con = duckdb.connect(config={"autoinstall_known_extensions": "false"})
    path = os.path.join(os.path.dirname(duckdb_extension_spatial.__file__), "extensions",
                        "v" + duckdb.__version__, "spatial.duckdb_extension")
    con.execute(f"LOAD '{path}'")
    return con


def engine(name, data, query, runs):
    """One measured process: the query `runs` times, then one JSON line of seconds and rows."""
    if name == "duckdb":
        con = duckdb_connection()
        for t in TABLES:
            con.execute(f"CREATE VIEW {t} AS SELECT * FROM read_parquet('{data}/{t}/*.parquet')")

        def run(q):
            cursor = con.execute(q)
            names = [d[0] for d in cursor.description]
            return [dict(zip(names, row)) for row in cursor.fetchall()]
    else:
        import warnings

        warnings.simplefilter("ignore")
        import sedonadb

        sd = sedonadb.connect()
        for t in TABLES:
            sd.read_parquet(f"{data}/{t}/*.parquet").to_view(t)

        def run(q):
            return sd.sql(q).to_arrow_table().to_pylist()

    seconds, rows = [], None
    for _ in range(runs):
        start = time.perf_counter()
        rows = run(sql_for(name, query))
        seconds.append(time.perf_counter() - start)
    print(json.dumps({"seconds": seconds, "rows": rows}, default=float))


def measured(command, timeout):
    """Runs a whole process under /usr/bin/time: (stdout, peak RSS in MB) or None on timeout."""
    with tempfile.NamedTemporaryFile() as rss:
        proc = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", rss.name, *command],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return None
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(command[:3])} failed:\n{err[-3000:]}")
        return out, int(open(rss.name).read().split()[-1]) // 1024


def run_geoberg(geoberg, wh, query, runs, timeout, work):
    path = os.path.join(work, f"{query}.sql")
    with open(path, "w") as f:
        f.write(";\n".join([sql_for("geoberg", query)] * runs) + ";\n")
    result = measured([geoberg, "--warehouse", wh, "--json", "sql", "-f", path], timeout)
    if result is None:
        return None
    out, rss = result
    outputs = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    files = {}
    for scan in outputs[-1]["scans"]:
        read, total = files.get(scan["table"], (0, 0))
        files[scan["table"]] = (read + scan["files_read"], total + scan["files_total"])
    return {"seconds": [o["seconds"] for o in outputs], "rows": outputs[-1]["rows"], "rss": rss,
            "files": files}


def join_skips(geoberg, wh, query):
    """`files_skipped_by_join` and file pairs of one EXPLAIN ANALYZE run."""
    out = subprocess.run([geoberg, "--warehouse", wh, "sql", "EXPLAIN ANALYZE " + sql_for("geoberg", query)],
                         check=True, capture_output=True, text=True).stdout
    skipped = sum(int(n) for n in re.findall(r"files_skipped_by_join=(\d+)", out))
    pairs = re.findall(r"file_pairs=\d+ of \d+", out)
    return skipped, pairs


def run_python(venv_python, name, data, query, runs, timeout):
    result = measured([venv_python, __file__, "engine", name, data, query, str(runs)], timeout)
    if result is None:
        return None
    out, rss = result
    parsed = json.loads(out.strip().splitlines()[-1])
    parsed["rss"] = rss
    return parsed


def normalized(rows):
    def value(v):
        if isinstance(v, float):
            return float(f"{v:.6g}")
        return v

    return sorted(json.dumps([value(row[k]) for k in sorted(row)]) for row in rows or [])


# ---------------------------------------------------------------------------------------------


def bench(args):
    venv_bin = os.path.dirname(sys.executable)
    work = args.work or tempfile.mkdtemp(prefix="geoberg-join-bench-")
    data, wh, whc = (os.path.join(work, d) for d in ("data", "wh", "wh-clustered"))
    if not os.path.isdir(data):
        print(f"generating scale {args.scale} trips and buildings, {args.zones} zones in {data}", flush=True)
        spatialbench(venv_bin, data, args.scale)
        made = zones(os.path.join(data, "zone"), args.zones, 4)
        print(f"  {made} zones", flush=True)
    if not os.path.isdir(wh):
        start = time.perf_counter()
        geoberg_tables(args.geoberg, data, wh)
        print(f"imported into {wh}: {time.perf_counter() - start:.1f} s", flush=True)
    if not os.path.isdir(whc):
        shutil.copytree(wh, whc)
        cluster(args.geoberg, whc)

    print(f"\n{args.runs} runs per process, median seconds, peak RSS; rows compared with SedonaDB's")
    print("| query | engine | median | runs | peak RSS | rows | same as SedonaDB | files read |")
    print("|---|---|---:|---|---:|---:|---|---|")
    for query in args.queries.split(","):
        results = {
            "sedonadb": run_python(sys.executable, "sedonadb", data, query, args.runs, args.timeout),
            "duckdb": None if query in NOT_IN["duckdb"]
            else run_python(sys.executable, "duckdb", data, query, args.runs, args.timeout),
            "geoberg arrival": run_geoberg(args.geoberg, wh, query, args.runs, args.timeout, work),
            "geoberg clustered": run_geoberg(args.geoberg, whc, query, args.runs, args.timeout, work),
        }
        reference = results["sedonadb"]
        for name, r in results.items():
            if r is None:
                why = "no KNN join" if query in NOT_IN.get(name, ()) else f"did not finish in {args.timeout} s"
                print(f"| {query} | {name} | {why} | | | | | |", flush=True)
                continue
            if r is reference:
                same = "(reference)"
            elif reference is None:
                same = ""
            else:
                same = "yes" if normalized(r["rows"]) == normalized(reference["rows"]) else "**no**"
            files = ""
            if "files" in r:
                files = ", ".join(f"{t.split('.')[-1]} {a} of {b}" for t, (a, b) in sorted(r["files"].items()))
                if name == "geoberg clustered":
                    skipped, pairs = join_skips(args.geoberg, whc, query)
                    files += f"; {skipped} skipped by the join" + ("; " + "; ".join(pairs) if pairs else "")
            runs = " ".join(f"{s:.3f}" for s in r["seconds"])
            print(f"| {query} | {name} | {statistics.median(r['seconds']):.3f} s | {runs} | {r['rss']} MB "
                  f"| {len(r['rows'])} | {same} | {files} |", flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "engine":
        engine(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
        sys.exit(0)
    if len(sys.argv) > 1 and sys.argv[1] == "sql":
        print(sql_for(sys.argv[2], sys.argv[3]))
        sys.exit(0)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="mode", required=True)
    b = sub.add_parser("bench")
    b.add_argument("geoberg")
    b.add_argument("--scale", default="1")
    b.add_argument("--zones", type=int, default=100000)
    b.add_argument("--runs", type=int, default=3)
    b.add_argument("--timeout", type=int, default=300)
    b.add_argument("--queries", default=",".join(QUERIES))
    b.add_argument("--work")
    args = parser.parse_args()
    args.geoberg = os.path.realpath(args.geoberg)
    bench(args)
