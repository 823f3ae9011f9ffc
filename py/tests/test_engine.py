"""The engine from Python: records, batches, state, searches with filters, durability, and
bad input raising typed exceptions without losing what was stored."""

import os
import shutil
import subprocess
import sys
import threading

import pytest

import memorybench as mb


def test_records_round_trip(engine):
    engine.create_namespace("alice")
    engine.create_space("toy", 3)
    first = engine.put(
        "alice",
        "Alice adopted a cat named Miso",
        vectors={"toy": [0.9, 0.1, 0.0]},
        attributes={"speaker": "Alice"},
        body="full text",
        created_at_ms=1_700_000_000_000,
    )
    record = engine.get("alice", first)
    assert (record.id, record.text, record.body, record.content) == (
        first,
        "Alice adopted a cat named Miso",
        "full text",
        "full text",
    )
    assert record.attributes == {"speaker": "Alice"}
    assert record.created_at_ms == 1_700_000_000_000
    engine.update("alice", first, "Alice adopted two cats", vectors={"toy": [1.0, 0.0, 0.0]})
    assert engine.get("alice", first).text == "Alice adopted two cats"
    assert engine.delete("alice", first) is True
    assert engine.delete("alice", first) is False
    assert engine.get("alice", first) is None
    assert engine.count("alice") == 0


def test_batches_are_atomic_and_report_ids(engine):
    engine.create_namespace("n")
    batch = mb.Batch()
    batch.put("one")
    batch.put("two", attributes={"k": "v"})
    batch.put_state("profile", {"pet": "Miso", "age": [1, 2]})
    assert len(batch) == 3
    receipt = engine.write("n", batch)
    assert len(batch) == 0
    assert [engine.get("n", i).text for i in receipt.ids] == ["one", "two"]
    assert engine.get_state("n", "profile") == {"pet": "Miso", "age": [1, 2]}
    engine.delete_state("n", "profile")
    assert engine.get_state("n", "profile") is None

    # A batch with one bad record writes nothing.
    engine.create_space("s", 2)
    bad = mb.Batch()
    bad.put("fine", vectors={"s": [1.0, 0.0]})
    bad.put("wrong length", vectors={"s": [1.0, 0.0, 0.0]})
    with pytest.raises(mb.InvalidInputError, match="dimension 3, expected 2"):
        engine.write("n", bad)
    assert engine.count("n") == 2


def test_state_keys_list_by_prefix_sorted(engine):
    engine.create_namespace("n")
    engine.create_namespace("other")
    keys = ["user/2", "user/10", "session/1", "user/1", "user\x00nul", "üser"]
    for key in keys:
        engine.put_state("n", key, 1)
    engine.put_state("other", "user/3", 1)
    assert engine.state_keys("n", "user/") == ["user/1", "user/10", "user/2"]
    # Sorted as UTF-8 bytes, which is Python's order of str.
    assert engine.state_keys("n") == sorted(keys) == [
        "session/1", "user\x00nul", "user/1", "user/10", "user/2", "üser"]
    assert engine.state_keys("n", "nothing") == []
    engine.delete_state("n", "user/10")
    assert engine.state_keys("n", "user") == ["user\x00nul", "user/1", "user/2"]
    with pytest.raises(mb.UnknownNamespaceError):
        engine.state_keys("missing")


