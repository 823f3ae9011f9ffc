"""MemoryBenchStore (LangGraph's BaseStore on the engine) tested differentially against
LangGraph's own InMemoryStore: the same scripted and seeded random operation sequences go
to both, and every result must agree (values, keys, namespaces, timestamps present;
semantic search by recall and scores of the top items). Then the engine is closed and
reopened, which InMemoryStore cannot do, and the data must still agree.

Where InMemoryStore's behaviour is an artefact of keeping dicts, the comparison says so:
- it keeps listing a namespace after its last item is deleted, or after a get on it (its
  dict of namespaces is a defaultdict); MemoryBenchStore lists the namespaces that hold
  items, as database-backed stores do, so the reference's empty namespaces are pruned before
  a listing is compared;
- search without a query returns items in insertion order, MemoryBenchStore by namespace
  then key: full results are compared as sets, and pages by size and by being the slice of
  MemoryBenchStore's own order;
- with a query and an offset, it fills the page with unembedded items ignoring the offset;
  MemoryBenchStore pages the scored-then-unscored sequence, so unscored items are compared
  by count and membership;
- it fails a batch in which two puts embed the same text, so random batches have none.
"""

import asyncio
import random
from datetime import datetime
from types import MappingProxyType

import pytest
from langgraph.store.base import (
    GetOp,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchOp,
    get_text_at_path,
)
from langgraph.store.memory import InMemoryStore

import memorybench as mb
from memorybench.langchain import MemoryBenchEmbeddings
from memorybench.langgraph import MemoryBenchStore

WORDS = (
    "apple river mountain piano violin coffee tea garden rocket planet ocean forest "
    "dog cat bird python rust memory engine search paris london tokyo red blue green"
).split()
NAMESPACES = [
    ("users",),
    ("users", "alice"),
    ("users", "bob"),
    ("users", "alice", "notes"),
    ("docs",),
    ("docs", "v1"),
    ("docs", "v2"),
    ("notes", "alice"),
]
KEYS = ["k0", "k1", "k2", "k3", "k4", "k5"]
# How each key is indexed, always the same, so that neither store keeps vectors of paths a
# later put no longer has (InMemoryStore overwrites vectors path by path and never drops one).
POLICY = {"k0": None, "k1": None, "k2": None, "k3": ["text", "tags[*]"], "k4": False,
          "k5": ["meta.lang", "text"]}
UNEMBEDDED = {key for key, policy in POLICY.items() if policy is False}
ALL = 10**6


def hashing_index(dim=64):
    """LangGraph's index configuration with the model-free hashing embedder (bag of words,
    so cosine similarity follows word overlap)."""
    return {"dims": dim, "embed": MemoryBenchEmbeddings(mb.Embedder.hashing(dim)),
            "fields": ["text"]}


def prune(ref):
    """Drops the reference's namespaces that hold no item (see the module docstring)."""
    for namespace in [ns for ns, items in ref._data.items() if not items]:
        del ref._data[namespace]


def same_item(mine, ref):
    if ref is None:
        assert mine is None
        return
    assert (mine.namespace, mine.key, mine.value) == (ref.namespace, ref.key, ref.value)
    assert isinstance(mine.created_at, datetime) and mine.created_at.tzinfo is not None
    assert mine.updated_at >= mine.created_at


def by_key(items):
    return {(item.namespace, item.key): item.value for item in items}


