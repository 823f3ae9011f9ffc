"""MemoryBenchResults over upstream's staged layout (manifest.jsonl) and over the harness's own
run directories, and load_result_summary_table."""

import json
import subprocess

import pytest

import memorybench as mb
from conftest import ROOT, needs


def stage(root, rows):
    """Writes a staged results root: each row's run directory with a summary.json holding
    `score` as every metric, and manifest.jsonl listing the rows."""
    with open(root / "manifest.jsonl", "w", encoding="utf-8") as manifest:
        for row in rows:
            score = row.pop("score")
            run = root / row["relative_dir"]
            run.mkdir(parents=True, exist_ok=True)
            summary = {"summary": {"average": score, "z_score": score - 0.5}}
            (run / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
            (run / "run_config.json").write_text(json.dumps({"memory_system": row["baseline"]}))
            manifest.write(json.dumps(row) + "\n\n")


def entry(model, kind, name, baseline, score, run_id="start_at_1", setting=False):
    keys = {"setting": f"off-policy-{model}"} if setting else {"exp": "off-policy", "model": model}
    return {
        **keys,
        "dataset_type": kind,
        "set_name": name,
        "baseline": baseline,
        "run_id": run_id,
        "relative_dir": f"off-policy-{model}/{kind}/{name}/{baseline}/{run_id}",
        "files": ["summary.json", "run_config.json"],
        "score": score,
    }


@pytest.fixture
def staged(tmp_path):
    stage(
        tmp_path,
        [
            entry("Qwen3-8B", "domain", "Open-Domain", "a_mem", 0.25),
            entry("Qwen3-8B", "domain", "Open-Domain", "bm25_message", 0.5),
            entry("Qwen3-8B", "task", "Long-Short", "bm25_message", 0.75),
            entry("Mistral", "domain", "Legal", "mem0", 0.125, setting=True),
            # A later run with the same keys wins.
            entry("Qwen3-8B", "domain", "Open-Domain", "a_mem", 0.375, run_id="start_at_2"),
        ],
    )
    return mb.MemoryBenchResults.from_local(tmp_path)


def test_listing_is_sorted_distinct_and_filtered(staged):
    assert staged.list_exps() == ["off-policy"]
    assert staged.list_models() == ["Mistral", "Qwen3-8B"]
    assert staged.list_set_names(model="Qwen3-8B", dataset_type="domain") == ["Open-Domain"]
    assert staged.list_baselines(dataset_type="domain") == ["a_mem", "bm25_message", "mem0"]


def test_files_load_by_their_five_keys(staged):
    keys = ("off-policy", "Qwen3-8B", "domain", "Open-Domain", "a_mem")
    assert staged.load_summary(*keys)["summary"]["average"] == 0.375
    assert staged.load_run_config(*keys) == {"memory_system": "a_mem"}
    assert staged.load_summary("off-policy", "Mistral", "domain", "Legal", "mem0")["summary"]
    with pytest.raises(FileNotFoundError, match="predict.json is not available"):
        staged.load_predict(*keys)
    with pytest.raises(KeyError, match="baseline='memoryos'"):
        staged.load_summary("off-policy", "Qwen3-8B", "domain", "Open-Domain", "memoryos")


def test_summary_table_has_a_row_per_model_and_set_and_a_column_per_system(staged):
    pandas = pytest.importorskip("pandas")
    table = mb.load_result_summary_table(metric="average", models=["Qwen3-8B"], results_dir=staged.local_root)
    assert isinstance(table, pandas.DataFrame)
    assert list(table.columns) == ["model", "dataset_type", "set_name", "a_mem", "bm25_message", "mem0"]
    assert table[["dataset_type", "set_name"]].values.tolist() == [
        ["domain", "Open-Domain"],
        ["task", "Long-Short"],
    ]
    assert table["a_mem"].tolist()[0] == 0.375
    assert pandas.isna(table["a_mem"].tolist()[1])
    # Both set keys fixed: no set columns, and the systems run on that set only.
    rows = staged.summary_table("z_score", dataset_type="domain", set_name="Legal", as_pandas=False)
    assert rows == [{"model": "Mistral", "mem0": -0.375}]
    rows = staged.summary_table(
        "z_score", dataset_type="domain", set_name="Legal", baselines=["a_mem", "mem0"], as_pandas=False
    )
    assert rows == [{"model": "Mistral", "a_mem": None, "mem0": -0.375}]


def test_a_bad_manifest_line_is_named(tmp_path):
    (tmp_path / "manifest.jsonl").write_text('{"exp": "off-policy"}\n', encoding="utf-8")
    with pytest.raises(mb.DataError, match=r"manifest.jsonl, line 1: no 'model'|line 1: no"):
        mb.MemoryBenchResults.from_local(tmp_path)
    (tmp_path / "manifest.jsonl").write_text('{"setting": "sft-x"}\n', encoding="utf-8")
    with pytest.raises(mb.DataError, match="Cannot parse exp/model"):
        mb.MemoryBenchResults.from_local(tmp_path)


def test_from_hf_fails_in_one_line_when_the_hub_is_unreachable(monkeypatch, tmp_path):
    pytest.importorskip("huggingface_hub")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    with pytest.raises(mb.DataError, match="cannot download manifest.jsonl.*from_local") as raised:
        mb.MemoryBenchResults.from_hf()
    assert "\n" not in str(raised.value)


def test_the_harness_runs_are_found_without_a_manifest(tmp_path):
    harness = needs(ROOT / "target/release/mb-harness", "the harness binary (cargo build --release)")
    for system in ("wo_memory", "bm25_message"):
        subprocess.run(
            [harness, "off-policy", "--baseline", system, "--output-dir", tmp_path,
             "--store", tmp_path / "store", "--limit", "3"],
            check=True,
            capture_output=True,
            cwd=ROOT,
        )
    results = mb.MemoryBenchResults.from_local(tmp_path)
    assert results.list_exps() == ["off-policy"]
    assert results.list_baselines() == ["bm25_message", "wo_memory"]
    (model,) = results.list_models()
    keys = ("off-policy", model, "domain", "Sample", "bm25_message")
    run_dir = tmp_path / results.get_entry(*keys).relative_dir
    assert results.load_summary(*keys) == json.loads((run_dir / "summary.json").read_text())
    assert len(results.load_predict(*keys)) == len(results.load_evaluate_details(*keys))
    rows = results.summary_table("average", as_pandas=False)
    assert [set(r) for r in rows] == [{"model", "dataset_type", "set_name", "bm25_message", "wo_memory"}]
    assert rows[0]["bm25_message"] == results.load_summary(*keys)["summary"]["average"]
