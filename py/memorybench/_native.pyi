"""Type stubs of the native module (the Rust crate py/, built by maturin)."""

from os import PathLike
from types import TracebackType
from typing import Any, Mapping, Optional, Sequence, Union

ENGINE_FORMAT: int

_Path = Union[str, PathLike[str]]
_Vectors = Mapping[str, Sequence[float]]
_Attributes = Mapping[str, str]

class Record:
    id: int
    text: str
    body: Optional[str]
    attributes: dict[str, str]
    created_at_ms: int
    seq: int
    @property
    def content(self) -> str: ...

class Hit:
    record: Record
    score: float

class WriteReceipt:
    seq: int
    ids: list[int]
    deleted: int

class Batch:
    def __init__(self) -> None: ...
    def put(
        self,
        text: str,
        *,
        vectors: Optional[_Vectors] = None,
        attributes: Optional[_Attributes] = None,
        body: Optional[str] = None,
        created_at_ms: Optional[int] = None,
    ) -> None: ...
    def update(
        self,
        id: int,
        text: str,
        *,
        vectors: Optional[_Vectors] = None,
        attributes: Optional[_Attributes] = None,
        body: Optional[str] = None,
        created_at_ms: Optional[int] = None,
    ) -> None: ...
    def delete(self, id: int) -> None: ...
    def put_state(self, key: str, value: Any) -> None: ...
    def delete_state(self, key: str) -> None: ...
    def __len__(self) -> int: ...

class Engine:
    def __init__(self, path: _Path, *, create: bool = True, sync_writes: bool = True) -> None: ...
    @property
    def path(self) -> str: ...
    @property
    def closed(self) -> bool: ...
    def close(self) -> None: ...
    def __enter__(self) -> "Engine": ...
    def __exit__(
        self,
        kind: Optional[type[BaseException]],
        value: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> bool: ...
    def flush(self) -> None: ...
    def merge_lexical_segments(self) -> None: ...
    def set_ef_search(self, ef: int) -> None: ...
    def create_namespace(self, name: str, *, analyzer: str = "standard") -> None: ...
    def ensure_namespace(self, name: str, *, analyzer: str = "standard") -> None: ...
    def drop_namespace(self, name: str) -> None: ...
    def forget(self, names: list[str]) -> int: ...
    def compact(self) -> None: ...
    def namespaces(self) -> list[str]: ...
    def count(self, namespace: str) -> int: ...
    def create_space(self, name: str, dim: int) -> None: ...
    def spaces(self) -> dict[str, int]: ...
    def put(
        self,
        namespace: str,
        text: str,
        *,
        vectors: Optional[_Vectors] = None,
        attributes: Optional[_Attributes] = None,
        body: Optional[str] = None,
        created_at_ms: Optional[int] = None,
    ) -> int: ...
    def update(
        self,
        namespace: str,
        id: int,
        text: str,
        *,
        vectors: Optional[_Vectors] = None,
        attributes: Optional[_Attributes] = None,
        body: Optional[str] = None,
        created_at_ms: Optional[int] = None,
    ) -> None: ...
    def delete(self, namespace: str, id: int) -> bool: ...
    def write(self, namespace: str, batch: Batch) -> WriteReceipt: ...
    def get(self, namespace: str, id: int) -> Optional[Record]: ...
    def records(self, namespace: str) -> list[Record]: ...
    def search_text(
        self, namespace: str, query: str, k: int = 10, *, filter: Optional[_Attributes] = None
    ) -> list[Hit]: ...
    def search_vector(
        self,
        namespace: str,
        space: str,
        vector: Sequence[float],
        k: int = 10,
        *,
        filter: Optional[_Attributes] = None,
    ) -> list[Hit]: ...
    def search_hybrid(
        self,
        namespace: str,
        text: str,
        space: str,
        vector: Sequence[float],
        k: int = 10,
        *,
        filter: Optional[_Attributes] = None,
        candidates: Optional[int] = None,
        rrf_k: float = 60.0,
    ) -> list[Hit]: ...
    def put_state(self, namespace: str, key: str, value: Any) -> None: ...
    def get_state(self, namespace: str, key: str) -> Any: ...
    def delete_state(self, namespace: str, key: str) -> None: ...
    def state_keys(self, namespace: str, prefix: str = "") -> list[str]: ...

class Embedder:
    def __init__(self, model_dir: Optional[_Path] = None) -> None: ...
    @staticmethod
    def hashing(dim: int = 256) -> "Embedder": ...
    @property
    def model_id(self) -> str: ...
    @property
    def dim(self) -> int: ...
    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...
    def embed_one(self, text: str) -> list[float]: ...

class Found:
    doc_id: str
    score: float
    text: str
    turns: list[str]

class Memory:
    def __init__(
        self,
        engine: Engine,
        namespace: str,
        *,
        system: str = "hybrid",
        embedder: Optional[Embedder] = None,
        llm: str = "offline",
        date: Optional[str] = None,
        lang: str = "en",
    ) -> None: ...
    @property
    def system(self) -> str: ...
    def add(self, messages: Sequence[Mapping[str, str]]) -> list[dict[str, Any]]: ...
    def add_conversation(
        self,
        sessions: Sequence[Mapping[str, Any]],
        *,
        speakers: Optional[tuple[str, str]] = None,
    ) -> list[str]: ...
    def search(self, query: str, k: Optional[int] = None) -> list[Found]: ...
    def history(self) -> list[dict[str, Any]]: ...
    def stats(self) -> dict[str, int]: ...
    def usage(self) -> dict[str, Any]: ...
    def close(self) -> None: ...
    def __enter__(self) -> "Memory": ...
    def __exit__(
        self,
        kind: Optional[type[BaseException]],
        value: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> bool: ...
