"""Deletion vectors across implementations.

1. pyiceberg 0.12 (`pyiceberg.table.puffin.PuffinFile` and
   `pyiceberg.table.deletion_vector.deletion_vectors_from_puffin_file`) reads every Puffin file
   the `interop` example writes; the positions, blob metadata and offsets must be ours.
2. CRoaring (through pyroaring) serializes the same positions, bucket by bucket after
   `run_optimize`, to exactly the bitmap bytes inside our blobs.
3. We read Puffin files whose bitmaps CRoaring serialized (framed here per the spec), with and
   without run containers, including the empty buckets Iceberg Java writes for gaps.

Usage: check.py <interop binary> <work dir>
"""

import json
import struct
import subprocess
import sys
import zlib
from pathlib import Path

from pyiceberg.table.deletion_vector import deletion_vectors_from_puffin_file
from pyiceberg.table.puffin import PuffinFile
from pyroaring import BitMap

DV_MAGIC = bytes([0xD1, 0xD3, 0x39, 0x64])
POS_FIELD_ID = 2147483645
checks = {"passed": 0, "failed": 0}


def check(ok, what):
    if ok:
        checks["passed"] += 1
    else:
        checks["failed"] += 1
        print(f"FAILED: {what}")


def croaring_portable(positions, optimize):
    """The portable 64-bit serialization, each 32-bit bucket serialized by CRoaring."""
    buckets = {}
    for p in positions:
        buckets.setdefault(p >> 32, []).append(p & 0xFFFFFFFF)
    out = struct.pack("<Q", len(buckets))
    for key in sorted(buckets):
        bm = BitMap(buckets[key])
        if optimize:
            bm.run_optimize()
        out += struct.pack("<I", key) + bm.serialize()
    return out


def frame(bitmap):
    data = DV_MAGIC + bitmap
    return struct.pack(">I", len(data)) + data + struct.pack(">I", zlib.crc32(data))


def puffin(blobs):
    """A Puffin file holding deletion-vector blobs: [(data file, cardinality, blob bytes)]."""
    body, meta, offset = b"", [], 4
    for data_file, cardinality, blob in blobs:
        meta.append({
            "type": "deletion-vector-v1", "fields": [POS_FIELD_ID], "snapshot-id": -1,
            "sequence-number": -1, "offset": offset, "length": len(blob),
            "properties": {"referenced-data-file": data_file, "cardinality": str(cardinality)},
        })
        body += blob
        offset += len(blob)
    payload = json.dumps({"blobs": meta, "properties": {"created-by": "check.py"}}).encode()
    return b"PFA1" + body + b"PFA1" + payload + struct.pack("<i", len(payload)) + bytes(4) + b"PFA1"


def pyiceberg_reads_ours(binary, work):
    subprocess.run([binary, "write", str(work)], check=True)
    expected = json.loads((work / "expected.json").read_text())
    for f in expected["files"]:
        raw = (work / f["file"]).read_bytes()
        name = f["file"]
        check(len(raw) == f["file_size_in_bytes"], f"{name}: file size")
        check(raw[-8:-4] == bytes(4), f"{name}: footer flags are zero (uncompressed)")
        pf = PuffinFile(raw)
        blobs = pf.footer.blobs
        check(len(blobs) == len(f["vectors"]), f"{name}: blob count")
        for blob, want in zip(blobs, f["vectors"]):
            check(blob.type == "deletion-vector-v1", f"{name}: blob type")
            check(blob.fields == [POS_FIELD_ID], f"{name}: fields {blob.fields}")
            check((blob.snapshot_id, blob.sequence_number) == (-1, -1), f"{name}: ids")
            check(blob.compression_codec is None, f"{name}: uncompressed blob")
            check(blob.offset == want["content_offset"], f"{name}: offset")
            check(blob.length == want["content_size_in_bytes"], f"{name}: length")
            check(blob.properties["referenced-data-file"] == want["referenced_data_file"], f"{name}: data file")
            check(blob.properties["cardinality"] == str(len(want["positions"])), f"{name}: cardinality")
            payload = pf.get_blob_payload(blob)
            check(payload[4:8] == DV_MAGIC, f"{name}: DV magic")
            check(struct.unpack(">I", payload[-4:])[0] == zlib.crc32(payload[4:-4]), f"{name}: CRC-32")
            mine = payload[8:-4]
            check(mine == croaring_portable(want["positions"], True),
                  f"{name}: CRoaring's run-optimized bytes differ from ours")
        dvs = deletion_vectors_from_puffin_file(pf)
        for dv, want in zip(dvs, f["vectors"]):
            check(dv.referenced_data_file == want["referenced_data_file"], f"{name}: dv data file")
            got = dv.to_vector().to_pylist()
            check(got == want["positions"],
                  f"{name}: pyiceberg read {len(got)} positions, expected {len(want['positions'])}")
    return len(expected["files"])


