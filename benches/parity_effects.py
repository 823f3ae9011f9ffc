#!/usr/bin/env python3
"""The measured effects of docs/parity.md: each switch between upstream's behaviour (the
default) and ours, run both ways on the built-in sample, side by side.

    .cache/venv/bin/python benches/parity_effects.py [--out runs-parity] [--llm offline|local]
        [--only NAME,NAME] [--share-answers] [-- FLAGS]

Every switch runs `mb-harness` with its own store beside one run with the defaults (upstream)
per regime and system, which switches of one system share. Nothing recorded is shared unless
`--share-answers`: then a switched side starts from a copy of its upstream side's store, so a
request both sides send identically gets the same recorded answer (one sample of the model for
both, which removes sampling noise from the difference and saves the slow model's time) and only
requests the switch changes reach the model. A
switch is a flag or one setting of a memory system's file (the shipped
`configs/memory/<file>.toml` with that one line changed, given as `--memory-config`). Flags
after `--` go to every command (`--limit 2`).
Prints one Markdown table: score, model calls, fallbacks and memory seconds per case, before and
after. Builds nothing: run `cargo build --release -p mb-harness` first.
"""

import argparse
import json
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
HARNESS = ROOT / "target" / "release" / "mb-harness"

# name: (docs/parity.md row, regime, system, switch). A switch is ("flag", [...]) or
# ("setting", file, key, value).
SWITCHES = {
    "keep_one_sided": ("MemoryOS one-sided exchanges", "off-policy", "memoryos",
                       ("setting", "memoryos", "keep_one_sided", "true")),
    "thread_summaries": ("MemoryOS thread summary", "off-policy", "memoryos",
                         ("setting", "memoryos", "thread_summaries", '"latest"')),
    "metadata_at_exit": ("MemoryOS corpus copies in the run that built the memory", "off-policy", "memoryos",
                         ("setting", "memoryos", "metadata_at_exit", "false")),
    "memoryos_pages": ("MemoryOS pages per question", "off-policy", "memoryos",
                       ("flag", ["--retrieve-k", "10"])),
    "retrieve_k": ("`--retrieve_k`", "off-policy", "bm25_message", ("flag", ["--retrieve-k", "10"])),
    "evolution": ("A-Mem note analysis and evolution", "off-policy", "a_mem",
                  ("setting", "a_mem", "evolution", "true")),
    "query_syntax": ("question parsing (BM25-M/S)", "off-policy", "bm25_message",
                     ("setting", "bm25", "query_syntax", '"plain"')),
    "answer_feedback": ("on-policy feedback", "on-policy", "bm25_message",
                        ("flag", ["--answer-feedback"])),
    "output_handling": ("unusable model output", "off-policy", "a_mem",
                        ("llm_setting", "output_handling", '"tolerant"')),
}


def with_setting(tmp, file, key, value):
    """The shipped settings file with `key = value` in place of its line."""
    text = (ROOT / "configs" / "memory" / f"{file}.toml").read_text()
    changed, count = re.subn(rf"(?m)^{key}\s*=.*$", f"{key} = {value}", text)
    if count != 1:
        sys.exit(f"configs/memory/{file}.toml has {count} lines setting {key}")
    path = pathlib.Path(tmp) / f"{file}.toml"
    path.write_text(changed)
    return ["--memory-config", str(path)]


def with_llm_setting(tmp, llm, key, value):
    """The role-settings file of `--llm` with `key = value` on every line that sets it."""
    source = ROOT / "configs" / "llm" / f"{llm}.toml"
    if not source.exists():
        sys.exit(f"{source} not found: --llm must be offline or local for this switch")
    changed, count = re.subn(rf"(?m)^{key}\s*=.*$", f"{key} = {value}", source.read_text())
    if count == 0:
        sys.exit(f"{source} sets no {key}")
    path = pathlib.Path(tmp) / f"{llm}.toml"
    path.write_text(changed)
    return str(path)


