"""The exceptions of the mem0 drop-in.

mem0 2.2.1 raises its own ``ValidationError`` (bad ``add`` input: no scope id, bad
``messages`` type, bad ``memory_type``) and ``LLMError`` (the extraction call failed). Both
carry ``message``, ``error_code``, ``details``, ``suggestion`` and ``debug_info`` and, as in
mem0, are **not** ``ValueError`` subclasses: ``except ValueError`` does not catch them. They
derive from :class:`memorybench.errors.MemoryBenchError` (and so from ``Exception``).

Everything else mem0 reports with a built-in class (``ValueError``, ``TypeError``,
``AttributeError``) is raised here with the same class. The filter layer of mem0 surfaces
pydantic's ``ValidationError`` (a ``ValueError``) for a filter value of the wrong type; the
drop-in raises :class:`FilterValidationError`, also a ``ValueError``.
"""

from __future__ import annotations

from typing import Any, Dict, Optional

from ..errors import MemoryBenchError


class Mem0Error(MemoryBenchError):
    """Base class of the structured errors (mem0's ``mem0.exceptions.MemoryError``)."""

    default_code = "MEM_001"

    def __init__(
        self,
        message: str,
        error_code: Optional[str] = None,
        details: Optional[Dict[str, Any]] = None,
        suggestion: Optional[str] = None,
        debug_info: Optional[Dict[str, Any]] = None,
    ) -> None:
        self.message = message
        self.error_code = error_code or self.default_code
        self.details = details or {}
        self.suggestion = suggestion
        self.debug_info = debug_info or {}
        super().__init__(message)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(message={self.message!r}, error_code={self.error_code!r}, "
            f"details={self.details!r}, suggestion={self.suggestion!r}, "
            f"debug_info={self.debug_info!r})"
        )


class ValidationError(Mem0Error):
    """Input ``add`` refuses, with mem0's codes: ``VALIDATION_001`` (no user_id, agent_id or
    run_id), ``VALIDATION_002`` (a memory_type other than procedural_memory),
    ``VALIDATION_003`` (messages neither str, dict nor list)."""

    default_code = "VALIDATION_001"


class LLMError(Mem0Error):
    """The language model could not be reached, answered with an HTTP error (after at most
    two retries of a 5xx or 429), or sent something that is not a chat completion."""

    default_code = "LLM_001"


class EmbeddingError(Mem0Error):
    """The embedding endpoint could not be reached or answered with an error."""

    default_code = "EMBED_001"


class FilterValidationError(ValueError):
    """A filter value of the wrong type: an exact match on a float, None or a tuple, an
    ``in``/``nin`` list mixing types, a non-numeric range bound, ``contains`` on a non-string
    (where mem0 raises pydantic's ``ValidationError``, also a ``ValueError``)."""


__all__ = ["Mem0Error", "ValidationError", "LLMError", "EmbeddingError", "FilterValidationError"]