class Pair:
    """The store under test and the reference, fed the same batches; every result is
    compared as it comes. ``compared`` counts the results compared, per kind."""

    def __init__(self, mine, ref):
        self.mine, self.ref = mine, ref
        self.compared = {"get": 0, "search": 0, "semantic": 0, "list": 0}

    def batch(self, ops, use_async=False):
        if any(isinstance(op, ListNamespacesOp) for op in ops):
            prune(self.ref)
        # What every search could return at all, before the batch's puts.
        full = {
            i: (self.mine.search(op.namespace_prefix, filter=op.filter, limit=ALL),
                self.ref.search(op.namespace_prefix, filter=op.filter, limit=ALL))
            for i, op in enumerate(ops) if isinstance(op, SearchOp)
        }
        if use_async:
            mine = asyncio.run(self.mine.abatch(ops))
            ref = asyncio.run(self.ref.abatch(ops))
        else:
            mine, ref = self.mine.batch(ops), self.ref.batch(ops)
        assert len(mine) == len(ref) == len(ops)
        for i, op in enumerate(ops):
            if isinstance(op, GetOp):
                same_item(mine[i], ref[i])
                self.compared["get"] += 1
            elif isinstance(op, ListNamespacesOp):
                assert mine[i] == ref[i], op
                self.compared["list"] += 1
            elif isinstance(op, SearchOp):
                self.compare_search(op, mine[i], ref[i], *full[i])
            else:
                assert mine[i] is None and ref[i] is None
        return mine

    def compare_search(self, op, mine, ref, mine_full, ref_full):
        assert by_key(mine_full) == by_key(ref_full), op
        order = [(item.namespace, item.key) for item in mine_full]
        assert order == sorted(order)
        assert all(isinstance(item.updated_at, datetime) for item in mine)
        if not (op.query and self.ref.index_config):
            assert [(i.namespace, i.key) for i in mine] == order[op.offset : op.offset + op.limit]
            assert len(mine) == len(ref)
            assert all(item.score is None for item in mine)
            self.compared["search"] += 1
            return
        scored = [item for item in mine if item.score is not None]
        ref_scored = [item for item in ref if item.score is not None]
        assert [i.score for i in scored] == pytest.approx([i.score for i in ref_scored], abs=1e-4)
        # Recall: every reference item whose score is not tied with the page's edges is found.
        found = {(i.namespace, i.key) for i in scored}
        if ref_scored:
            edges = [ref_scored[-1].score] + ([ref_scored[0].score] if op.offset else [])
            for item in ref_scored:
                if all(abs(item.score - edge) > 1e-4 for edge in edges):
                    assert (item.namespace, item.key) in found, (op, item)
        unscored = mine[len(scored):]
        assert all(item.score is None and item.key in UNEMBEDDED for item in unscored)
        assert len(mine) == max(0, min(op.limit, len(ref_full) - op.offset))
        if op.offset == 0:
            assert len(unscored) == len(ref) - len(ref_scored)
        self.compared["semantic"] += 1

    def check_everything(self):
        """Every item, namespace and semantic neighbourhood agrees."""
        self.batch([SearchOp((), None, ALL, 0)])
        self.batch([ListNamespacesOp(None, None, ALL, 0)])
        items = self.ref.search((), limit=ALL)
        self.batch([GetOp(item.namespace, item.key) for item in items])


def random_value(rng, key):
    value = {
        "text": " ".join(rng.sample(WORDS, 4)),
        "n": rng.randint(0, 9),
        "tags": rng.sample(WORDS, 2),
        "meta": {"lang": rng.choice(["english", "french"]), "rank": rng.randint(0, 3)},
    }
    if rng.random() < 0.8:
        value["color"] = rng.choice(["red", "blue", "green"])
    return value


def random_filter(rng):
    return rng.choice([
        None, None,
        {"color": rng.choice(["red", "blue"])},
        {"n": {"$gt": rng.randint(0, 9)}},
        {"n": {"$gte": rng.randint(0, 5), "$lt": rng.randint(4, 10)}},
        {"n": {"$ne": rng.randint(0, 9)}, "color": {"$eq": "green"}},
        {"meta": {"lang": "french"}},
        {"meta": {"lang": "english", "rank": rng.randint(0, 3)}},
    ])


