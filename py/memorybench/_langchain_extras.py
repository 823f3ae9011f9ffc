"""The LangChain retriever over a memory system and the key-value stores on the engine's
state (re-exported by :mod:`memorybench.langchain`, which holds the vector store).

- :class:`MemoryBenchRetriever`: a ``BaseRetriever`` over any memory system of the registry
  (:class:`memorybench.Memory`), so a chain or agent retrieves from the hybrid memory, Mem0,
  MemoryOS or a BM25 baseline through LangChain's standard retriever interface.
- :class:`MemoryBenchByteStore` and :class:`MemoryBenchJSONStore`: LangChain ``BaseStore``
  key-value stores (the kind ``CacheBackedEmbeddings``, the multi-vector retriever's docstore
  and LangChain's caches take) whose entries are engine state keys, written atomically and
  durably like any engine data.
"""

from __future__ import annotations

import base64
import threading
from abc import abstractmethod
from typing import Any, Iterator, List, Optional, Sequence, Tuple, TypeVar

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables.config import run_in_executor
from langchain_core.stores import BaseStore
from pydantic import Field

from ._native import Batch, Embedder, Engine, Memory
from ._opened import engine_for_store
from .errors import InvalidInputError

V = TypeVar("V")


class MemoryBenchRetriever(BaseRetriever):
    """LangChain retriever over a memorybench memory system.

    ``memory`` is an open :class:`memorybench.Memory` (any system: ``"hybrid"``, ``"mem0"``,
    ``"bm25_message"``, ...); :meth:`from_engine` opens one, the hybrid memory by default.
    ``k`` is the number of documents returned, also accepted per call
    (``retriever.invoke(query, k=3)``). Each document is one memory unit: its text, with the
    unit id as ``id`` and ``doc_id``, ``score``, ``turns`` and ``system`` as metadata.
    Memorize through the memory itself (``retriever.memory.add(messages)``).
    """

    memory: Any
    """The open :class:`memorybench.Memory` searched."""
    k: int = Field(default=4, ge=1)
    """Documents returned when a call does not say."""

    @classmethod
    def from_engine(
        cls,
        engine: Engine,
        namespace: str,
        *,
        system: str = "hybrid",
        embedder: Optional[Embedder] = None,
        k: int = 4,
        **memory_options: Any,
    ) -> "MemoryBenchRetriever":
        """Opens memory system ``system`` in ``namespace`` of ``engine`` (with the
        in-process MiniLM embedder unless ``embedder`` is given; ``memory_options`` go to
        :class:`memorybench.Memory`: ``llm``, ``date``, ``lang``) and retrieves from it."""
        embedder = embedder if embedder is not None else Embedder()
        memory = Memory(engine, namespace, system=system, embedder=embedder, **memory_options)
        return cls(memory=memory, k=k)

    def _get_relevant_documents(
        self,
        query: str,
        *,
        run_manager: CallbackManagerForRetrieverRun,
        k: Optional[int] = None,
    ) -> List[Document]:
        k = self._k(k)
        return [
            Document(
                id=found.doc_id,
                page_content=found.text,
                metadata={
                    "doc_id": found.doc_id,
                    "score": found.score,
                    "turns": list(found.turns),
                    "system": self.memory.system,
                },
            )
            for found in self.memory.search(query, k)
        ]

    async def _aget_relevant_documents(
        self,
        query: str,
        *,
        run_manager: AsyncCallbackManagerForRetrieverRun,
        k: Optional[int] = None,
    ) -> List[Document]:
        # The memory releases the GIL while it searches: a worker thread does not block
        # the event loop.
        return await run_in_executor(
            None, self._get_relevant_documents, query, run_manager=run_manager.get_sync(), k=k
        )

    def _k(self, k: Optional[int]) -> int:
        if k is None:
            return self.k
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InvalidInputError(f"k must be a positive int, got {k!r}")
        return k


