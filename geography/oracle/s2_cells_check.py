#!/usr/bin/env python3
"""Checks `Geography::s2_cell_ids` (ST_S2CellIds) against S2 itself.

Points: the id of the cell holding the point at each level, from s2sphere (the Python port of
S2's cell hierarchy): must be equal. Lines and polygons: every S2 cell of the level that
intersects the value, where the candidates are s2sphere's covering of a cap around the value
at that level and "intersects" is spherely's (s2geography's) exact predicate between the cell
polygon and the value: the two sets must be equal. Random cases with a fixed seed, near the
antimeridian and the poles too.

usage: s2_cells_check.py [--cases N] [--seed S] [--cargo CARGO]
"""
import argparse
import json
import math
import random
import subprocess
import sys

import s2sphere as s2
import spherely


def point_wkt(lon, lat):
    return f"POINT ({lon!r} {lat!r})"


def destination(lon, lat, bearing, dist):
    """The point `dist` radians from (lon, lat) along `bearing` radians (spherical)."""
    p1, l1 = math.radians(lat), math.radians(lon)
    p2 = math.asin(math.sin(p1) * math.cos(dist) + math.cos(p1) * math.sin(dist) * math.cos(bearing))
    l2 = l1 + math.atan2(math.sin(bearing) * math.sin(dist) * math.cos(p1),
                         math.cos(dist) - math.sin(p1) * math.sin(p2))
    lon2 = (math.degrees(l2) + 540.0) % 360.0 - 180.0
    return lon2, math.degrees(p2)


def random_centre(rng):
    kind = rng.random()
    if kind < 0.15:
        return rng.choice([-179.5, 179.5]) + rng.uniform(-0.4, 0.4), rng.uniform(-60, 60)
    if kind < 0.25:
        return rng.uniform(-180, 180), rng.choice([-1, 1]) * rng.uniform(85, 89.5)
    return rng.uniform(-180, 180), rng.uniform(-80, 80)


def random_shape(rng):
    """(WKT, centre, radius in radians) of a line or a polygon (a star ring)."""
    lon, lat = random_centre(rng)
    radius = math.radians(rng.uniform(0.05, 3.0))
    n = rng.randint(3, 9)
    if rng.random() < 0.4:
        pts = [destination(lon, lat, rng.uniform(0, 2 * math.pi), radius * rng.uniform(0.1, 1))
               for _ in range(n)]
        return "LINESTRING (" + ", ".join(f"{x!r} {y!r}" for x, y in pts) + ")", (lon, lat), radius
    # One vertex per sector, so no gap between bearings reaches pi: a simple (star) ring.
    bearings = [2 * math.pi * (k + rng.uniform(0.1, 0.9)) / n for k in range(n)]
    ring = [destination(lon, lat, b, radius * rng.uniform(0.3, 1)) for b in bearings]
    ring.append(ring[0])
    return "POLYGON ((" + ", ".join(f"{x!r} {y!r}" for x, y in ring) + "))", (lon, lat), radius


def cell_polygon(cell_id):
    cell = s2.Cell(cell_id)
    vs = [s2.LatLng.from_point(cell.get_vertex(k)) for k in range(4)]
    ring = [(v.lng().degrees, v.lat().degrees) for v in vs] + [(vs[0].lng().degrees, vs[0].lat().degrees)]
    return spherely.from_wkt("POLYGON ((" + ", ".join(f"{x!r} {y!r}" for x, y in ring) + "))")


def expected_cover(wkt, centre, radius, level):
    shape = spherely.from_wkt(wkt)
    axis = s2.LatLng.from_degrees(centre[1], centre[0]).to_point()
    # Every vertex is within `radius`; edges stay inside the cap of that radius; pad it.
    cap = s2.Cap.from_axis_angle(axis, s2.Angle.from_radians(radius * 1.2 + 1e-3))
    coverer = s2.RegionCoverer()
    coverer.min_level = level
    coverer.max_level = level
    coverer.max_cells = 1 << 30
    cells = set()
    for c in coverer.get_covering(cap):
        # The coverer may return coarser cells only when max_cells binds; it does not here.
        assert c.level() == level, (c.level(), level)
        if spherely.intersects(cell_polygon(c), shape):
            cells.add(c.id())
    return cells


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--seed", type=int, default=20261207)
    ap.add_argument("--cargo", default="cargo")
    args = ap.parse_args()
    rng = random.Random(args.seed)

    cases, expected = [], []
    for _ in range(args.cases):
        lon, lat = random_centre(rng)
        level = rng.choice([0, 1, 4, 10, 16, 24, 30])
        cell = s2.CellId.from_lat_lng(s2.LatLng.from_degrees(lat, lon)).parent(level)
        cases.append({"wkt": point_wkt(lon, lat), "level": level})
        expected.append({cell.id()})
    for _ in range(args.cases // 3):
        wkt, centre, radius = random_shape(rng)
        # Levels where a few degrees give tens to hundreds of cells.
        level = rng.choice([3, 5, 7, 8])
        cases.append({"wkt": wkt, "level": level})
        expected.append(expected_cover(wkt, centre, radius, level))

    payload = {"cases": [{"wkb": spherely.to_wkb(spherely.from_wkt(c["wkt"])).hex(),
                          "level": c["level"]} for c in cases]}
    run = subprocess.run(
        [args.cargo, "run", "-q", "-p", "geoberg-geography", "--example", "s2_cells"],
        input=json.dumps(payload), capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"the s2_cells example failed:\n{run.stderr}")
    got = [set(int(x) for x in cells) for cells in json.loads(run.stdout)["cells"]]

    bad = [(c, e, g) for c, e, g in zip(cases, expected, got) if e != g]
    for c, e, g in bad[:5]:
        print(f"MISMATCH level {c['level']} {c['wkt'][:120]}\n  S2: {len(e)} cells, missing "
              f"{sorted(e - g)[:5]}, extra {sorted(g - e)[:5]}")
    cells = sum(len(e) for e in expected)
    print(f"s2 cells: {len(cases)} cases ({cells} cells), {len(bad)} mismatches")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