def random_op(rng, semantic):
    namespace, key = rng.choice(NAMESPACES), rng.choice(KEYS)
    roll = rng.random()
    if roll < 0.5:
        return PutOp(namespace, key, random_value(rng, key), index=POLICY[key])
    if roll < 0.6:
        return PutOp(namespace, key, None)
    if roll < 0.75:
        return GetOp(rng.choice(NAMESPACES + [("nobody",)]), key)
    prefix = rng.choice(NAMESPACES + [(), ("users",), ("docs",), ("nobody",)])
    prefix = prefix[: rng.randint(0, len(prefix))]
    query = " ".join(rng.sample(WORDS, 2)) if semantic and rng.random() < 0.7 else None
    limit, offset = rng.choice([1, 2, 3, 5, 10]), rng.choice([0, 0, 1, 2, 4])
    return SearchOp(prefix, random_filter(rng), limit, offset, query)


def random_listing(rng):
    labels = ["users", "docs", "alice", "notes", "v1", "*"]
    conditions = []
    for match_type in ("prefix", "suffix"):
        if rng.random() < 0.4:
            path = tuple(rng.choice(labels) for _ in range(rng.randint(1, 2)))
            conditions.append(MatchCondition(match_type, path))
    max_depth = rng.choice([None, None, 1, 2])
    return ListNamespacesOp(tuple(conditions) or None, max_depth, rng.choice([1, 3, 100]),
                            rng.choice([0, 0, 1, 2]))


def without_repeated_texts(ops):
    """Drops the puts of a batch that would embed a text an earlier put of the batch embeds:
    InMemoryStore embeds each distinct text once and then fails to assign the vectors
    ("Number of embeddings (3) does not match number of indices (4)")."""
    seen, kept = set(), []
    for op in ops:
        if isinstance(op, PutOp) and op.value is not None and POLICY[op.key] is not False:
            texts = {t for path in POLICY[op.key] or ["text"]
                     for t in get_text_at_path(op.value, path)}
            if texts & seen:
                continue
            seen |= texts
        kept.append(op)
    return kept


def run_random(pair, rng, steps, semantic):
    for _ in range(steps):
        roll = rng.random()
        if roll < 0.1:
            ops = [random_listing(rng)]
        elif roll < 0.3:
            ops = [random_op(rng, semantic) for _ in range(rng.randint(2, 6))]
            ops = without_repeated_texts(ops)
        else:
            ops = [random_op(rng, semantic)]
        pair.batch(ops, use_async=rng.random() < 0.25)


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("semantic", [False, True], ids=["plain", "semantic"])
def test_random_sequences_match_in_memory_store_and_survive_reopening(tmp_path, seed, semantic):
    rng = random.Random(seed)
    path = str(tmp_path / "store")
    index = hashing_index() if semantic else None
    pair = Pair(MemoryBenchStore(path=path, index=index), InMemoryStore(index=index))
    run_random(pair, rng, 250, semantic)
    pair.check_everything()
    pair.mine.close()
    # A new process would see the same: reopen the directory and keep going.
    pair.mine = MemoryBenchStore(path=path, index=hashing_index() if semantic else None)
    pair.check_everything()
    run_random(pair, rng, 100, semantic)
    pair.check_everything()
    assert min(pair.compared.values() if semantic else
               [pair.compared[k] for k in ("get", "search", "list")]) >= 10, pair.compared
    if semantic:
        # No vector record outlives its item's value: one record per embedded text.
        live = pair.ref.search((), limit=ALL)
        texts = sum({"k3": 3, "k4": 0, "k5": 2}.get(item.key, 1) for item in live)
        assert pair.mine.engine.count("langgraph") == texts
    pair.mine.close()


# Scripted sequences

def both(index=None, path=None):
    return MemoryBenchStore(path=path, index=index), InMemoryStore(index=index)