def test_searches_rank_and_filter(engine):
    engine.create_namespace("n")
    engine.create_space("s", 2)
    rows = [
        ("the cat sleeps on the sofa", [1.0, 0.0], "pets"),
        ("a cat and a dog play", [0.8, 0.6], "pets"),
        ("stock markets fell today", [0.0, 1.0], "news"),
        ("the cat food price rose", [0.6, 0.8], "news"),
    ]
    ids = [
        engine.put("n", text, vectors={"s": v}, attributes={"topic": topic})
        for text, v, topic in rows
    ]
    text_hits = engine.search_text("n", "cat", 10)
    assert {h.record.id for h in text_hits} == {ids[0], ids[1], ids[3]}
    news = engine.search_text("n", "cat", 10, filter={"topic": "news"})
    assert [h.record.id for h in news] == [ids[3]]

    vector_hits = engine.search_vector("n", "s", [1.0, 0.0], 2)
    assert [h.record.id for h in vector_hits] == [ids[0], ids[1]]
    assert vector_hits[0].score == pytest.approx(1.0, abs=1e-5)
    news = engine.search_vector("n", "s", [1.0, 0.0], 2, filter={"topic": "news"})
    assert [h.record.id for h in news] == [ids[3], ids[2]]

    hybrid = engine.search_hybrid("n", "cat", "s", [1.0, 0.0], 1)
    assert hybrid[0].record.id == ids[0]
    hybrid = engine.search_hybrid("n", "cat", "s", [1.0, 0.0], 3, filter={"topic": "news"})
    assert [h.record.id for h in hybrid] == [ids[3], ids[2]]
    # A fusion constant that cannot rank is refused by name (issue 76, D8).
    for bad in [float("nan"), -1.0, float("inf")]:
        with pytest.raises(mb.InvalidInputError, match="rrf_k"):
            engine.search_hybrid("n", "cat", "s", [1.0, 0.0], 3, rrf_k=bad)

    # Tuning calls change no result here: one segment ranks as several did, and a collection
    # this small is searched exactly whatever the beam.
    engine.flush()
    again = engine.put("n", "a cat on a sofa again")
    engine.flush()
    ranked = [(h.record.id, h.score) for h in engine.search_text("n", "cat food sofa", 10)]
    engine.merge_lexical_segments()
    assert [(h.record.id, h.score) for h in engine.search_text("n", "cat food sofa", 10)] == ranked
    engine.set_ef_search(16)
    assert [h.record.id for h in engine.search_vector("n", "s", [1.0, 0.0], 2)] == ids[:2]

    # Listing by filter finds exactly the matching records, in id order.
    assert [r.id for r in engine.records_where("n", {"topic": "news"})] == [ids[2], ids[3]]
    assert len(engine.records_where("n", {})) == len(engine.records("n"))
    assert engine.records_where("n", {"topic": "nothing"}) == []

    # Deleting by filter removes exactly the matching records from every index.
    assert engine.delete_where("n", {"topic": "news"}) == 2
    assert engine.delete_where("n", {"topic": "news"}) == 0
    assert {h.record.id for h in engine.search_text("n", "cat", 10)} == {ids[0], ids[1], again}
    assert engine.search_vector("n", "s", [0.0, 1.0], 5, filter={"topic": "news"}) == []
    assert len(engine.records("n")) == 3


def test_namespaces_spaces_and_analyzers(engine):
    engine.create_namespace("b")
    engine.ensure_namespace("b")
    engine.create_namespace("a", analyzer="stemmed")
    assert engine.namespaces() == ["a", "b"]
    engine.put("a", "she was painting the fence")
    assert len(engine.search_text("a", "painted", 5)) == 1
    engine.put("b", "she was painting the fence")
    assert engine.search_text("b", "painted", 5) == []
    engine.create_space("s", 4)
    assert engine.spaces()["s"] == 4
    engine.drop_namespace("b")
    assert engine.namespaces() == ["a"]
    with pytest.raises(mb.NamespaceExistsError):
        engine.create_namespace("a")
    with pytest.raises(mb.InvalidInputError, match="unknown analyzer"):
        engine.create_namespace("c", analyzer="klingon")


def test_bad_input_raises_typed_errors_and_loses_nothing(engine):
    engine.create_namespace("n")
    engine.create_space("s", 2)
    kept = engine.put("n", "kept", vectors={"s": [1.0, 0.0]})
    with pytest.raises(mb.InvalidInputError, match="dimension 3, expected 2"):
        engine.put("n", "x", vectors={"s": [1.0, 2.0, 3.0]})
    with pytest.raises(ValueError, match="non-finite"):
        engine.put("n", "x", vectors={"s": [float("nan"), 1.0]})
    with pytest.raises(TypeError):
        engine.put("n", 42)
    with pytest.raises(TypeError):
        engine.put("n", "x", vectors={"s": "not a vector"})
    with pytest.raises(mb.UnknownNamespaceError, match="nope"):
        engine.put("nope", "x")
    with pytest.raises(KeyError):
        engine.search_text("nope", "x")
    with pytest.raises(mb.UnknownSpaceError):
        engine.search_vector("n", "missing", [1.0, 0.0])
    with pytest.raises(mb.RecordNotFoundError):
        engine.update("n", 999_999, "x")
    with pytest.raises(mb.InvalidInputError, match="blank text"):
        engine.put("n", "   ")
    with pytest.raises(mb.InvalidInputError, match="JSON"):
        engine.put_state("n", "k", object())
    assert [r.id for r in engine.records("n")] == [kept]
    assert engine.search_vector("n", "s", [1.0, 0.0], 1)[0].record.text == "kept"


