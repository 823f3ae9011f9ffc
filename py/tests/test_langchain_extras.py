"""The LangChain retriever over memory systems and the engine-backed key-value stores,
beyond what LangChain's standard suites check: other memory systems, metadata, typed
errors, persistence across reopening, atomic writes, prefixes."""

import pytest

import memorybench as mb
from memorybench.langchain import (
    MemoryBenchByteStore,
    MemoryBenchJSONStore,
    MemoryBenchRetriever,
)

DIALOGS = [
    [
        {"role": "user", "content": "I adopted a border collie called Pixel."},
        {"role": "assistant", "content": "Congratulations on Pixel!"},
    ],
    [
        {"role": "user", "content": "I play the cello in a community orchestra."},
        {"role": "assistant", "content": "Which piece are you rehearsing?"},
    ],
    [
        {"role": "user", "content": "My brother lives in Montreal and teaches chemistry."},
        {"role": "assistant", "content": "Montreal winters are cold!"},
    ],
]


@pytest.fixture
def open_retriever(engine, minilm):
    """Opens retrievers over memories of `engine` holding DIALOGS, and closes their memories
    afterwards (the engine fixture can only close an engine no memory holds)."""
    opened = []

    def open_(**options):
        retriever = MemoryBenchRetriever.from_engine(
            engine, "user", embedder=minilm, date="2024-05-01", **options
        )
        opened.append(retriever.memory)
        for dialog in DIALOGS:
            retriever.memory.add(dialog)
        return retriever

    yield open_
    for memory in opened:
        memory.close()


@pytest.mark.parametrize("system", ["hybrid", "bm25_message", "embedder_message", "mem0"])
def test_retriever_over_memory_systems(open_retriever, system):
    retriever = open_retriever(system=system, k=2)
    docs = retriever.invoke("What is my border collie called?")
    assert 1 <= len(docs) <= 2
    assert "Pixel" in docs[0].page_content
    assert docs[0].metadata["system"] == system
    assert docs[0].id == docs[0].metadata["doc_id"]
    assert isinstance(docs[0].metadata["score"], float)
    one = retriever.invoke("Where does my brother live?", k=1)
    assert len(one) == 1 and "Montreal" in one[0].page_content


async def test_retriever_async_takes_k(open_retriever):
    retriever = open_retriever()
    assert retriever.k == 4 and retriever.memory.system == "hybrid"
    docs = await retriever.ainvoke("Where does my brother live?", k=1)
    assert len(docs) == 1 and "Montreal" in docs[0].page_content
    assert len(await retriever.ainvoke("Where does my brother live?", k=3)) == 3


def test_retriever_refuses_bad_k(open_retriever):
    retriever = open_retriever()
    with pytest.raises(ValueError):
        MemoryBenchRetriever(memory=retriever.memory, k=0)
    for bad in (0, -1, "2", 1.5, True):
        with pytest.raises(mb.InvalidInputError, match="k must be a positive int"):
            retriever.invoke("dog", k=bad)
    retriever.memory.close()
    with pytest.raises(mb.EngineClosedError):
        retriever.invoke("dog")


@pytest.mark.parametrize(
    "cls,value", [(MemoryBenchByteStore, b"\x00\x01binary"), (MemoryBenchJSONStore, {"a": [1]})]
)
def test_key_value_store_persists_across_reopening(tmp_path, cls, value):
    path = str(tmp_path / "store")
    store = cls(path=path)
    store.mset([("doc/1", value), ("doc/2", value), ("other", value)])
    store.mdelete(["doc/2"])
    store.close()
    with pytest.raises(mb.EngineClosedError):
        store.mget(["doc/1"])
    reopened = cls(path=path)
    assert reopened.mget(["doc/1", "doc/2", "other"]) == [value, None, value]
    assert list(reopened.yield_keys()) == ["doc/1", "other"]
    assert list(reopened.yield_keys(prefix="doc/")) == ["doc/1"]
    assert list(reopened.yield_keys(prefix="nothing")) == []
    reopened.close()


def test_key_value_stores_share_an_engine_by_namespace(engine):
    first = MemoryBenchByteStore(engine=engine, namespace="first")
    second = MemoryBenchJSONStore(engine=engine, namespace="second")
    first.mset([("k", b"bytes")])
    second.mset([("k", "json")])
    assert first.mget(["k"]) == [b"bytes"]
    assert second.mget(["k"]) == ["json"]
    first.close()  # a shared engine stays open
    assert second.mget(["k"]) == ["json"]
    # The entries are the namespace's state keys under kv/, visible to engine code.
    assert engine.state_keys("first") == ["kv/k"]
    assert engine.get_state("second", "kv/k") == "json"


def test_key_value_stores_refuse_bad_input_and_write_nothing(engine):
    blobs = MemoryBenchByteStore(engine=engine)
    blobs.mset([("kept", b"1")])
    with pytest.raises(mb.InvalidInputError, match="not bytes"):
        blobs.mset([("new", b"2"), ("bad", "a str is not bytes")])
    with pytest.raises(mb.InvalidInputError, match="keys must be str"):
        blobs.mset([(3, b"3")])
    with pytest.raises(mb.InvalidInputError, match="keys must be str"):
        blobs.mget([None])
    with pytest.raises(mb.InvalidInputError, match="prefix must be a str"):
        list(blobs.yield_keys(prefix=b"k"))
    assert list(blobs.yield_keys()) == ["kept"]
    values = MemoryBenchJSONStore(engine=engine, namespace="json")
    with pytest.raises(mb.InvalidInputError, match="JSON"):
        values.mset([("new", 1), ("bad", {1, 2})])
    with pytest.raises(mb.InvalidInputError, match="mdelete"):
        values.mset([("none", None)])
    assert list(values.yield_keys()) == []
    with pytest.raises(mb.InvalidInputError, match="exactly one"):
        MemoryBenchByteStore()


async def test_key_value_store_async_prefix(engine):
    store = MemoryBenchJSONStore(engine=engine)
    await store.amset([("user:1", {"n": 1}), ("user:2", {"n": 2}), ("session:1", {})])
    assert [k async for k in store.ayield_keys(prefix="user:")] == ["user:1", "user:2"]
    await store.amdelete(["user:1"])
    assert await store.amget(["user:1", "user:2"]) == [None, {"n": 2}]