def test_namespaces_as_langgraph_documents_them(tmp_path):
    mine, ref = both(path=str(tmp_path / "store"))
    for namespace in [("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"),
                      ("a", "b", "f"), ("a", "c", "f"), ("b", "a", "f"), ("users", "123")]:
        for store in (mine, ref):
            store.put(namespace, "k", {"at": list(namespace)})
    listings = [
        dict(prefix=("a", "b"), max_depth=3),
        dict(prefix=("a", "b")),
        dict(suffix=("f",)),
        dict(prefix=("a", "*"), suffix=("f",)),
        dict(prefix=("*", "b")),
        dict(max_depth=1),
        dict(max_depth=2, limit=2, offset=1),
        dict(prefix=("nobody",)),
        dict(),
    ]
    for listing in listings:
        assert mine.list_namespaces(**listing) == ref.list_namespaces(**listing), listing
    assert mine.list_namespaces(prefix=("a", "b"), max_depth=3) == [
        ("a", "b", "c"), ("a", "b", "d"), ("a", "b", "f")]
    assert mine.list_namespaces(suffix=("f",)) == [
        ("a", "b", "f"), ("a", "c", "f"), ("b", "a", "f")]
    for store in (mine, ref):
        store.delete(("users", "123"), "k")
    prune(ref)
    assert mine.list_namespaces(max_depth=1) == ref.list_namespaces(max_depth=1) == [("a",), ("b",)]
    assert [i.namespace for i in mine.search(("a", "b", "d"))] == [("a", "b", "d", "e"),
                                                                  ("a", "b", "d", "i")]
    assert by_key(mine.search(("a",))) == by_key(ref.search(("a",)))
    mine.close()


def test_batch_reads_see_the_store_before_its_puts(tmp_path):
    mine, ref = both(path=str(tmp_path / "store"))
    pair = Pair(mine, ref)
    ns = ("users", "alice")
    results = pair.batch([
        PutOp(ns, "k", {"v": 1}), GetOp(ns, "k"), PutOp(ns, "k", {"v": 2}), SearchOp(ns),
    ])
    assert results == [None, None, None, []]
    assert mine.get(ns, "k").value == {"v": 2}
    results = pair.batch([PutOp(ns, "k", None), GetOp(ns, "k"), PutOp(ns, "other", {"v": 3})])
    assert results[1].value == {"v": 2}
    assert mine.get(ns, "k") is None and mine.get(ns, "other").value == {"v": 3}
    mine.close()


def test_filters_match_in_memory_store(tmp_path):
    mine, ref = both(path=str(tmp_path / "store"))
    values = {
        "a": {"color": "red", "n": 1, "tags": ["x", "y"], "meta": {"lang": "en", "rank": 2}},
        "b": {"color": "blue", "n": 5, "tags": ["x"], "meta": {"lang": "fr", "rank": 2}},
        "c": {"color": "red", "n": 9, "tags": [], "meta": {"lang": "fr"}},
        "d": {"n": 5.5, "name": "zed", "meta": {"lang": "en", "rank": 0}},
    }
    for store in (mine, ref):
        for key, value in values.items():
            store.put(("items",), key, value)
    expected = [
        ({"color": "red"}, {"a", "c"}),
        ({"n": {"$gt": 4}}, {"b", "c", "d"}),
        ({"n": {"$gte": 5, "$lte": 5.5}}, {"b", "d"}),
        ({"n": {"$lt": 5}, "color": "red"}, {"a"}),
        ({"color": {"$ne": "red"}}, {"b", "d"}),
        ({"color": {"$eq": "blue"}}, {"b"}),
        ({"tags": ["x", "y"]}, {"a"}),
        ({"tags": []}, {"c"}),
        ({"meta": {"lang": "fr"}}, {"b", "c"}),
        ({"meta": {"lang": "en", "rank": 0}}, {"d"}),
        ({"missing": "x"}, set()),
    ]
    for filter, keys in expected:
        got = {item.key for item in mine.search(("items",), filter=filter)}
        assert got == keys == {item.key for item in ref.search(("items",), filter=filter)}, filter
    # Order comparisons hold between numbers or between strings, and fail on a missing field.
    assert [i.key for i in mine.search(("items",), filter={"name": {"$gt": "a"}})] == ["d"]
    assert mine.search(("items",), filter={"color": {"$gt": 1}}) == []
    with pytest.raises(mb.InvalidInputError, match="unknown filter operator"):
        mine.search(("items",), filter={"n": {"$in": [1]}})
    mine.close()


