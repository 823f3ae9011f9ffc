"""A drop-in for mem0's open-source ``Memory`` (mem0ai 2.2.1) on a memorybench engine.

Switch with one line::

    from memorybench.mem0 import Memory      # instead of: from mem0 import Memory

``Memory()`` works offline (memorybench's embedder and an offline extractor, the engine in
``~/.memorybench/mem0``); ``Memory.from_config(...)`` takes mem0's configuration dict
(OpenAI-compatible LLM and embedder endpoints, ``vector_store`` provider ``memorybench`` or
``qdrant`` with a local ``path``). Methods, arguments, return shapes, events and errors
follow mem0 2.2.1 as measured by the differential test (py/tests/test_mem0_dropin.py); the
differences are listed in docs/parity.md. There is no telemetry.
"""

from .aio import AsyncMemory
from .config import MemoryConfig
from .errors import EmbeddingError, FilterValidationError, LLMError, Mem0Error, ValidationError
from .memory import Memory

__all__ = [
    "AsyncMemory",
    "EmbeddingError",
    "FilterValidationError",
    "LLMError",
    "Mem0Error",
    "Memory",
    "MemoryConfig",
    "ValidationError",
]
