#!/usr/bin/env python3
"""`mb-harness serve`'s API on a large runs directory: how long the page waits for each view.

    cargo build --release -p mb-harness && .cache/venv/bin/python benches/serve_api.py

Makes one real off-policy run of bm25_message on the built-in sample (offline), then a runs
directory of 1 000 runs (100 systems x 10 runs: copies of that run under other system names
and stamps) and one run of 10 000 items (its predictions, evaluation details and resume log
repeated with new test_idx). Starts the server on it and times each API call the page makes
(median of 5, after one warm-up call; the first call of an item view loads the set, timed
apart). Prints one line per call.
"""

import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HARNESS = ROOT / "target" / "release" / "mb-harness"
RUN = "off-policy/results/domain/Sample/{system}/start_at_2026-01-01-00-00-{n:02d}"


def make_runs(top: Path) -> tuple[str, str]:
    """The runs directory: 1 000 copies of a real run, and one run of 10 000 items."""
    subprocess.run(
        [str(HARNESS), "off-policy", "--output-dir", str(top / "made"), "--store", str(top / "store")],
        check=True, capture_output=True,
    )
    made = next((top / "made").glob("off-policy/results/domain/Sample/bm25_message/start_at_*"))
    runs = top / "runs"
    for system in range(100):
        for n in range(10):
            target = runs / RUN.format(system=f"system_{system:03d}", n=n)
            shutil.copytree(made, target)
            config = json.loads((target / "run_config.json").read_text())
            config["memory_system"] = f"system_{system:03d}"
            (target / "run_config.json").write_text(json.dumps(config))
    big = runs / RUN.format(system="bm25_message", n=59)
    shutil.copytree(made, big)
    for name in ["predict.json", "evaluate_details.json"]:
        rows = json.loads((big / name).read_text())
        many = [dict(row, test_idx=row["test_idx"] + 1000 * i) for i in range(1000) for row in rows]
        (big / name).write_text(json.dumps(many))
    lines = (big / "predict.partial.jsonl").read_text().splitlines()
    out = []
    for i in range(1000):
        for line in lines:
            entry = json.loads(line)
            entry["prediction"]["test_idx"] += 1000 * i
            out.append(json.dumps(entry))
    (big / "predict.partial.jsonl").write_text("\n".join(out) + "\n")
    return RUN.format(system="system_000", n=0), RUN.format(system="bm25_message", n=59)


def timed(base: str, path: str, times: int = 5) -> tuple[float, int]:
    """Median seconds of GET `path` (after one warm-up), and the reply's size."""
    def once() -> tuple[float, int]:
        started = time.perf_counter()
        with urllib.request.urlopen(base + path, timeout=600) as reply:
            size = len(reply.read())
        return time.perf_counter() - started, size
    once()
    samples = [once() for _ in range(times)]
    return statistics.median(s for s, _ in samples), samples[0][1]


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        top = Path(tmp)
        small, big = make_runs(top)
        server = subprocess.Popen(
            [str(HARNESS), "serve", "--runs", str(top / "runs"), "--port", "0"],
            stderr=subprocess.PIPE, text=True,
        )
        try:
            line = server.stderr.readline()
            base = line.strip().split("serving ")[1].rstrip("/")
            q = urllib.parse.quote
            first = time.perf_counter()
            with urllib.request.urlopen(f"{base}/api/run/item?run={q(big)}&index=0", timeout=600) as r:
                r.read()
            print(f"first item view of a 10 000-item run (parses its files, loads the set): "
                  f"{(time.perf_counter() - first) * 1000:.0f} ms")
            for label, path in [
                ("runs list, 1 001 runs", "/api/runs"),
                ("one run's detail", f"/api/run?run={q(small)}"),
                ("items, first page of 100 of 10 000", f"/api/run/items?run={q(big)}&limit=100"),
                ("items, page at 9 900 of 10 000", f"/api/run/items?run={q(big)}&offset=9900&limit=100"),
                ("one item of 10 000 (cached)", f"/api/run/item?run={q(big)}&index=9999"),
                ("report, 1 001 runs in 2 groups", "/api/report"),
                ("choices", "/api/choices"),
            ]:
                seconds, size = timed(base, path)
                print(f"{label}: {seconds * 1000:.1f} ms ({size / 1024:.0f} KiB)")
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    sys.exit(main())
