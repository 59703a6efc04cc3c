#!/usr/bin/env python3
"""Checks geoberg-geography's kernels and geostats' geography bounds against spherely (s2geography).

Generates random geography rows and query shapes with a fixed seed (points, lines, polygons with
and without holes, either ring orientation; near the antimeridian, over the poles, tiny and
world-sized), computes spherely's intersects / contains / within / covers / distance for every
(row, query) pair and its area / length / perimeter of every row, runs the `oracle` example of the geography crate on the same WKB, and fails on
any mismatch, printing the first ones. It also checks that every point query spherely finds in a
row lies inside that row's bounds.

Exact-boundary cases (a point exactly on an edge) are not generated: S2's polygon model is
semi-open there and geoberg's is closed (documented in the crate).

usage: check.py [--rows N] [--queries N] [--seed S] [--cargo CARGO]
"""
import argparse
import json
import math
import random
import struct
import subprocess
import sys

import spherely

R = spherely.EARTH_RADIUS_METERS


def destination(lon, lat, bearing, dist):
    """The point `dist` radians from (lon, lat) along `bearing` radians (spherical)."""
    la, lo = math.radians(lat), math.radians(lon)
    la2 = math.asin(math.sin(la) * math.cos(dist) + math.cos(la) * math.sin(dist) * math.cos(bearing))
    lo2 = lo + math.atan2(
        math.sin(bearing) * math.sin(dist) * math.cos(la),
        math.cos(dist) - math.sin(la) * math.sin(la2),
    )
    lon2 = (math.degrees(lo2) + 180.0) % 360.0 - 180.0
    return (lon2, math.degrees(la2))


def wkb_point(p):
    return struct.pack("<BIdd", 1, 1, *p)


def wkb_coords(cs):
    return struct.pack("<I", len(cs)) + b"".join(struct.pack("<dd", *c) for c in cs)


def wkb_line(cs):
    return struct.pack("<BI", 1, 2) + wkb_coords(cs)


def wkb_polygon(rings):
    return struct.pack("<BII", 1, 3, len(rings)) + b"".join(wkb_coords(r) for r in rings)


def wkb_multipoint(ps):
    return struct.pack("<BII", 1, 4, len(ps)) + b"".join(wkb_point(p) for p in ps)


def center(rng):
    zone = rng.random()
    if zone < 0.25:  # near the antimeridian
        lon = rng.choice([-1, 1]) * rng.uniform(170.0, 180.0)
        return (lon, rng.uniform(-60, 60))
    if zone < 0.4:  # near a pole
        return (rng.uniform(-180, 180), rng.choice([-1, 1]) * rng.uniform(75.0, 89.9))
    z = rng.uniform(-1, 1)
    return (rng.uniform(-180, 180), math.degrees(math.asin(z)))


def size(rng, big):
    r = rng.random()
    if big and r < 0.3:
        return math.radians(rng.uniform(40, 85))  # world-sized
    if r < 0.25:
        return math.radians(rng.uniform(1e-5, 1e-3))  # tiny
    if r < 0.75:
        return math.radians(rng.uniform(0.1, 5))
    return math.radians(rng.uniform(5, 30))


def ring(rng, c, radius, n):
    start = rng.uniform(0, 2 * math.pi)
    pts = [
        destination(c[0], c[1], start + 2 * math.pi * k / n, radius * rng.uniform(0.6, 1.0))
        for k in range(n)
    ]
    if rng.random() < 0.5:
        pts.reverse()  # orientation must not matter
    return pts + [pts[0]]


def shape(rng, big=False):
    kind = rng.random()
    c = center(rng)
    radius = size(rng, big)
    if kind < 0.35:
        if rng.random() < 0.15:
            return wkb_multipoint([destination(c[0], c[1], rng.uniform(0, 7), radius * rng.random()) for _ in range(3)])
        return wkb_point(c)
    if kind < 0.65:
        pts = [c]
        for _ in range(rng.randint(1, 5)):
            pts.append(destination(pts[-1][0], pts[-1][1], rng.uniform(0, 2 * math.pi), radius))
        return wkb_line(pts)
    rings = [ring(rng, c, radius, rng.randint(4, 12))]
    if rng.random() < 0.25:
        rings.append(ring(rng, c, radius * 0.3, rng.randint(3, 8)))
    return wkb_polygon(rings)


def spherely_geog(wkb):
    try:
        g = spherely.from_wkb(wkb)
        spherely.is_empty(g)
        return g
    except Exception:
        return None