class _StateKeyValueStore(BaseStore[str, V]):
    """A LangChain key-value store whose entries are state keys of an engine namespace.

    Give either an open ``engine`` (shared, left open by :meth:`close`) or a ``path`` (opened
    here, closed by :meth:`close`). Entries are the namespace's state keys ``kv/<key>``;
    ``mset`` and ``mdelete`` are one atomic engine write each. Subclasses say how a value is
    kept as JSON.
    """

    _PREFIX = "kv/"

    def __init__(
        self,
        *,
        engine: Optional[Engine] = None,
        path: Optional[str] = None,
        namespace: str = "langchain_kv",
    ) -> None:
        self.engine, self._owns_engine = engine_for_store(engine, path)
        self.namespace = namespace
        self.engine.ensure_namespace(namespace)
        self._lock = threading.Lock()

    def close(self) -> None:
        """Closes the engine if this store opened it."""
        if self._owns_engine:
            self.engine.close()

    @abstractmethod
    def _encode(self, key: str, value: V) -> Any:
        """``value`` as the JSON kept in the engine state."""

    @abstractmethod
    def _decode(self, stored: Any) -> V:
        """The value a stored JSON stands for."""

    def mget(self, keys: Sequence[str]) -> List[Optional[V]]:
        """The values of ``keys``, None for a key that is not set."""
        values = []
        for key in keys:
            stored = self.engine.get_state(self.namespace, self._state_key(key))
            values.append(None if stored is None else self._decode(stored))
        return values

    def mset(self, key_value_pairs: Sequence[Tuple[str, V]]) -> None:
        """Sets every pair in one atomic write (a repeated key keeps its last value)."""
        batch = Batch()
        for key, value in key_value_pairs:
            batch.put_state(self._state_key(key), self._encode(key, value))
        self._write(batch)

    def mdelete(self, keys: Sequence[str]) -> None:
        """Removes ``keys`` in one atomic write; keys that are not set are ignored."""
        batch = Batch()
        for key in keys:
            batch.delete_state(self._state_key(key))
        self._write(batch)

    def yield_keys(self, *, prefix: Optional[str] = None) -> Iterator[str]:
        """The keys set, sorted, only those starting with ``prefix`` when given."""
        if prefix is not None and not isinstance(prefix, str):
            raise InvalidInputError(f"prefix must be a str, got {type(prefix).__name__}")
        start = len(self._PREFIX)
        for state_key in self.engine.state_keys(self.namespace, self._PREFIX + (prefix or "")):
            yield state_key[start:]

    def _state_key(self, key: str) -> str:
        if not isinstance(key, str):
            raise InvalidInputError(f"keys must be str, got {type(key).__name__}")
        return self._PREFIX + key

    def _write(self, batch: Batch) -> None:
        if len(batch):
            with self._lock:
                self.engine.write(self.namespace, batch)


class MemoryBenchByteStore(_StateKeyValueStore[bytes]):
    """LangChain ``BaseStore[str, bytes]`` (a ``ByteStore``) persisted in a memorybench
    engine: what ``CacheBackedEmbeddings`` and the multi-vector retriever's docstore take.
    Values are kept as base64 text in the engine's state."""

    def _encode(self, key: str, value: bytes) -> str:
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise InvalidInputError(
                f"value of {key!r} is a {type(value).__name__}, not bytes"
            )
        return base64.b64encode(bytes(value)).decode("ascii")

    def _decode(self, stored: Any) -> bytes:
        return base64.b64decode(stored)


class MemoryBenchJSONStore(_StateKeyValueStore[Any]):
    """LangChain ``BaseStore[str, Any]`` for JSON values (dicts, lists, strings, numbers,
    booleans) persisted in a memorybench engine; a value JSON cannot hold raises
    ``InvalidInputError`` and nothing of that ``mset`` is written."""

    def _encode(self, key: str, value: Any) -> Any:
        if value is None:
            raise InvalidInputError(
                f"value of {key!r} is None, which mget reports for a missing key: "
                "use mdelete to remove a key"
            )
        return value

    def _decode(self, stored: Any) -> Any:
        return stored


__all__ = ["MemoryBenchByteStore", "MemoryBenchJSONStore", "MemoryBenchRetriever"]
