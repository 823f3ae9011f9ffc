#!/usr/bin/env python3
"""The benchmark API's speed: the `memorybench` package's `evaluate` + `summary_results` against
upstream's own `memorybench.py`, on the same predictions, in one run.

    .cache/venv/bin/python benches/benchmark_api.py

Data: LoCoMo's eight dev conversations and LexEval-QA from ../shared/data, imported by
`target/release/mb-harness import`; every row of both splits answered (the differential's
answers, py/tests/test_benchmark_upstream.py). Upstream runs in the differential venv
(`.cache/upstream-venv`, scripts/upstream/benchmark_api.py); its time is measured inside that
process around each call, without the interpreter's start and imports, and so is ours.
Prints seconds per dataset for each side and their ratio. Needs `bash scripts/setup.sh` and
`cargo build --release -p mb-harness`.
"""

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
sys.path.insert(0, str(ROOT / "py" / "tests"))

import memorybench as mb  # noqa: E402
from test_benchmark_upstream import calls_for  # noqa: E402

def upstream_seconds(data, calls):
    """Upstream's evaluate + summary per call, timed in its own process."""
    script = f"""
import contextlib, copy, json, os, sys, tempfile, time
from pathlib import Path
sys.argv = ["benchmark_api.py"]
api = {{}}
exec(open({str(ROOT / 'scripts/upstream/benchmark_api.py')!r}).read().split("def main")[0], api)
data = Path({str(data)!r}); upstream = Path({str(SHARED / 'upstream/MemoryBench')!r})
api["write_card"](data)
os.environ["MEMORY_BENCH_PATH"] = str(data); os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ["HF_DATASETS_CACHE"] = tempfile.mkdtemp()
sys.path.insert(0, str(upstream))
import memorybench
statistics = str(upstream / "configs" / "final_evaluate_summary_wo_details.json")
calls = json.load(sys.stdin)
out = []
with contextlib.redirect_stdout(sys.stderr):
    for call in calls:
        memorybench.load_memory_bench("single", call["name"], eval_mode=True)  # warm the HF cache
        predicts = copy.deepcopy(call["predicts"])
        started = time.perf_counter()
        details = memorybench.evaluate("single", call["name"], predicts)
        memorybench.summary_results("single", call["name"], predicts, details, min_max_config_file=statistics)
        out.append(time.perf_counter() - started)
print(json.dumps(out))
"""
    done = subprocess.run(
        [str(ROOT / ".cache/upstream-venv/bin/python"), "-c", script],
        input=json.dumps(calls), capture_output=True, text=True, check=True,
    )
    return json.loads(done.stdout)


def our_seconds(data, calls):
    out = []
    for call in calls:
        mb.load_memory_bench("single", call["name"], data=data)
        predicts = [dict(p) for p in call["predicts"]]
        started = time.perf_counter()
        details = mb.evaluate("single", call["name"], predicts, data=data)
        mb.summary_results("single", call["name"], predicts, details)
        out.append(time.perf_counter() - started)
    return out


def main():
    data = Path(tempfile.mkdtemp(prefix="memorybench-data-"))
    subprocess.run(
        [ROOT / "target/release/mb-harness", "import", "--out", data,
         "--locomo", SHARED / "data/locomo/locomo10-dev.json",
         "--lexeval-qa", SHARED / "data/lexeval/5_4.json"],
        check=True, capture_output=True,
    )
    calls = calls_for(data)
    theirs = upstream_seconds(data, calls)
    ours = our_seconds(data, calls)
    print("| dataset | answers | upstream s | memorybench s | upstream / memorybench |")
    print("| --- | --- | --- | --- | --- |")
    for call, t, o in zip(calls, theirs, ours):
        print(f"| {call['name']} | {len(call['predicts'])} | {t:.3f} | {o:.3f} | {t / o:.1f} |")
    total_t, total_o = sum(theirs), sum(ours)
    answers = sum(len(c["predicts"]) for c in calls)
    print(f"| all | {answers} | {total_t:.3f} | {total_o:.3f} | {total_t / total_o:.1f} |")


if __name__ == "__main__":
    main()
