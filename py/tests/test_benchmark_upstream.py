"""The benchmark API against upstream's own: ``memorybench.evaluate`` and ``summary_results``
give what THUIR/MemoryBench's ``memorybench.py`` gives (run from its checkout in the
differential venv, scripts/upstream/benchmark_api.py) on real data (``../shared/data``:
LoCoMo's eight dev conversations and LexEval-QA, imported by ``mb-harness import``), for
answers of every kind: exact, padded, abstaining, empty, unrelated, option letters."""

import json
import subprocess

import pytest

import memorybench as mb
from conftest import ROOT, needs

SHARED = ROOT.parent / "shared"


def answers_for(row, i):
    """A deterministic mix of answers for a row, by position."""
    golden = str(row["info"].get("golden_answer", ""))
    if row["info"].get("category") == 5:
        return ["a", "(b)", "(a) it was never said", "No information available", "b", ""][i % 6]
    words = golden.split()
    return [
        golden,
        f"I think it was {golden}, as far as I remember.",
        "That is not mentioned in the conversation.",
        "",
        " ".join(words[: max(1, len(words) // 2)]).upper(),
        "The weather was nice and everyone went home early.",
        "根据法律规定，" + golden[: len(golden) // 2],
    ][i % 7]


@pytest.fixture(scope="module")
def local_data(tmp_path_factory):
    harness = needs(ROOT / "target/release/mb-harness", "the harness binary (cargo build --release)")
    locomo = needs(SHARED / "data/locomo/locomo10-dev.json", "LoCoMo's dev conversations")
    lexeval = needs(SHARED / "data/lexeval/5_4.json", "LexEval-QA")
    nfcats = needs(SHARED / "data/nfcats/test.csv", "NFCats")
    out = tmp_path_factory.mktemp("memorybench-data")
    subprocess.run(
        [harness, "import", "--out", out, "--locomo", locomo, "--lexeval-qa", lexeval,
         "--nfcats", nfcats],
        check=True,
        capture_output=True,
    )
    return out


def calls_for(data):
    calls = []
    sets = [(f"Locomo-{k}", [["domain", "Open-Domain"], ["task", "Long-Short"]]) for k in range(8)]
    sets.append(("LexEval-QA", [["domain", "Legal"], ["task", "Short-Short"]]))
    for name, summaries in sets:
        dataset = mb.load_memory_bench("single", name, data=data)
        rows = list(dataset.dataset["test"]) + list(dataset.dataset["train"])
        predicts = [{"test_idx": r["test_idx"], "response": answers_for(r, i)} for i, r in enumerate(rows)]
        calls.append({"dataset_type": "single", "name": name, "predicts": predicts, "summaries": summaries})
    return calls


def upstream_results(data, calls):
    checkout = needs(SHARED / "upstream/MemoryBench", "the upstream checkout")
    python = needs(ROOT / ".cache/upstream-venv/bin/python", "the differential venv (bash scripts/setup.sh)")
    done = subprocess.run(
        [python, ROOT / "scripts/upstream/benchmark_api.py", "--upstream", checkout, "--data", data],
        input=json.dumps(calls),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)["calls"]


def as_json(value):
    return json.loads(json.dumps(value))


def without_arrow_nulls(details):
    """Upstream's rows pass through Arrow, which gives every LoCoMo evidence turn the union of
    all turns' keys (``img_url``, ``blip_caption``, ...), null where a turn has none; the turns
    themselves are the same."""
    for detail in details:
        evidence = detail["metrics"].get("evidence")
        if isinstance(evidence, list):
            detail["metrics"]["evidence"] = [
                {k: v for k, v in turn.items() if v is not None} for turn in evidence
            ]
    return details


def test_evaluate_and_summary_results_equal_upstreams(local_data):
    calls = calls_for(local_data)
    theirs = upstream_results(local_data, calls)
    assert len(theirs) == len(calls)
    for call, upstream in zip(calls, theirs):
        predicts = [dict(p) for p in call["predicts"]]
        details = mb.evaluate("single", call["name"], predicts, data=local_data)
        assert len(details) == len(predicts)
        assert as_json(details) == without_arrow_nulls(upstream["details"]), call["name"]
        kinds = [["single", call["name"]]] + call["summaries"]
        # Upstream counts its numpy scores (LoCoMo's multi-hop F1) as 0 in a summary of
        # evaluate's own details, and in full once they are read back from JSON: so do we.
        from_json = as_json(details)
        for (kind, name), in_process, from_file in zip(
            kinds, upstream["summaries"], upstream["summaries_from_file"]
        ):
            summary = mb.summary_results(kind, name, predicts, details)
            assert as_json(summary) == in_process, (call["name"], kind, name)
            summary = mb.summary_results(kind, name, predicts, from_json)
            assert as_json(summary) == from_file, (call["name"], kind, name)


def test_a_judged_metric_offline_says_which_model_to_configure(local_data):
    nfcats = mb.load_memory_bench("single", "NFCats", data=local_data)
    row = next(iter(nfcats.dataset["test"]))
    predicts = [{"test_idx": row["test_idx"], "response": "Because it rains."}]
    with pytest.raises(mb.ModelError, match="needs a model.*judge"):
        mb.evaluate("single", "NFCats", predicts, data=local_data)
