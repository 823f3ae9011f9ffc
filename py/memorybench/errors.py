"""The exceptions memorybench raises, one per cause, all under :class:`MemoryBenchError`.

The native module raises these classes with the engine's own message (which names the
namespace, space, record or path involved). Causes that are also a Python built-in category
subclass it too, so ``except ValueError`` or ``except KeyError`` keeps working.
"""


class MemoryBenchError(Exception):
    """Base class of every memorybench error."""


class StoreInUseError(MemoryBenchError):
    """Another process (or another open Engine) has the store directory open."""


class NotAStoreError(MemoryBenchError):
    """The directory is missing, not an engine directory, or written by another format."""


class EngineClosedError(MemoryBenchError):
    """The engine (or the memory built on it) was closed."""


class UnknownNamespaceError(MemoryBenchError, KeyError):
    """A namespace that was never created, or was dropped."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class NamespaceExistsError(MemoryBenchError):
    """``create_namespace`` on a name that already exists."""


class RecordNotFoundError(MemoryBenchError, KeyError):
    """A record id that does not exist in the namespace."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class UnknownSpaceError(MemoryBenchError, KeyError):
    """An embedding space that was never created."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class InvalidInputError(MemoryBenchError, ValueError):
    """Input the engine refuses: a vector of the wrong length or with NaNs, a bad name, a
    record with nothing to index, a text above the size limit, a conflicting space."""


class EmbeddingError(MemoryBenchError):
    """The embedder could not run: model or runtime missing, inference failed."""


class ModelError(MemoryBenchError):
    """A language-model call failed (a memory system's, or a judge's), or a metric needs a model
    and the chosen `llm` has none ("offline")."""


class DataError(MemoryBenchError, ValueError):
    """MemoryBench's data cannot be found or read: an unknown dataset, domain or task, a
    missing split, a malformed row, a ``test_idx`` the dataset does not have."""


class StorageError(MemoryBenchError, OSError):
    """The storage layer failed (disk, corruption, background indexing)."""


__all__ = [
    "MemoryBenchError",
    "StoreInUseError",
    "NotAStoreError",
    "EngineClosedError",
    "UnknownNamespaceError",
    "NamespaceExistsError",
    "RecordNotFoundError",
    "UnknownSpaceError",
    "InvalidInputError",
    "EmbeddingError",
    "ModelError",
    "DataError",
    "StorageError",
]
