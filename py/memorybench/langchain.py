"""LangChain integration: a ``VectorStore`` kept in a memorybench engine, the in-process
embedder as LangChain ``Embeddings``, a ``BaseRetriever`` over any memory system, and
key-value stores (``BaseStore``) on the engine's state.

Each document is one engine record in a namespace: its text is indexed for BM25, its
embedding for cosine search, and its LangChain id and metadata ride along as attributes, so
the store survives restarts and crashes like any engine data. Scalar metadata values can be
filtered on (``filter={"source": "notes"}``: equality, all pairs must hold).
"""

from __future__ import annotations

import json
import threading
import uuid
from typing import Any, Iterable, List, Optional, Sequence, Tuple

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import VectorStore

from ._native import Batch, Embedder, Engine, Hit
from ._langchain_extras import MemoryBenchByteStore, MemoryBenchJSONStore, MemoryBenchRetriever
from ._opened import engine_for_store
from .errors import InvalidInputError

_ID = "lc_id"
_METADATA = "lc_metadata"
_FIELD = "meta."


class MemoryBenchEmbeddings(Embeddings):
    """The engine's in-process embedder (all-MiniLM-L6-v2 by default) as LangChain
    ``Embeddings``: no server, no network."""

    def __init__(self, embedder: Optional[Embedder] = None) -> None:
        self.embedder = embedder if embedder is not None else Embedder()

    def embed_documents(self, texts: List[str]) -> List[List[float]]:
        """One vector per text, in order (unit length for MiniLM)."""
        return self.embedder.embed(texts)

    def embed_query(self, text: str) -> List[float]:
        """The vector of one search text."""
        return self.embedder.embed_one(text)


class MemoryBenchVectorStore(VectorStore):
    """A LangChain vector store in a namespace of a memorybench :class:`Engine`.

    Give either an open ``engine`` (shared with other code, left open by :meth:`close`) or a
    ``path`` (opened here and closed by :meth:`close`). Vectors live in the engine space
    ``space`` (default ``"langchain"``), created with the first embedding's length.
    """

    def __init__(
        self,
        embedding: Embeddings,
        *,
        engine: Optional[Engine] = None,
        path: Optional[str] = None,
        namespace: str = "langchain",
        space: str = "langchain",
    ) -> None:
        self.engine, self._owns_engine = engine_for_store(engine, path)
        self.embedding = embedding
        self.namespace = namespace
        self.space = space
        self.engine.ensure_namespace(namespace)
        self._lock = threading.Lock()
        # LangChain id -> engine record id, derived from the records themselves.
        self._ids = {
            record.attributes[_ID]: record.id
            for record in self.engine.records(namespace)
            if _ID in record.attributes
        }

    @property
    def embeddings(self) -> Embeddings:
        return self.embedding

    def close(self) -> None:
        """Closes the engine if this store opened it."""
        if self._owns_engine:
            self.engine.close()

    # Writing

    def add_texts(
        self,
        texts: Iterable[str],
        metadatas: Optional[List[dict]] = None,
        *,
        ids: Optional[List[Optional[str]]] = None,
        **kwargs: Any,
    ) -> List[str]:
        texts = list(texts)
        if metadatas is not None and len(metadatas) != len(texts):
            raise InvalidInputError(
                f"{len(metadatas)} metadatas for {len(texts)} texts: give one per text"
            )
        if ids is not None and len(ids) != len(texts):
            raise InvalidInputError(f"{len(ids)} ids for {len(texts)} texts: give one per text")
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise InvalidInputError(f"text {i} is a {type(text).__name__}, not a str")
        ids = [i if i is not None else str(uuid.uuid4()) for i in (ids or [None] * len(texts))]
        metadatas = metadatas or [{} for _ in texts]
        attributes = [_attributes(i, doc_id, m) for i, (doc_id, m) in enumerate(zip(ids, metadatas))]
        vectors = self.embedding.embed_documents(texts) if texts else []
        if texts and self.space not in self.engine.spaces():
            self.engine.create_space(self.space, len(vectors[0]))
        # A repeated id keeps its last document, as writing them one after another would.
        last = {doc_id: i for i, doc_id in enumerate(ids)}
        with self._lock:
            batch = Batch()
            puts = []
            for i, doc_id in enumerate(ids):
                if last[doc_id] != i:
                    continue
                fields = dict(vectors={self.space: vectors[i]}, attributes=attributes[i])
                if doc_id in self._ids:
                    batch.update(self._ids[doc_id], texts[i], **fields)
                else:
                    batch.put(texts[i], **fields)
                    puts.append(doc_id)
            receipt = self.engine.write(self.namespace, batch)
            self._ids.update(zip(puts, receipt.ids))
        return ids

    def delete(self, ids: Optional[List[str]] = None, **kwargs: Any) -> Optional[bool]:
        """Deletes the documents with these ids (unknown ids are ignored).

        No ids deletes nothing, as LangChain's ``InMemoryVectorStore`` does (a missing
        argument must not empty a store); ``delete(delete_all=True)`` empties it.
        """
        if ids is None and not kwargs.get("delete_all", False):
            return False
        with self._lock:
            doomed = list(self._ids) if ids is None else [i for i in ids if i in self._ids]
            batch = Batch()
            for doc_id in doomed:
                batch.delete(self._ids[doc_id])
            self.engine.write(self.namespace, batch)
            for doc_id in doomed:
                del self._ids[doc_id]
        return True

    # Reading

    def get_by_ids(self, ids: Sequence[str], /) -> List[Document]:
        documents = []
        for doc_id in ids:
            record_id = self._ids.get(doc_id)
            record = None if record_id is None else self.engine.get(self.namespace, record_id)
            if record is not None:
                documents.append(_document(record))
        return documents

    def similarity_search(
        self, query: str, k: int = 4, filter: Optional[dict] = None, **kwargs: Any
    ) -> List[Document]:
        return [doc for doc, _ in self.similarity_search_with_score(query, k, filter=filter)]

    def similarity_search_with_score(
        self, query: str, k: int = 4, filter: Optional[dict] = None, **kwargs: Any
    ) -> List[Tuple[Document, float]]:
        """Documents by cosine similarity to the query's embedding, with the similarity."""
        vector = self.embedding.embed_query(query)
        return self._scored(self._vector_hits(vector, k, filter))

    def similarity_search_by_vector(
        self, embedding: List[float], k: int = 4, filter: Optional[dict] = None, **kwargs: Any
    ) -> List[Document]:
        return [doc for doc, _ in self._scored(self._vector_hits(embedding, k, filter))]

    def bm25_search_with_score(
        self, query: str, k: int = 4, filter: Optional[dict] = None
    ) -> List[Tuple[Document, float]]:
        """Documents by BM25 over their text (no embedding), with the BM25 score."""
        hits = self.engine.search_text(self.namespace, query, k, filter=_filter(filter))
        return self._scored(hits)

    def hybrid_search_with_score(
        self, query: str, k: int = 4, filter: Optional[dict] = None
    ) -> List[Tuple[Document, float]]:
        """BM25 and cosine rankings fused by reciprocal rank fusion, with the fused score."""
        if self.space not in self.engine.spaces():
            return []
        vector = self.embedding.embed_query(query)
        hits = self.engine.search_hybrid(
            self.namespace, query, self.space, vector, k, filter=_filter(filter)
        )
        return self._scored(hits)

    def _vector_hits(self, vector: List[float], k: int, filter: Optional[dict]) -> List[Hit]:
        if self.space not in self.engine.spaces():
            return []
        return self.engine.search_vector(
            self.namespace, self.space, vector, k, filter=_filter(filter)
        )

    def _scored(self, hits: List[Hit]) -> List[Tuple[Document, float]]:
        return [(_document(hit.record), hit.score) for hit in hits]

    def _select_relevance_score_fn(self):
        # Scores are cosine similarities already: LangChain's cosine relevance (1 - distance).
        return lambda score: score

    @classmethod
    def from_texts(
        cls,
        texts: List[str],
        embedding: Embeddings,
        metadatas: Optional[List[dict]] = None,
        *,
        ids: Optional[List[str]] = None,
        engine: Optional[Engine] = None,
        path: Optional[str] = None,
        namespace: str = "langchain",
        space: str = "langchain",
        **kwargs: Any,
    ) -> "MemoryBenchVectorStore":
        store = cls(embedding, engine=engine, path=path, namespace=namespace, space=space)
        store.add_texts(texts, metadatas, ids=ids)
        return store


