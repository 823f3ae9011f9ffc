"""MemoryBenchVectorStore beyond LangChain's standard suite: filters, BM25 and hybrid search,
persistence across reopening, the in-process embeddings, and bad input."""

import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding

import memorybench as mb
from memorybench.langchain import MemoryBenchEmbeddings, MemoryBenchVectorStore

DOCS = [
    Document(page_content="Pixel the border collie chews shoes", metadata={"who": "Maya", "n": 1}),
    Document(page_content="Jon's bowls cracked in the kiln", metadata={"who": "Jon", "n": 2}),
    Document(page_content="Maya runs the Lisbon half marathon", metadata={"who": "Maya", "n": 3}),
]


@pytest.fixture
def store(tmp_path):
    store = MemoryBenchVectorStore(MemoryBenchEmbeddings(), path=str(tmp_path / "store"))
    yield store
    store.close()


def test_semantic_search_with_minilm(store):
    ids = store.add_documents(DOCS)
    found = store.similarity_search_with_score("puppy chewing footwear", k=1)
    assert found[0][0].id == ids[0]
    assert 0.0 < found[0][1] <= 1.0
    relevance = store.similarity_search_with_relevance_scores("a long running race in Portugal", k=1)
    assert relevance[0][0].id == ids[2]


def test_metadata_filters(store):
    ids = store.add_documents(DOCS)
    found = store.similarity_search("collie", k=3, filter={"who": "Maya"})
    assert {d.id for d in found} == {ids[0], ids[2]}
    assert store.similarity_search("collie", k=3, filter={"who": "Maya", "n": 3})[0].id == ids[2]
    assert store.similarity_search("collie", k=3, filter={"n": "3"}) == []  # 3 is not "3"
    with pytest.raises(mb.InvalidInputError, match="only equality"):
        store.similarity_search("collie", filter={"n": {"$gt": 1}})


def test_bm25_and_hybrid(store):
    ids = store.add_documents(DOCS)
    bm25 = store.bm25_search_with_score("kiln bowls", k=3)
    assert [d.id for d, _ in bm25] == [ids[1]]
    hybrid = store.hybrid_search_with_score("marathon in Lisbon", k=2, filter={"who": "Maya"})
    assert hybrid[0][0].id == ids[2]
    assert all(d.metadata["who"] == "Maya" for d, _ in hybrid)


def test_documents_survive_reopening(tmp_path):
    embeddings = DeterministicFakeEmbedding(size=8)
    path = str(tmp_path / "store")
    first = MemoryBenchVectorStore.from_texts(
        ["alpha", "beta"], embeddings, metadatas=[{"k": 1}, {"k": 2}], ids=["a", "b"], path=path
    )
    first.close()
    again = MemoryBenchVectorStore(embeddings, path=path)
    assert again.get_by_ids(["b", "a"]) == [
        Document(id="b", page_content="beta", metadata={"k": 2}),
        Document(id="a", page_content="alpha", metadata={"k": 1}),
    ]
    again.add_texts(["alpha 2"], ids=["a"])
    assert again.get_by_ids(["a"])[0].page_content == "alpha 2"
    assert again.engine.count("langchain") == 2
    again.close()


def test_shared_engine_and_namespaces(tmp_path):
    embeddings = DeterministicFakeEmbedding(size=8)
    with mb.Engine(tmp_path / "store") as engine:
        one = MemoryBenchVectorStore(embeddings, engine=engine, namespace="one")
        two = MemoryBenchVectorStore(embeddings, engine=engine, namespace="two")
        one.add_texts(["only in one"])
        assert two.similarity_search("only in one") == []
        one.close()  # leaves a shared engine open
        assert not engine.closed


def test_bad_input(tmp_path, store):
    with pytest.raises(mb.InvalidInputError, match="exactly one"):
        MemoryBenchVectorStore(DeterministicFakeEmbedding(size=4))
    with pytest.raises(mb.InvalidInputError, match="text 1 is a int"):
        store.add_texts(["fine", 42])
    with pytest.raises(mb.InvalidInputError, match="metadata of document 0"):
        store.add_texts(["x"], metadatas=[{"f": object()}])
    with pytest.raises(mb.InvalidInputError, match="2 ids for 1 texts"):
        store.add_texts(["x"], ids=["a", "b"])
    store.add_texts(["kept"], ids=["k"])
    other = MemoryBenchVectorStore(DeterministicFakeEmbedding(size=7), engine=store.engine)
    with pytest.raises(mb.InvalidInputError, match="dimension 7, expected 384"):
        other.add_texts(["wrong size"])
    assert [d.page_content for d in store.get_by_ids(["k"])] == ["kept"]
    assert store.engine.count("langchain") == 1


def test_delete_without_ids_deletes_nothing(store):
    # As InMemoryVectorStore (issue 76: delete(None) emptied the store); delete_all=True does.
    ids = store.add_documents(DOCS)
    assert store.delete(None) is False
    assert store.delete() is False
    assert len(store.get_by_ids(ids)) == 3
    assert store.delete(delete_all=True) is True
    assert store.get_by_ids(ids) == []
