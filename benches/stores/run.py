"""The stores benchmark, one command: `python3 benches/stores/run.py [--sizes 10000,100000] [--million]`.

By default: 10k and 100k records, every store, memvid-core at 10k only (`LARGEST`).

1. Prepares the data once (`prepare.py`: DialSim and LoCoMo turns, MiniLM vectors cached in
   `target/stores/data/`), with the `memorybench` package of `.cache/venv` (scripts/setup.sh,
   scripts/test-python.sh). Sizes above the real data set's (`--million`) read a stand-in
   made from it (`stand_in.py`, in `target/stores/data-stand-in/`).
2. Installs the peers (`requirements.txt`, pinned) into their own venv, `target/stores/venv`.
3. Builds `stores_engine` (the engine from Rust) and `stores-memvid` (memvid-core, a crate of its
   own in `memvid/`), and runs every store at every size, each in a process of its own
   (`worker.py` for Python stores), into `target/stores/results.jsonl`.
4. Writes the report (`report.py`): `target/stores/report.md`, the same as one HTML page
   (`target/stores/report.html`), and the plot, `docs/img/stores.png`.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
OUT = os.path.join(ROOT, "target", "stores")
DATA = os.path.join(OUT, "data")
VENV = os.path.join(OUT, "venv")
MB_PYTHON = os.path.join(ROOT, ".cache", "venv", "bin", "python")
PEER_PYTHON = os.path.join(VENV, "bin", "python")
STORES = ["memorybench-rust", "memorybench", "memvid", "lancedb", "chroma", "qdrant"]
STAND_IN = os.path.join(OUT, "data-stand-in")
MEMVID = os.path.join(HERE, "memvid")
# The largest size a store runs at by default (`--every-size` lifts the limits):
# - memvid-core loads about 20 records/s (its per-document enrichment compiles regular
#   expressions for every record: docs/stores.md), so 100k records would take it 80 minutes;
# - Qdrant's local mode held 2.5 GiB above the data at 100k (it keeps every point in Python
#   objects), so a million would need about 25 GiB beside the data, more than this machine's
#   24; its own warning says it is not meant for more than 20 000 points.
LARGEST = {"memvid": 10_000, "qdrant": 100_000}
# The size of the real data set `prepare.py` makes; larger sizes read the stand-in.
REAL_MAX = 100_000


def sh(*cmd, **kw):
    print("+", " ".join(cmd), flush=True)
    return subprocess.run(cmd, check=True, **kw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--million", action="store_true", help="also 1 000 000 records")
    ap.add_argument("--stores", default=",".join(STORES))
    ap.add_argument("--every-size", action="store_true",
                    help="run every store at every size, above its largest (LARGEST) too")
    ap.add_argument("--no-build", action="store_true", help="use the stores_engine already built")
    ap.add_argument("--data", default=DATA,
                    help="the prepared data set (default target/stores/data, made if missing)")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")] + ([1_000_000] if args.million else [])
    stores = args.stores.split(",")
    os.makedirs(OUT, exist_ok=True)

    data = args.data
    real_max = max(n for n in sizes + [REAL_MAX] if n <= REAL_MAX)
    sh(MB_PYTHON, os.path.join(HERE, "prepare.py"), "--out", data, "--max", str(real_max))
    if max(sizes) > real_max:
        sh(MB_PYTHON, os.path.join(HERE, "stand_in.py"), "--real", data, "--out", STAND_IN,
           "--n", str(max(sizes)))
    if not os.path.exists(PEER_PYTHON):
        sh(sys.executable, "-m", "venv", VENV)
    sh(PEER_PYTHON, "-m", "pip", "install", "-q", "-r", os.path.join(HERE, "requirements.txt"))
    if not args.no_build:
        sh("cargo", "build", "--release", "-p", "mb-stores-bench", "--bin", "stores_engine", cwd=ROOT)
        if "memvid" in stores:
            # From its own folder, so that cargo reads its `.cargo/config.toml` (ONNX Runtime
            # from PyPI: without it, ort's build script tries to download one and fails).
            sh("cargo", "build", "--release", cwd=MEMVID)

    results = os.path.join(OUT, "results.jsonl")
    for n in sizes:
        for store in stores:
            if n > LARGEST.get(store, n) and not args.every_size:
                print(f"{store} skipped at {n:,} records (--every-size runs it)")
                continue
            path = os.path.join(OUT, "run", f"{store}-{n}")
            shutil.rmtree(path, ignore_errors=True)
            source = data if n <= real_max else STAND_IN
            if store == "memorybench-rust":
                cmd = [os.path.join(ROOT, "target", "release", "stores_engine"), source, str(n), path]
            elif store == "memvid":
                cmd = [os.path.join(MEMVID, "target", "release", "stores-memvid"), source, str(n), path]
            else:
                python = MB_PYTHON if store == "memorybench" else PEER_PYTHON
                cmd = [python, os.path.join(HERE, "worker.py"), store, source, str(n), path]
            print("+", " ".join(cmd), flush=True)
            started = time.time()
            run = subprocess.run(cmd, capture_output=True, text=True)
            if run.returncode != 0:
                print(run.stderr[-3000:], file=sys.stderr)
                row = {"store": store, "n": n, "error": run.stderr.strip().splitlines()[-1:]}
            else:
                row = json.loads(run.stdout.strip().splitlines()[-1])
            row["key"] = store
            row["data"] = "real" if n <= real_max else "stand-in"
            row["wall_s"] = time.time() - started
            row["at"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
            with open(results, "a", encoding="utf-8") as f:
                f.write(json.dumps(row) + "\n")
            print(json.dumps(row), flush=True)
            shutil.rmtree(path, ignore_errors=True)
    sh(PEER_PYTHON, os.path.join(HERE, "report.py"), results)


if __name__ == "__main__":
    main()
