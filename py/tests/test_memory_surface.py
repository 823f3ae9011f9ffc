"""``memorybench.Memory``'s whole surface (issue 77): metadata on add, mem0's filters on search
and listing, one id per memory across search, get, get_all, update, delete and history, paging,
bad input naming the argument; and docs/python.md's example of it, run as written."""

import pathlib
import re

import pytest

import memorybench as mb

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "python.md"


def said(text):
    return [{"role": "user", "content": text}, {"role": "assistant", "content": "Noted."}]


@pytest.fixture
def hashing():
    return mb.Embedder.hashing(384)


@pytest.mark.parametrize("system", ["hybrid", "bm25_message", "embedder_message", "mem0", "a_mem"])
def test_metadata_filters_and_one_id_per_memory(engine, hashing, system):
    with mb.Memory(engine, system, system=system, embedder=hashing) as memory:
        memory.add(said("I love ramen."), metadata={"topic": "food", "n": 3, "day": "2024-05-02"})
        memory.add(said("I flew to Lima."), metadata={"topic": "travel", "n": 7})
        memory.add(said("I play the cello."))
        query = "ramen Lima cello"

        for filters, wanted in [
            ({"topic": "food"}, "ramen"),
            ({"n": {"gte": 5}}, "Lima"),
            ({"day": {"gt": "2024-05-01"}}, "ramen"),
            ({"NOT": [{"topic": "travel"}], "n": {"in": [3, 7]}}, "ramen"),
        ]:
            found = [f.text for f in memory.search(query, k=10, filters=filters)]
            assert any(wanted in t for t in found), (system, filters, found)
            others = {"ramen", "Lima", "cello"} - {wanted}
            assert not any(o in t for t in found for o in others), (system, filters, found)
        either = memory.search(query, k=10, filters={"OR": [{"topic": "food"}, {"n": 7}]})
        assert {f.metadata["topic"] for f in either} == {"food", "travel"}
        assert memory.search(query, k=10, filters={"topic": "sport"}) == []

        hit = memory.search("ramen", k=10, filters={"topic": "food"})[0]
        assert hit.id is not None and hit.metadata["topic"] == "food"
        got = memory.get(hit.id)
        assert got["id"] == hit.id and got["metadata"]["topic"] == "food"

        everything = memory.get_all(limit=10_000)["memories"]
        assert {m["id"] for m in everything} >= {hit.id}
        paged, after = [], None
        while True:
            page = memory.get_all(limit=2, after=after)
            paged += page["memories"]
            if page["next"] is None:
                break
            after = page["next"]
        assert [m["id"] for m in paged] == [m["id"] for m in everything]
        tagged = memory.get_all(filters={"topic": "travel"})["memories"]
        assert tagged and all(m["metadata"]["topic"] == "travel" for m in tagged)

        kept = memory.update(hit.id, "I love ramen and udon.")
        assert kept["metadata"]["topic"] == "food" and "udon" in kept["text"]
        moved = memory.update(hit.id, "I love udon.", metadata={"topic": "noodles"})
        assert moved["metadata"] == {"topic": "noodles"}
        assert any(f.id == hit.id for f in memory.search("udon", k=10, filters={"topic": "noodles"}))
        assert memory.delete(hit.id) is True
        assert memory.delete(hit.id) is False
        assert memory.get(hit.id) is None
        with pytest.raises(mb.RecordNotFoundError, match=str(hit.id)):
            memory.update(hit.id, "gone")


def test_mem0_history_names_memories_by_their_ids_after_a_reopen(tmp_path, hashing):
    with mb.Engine(tmp_path / "store") as engine:
        with mb.Memory(engine, "u", system="mem0", embedder=hashing) as memory:
            events = memory.add(said("I am allergic to peanuts."), metadata={"kind": "health"})
            memory_id = events[0]["id"]
            assert memory.get(memory_id)["metadata"] == {"kind": "health"}
            memory.update(memory_id, "I am allergic to peanuts and cashews.")
            memory.delete(memory_id)
    with mb.Engine(tmp_path / "store") as engine:
        with mb.Memory(engine, "u", system="mem0", embedder=hashing) as memory:
            about = [e for e in memory.history() if e["memory"] == events[0]["memory"]]
            assert [(e["event"], e["id"]) for e in about] == [
                ("ADD", memory_id), ("UPDATE", memory_id), ("DELETE", memory_id)
            ]


def test_bad_metadata_filters_and_pages_raise_naming_the_argument(engine, hashing):
    with mb.Memory(engine, "u", system="bm25_message") as memory:
        memory.add(said("I keep bees."), metadata={"n": 1})
        for call, match in [
            (lambda: memory.add(said("x"), metadata=["a"]), "metadata must be an object"),
            (lambda: memory.add(said("x"), metadata={"k": "x" * 20_000}), "bytes"),
            (lambda: memory.add(said("x"), metadata={"k": object()}), "metadata"),
            (lambda: memory.search("bees", filters={"n": 1.5}), r'filters: "n"'),
            (lambda: memory.search("bees", filters={"n": {"regex": "b"}}), "unknown operator"),
            (lambda: memory.search("bees", filters={"OR": {"n": 1}}), "list of filters"),
            (lambda: memory.get_all(filters=["n"]), "filters: must be an object"),
            (lambda: memory.get_all(limit=0), "limit"),
            (lambda: memory.update(1, "  "), "text"),
        ]:
            with pytest.raises(mb.InvalidInputError, match=match):
                call()
        assert memory.search("bees", filters={"n": 1})[0].metadata == {"n": 1}


def test_the_memory_surface_example_runs():
    text = DOC.read_text()
    start = text.index("### `Memory`: add, search, get, list, update, delete, history")
    end = text.find("\n## ", start)
    found = re.findall(r"```python\n(.*?)```", text[start:end], flags=re.S)
    assert len(found) == 1, "the Memory surface section lost its example"
    exec(compile(found[0], str(DOC), "exec"), {})
