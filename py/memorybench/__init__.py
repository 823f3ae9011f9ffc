"""memorybench: an embedded memory store for LLM agents.

One package, three layers:

- :class:`Engine`: a crash-safe store directory (RocksDB) of namespaces of records, searched by
  BM25 (tantivy), by vector (exact, HNSW from a size on) or both fused, with attribute filters.
- :class:`Embedder`: sentence embeddings in-process (all-MiniLM-L6-v2 through ONNX Runtime).
- :class:`Memory`: MemoryBench's memory systems on an engine (the hybrid best-mode memory,
  Mem0 with its history, MemoryOS, A-Mem, the BM25 and embedding baselines).

The benchmark itself, with upstream's names (:mod:`memorybench.benchmark`,
:mod:`memorybench.results`): :func:`load_memory_bench`, :func:`evaluate`,
:func:`summary_results`, :class:`MemoryBenchResults` and :func:`load_result_summary_table`.

``memorybench.langchain`` adds LangChain's ``VectorStore``, ``Embeddings``, a retriever over
any memory system and key-value stores; ``memorybench.langgraph`` adds LangGraph's long-term
memory store; ``memorybench.mem0`` is a drop-in for mem0's ``Memory`` (``from memorybench.mem0
import Memory``). Every error is a subclass of
:class:`memorybench.errors.MemoryBenchError` (except where ``memorybench.mem0`` raises the
built-in class mem0 raises); engine and model work runs without the GIL.
"""

from . import errors
from ._native import (
    ENGINE_FORMAT,
    Batch,
    Embedder,
    Engine,
    Found,
    Hit,
    Memory,
    Record,
    WriteReceipt,
)
from .benchmark import evaluate, load_memory_bench, summary_results
from .errors import *  # noqa: F401,F403
from .results import MemoryBenchResults, load_result_summary_table

__all__ = [
    "ENGINE_FORMAT",
    "Batch",
    "Embedder",
    "Engine",
    "Found",
    "Hit",
    "Memory",
    "MemoryBenchResults",
    "Record",
    "WriteReceipt",
    "errors",
    "evaluate",
    "load_memory_bench",
    "load_result_summary_table",
    "summary_results",
    *errors.__all__,
]
