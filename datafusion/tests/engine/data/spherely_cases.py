#!/usr/bin/env python3
"""Writes spherely_cases.json: geography rows and query shapes (the generators of
geography/oracle/check.py, fixed seed) with spherely's (S2's) intersects / contains / within /
covers / distance for every (row, query) pair. The engine test `geography::spherely_cases_through_sql`
replays them through SQL.

usage: python3 spherely_cases.py > spherely_cases.json   (needs `pip install spherely`)
"""
import json
import math
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../../../geography/oracle"))
import check  # noqa: E402  (the generators)
import spherely  # noqa: E402

ROWS, QUERIES, SEED = 60, 10, 16


def main():
    check_rng = random.Random(SEED)

    def shapes(n, big):
        out = []
        while len(out) < n:
            w = check.shape(check_rng, big)
            g = check.spherely_geog(w)
            if g is not None and not spherely.is_empty(g):
                out.append((w, g))
        return out

    rows = shapes(ROWS, big=False)
    queries = shapes(QUERIES, big=True)
    # Point queries, some near the antimeridian and the poles.
    for _ in range(4):
        w = check.wkb_point(check.center(check_rng))
        queries.append((w, spherely.from_wkb(w)))
    # Points inside polygon rows (their centroids on the sphere), for contains and covers.
    polygons = [g for w, g in rows if w[1] == 3]
    for g in polygons[:6]:
        c = spherely.centroid(g)
        w = check.wkb_point((spherely.get_x(c), spherely.get_y(c)))
        queries.append((w, spherely.from_wkb(w)))
    row_g = [g for _, g in rows]
    cases = []
    for qw, qg in queries:
        hits = {
            name: [i + 1 for i, v in enumerate(f(row_g, qg)) if v]
            for name, f in [
                ("intersects", spherely.intersects),
                ("contains", spherely.contains),
                ("within", spherely.within),
                ("covers", spherely.covers),
            ]
        }
        d = [float(x) for x in spherely.distance(row_g, qg)]
        cases.append({"query": qw.hex(), **hits, "distance": [None if math.isinf(x) else x for x in d]})
    json.dump(
        {
            "spherely": spherely.__version__,
            "seed": SEED,
            "rows": [w.hex() for w, _ in rows],
            "cases": cases,
        },
        sys.stdout,
        indent=0,
    )
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
