"""The benchmark API (memorybench.benchmark) on the built-in sample: upstream's dataset
interface, evaluate and summary_results with upstream's checks; and its data location."""

import builtins
import json
import math

import pytest

import memorybench as mb
from memorybench.benchmark import Splits


@pytest.fixture(autouse=True)
def builtin_sample(monkeypatch):
    monkeypatch.delenv("MEMORY_BENCH_PATH", raising=False)


def test_a_domain_is_its_datasets_in_order_and_a_single_dataset_is_one():
    datasets = mb.load_memory_bench("domain", "Sample")
    assert [d.dataset_name for d in datasets] == ["Sample-Locomo", "Sample-Stories"]
    single = mb.load_memory_bench("single", "Sample-Stories")
    assert single.dataset_name == "Sample-Stories"
    assert single.test_metrics == ["meteor"]
    assert single.max_output_len == 8192
    assert not single.has_corpus and single.corpus is None and single.session_cnt is None


def test_rows_come_decoded_with_their_split_and_opening_messages():
    locomo = mb.load_memory_bench("single", "Sample-Locomo")
    test_rows = list(locomo.dataset["test"])
    train_rows = list(locomo.dataset["train"])
    assert len(test_rows) + len(train_rows) == len(locomo) == 30
    row = locomo.get_data(test_rows[0]["test_idx"])
    assert row["set_name"] == "test"
    assert isinstance(row["info"], dict) and row["info"]["category"] in range(1, 6)
    assert isinstance(row["info"]["golden_answer"], str)
    assert locomo.get_data(train_rows[0]["test_idx"])["set_name"] == "train"
    messages = locomo.get_initial_chat_messages(row["test_idx"])
    assert messages == [{"role": "user", "content": row["input_prompt"]}]
    with pytest.raises(ValueError, match="test_idx 999999 not found"):
        locomo.get_data(999999)


def test_the_corpus_is_in_locomo_conversation_form():
    locomo = mb.load_memory_bench("single", "Sample-Locomo")
    corpus = locomo.corpus
    assert locomo.has_corpus and locomo.session_cnt == 6
    assert corpus["speaker_a"] and corpus["speaker_b"]
    for n in range(1, 7):
        assert corpus[f"session_{n}_date_time"]
        turn = corpus[f"session_{n}"][0]
        assert set(turn) == {"speaker", "dia_id", "text"}
        assert turn["dia_id"] == f"D{n}:1"


def test_rows_are_a_hugging_face_dataset_dict_when_datasets_is_installed():
    hf = pytest.importorskip("datasets")
    stories = mb.load_memory_bench("single", "Sample-Stories")
    assert isinstance(stories.dataset, hf.DatasetDict)
    assert stories.dataset.num_rows == {"train": len(stories.dataset["train"]), "test": 4}
    assert stories.dataset["test"]["test_idx"] == [r["test_idx"] for r in stories.dataset["test"]]


def test_without_datasets_rows_are_plain_splits(monkeypatch):
    real_import = builtins.__import__

    def no_datasets(name, *args, **kwargs):
        if name == "datasets":
            raise ImportError("no datasets here")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_datasets)
    stories = mb.load_memory_bench("single", "Sample-Stories")
    splits = stories.dataset
    assert isinstance(splits, Splits)
    assert splits.num_rows["test"] == len(splits["test"]) == 4
    first = splits["test"][0]
    assert splits["test"]["test_idx"][0] == first["test_idx"]
    assert "input_prompt" in splits["test"].column_names
    assert len(splits["test"][1:3]) == 2


def predicts_for(dataset):
    rows = list(dataset.dataset["test"])
    return [{"test_idx": r["test_idx"], "response": r["info"]["golden_answer"]} for r in rows]


