#!/usr/bin/env python3
"""Checks rows read back through a geoberg table scan against spherely (s2geography).

Generates random geography rows (check.py's shapes: points, lines, polygons near the
antimeridian, the poles, tiny and large) and lon/lat windows (some across the antimeridian,
`min_x > max_x`), runs the `geography_scan_oracle` example of geoberg-table, which appends the
rows to a geography table (several files, small row groups) and runs an exact window scan per
window before and after CREATE SPATIAL INDEX, and compares every scan's rows with spherely's
intersects against the window polygon (its corners joined by great-circle edges, what a box
window means on a geography column). A row that the file bounds, row-group statistics or
pruning wrongly skip, or that the refinement gets wrong, is a mismatch.

Windows stay narrower than 180 degrees and off the poles, so that the corner polygon is the
whole window; exact-boundary cases are not generated (see check.py).

usage: table_check.py [--rows N] [--windows N] [--seed S] [--cargo CARGO]
"""
import argparse
import json
import os
import random
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check import shape, spherely_geog  # noqa: E402

import spherely  # noqa: E402


def window(rng):
    zone = rng.random()
    if zone < 0.3:  # across or beside the antimeridian
        x0 = rng.uniform(150.0, 180.0)
    elif zone < 0.45:  # near a pole
        x0 = rng.uniform(-180.0, 180.0)
    else:
        x0 = rng.uniform(-180.0, 180.0)
    w = rng.choice([rng.uniform(1e-4, 0.1), rng.uniform(0.5, 20.0), rng.uniform(20.0, 150.0)])
    h = rng.choice([rng.uniform(1e-4, 0.1), rng.uniform(0.5, 20.0), rng.uniform(20.0, 60.0)])
    if zone >= 0.3 and zone < 0.45:
        y0 = rng.choice([-1, 1]) * rng.uniform(60.0, 89.0)
        y0 = min(y0, 89.0 - h) if y0 > 0 else y0
    else:
        y0 = rng.uniform(-80.0, 80.0)
    y1 = min(y0 + h, 89.5)
    x1 = x0 + w
    if x1 > 180.0:
        x1 -= 360.0
    return [x0, max(y0, -89.5), x1, y1]


def window_wkb(w):
    x0, y0, x1, y1 = w
    ring = [(x0, y0), (x1, y0), (x1, y1), (x0, y1), (x0, y0)]
    return struct.pack("<BIII", 1, 3, 1, len(ring)) + b"".join(struct.pack("<dd", *c) for c in ring)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=3000)
    ap.add_argument("--windows", type=int, default=60)
    ap.add_argument("--seed", type=int, default=20261)
    ap.add_argument("--cargo", default="cargo")
    args = ap.parse_args()
    rng = random.Random(args.seed)

    rows = []
    while len(rows) < args.rows:
        w = shape(rng)
        g = spherely_geog(w)
        if g is not None:
            rows.append((w, g))
    windows = [window(rng) for _ in range(args.windows)]
    cases = {"rows": [w.hex() for w, _ in rows], "windows": windows}
    run = subprocess.run(
        [args.cargo, "run", "-q", "-p", "geoberg-table", "--example", "geography_scan_oracle"],
        input=json.dumps(cases).encode(),
        capture_output=True,
    )
    if run.returncode != 0:
        sys.stderr.write(run.stderr.decode())
        sys.exit("the geography_scan_oracle example failed")
    ours = json.loads(run.stdout)

    row_g = [g for _, g in rows]
    mismatches = []
    matched = 0
    for wi, w in enumerate(windows):
        q = spherely.from_wkb(window_wkb(w))
        theirs = {i for i, hit in enumerate(spherely.intersects(row_g, q)) if hit}
        matched += len(theirs)
        for layout in ("appended", "indexed"):
            got = set(ours[layout][wi])
            for i in sorted(theirs - got):
                mismatches.append(f"{layout} window {w}: scan misses row {i} {spherely.to_wkt(row_g[i])}")
            for i in sorted(got - theirs):
                mismatches.append(f"{layout} window {w}: scan returns row {i} {spherely.to_wkt(row_g[i])}, which S2 says is outside")
    print(f"spherely {spherely.__version__}: {len(rows)} rows in a geoberg table x {len(windows)} windows, "
          f"{matched} matching (row, window) pairs, scanned before and after CREATE SPATIAL INDEX; "
          f"{len(mismatches)} mismatches")
    for m in mismatches[:20]:
        print("  " + m)
    if mismatches:
        sys.exit(1)


if __name__ == "__main__":
    main()
