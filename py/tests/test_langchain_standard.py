"""LangChain's own standard suite for vector stores (langchain-tests'
VectorStoreIntegrationTests), run unmodified against MemoryBenchVectorStore: sync and async,
get_by_ids, ids, deletion, idempotence, updates in place."""

import pytest
from langchain_tests.integration_tests.vectorstores import VectorStoreIntegrationTests

from memorybench.langchain import MemoryBenchVectorStore


class TestMemoryBenchVectorStore(VectorStoreIntegrationTests):
    @pytest.fixture()
    def vectorstore(self, tmp_path):
        store = MemoryBenchVectorStore(self.get_embeddings(), path=str(tmp_path / "store"))
        try:
            yield store
        finally:
            store.close()