def we_read_croaring(binary, work):
    sets = {
        "empty": [],
        "alternating": list(range(1, 200, 2)),
        "dense": list(range(10, 70_000)),
        "buckets": [3, (1 << 32) + 1, (5 << 32) + 9, (5 << 32) + 10] + list(range((2 << 32), (2 << 32) + 5000)),
    }
    n = 0
    for optimize in (False, True):
        blobs = [(f"data/{k}.parquet", len(v), frame(croaring_portable(v, optimize))) for k, v in sets.items()]
        # Iceberg Java writes an empty bucket for every key below the largest: key 0 and 1 empty here.
        gap = [(6 << 32) + 1]
        bm = BitMap(); bm2 = BitMap([1])
        java_style = struct.pack("<Q", 7) + b"".join(
            struct.pack("<I", k) + (bm2 if k == 6 else bm).serialize() for k in range(7))
        blobs.append(("data/java-gaps.parquet", 1, frame(java_style)))
        path = work / f"croaring-{optimize}.puffin"
        path.write_bytes(puffin(blobs))
        out = json.loads(subprocess.run([binary, "read", str(path)], check=True, capture_output=True).stdout)
        wanted = [sorted(v) for v in sets.values()] + [gap]
        got = [v["positions"] for v in out["vectors"]]
        check(got == wanted, f"we read CRoaring's bitmaps (run containers: {optimize}): "
              f"{[len(g) for g in got]} positions, expected {[len(w) for w in wanted]}")
        check(out["by_range"] == wanted, f"we read CRoaring's bitmaps by range (run containers: {optimize})")
        check([v["referenced_data_file"] for v in out["vectors"]] == [b[0] for b in blobs], "data files")
        n += 1
    # pyiceberg 0.12 cannot read an empty vector (pyarrow: "cannot construct ChunkedArray from
    # empty vector and omitted type"), which is why our writer refuses to write one.
    empty = PuffinFile(puffin([("data/empty.parquet", 0, frame(croaring_portable([], True)))]))
    try:
        deletion_vectors_from_puffin_file(empty)[0].to_vector()
        check(False, "pyiceberg 0.12 now reads empty deletion vectors: the writer may allow them")
    except Exception as e:  # noqa: BLE001 - recording the reader's own error
        check("ChunkedArray" in str(e), f"pyiceberg's error on an empty vector: {e}")
    # A corrupt CRC must be refused.
    blob = bytearray(frame(croaring_portable([1, 2, 3], True)))
    blob[-1] ^= 1
    path = work / "bad-crc.puffin"
    path.write_bytes(puffin([("data/x.parquet", 3, bytes(blob))]))
    r = subprocess.run([binary, "read", str(path)], capture_output=True, text=True)
    check(r.returncode != 0 and "CRC-32 mismatch" in r.stderr, f"a bad CRC is refused: {r.stderr.strip()}")
    return n


def main():
    binary, work = sys.argv[1], Path(sys.argv[2])
    files = pyiceberg_reads_ours(binary, work)
    print(f"pyiceberg 0.12 read {files} Puffin files of ours; CRoaring agrees byte for byte")
    we_read_croaring(binary, work)
    print("we read Puffin files of CRoaring-serialized bitmaps")
    print(f"{checks['passed']} passed, {checks['failed']} failed")
    sys.exit(1 if checks["failed"] else 0)


if __name__ == "__main__":
    main()