def run(out, name, side, regime, system, llm, extra, flags, seed_store=None):
    """Runs one side of a pair, its store first copied from `seed_store` when given; returns
    its result directory."""
    output = out / name / side
    if seed_store is not None and not (output / "store").exists():
        shutil.copytree(seed_store, output / "store")
    command = [str(HARNESS), regime, "--baseline", system, "--llm", llm,
               "--store", str(output / "store"), "--output-dir", str(output), *flags, *extra]
    print("$", " ".join(command), file=sys.stderr, flush=True)
    subprocess.run(command, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    runs = sorted(output.glob(f"{regime}/results/*/*/{system}/*/"))
    if not runs:
        sys.exit(f"no result directory under {output}")
    # On-policy writes one summary per step: the last step's is the run's result.
    steps = sorted(runs[-1].glob("step_*/summary.json"),
                   key=lambda p: int(p.parent.name.removeprefix("step_")))
    found = steps[-1] if steps else runs[-1] / "summary.json"
    if not found.exists():
        sys.exit(f"no summary.json under {runs[-1]}")
    return found


def measures(summary_path):
    """Score, model calls, fallbacks and memory seconds per case of one run."""
    summary = json.loads(summary_path.read_text())
    timing = summary.get("timing", {})
    fallbacks = timing.get("fallbacks", {})
    return {
        "score": summary["summary"]["average"],
        "calls": timing.get("llm_calls_per_case", 0.0),
        "fallbacks": fallbacks.get("memory", 0.0) + fallbacks.get("prediction", 0.0),
        "memory_s": timing.get("memory_processing_seconds_per_case", 0.0),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="runs-parity", type=pathlib.Path)
    parser.add_argument("--llm", default="offline")
    parser.add_argument("--only", default="", help="comma-separated switch names")
    parser.add_argument("--share-answers", action="store_true",
                        help="start each switched side from a copy of its upstream side's store")
    parser.add_argument("flags", nargs="*", help="after --: flags for every command")
    args = parser.parse_args()
    if not HARNESS.exists():
        sys.exit(f"{HARNESS} not found: run cargo build --release -p mb-harness")
    chosen = [n for n in args.only.split(",") if n] or list(SWITCHES)
    unknown = [n for n in chosen if n not in SWITCHES]
    if unknown:
        sys.exit(f"unknown switch {unknown}; known: {', '.join(SWITCHES)}")
    out = args.out.resolve()
    rows = []
    # The upstream side depends only on (regime, system): switches of one system share it.
    upstream = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in chosen:
            label, regime, system, switch = SWITCHES[name]
            llm = args.llm
            if switch[0] == "flag":
                after_llm, extra = llm, switch[1]
            elif switch[0] == "setting":
                after_llm, extra = llm, with_setting(tmp, *switch[1:])
            elif llm == "offline":
                print(f"{name}: changes model output handling, so needs a model; skipped",
                      file=sys.stderr)
                continue
            else:
                after_llm, extra = with_llm_setting(tmp, llm, *switch[1:]), []
            if (regime, system) not in upstream:
                upstream[(regime, system)] = measures(
                    run(out, f"{regime}-{system}", "upstream", regime, system, llm, [], args.flags))
            before = upstream[(regime, system)]
            seed = out / f"{regime}-{system}" / "upstream" / "store" if args.share_answers else None
            after = measures(run(out, name, "switched", regime, system, after_llm, extra,
                                 args.flags, seed))
            rows.append((name, label, system, before, after))
    print(f"With `--llm {args.llm}`, upstream's default → the switch:\n")
    print("| switch | parity row | system | score | model calls/case | fallbacks/case | "
          "memory s/case |")
    print("|---|---|---|---|---|---|---|")
    for name, label, system, b, a in rows:
        print(f"| `{name}` | {label} | {system} | {b['score']:.4f} → {a['score']:.4f} | "
              f"{b['calls']:.1f} → {a['calls']:.1f} | {b['fallbacks']:.1f} → {a['fallbacks']:.1f} | "
              f"{b['memory_s']:.4f} → {a['memory_s']:.4f} |")


if __name__ == "__main__":
    main()