def _attributes(index: int, doc_id: str, metadata: dict) -> dict:
    """The record attributes of a document: its id, its metadata as JSON, and each scalar
    metadata value on its own (as JSON) for filters."""
    if not isinstance(doc_id, str):
        raise InvalidInputError(f"id of document {index} is a {type(doc_id).__name__}, not a str")
    try:
        attributes = {_ID: doc_id, _METADATA: json.dumps(metadata, sort_keys=True)}
    except (TypeError, ValueError) as error:
        raise InvalidInputError(
            f"metadata of document {index} is not JSON-serializable: {error}"
        ) from None
    for key, value in metadata.items():
        if isinstance(value, (str, int, float, bool)) or value is None:
            attributes[_FIELD + str(key)] = json.dumps(value)
    return attributes


def _filter(filter: Optional[dict]) -> Optional[dict]:
    """A LangChain metadata filter ``{key: value}`` as engine attribute equalities."""
    if not filter:
        return None
    equalities = {}
    for key, value in filter.items():
        if not (isinstance(value, (str, int, float, bool)) or value is None):
            raise InvalidInputError(
                f"filter on {key!r}: only equality with a scalar value is supported "
                f"({{key: value}}), got {type(value).__name__}"
            )
        equalities[_FIELD + str(key)] = json.dumps(value)
    return equalities


def _document(record) -> Document:
    return Document(
        id=record.attributes.get(_ID),
        page_content=record.text,
        metadata=json.loads(record.attributes.get(_METADATA, "{}")),
    )


__all__ = [
    "MemoryBenchByteStore",
    "MemoryBenchEmbeddings",
    "MemoryBenchJSONStore",
    "MemoryBenchRetriever",
    "MemoryBenchVectorStore",
]
