"""A stand-in data set larger than the real one: `N` records made from `prepare.py`'s data.

The shared data holds 389 212 distinct real records at most (every window of one to eight
consecutive turns of a session), and embedding them takes about half an hour here, so a
million records cannot be real ones. Record `i` of the stand-in is real row `i mod R` (`R`
the real set's size), with its copy number appended to its text from the second copy on, and
its vector is that row's vector moved a little and normalized: the construction of
`reopen_scale.rs`, so that its numbers and the stores benchmark's describe the same data.
Copy 0 is the real set itself, so the stand-in's first `R` records are the real ones, in order.
The queries are the real set's.

Usage: stand_in.py --real DIR --out DIR --n N
"""

import argparse
import json
import os
import shutil
import sys

import numpy as np

DIM = 384
# Each component of a copy's vector moves by at most this much (before normalizing).
STEP = 0.02


def perturbed(block, copy):
    """`block` (rows x 384) moved for copy number `copy` and normalized; copy 0 is unmoved."""
    if copy == 0:
        return block
    phase = (copy * 7919 + np.arange(DIM, dtype=np.int64) * 104_729).astype(np.float32)
    moved = block + STEP * np.sin(phase)
    return (moved / np.linalg.norm(moved, axis=1, keepdims=True)).astype(np.float32)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--real", required=True, help="a data set written by prepare.py")
    ap.add_argument("--out", required=True)
    ap.add_argument("--n", type=int, required=True)
    args = ap.parse_args()
    if not 1 <= args.n <= 100_000_000:
        sys.exit(f"--n {args.n}: expected 1 to 100 000 000 records")
    os.makedirs(args.out, exist_ok=True)
    vec_path = os.path.join(args.out, "vectors.f32")
    if os.path.exists(vec_path) and os.path.getsize(vec_path) >= args.n * DIM * 4:
        print(f"{vec_path} already holds {args.n} vectors; nothing to do")
        return
    with open(os.path.join(args.real, "records.jsonl"), encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    real = np.fromfile(os.path.join(args.real, "vectors.f32"), dtype=np.float32)
    if real.size != len(rows) * DIM:
        sys.exit(f"{args.real}: {len(rows)} records but {real.size / DIM:g} vectors")
    real = real.reshape(len(rows), DIM)
    for name in ("queries.jsonl", "query_vectors.f32"):
        shutil.copyfile(os.path.join(args.real, name), os.path.join(args.out, name))

    tmp_records, tmp_vectors = (os.path.join(args.out, p + ".part") for p in ("records.jsonl", "vectors.f32"))
    with open(tmp_records, "w", encoding="utf-8") as rec, open(tmp_vectors, "wb") as vec:
        for start in range(0, args.n, len(rows)):
            copy = start // len(rows)
            count = min(len(rows), args.n - start)
            for i, r in enumerate(rows[:count]):
                text = r["text"] if copy == 0 else f"{r['text']} ({copy})"
                rec.write(json.dumps({"id": start + i, "text": text, "source": r["source"],
                                      "speaker": r["speaker"]}) + "\n")
            perturbed(real[:count], copy).tofile(vec)
            print(f"stand-in: {start + count}/{args.n} records", flush=True)
    os.replace(tmp_records, os.path.join(args.out, "records.jsonl"))
    os.replace(tmp_vectors, vec_path)


if __name__ == "__main__":
    main()
