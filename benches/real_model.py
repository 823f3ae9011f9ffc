#!/usr/bin/env python3
"""The real-model table of docs/benchmarks.md: every memory system off-policy on the built-in sample with
`--llm local` (SmolLM2-135M on llama.cpp's server), one system at a time.

    .cache/venv/bin/python benches/real_model.py [--out runs-real-model] [--systems a,b]
        [--llm local|FILE] [-- FLAGS]

Each system runs with its own store (no recorded answer or memory is shared between systems)
and its wall time is measured around the whole command: server start, memorization, answering,
evaluation. Flags after `--` go to every `mb-harness off-policy` command (`--limit 2`, say).
The table is printed as Markdown from each run's `summary.json`, with the time of each system;
`--table-only` prints it again from an earlier `--out` without running anything.

A 135M model's scores measure the plumbing and the costs, not memory quality. Needs
`bash scripts/setup.sh`; builds the harness itself.
"""

import argparse
import json
import pathlib
import subprocess
import sys
import time

SYSTEMS = [
    ("wo_memory", "Vanilla"),
    ("bm25_message", "BM25-M"),
    ("bm25_dialog", "BM25-S"),
    ("embedder_message", "Emb-M"),
    ("embedder_dialog", "Emb-S"),
    ("a_mem", "A-Mem"),
    ("mem0", "Mem0"),
    ("memoryos", "MemoryOS"),
    ("hybrid", "hybrid (beyond upstream)"),
]
ROOT = pathlib.Path(__file__).resolve().parent.parent
HARNESS = ROOT / "target" / "release" / "mb-harness"


def run(system, out, llm, flags):
    """Runs one system; returns its wall seconds (also written beside its runs)."""
    command = [str(HARNESS), "off-policy", "--baseline", system, "--llm", llm,
               "--store", str(out / f"store-{system}"), "--output-dir", str(out), *flags]
    print("$", " ".join(command), file=sys.stderr, flush=True)
    started = time.monotonic()
    subprocess.run(command, check=True, cwd=ROOT)
    seconds = time.monotonic() - started
    (out / f"wall-{system}.txt").write_text(f"{seconds:.1f}\n")
    return seconds


def newest_summary(out, system):
    runs = sorted((out / "off-policy/results/domain/Sample" / system).glob("*/summary.json"))
    if not runs:
        sys.exit(f"no summary.json for {system} under {out}")
    return json.loads(runs[-1].read_text())


def row(out, system, label):
    summary = newest_summary(out, system)
    timing = summary["timing"]
    mean = timing["mean_seconds_per_case"]
    cases = timing["cases"]
    fallbacks = timing["fallbacks"]
    wall = out / f"wall-{system}.txt"
    wall = float(wall.read_text()) if wall.is_file() else float("nan")
    calls = sum(op["calls"] for op in timing["model_usage"])
    by_operation = fallbacks.get("by_operation", {})
    resends = timing.get("resends", {}).get("by_operation", {})
    estimated = sum(op["estimated_token_calls"] for op in timing["model_usage"])
    tokens_in = mean.get("input_tokens_memory", 0) + mean.get("input_tokens_predict", 0)
    tokens_out = mean.get("output_tokens_memory", 0) + mean.get("output_tokens_predict", 0)
    # The harness's score: the domain's average (a single dataset: its first metric's mean).
    scores = summary.get("summary", {})
    score = scores.get("average", next(iter(scores.values()), None))
    return (
        f"| {label} | {timing['memory_processing_seconds_per_case']:.1f} "
        f"| {timing['prediction_seconds_per_case']:.1f} | {timing['llm_calls_per_case']:.1f} "
        f"| {tokens_in:,.0f} / {tokens_out:,.0f} "
        f"| {(fallbacks['memory'] + fallbacks['prediction']) / cases:.1f} "
        f"| {timing['answer_errors']} | {score if score is None else f'{score:.3f}'} "
        f"| {wall / 60:.1f} min |",
        calls,
        estimated,
        by_operation,
        resends,
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="runs-real-model", type=pathlib.Path)
    parser.add_argument("--systems", default=",".join(s for s, _ in SYSTEMS))
    parser.add_argument("--table-only", action="store_true")
    parser.add_argument("--llm", default="local",
                        help="the LLM settings (`local`, or a file such as a copy of "
                             "configs/llm/local.toml with output_handling = \"tolerant\")")
    parser.add_argument("flags", nargs="*", help="passed to every off-policy command")
    args = parser.parse_args()
    out = args.out if args.out.is_absolute() else ROOT / args.out
    chosen = args.systems.split(",")
    unknown = set(chosen) - {s for s, _ in SYSTEMS}
    if unknown:
        sys.exit(f"unknown systems: {', '.join(sorted(unknown))}")
    if not args.table_only:
        subprocess.run(["cargo", "build", "--release", "-p", "mb-harness"], check=True, cwd=ROOT)
        out.mkdir(parents=True, exist_ok=True)
        for system in chosen:
            run(system, out, args.llm, args.flags)
    print("| system | memory s/case | prediction s/case | LLM calls/case | tokens/case in / out "
          "| fallbacks/case | error answers | score | wall time |")
    print("|---|---|---|---|---|---|---|---|---|")
    notes = []
    for system, label in SYSTEMS:
        if system in chosen:
            line, calls, estimated, fallbacks, resends = row(out, system, label)
            print(line)
            notes.append(f"{label}: {calls} model calls, {estimated} with estimated tokens, "
                         f"fallbacks {fallbacks or 'none'}, resends {resends or 'none'}")
    print("\n" + "; ".join(notes))


if __name__ == "__main__":
    main()