DOCS = {
    "py": {"text": "A tutorial on Python programming for beginners", "title": "Python"},
    "ts": {"text": "TypeScript guide for web developers", "title": "TypeScript"},
    "cook": {"text": "How to bake sourdough bread at home", "title": "Baking"},
    "trip": {"text": "Travel tips for visiting Kyoto in autumn", "title": "Kyoto"},
    "dog": {"text": "Training a puppy to sit and stay", "title": "Dogs"},
}


def test_semantic_search_with_minilm_matches_in_memory_store(tmp_path, minilm):
    index = {"dims": 384, "embed": MemoryBenchEmbeddings(minilm), "fields": ["text"]}
    path = str(tmp_path / "store")
    mine, ref = both(index=index, path=path)
    for store in (mine, ref):
        for key, value in DOCS.items():
            store.put(("docs",), key, value)
        store.put(("docs",), "plain", {"text": "not embedded"}, index=False)
    for query in ["python programming", "baking bread", "a holiday in Japan", "pets"]:
        got = mine.search(("docs",), query=query, limit=6)
        want = ref.search(("docs",), query=query, limit=6)
        assert [i.key for i in got] == [i.key for i in want], query
        assert [i.score for i in got[:5]] == pytest.approx([i.score for i in want[:5]], abs=1e-4)
        assert got[-1].key == "plain" and got[-1].score is None
    assert mine.search(("docs",), query="python programming", limit=1)[0].key == "py"
    assert mine.search(("docs",), query="bread", filter={"title": "Dogs"})[0].key == "dog"
    mine.close()
    reopened = MemoryBenchStore(path=path, index=index)
    assert [i.key for i in reopened.search(("docs",), query="puppy training", limit=2)] == [
        i.key for i in ref.search(("docs",), query="puppy training", limit=2)]
    reopened.close()


def cosine(a, b):
    return sum(x * y for x, y in zip(a, b)) / (sum(x * x for x in a) * sum(y * y for y in b)) ** 0.5


def test_updates_keep_created_at_and_replace_vectors(tmp_path):
    store = MemoryBenchStore(path=str(tmp_path / "store"), index=hashing_index())
    embed = mb.Embedder.hashing(64).embed_one
    store.put(("n",), "k", {"text": "apple river mountain"})
    first = store.get(("n",), "k")
    store.put(("n",), "k", {"text": "piano violin coffee"})
    second = store.get(("n",), "k")
    assert second.created_at == first.created_at and second.updated_at > first.updated_at
    assert store.engine.count("langgraph") == 1  # the old text's vector is gone
    [hit] = store.search(("n",), query="apple river mountain")
    old = cosine(embed("apple river mountain"), embed("piano violin coffee"))
    assert hit.score == pytest.approx(old, abs=1e-4) and old < 0.9
    [hit] = store.search(("n",), query="piano violin coffee")
    assert hit.score == pytest.approx(1.0, abs=1e-4)
    store.put(("n",), "k", {"text": "tea garden"}, index=False)
    assert store.engine.count("langgraph") == 0
    store.put(("n",), "k", {"text": "x", "parts": ["tea", "garden", "rocket"]}, index=["parts[*]"])
    assert store.engine.count("langgraph") == 3
    store.delete(("n",), "k")
    assert store.engine.count("langgraph") == 0 and store.get(("n",), "k") is None
    store.close()


def test_records_no_item_lists_are_ignored(tmp_path):
    """A crash between writing a put's vectors and its item leaves records no item lists;
    searches must not count them."""
    store = MemoryBenchStore(path=str(tmp_path / "store"), index=hashing_index())
    store.put(("n",), "k", {"text": "apple river"})
    embed = mb.Embedder.hashing(64).embed_one
    query = embed("piano violin")
    for state_key in ["item.n\x00k", "item.n\x00gone"]:
        store.engine.put("langgraph", "", vectors={"langgraph": query},
                         attributes={"item": state_key, "ns.0": "n", "path": "text"})
    hits = store.search(("n",), query="piano violin")
    [hit] = hits
    assert hit.key == "k"
    real = cosine(query, embed("apple river"))
    assert hit.score == pytest.approx(real, abs=1e-4) and real < 0.9
    store.close()


