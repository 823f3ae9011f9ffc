"""LangChain's own standard suites from langchain-tests, run unmodified (each class's
test_no_overrides_DO_NOT_OVERRIDE checks that none of the suite's tests is replaced):

- VectorStoreIntegrationTests against MemoryBenchVectorStore: sync and async, get_by_ids,
  ids, deletion, idempotence, updates in place;
- EmbeddingsIntegrationTests against MemoryBenchEmbeddings (in-process MiniLM);
- RetrieversIntegrationTests against MemoryBenchRetriever over the hybrid memory;
- BaseStoreSyncTests and BaseStoreAsyncTests against MemoryBenchByteStore (bytes) and
  MemoryBenchJSONStore (JSON values), each on a fresh engine directory.
"""

import pytest
from langchain_tests.integration_tests import (
    BaseStoreAsyncTests,
    BaseStoreSyncTests,
    EmbeddingsIntegrationTests,
    RetrieversIntegrationTests,
)
from langchain_tests.integration_tests.vectorstores import VectorStoreIntegrationTests

import memorybench as mb
from memorybench.langchain import (
    MemoryBenchByteStore,
    MemoryBenchEmbeddings,
    MemoryBenchJSONStore,
    MemoryBenchRetriever,
    MemoryBenchVectorStore,
)


class TestMemoryBenchVectorStore(VectorStoreIntegrationTests):
    @pytest.fixture()
    def vectorstore(self, tmp_path):
        store = MemoryBenchVectorStore(self.get_embeddings(), path=str(tmp_path / "store"))
        try:
            yield store
        finally:
            store.close()


class TestMemoryBenchEmbeddings(EmbeddingsIntegrationTests):
    @property
    def embeddings_class(self):
        return MemoryBenchEmbeddings


# Dialogs the retriever's memory holds: more rounds than the suite's largest k (3).
DIALOGS = [
    [
        {"role": "user", "content": "My sister Lena moved to Porto last spring."},
        {"role": "assistant", "content": "Porto is lovely; does she like it there?"},
    ],
    [
        {"role": "user", "content": "Lena works as a marine biologist studying octopuses."},
        {"role": "assistant", "content": "That sounds like fascinating work."},
    ],
    [
        {"role": "user", "content": "I am learning Portuguese so I can visit Lena."},
        {"role": "assistant", "content": "Boa sorte! Practice a little every day."},
    ],
    [
        {"role": "user", "content": "My favourite dish is grilled sardines."},
        {"role": "assistant", "content": "A classic in Portugal."},
    ],
    [
        {"role": "user", "content": "Next month I am flying to Porto for Lena's birthday."},
        {"role": "assistant", "content": "Have a wonderful trip."},
    ],
]


class TestMemoryBenchRetriever(RetrieversIntegrationTests):
    @pytest.fixture(autouse=True)
    def hybrid_memory(self, tmp_path, minilm):
        """The hybrid memory the retrievers the suite builds search, holding DIALOGS."""
        engine = mb.Engine(tmp_path / "store")
        memory = mb.Memory(engine, "chat", embedder=minilm, date="2024-05-01")
        for dialog in DIALOGS:
            memory.add(dialog)
        self.memory = memory
        yield memory
        memory.close()
        engine.close()

    @property
    def retriever_constructor(self):
        return MemoryBenchRetriever

    @property
    def retriever_constructor_params(self):
        return {"memory": self.memory}

    @property
    def retriever_query_example(self):
        return "Where does Lena live?"


class _ByteStoreFixtures:
    """The byte store and three byte values, for both of LangChain's key-value suites."""

    @pytest.fixture
    def kv_store(self, tmp_path):
        store = MemoryBenchByteStore(path=str(tmp_path / "store"))
        try:
            yield store
        finally:
            store.close()

    @pytest.fixture
    def three_values(self):
        return (b"foo", b"\x00\xffbar", b"")


class _JSONStoreFixtures:
    """The JSON store and three JSON values, for both of LangChain's key-value suites."""

    @pytest.fixture
    def kv_store(self, tmp_path):
        store = MemoryBenchJSONStore(path=str(tmp_path / "store"))
        try:
            yield store
        finally:
            store.close()

    @pytest.fixture
    def three_values(self):
        return ({"name": "Lena", "city": "Porto"}, [1, 2.5, "three", None], "sardines")


class TestMemoryBenchByteStoreSync(_ByteStoreFixtures, BaseStoreSyncTests[bytes]):
    pass


class TestMemoryBenchByteStoreAsync(_ByteStoreFixtures, BaseStoreAsyncTests[bytes]):
    pass


class TestMemoryBenchJSONStoreSync(_JSONStoreFixtures, BaseStoreSyncTests):
    pass


class TestMemoryBenchJSONStoreAsync(_JSONStoreFixtures, BaseStoreAsyncTests):
    pass