def test_evaluate_scores_each_prediction_and_fills_in_the_dataset():
    locomo = mb.load_memory_bench("single", "Sample-Locomo")
    rows = list(locomo.dataset["test"]) + list(locomo.dataset["train"])
    predicts = [{"test_idx": r["test_idx"], "response": r["info"]["golden_answer"]} for r in rows]
    predicts = predicts[::-1]
    details = mb.evaluate("single", "Sample-Locomo", predicts)
    assert all(p["dataset"] == "Sample-Locomo" for p in predicts)
    assert [d["test_idx"] for d in details] == sorted(p["test_idx"] for p in predicts)
    assert all(d["dataset"] == "Sample-Locomo" for d in details)
    assert {"f1", "golden_answer", "evidence"} <= set(details[0]["metrics"])
    # The golden answer itself scores full marks on single-answer questions (categories 2 and
    # 4; multi-hop answers are split, temporal ones cut at ";", adversarial ones are options).
    single = [d for d in details if locomo.get_data(d["test_idx"])["info"]["category"] in (2, 4)]
    assert single and all(d["metrics"]["f1"] == 1.0 for d in single)
    # Multi-hop F1 is a numpy number upstream, counted 0 in a summary of these details and in
    # full from JSON, as upstream's summary_results counts it.
    multi_hop = [d for d in details if locomo.get_data(d["test_idx"])["info"]["category"] == 1]
    assert multi_hop and all(type(d["metrics"]["f1"]) is mb.benchmark.NumpyFloat for d in multi_hop)
    summary = mb.summary_results("single", "Sample-Locomo", predicts, details)
    counted = sum(d["metrics"]["f1"] for d in details if d not in multi_hop) / len(details)
    assert summary == {"summary": {"f1": pytest.approx(counted, abs=0, rel=1e-15)}}
    from_json = json.loads(json.dumps(details))
    mean = sum(d["metrics"]["f1"] for d in details) / len(details)
    summary = mb.summary_results("single", "Sample-Locomo", predicts, from_json)
    assert summary == {"summary": {"f1": pytest.approx(mean, abs=0, rel=1e-15)}}
    # The dataset's own evaluate gives the same metrics, without the dataset key.
    own = locomo.evaluate(predicts)
    assert [o["metrics"] for o in own] == [d["metrics"] for d in details]
    assert "dataset" not in own[0]


def test_a_domain_summary_is_normalized_per_group():
    datasets = mb.load_memory_bench("domain", "Sample")
    predicts = []
    for dataset in datasets:
        predicts += [dict(p, dataset=dataset.dataset_name) for p in predicts_for(dataset)]
    details = mb.evaluate("domain", "Sample", predicts)
    summary = mb.summary_results("domain", "Sample", predicts, details)
    assert set(summary) == {
        "summary",
        "average",
        "minmax_normalized_average",
        "z_normalized_average",
        "details",
    }
    assert set(summary["average"]) == {"Sample-Locomo", "Sample-Stories"}
    total, count, mean = summary["minmax_normalized_average"]["Sample-Stories"]
    assert count == 4 and math.isclose(total / count, mean)
    assert set(summary["summary"]) == {"average", "weighted_average", "z_score"}


def test_upstreams_checks_hold():
    predicts = [{"test_idx": 1, "response": "x", "dataset": "Sample-Stories"}]
    with pytest.raises(mb.InvalidInputError, match="does not match expected Sample-Locomo"):
        mb.evaluate("single", "Sample-Locomo", predicts)
    with pytest.raises(ValueError, match="must have 'response'"):
        mb.evaluate("single", "Sample-Locomo", [{"test_idx": 1}])
    with pytest.raises(ValueError, match="must have 'dataset'"):
        mb.evaluate("domain", "Sample", [{"test_idx": 1, "response": "x"}])
    with pytest.raises(ValueError, match="Length mismatch: 1 vs 0"):
        mb.summary_results("single", "Sample-Locomo", predicts, [])
    with pytest.raises(ValueError, match="unknown dataset_type"):
        mb.load_memory_bench("sets", "Sample")
    with pytest.raises(mb.DataError, match="Nope"):
        mb.load_memory_bench("single", "Nope")
    with pytest.raises(mb.InvalidInputError, match="no such row"):
        mb.evaluate("single", "Sample-Locomo", [{"test_idx": 999999, "response": "x"}])


def test_a_set_with_no_data_says_where_data_is_looked_for(tmp_path, monkeypatch):
    with pytest.raises(mb.DataError, match="no train split at built-in sample.*MEMORY_BENCH_PATH"):
        mb.load_memory_bench("single", "Locomo-0")
    (tmp_path / "dataset").mkdir()
    monkeypatch.setenv("MEMORY_BENCH_PATH", str(tmp_path))
    with pytest.raises(mb.DataError, match=str(tmp_path)):
        mb.load_memory_bench("single", "JRE-L")


def test_a_local_copy_is_read_from_data_or_the_variable(tmp_path, monkeypatch):
    import json

    rows = list(mb.load_memory_bench("single", "Sample-Stories").dataset["test"])
    folder = tmp_path / "dataset" / "Sample-Stories"
    folder.mkdir(parents=True)
    for split, kept in (("train", rows[:1]), ("test", rows[1:])):
        with open(folder / f"{split}.jsonl", "w", encoding="utf-8") as file:
            for row in kept:
                stored = {k: (json.dumps(v) if isinstance(v, (dict, list)) else v) for k, v in row.items()}
                file.write(json.dumps(stored) + "\n")
    by_argument = mb.load_memory_bench("single", "Sample-Stories", data=tmp_path)
    assert len(by_argument.dataset["test"]) == len(rows) - 1
    monkeypatch.setenv("MEMORY_BENCH_PATH", str(tmp_path))
    by_variable = mb.load_memory_bench("single", "Sample-Stories")
    assert list(by_variable.dataset["train"]) == list(by_argument.dataset["train"])