async def test_async_api_with_an_async_embedding_function(tmp_path):
    embedder = mb.Embedder.hashing(32)

    async def embed(texts):
        return embedder.embed(list(texts))

    store = MemoryBenchStore(path=str(tmp_path / "store"),
                             index={"dims": 32, "embed": embed, "fields": ["text"]})
    await store.aput(("u", "1"), "a", {"text": "dog cat bird"})
    await store.aput(("u", "2"), "b", {"text": "rocket planet ocean"})
    assert (await store.aget(("u", "1"), "a")).value == {"text": "dog cat bird"}
    hits = await store.asearch(("u",), query="planet rocket", limit=1)
    want = cosine(embedder.embed_one("planet rocket"), embedder.embed_one("rocket planet ocean"))
    assert [h.key for h in hits] == ["b"] and hits[0].score == pytest.approx(want, abs=1e-4)
    assert await store.alist_namespaces(prefix=("u",)) == [("u", "1"), ("u", "2")]
    await store.adelete(("u", "1"), "a")
    assert await store.alist_namespaces() == [("u", "2")]
    store.close()


def test_bad_input_raises_typed_errors_and_writes_nothing(tmp_path, engine):
    store = MemoryBenchStore(engine=engine, index=hashing_index(64))
    for bad in [("a.b",), ("",), ("langgraph", "x")]:
        with pytest.raises(ValueError):
            store.put(bad, "k", {"v": 1})
    with pytest.raises(ValueError, match="periods"):
        store.batch([GetOp(("a.b",), "k")])
    for bad in [{"v": {1, 2}}, {"v": float("nan")}, {"v": {1: "int key"}}, ["not", "a", "dict"]]:
        with pytest.raises(mb.InvalidInputError):
            store.batch([PutOp(("ok",), "fine", {"v": 1}), PutOp(("ok",), "k", bad)])
    with pytest.raises(NotImplementedError):
        store.put(("ok",), "k", {"v": 1}, ttl=5)
    with pytest.raises(mb.InvalidInputError, match="TTL"):
        store.batch([PutOp(("ok",), "k", {"v": 1}, ttl=5)])
    with pytest.raises(mb.InvalidInputError, match="limit"):
        store.search(("ok",), limit=-1)
    with pytest.raises(mb.InvalidInputError, match="match type"):
        store.batch([ListNamespacesOp((MatchCondition("middle", ("ok",)),))])
    sixteen = MemoryBenchEmbeddings(mb.Embedder.hashing(16))
    wrong = MemoryBenchStore(engine=engine, namespace="wrong", space="other",
                             index={"dims": 32, "embed": sixteen})
    with pytest.raises(mb.InvalidInputError):
        wrong.put(("ok",), "k", {"text": "sixteen is not thirty-two"})
    assert wrong.get(("ok",), "k") is None and engine.count("wrong") == 0
    assert store.search(()) == [] and engine.count("langgraph") == 0
    with pytest.raises(mb.InvalidInputError, match="64-dimensional"):
        MemoryBenchStore(engine=engine, index=hashing_index(48))
    with pytest.raises(mb.InvalidInputError, match="dims"):
        MemoryBenchStore(engine=engine, index={"embed": lambda texts: []})
    with pytest.raises(mb.InvalidInputError, match="exactly one"):
        MemoryBenchStore(engine=engine, path=str(tmp_path / "x"))


def test_stores_share_an_engine_by_namespace(engine):
    first = MemoryBenchStore(engine=engine)
    second = MemoryBenchStore(engine=engine, namespace="other")
    first.put(("users",), "k", {"v": 1})
    first.put(("users",), "mapping", MappingProxyType({"v": [2]}))  # any Mapping is a value
    assert first.get(("users",), "mapping").value == {"v": [2]}
    assert second.get(("users",), "k") is None and second.list_namespaces() == []
    first.close()  # a shared engine stays open
    assert first.get(("users",), "k").value == {"v": 1}