def test_closed_and_busy_stores(tmp_path):
    path = tmp_path / "store"
    engine = mb.Engine(path)
    engine.create_namespace("n")
    engine.put("n", "survives")
    with pytest.raises(mb.StoreInUseError, match="in use"):
        mb.Engine(path)
    engine.close()
    engine.close()
    assert engine.closed
    with pytest.raises(mb.EngineClosedError):
        engine.count("n")
    with pytest.raises(mb.NotAStoreError):
        mb.Engine(tmp_path / "missing", create=False)
    with mb.Engine(path) as again:
        assert [r.text for r in again.records("n")] == ["survives"]


FORMAT_1 = os.path.join(os.path.dirname(__file__), "..", "..", "engine", "tests", "fixtures", "format-1")


def test_a_store_of_the_previous_format_is_upgraded_on_open(tmp_path):
    # Written by the format-1 wheel (engine/tests/fixtures/make_format_1.py).
    path = tmp_path / "old"
    shutil.copytree(FORMAT_1, path)
    assert "format 1" in (path / "MEMORY_ENGINE").read_text()
    with mb.Engine(path, create=False) as engine:
        assert engine.namespaces() == ["chat", "notes"]
        assert engine.count("notes") == 5
        assert engine.get("notes", 2).text == "note 2 rewritten about rain and tea"
        assert engine.get("notes", 4) is None
        hits = engine.search_vector("notes", "tiny", [0.0, 0.0, 1.0, 0.0], 1)
        assert hits[0].record.id == 2
        assert sorted(h.record.id for h in engine.search_text("notes", "rain")) == [2, 3]
        assert engine.get_state("notes", "heat/alice") == {"level": 3}
    assert f"format {mb.ENGINE_FORMAT}" in (path / "MEMORY_ENGINE").read_text()


def test_acknowledged_writes_survive_kill(tmp_path):
    """A child process writes and is killed with SIGKILL; every write it acknowledged is
    there when the store is reopened."""
    path = tmp_path / "store"
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import memorybench as mb, sys\n"
            f"e = mb.Engine({str(path)!r})\n"
            "e.ensure_namespace('n')\n"
            "i = 0\n"
            "while True:\n"
            "    e.put('n', f'record {i}')\n"
            "    print(i, flush=True)\n"
            "    i += 1\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    acknowledged = -1
    for line in child.stdout:
        acknowledged = int(line)
        if acknowledged >= 200:
            break
    child.kill()
    child.wait()
    with mb.Engine(path) as engine:
        texts = {r.text for r in engine.records("n")}
        assert all(f"record {i}" in texts for i in range(acknowledged + 1))
        assert len(engine.search_text("n", "record", 1000)) == len(texts)


def test_threads_work_in_parallel_without_the_gil(engine):
    """Writers and searchers in Python threads: no deadlock, nothing lost."""
    engine.create_namespace("n")
    errors = []

    def write(worker):
        try:
            for i in range(100):
                engine.put("n", f"worker {worker} note {i}", attributes={"w": str(worker)})
        except Exception as error:  # pragma: no cover - reported below
            errors.append(error)

    def search():
        try:
            for _ in range(100):
                engine.search_text("n", "note", 5)
        except Exception as error:  # pragma: no cover
            errors.append(error)

    threads = [threading.Thread(target=write, args=(w,)) for w in range(3)]
    threads.append(threading.Thread(target=search))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert engine.count("n") == 300
    assert len(engine.search_text("n", "note", 500, filter={"w": "1"})) == 100
