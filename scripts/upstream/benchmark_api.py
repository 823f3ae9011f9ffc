"""Runs upstream's own benchmark API (THUIR/MemoryBench's ``memorybench.py``: ``evaluate`` and
``summary_results``) on a local copy of the data, for the differential test of the
``memorybench`` package's API (py/tests/test_benchmark_upstream.py).

Usage: python benchmark_api.py --upstream CHECKOUT --data DIR < calls.json > results.json

``calls.json``: ``[{"dataset_type", "name", "predicts", "summaries": [[type, name], ...]}]``.
Each call runs ``evaluate(dataset_type, name, predicts)`` and then, for itself and for each
extra ``[type, name]``, ``summary_results(type, name, predicts, details,
min_max_config_file=CHECKOUT/configs/final_evaluate_summary_wo_details.json)``. Output: per
call ``{"details", "summaries": [...]}`` (JSON), and ``adaptations``.

``DIR`` is a MemoryBench-layout directory (``mb-harness import``); a dataset card
(``README.md`` with a ``configs:`` list, as the hub repository has) is written into it when it
has none, so that Hugging Face ``datasets`` finds each dataset by name, offline.

One adaptation, applied only to domain and task summaries: upstream's ``summary_results``
loads every dataset whose configuration has more than one test metric (JuDGE, IdeaBench,
JRE-L, LimitGen-Syn) before looking at the details, to re-score those datasets' items. Those
datasets are not in the local data; a stand-in is returned for them, which raises if anything
of it is used (so a summary over details of those datasets cannot pass through it).
"""

import argparse
import contextlib
import copy
import json
import os
import sys
import tempfile
from pathlib import Path


def write_card(data: Path) -> None:
    card = data / "README.md"
    if card.exists():
        return
    lines = ["---", "configs:"]
    for directory in sorted((data / "dataset").iterdir()):
        lines += [f"- config_name: {directory.name}", "  data_files:"]
        for split in ("train", "test"):
            lines += [f"  - split: {split}", f"    path: dataset/{directory.name}/{split}.jsonl"]
    lines += ["---", "", "Local MemoryBench data (written by benchmark_api.py).", ""]
    card.write_text("\n".join(lines), encoding="utf-8")


class Absent:
    """A dataset the local data lacks; using it is an error."""

    def __init__(self, name):
        self.name = name

    def __getattr__(self, attribute):
        raise RuntimeError(f"{self.name} is not in the local data (used: {attribute})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--upstream", required=True, type=Path)
    parser.add_argument("--data", required=True, type=Path)
    args = parser.parse_args()
    upstream = args.upstream.resolve()
    data = args.data.resolve()
    write_card(data)
    os.environ["MEMORY_BENCH_PATH"] = str(data)
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    # A cache of its own: Hugging Face datasets keys its cache of a local folder by the folder's
    # name and files' paths, and would hand back rows of an earlier folder of the same name.
    cache = tempfile.TemporaryDirectory(prefix="hf-datasets-")
    os.environ["HF_DATASETS_CACHE"] = cache.name
    sys.path.insert(0, str(upstream))
    import memorybench  # upstream's, from the checkout

    present = {d.name for d in (data / "dataset").iterdir()}
    original = memorybench.load_single_dataset

    def load_single_dataset(name, eval_mode=True):
        return original(name, eval_mode) if name in present else Absent(name)

    memorybench.load_single_dataset = load_single_dataset
    statistics = str(upstream / "configs" / "final_evaluate_summary_wo_details.json")
    calls = json.load(sys.stdin)
    out = []
    # Upstream prints progress on stdout; the results alone go there.
    with contextlib.redirect_stdout(sys.stderr):
        for call in calls:
            out.append(run(memorybench, call, statistics))
    adaptations = ["datasets absent from the local data load as stand-ins in summary_results"]
    json.dump({"calls": out, "adaptations": adaptations}, sys.stdout)
    cache.cleanup()


def run(memorybench, call, statistics):
    """Upstream's evaluate of one call's predictions, then its summaries."""
    predicts = copy.deepcopy(call["predicts"])
    details = memorybench.evaluate(call["dataset_type"], call["name"], predicts)
    # Summaries of the details as evaluate returned them (upstream's runs summarize in the
    # same process) and as read back from evaluate_details.json (upstream's src/evaluate.py
    # and single_summary.py): values numpy computed are numpy floats only in the first.
    from_file = json.loads(json.dumps(details))
    summaries, summaries_from_file = [], []
    for kind, name in [[call["dataset_type"], call["name"]]] + call.get("summaries", []):
        for out, scored in ((summaries, details), (summaries_from_file, from_file)):
            out.append(
                memorybench.summary_results(
                    kind,
                    name,
                    copy.deepcopy(predicts),
                    copy.deepcopy(scored),
                    min_max_config_file=statistics,
                )
            )
    return {"details": details, "summaries": summaries, "summaries_from_file": summaries_from_file}

if __name__ == "__main__":
    main()