def holds(box, lon, lat, tol=1e-9):
    minx, miny, maxx, maxy = box
    if not (miny - tol <= lat <= maxy + tol):
        return False
    if abs(lat) >= 90 - tol:
        return True
    hi = maxx if minx <= maxx else maxx + 360
    return any(minx - tol <= lon + s <= hi + tol for s in (-360, 0, 360))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--seed", type=int, default=20260)
    ap.add_argument("--cargo", default="cargo")
    args = ap.parse_args()
    rng = random.Random(args.seed)

    def valid_shapes(n, big, points_too=0):
        out = []
        while len(out) < n:
            w = shape(rng, big)
            g = spherely_geog(w)
            if g is not None:
                out.append((w, g))
        fixed = [(0.0, 90.0), (0.0, -90.0), (180.0, 0.0), (-180.0, 45.0)] if points_too else []
        for c in fixed + [center(rng) for _ in range(points_too)]:
            out.append((wkb_point(c), spherely.from_wkb(wkb_point(c))))
        return out

    rows = valid_shapes(args.rows, big=False)
    queries = valid_shapes(args.queries, big=True, points_too=args.queries)
    cases = {"rows": [w.hex() for w, _ in rows], "queries": [w.hex() for w, _ in queries]}
    run = subprocess.run(
        [args.cargo, "run", "-q", "-p", "geoberg-geography", "--example", "oracle"],
        input=json.dumps(cases).encode(),
        capture_output=True,
    )
    if run.returncode != 0:
        sys.stderr.write(run.stderr.decode())
        sys.exit("the oracle example failed")
    ours = json.loads(run.stdout)

    row_g = [g for _, g in rows]
    mismatches = []
    checked = 0
    positives = {"intersects": 0, "contains": 0, "within": 0, "covers": 0, "bounds": 0}
    for qi, (qw, qg) in enumerate(queries):
        theirs = {
            "intersects": spherely.intersects(row_g, qg),
            "contains": spherely.contains(row_g, qg),
            "within": spherely.within(row_g, qg),
            "covers": spherely.covers(row_g, qg),
        }
        dist = spherely.distance(row_g, qg)
        res = ours["results"][qi]
        for i in range(len(rows)):
            for name, values in theirs.items():
                checked += 1
                positives[name] += bool(values[i])
                if bool(values[i]) != res[name][i]:
                    mismatches.append(f"{name}: row {spherely.to_wkt(row_g[i])} query {spherely.to_wkt(qg)}: spherely {bool(values[i])}, geoberg {res[name][i]}")
            d_ours = res["distance"][i]
            d_ours = math.inf if d_ours == "inf" else d_ours
            d = float(dist[i])
            checked += 1
            if not (d == d_ours or abs(d - d_ours) <= 1e-3 + 1e-9 * abs(d)):
                mismatches.append(f"distance: row {spherely.to_wkt(row_g[i])} query {spherely.to_wkt(qg)}: spherely {d} m, geoberg {d_ours} m")
            # Bounds: a point query that S2 finds in the row lies in the row's box.
            if qw[1] == 1 and bool(theirs["intersects"][i]):
                lon, lat = struct.unpack("<dd", qw[5:21])
                box = ours["bbox"][i]
                checked += 1
                positives["bounds"] += 1
                if box is None or not holds(box, lon, lat):
                    mismatches.append(f"bounds: row {spherely.to_wkt(row_g[i])} box {box} misses POINT ({lon} {lat}) that S2 finds in it")
    # Measures of every row (m², m): spherely's are S2's (S2Polygon::GetArea, S1ChordAngle
    # lengths) on the same sphere.
    for name, fn in (("area", spherely.area), ("length", spherely.length), ("perimeter", spherely.perimeter)):
        theirs = fn(row_g)
        for i in range(len(rows)):
            checked += 1
            t, o = float(theirs[i]), ours[name][i]
            if not abs(t - o) <= 1e-3 + 1e-9 * abs(t):
                mismatches.append(f"{name}: row {spherely.to_wkt(row_g[i])}: spherely {t}, geoberg {o}")
    print(f"spherely {spherely.__version__} (s2geography {spherely.__s2geography_version__}): "
          f"{len(rows)} rows x {len(queries)} queries, {checked} comparisons, {len(mismatches)} mismatches; "
          f"true per predicate: {positives}")
    for m in mismatches[:20]:
        print("  " + m)
    if mismatches:
        sys.exit(1)


if __name__ == "__main__":
    main()
