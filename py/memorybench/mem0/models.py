"""The embedders and chat models the drop-in talks to.

- :class:`RemoteEmbedder`: an OpenAI-compatible ``POST {base_url}/embeddings`` (OpenAI, vLLM,
  Ollama's ``/v1``, LM Studio, any proxy), batches of at most 100 texts per request.
- :class:`LocalEmbedder`: memorybench's in-process :class:`memorybench.Embedder`
  (all-MiniLM-L6-v2 through ONNX Runtime, or the model-free hashing embedder): offline.
- :class:`RemoteChat`: an OpenAI-compatible ``POST {base_url}/chat/completions``.
- the offline chat model is :class:`memorybench.mem0.extraction.OfflineChat`.

Every embedder replaces newlines by spaces before embedding, as mem0's do.
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Dict, List, Optional, Sequence

from .errors import EmbeddingError, LLMError
from .transport import HTTPFailure, post_json

logger = logging.getLogger(__name__)

BATCH = 100
MAX_CHAT_REPLY_BYTES = 8 << 20
MAX_EMBEDDING_REPLY_BYTES = 64 << 20
REASONING_PREFIXES = ("o1", "o3", "o4", "gpt-5")


def _clean(text: str) -> str:
    return text.replace("\n", " ")


class RemoteEmbedder:
    """Embeddings from an OpenAI-compatible endpoint. ``dimensions`` is sent only when the
    configuration names ``embedding_dims`` (non-Matryoshka servers refuse it)."""

    def __init__(
        self,
        *,
        model: str,
        base_url: str,
        api_key: Optional[str],
        dims: int,
        send_dimensions: bool,
        provider: str = "openai",
    ) -> None:
        self.model = model
        self.url = base_url.rstrip("/") + "/embeddings"
        self.api_key = api_key
        self.dims = dims
        self.send_dimensions = send_dimensions
        self.identity = f"{provider}:{model}"

    def embed(self, text: str) -> List[float]:
        return self._request([_clean(text)])[0]

    def embed_batch(self, texts: Sequence[str]) -> List[List[float]]:
        cleaned = [_clean(t) for t in texts]
        out: List[List[float]] = []
        for start in range(0, len(cleaned), BATCH):
            out.extend(self._request(cleaned[start : start + BATCH]))
        return out

    def _request(self, texts: List[str]) -> List[List[float]]:
        body: Dict[str, Any] = {"input": texts, "model": self.model, "encoding_format": "float"}
        if self.send_dimensions:
            body["dimensions"] = self.dims
        try:
            reply = post_json(
                self.url, body, api_key=self.api_key, max_bytes=MAX_EMBEDDING_REPLY_BYTES
            )
        except HTTPFailure as exc:
            raise EmbeddingError(f"embedding request to {self.url} failed: {exc}") from exc
        data = reply.get("data") if isinstance(reply, dict) else None
        if not isinstance(data, list) or len(data) != len(texts):
            raise EmbeddingError(
                f"{self.url} answered {len(data) if isinstance(data, list) else 'no'} "
                f"embeddings for {len(texts)} texts"
            )
        rows = sorted(data, key=lambda row: row.get("index", 0) if isinstance(row, dict) else 0)
        vectors = []
        for row in rows:
            vector = row.get("embedding") if isinstance(row, dict) else None
            if not isinstance(vector, list) or not all(
                isinstance(x, (int, float)) and not isinstance(x, bool) for x in vector
            ):
                raise EmbeddingError(f"{self.url} answered an embedding that is not a number list")
            if len(vector) != self.dims:
                raise EmbeddingError(
                    f"{self.url} answered {len(vector)}-dimensional embeddings, the configuration "
                    f"says {self.dims} (embedder.config.embedding_dims / "
                    "vector_store.config.embedding_model_dims)"
                )
            vectors.append([float(x) for x in vector])
        return vectors


class LocalEmbedder:
    """memorybench's in-process embedder: ``model="onnx"`` (all-MiniLM-L6-v2, 384 dims, or
    the ONNX export in ``model_dir``, or a named model), ``model="hashing"`` (model-free,
    ``embedding_dims`` wide, 384 by default; for tests and wiring, not for meaning)."""

    def __init__(
        self, model: str = "onnx", dims: Optional[int] = None, model_dir: Optional[str] = None
    ) -> None:
        from .._native import Embedder

        if model == "hashing":
            self.embedder = Embedder.hashing(dims or 384)
        elif model == "onnx":
            self.embedder = Embedder(model_dir) if model_dir else Embedder()
        else:
            self.embedder = Embedder(model_dir, model=model) if model_dir else Embedder(model=model)
        self.dims = self.embedder.dim
        self.identity = self.embedder.model_id
        if dims is not None and dims != self.dims:
            raise ValueError(
                f"embedder.config.embedding_dims is {dims} but the memorybench embedder "
                f"{self.identity!r} gives {self.dims}-dimensional vectors"
            )

    def embed(self, text: str) -> List[float]:
        return list(self.embedder.embed_one(_clean(text)))

    def embed_batch(self, texts: Sequence[str]) -> List[List[float]]:
        return [list(v) for v in self.embedder.embed([_clean(t) for t in texts])]


class RemoteChat:
    """Chat completions from an OpenAI-compatible endpoint, with mem0's request shape:
    ``model``, ``messages``, ``temperature``, ``max_tokens``, ``top_p`` (dropped for
    reasoning models), ``response_format`` when asked."""

    def __init__(
        self,
        *,
        model: str,
        base_url: str,
        api_key: Optional[str],
        temperature: float = 0.1,
        max_tokens: int = 2000,
        top_p: float = 0.1,
        reasoning: Optional[bool] = None,
        reasoning_effort: Optional[str] = None,
        store: Optional[bool] = None,
        response_callback: Optional[Callable[[Any, dict, dict], None]] = None,
    ) -> None:
        self.model = model
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.api_key = api_key
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.top_p = top_p
        if reasoning is None:
            reasoning = model.lower().startswith(REASONING_PREFIXES)
        self.reasoning = reasoning
        self.reasoning_effort = reasoning_effort
        self.store = store
        self.response_callback = response_callback

    def chat(self, messages: List[Dict[str, Any]], response_format: Optional[dict] = None) -> str:
        body: Dict[str, Any] = {}
        if self.reasoning:
            if self.reasoning_effort:
                body["reasoning_effort"] = self.reasoning_effort
        else:
            body.update(temperature=self.temperature, max_tokens=self.max_tokens, top_p=self.top_p)
        body["model"] = self.model
        body["messages"] = messages
        if self.store is not None:
            body["store"] = self.store
        if response_format:
            body["response_format"] = response_format
        try:
            reply = post_json(self.url, body, api_key=self.api_key, max_bytes=MAX_CHAT_REPLY_BYTES)
        except HTTPFailure as exc:
            raise LLMError(str(exc), details={"url": self.url, "status": exc.status}) from exc
        if self.response_callback is not None:
            try:
                self.response_callback(self, reply, body)
            except Exception:  # a monitoring callback never breaks a call, as in mem0
                logger.exception("llm.config.response_callback failed")
        try:
            content = reply["choices"][0]["message"].get("content")
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            raise LLMError(f"{self.url} answered something that is not a chat completion") from exc
        if isinstance(content, list):  # content parts
            content = "".join(
                p.get("text", "") if isinstance(p, dict) else str(p) for p in content
            )
        return content if isinstance(content, str) else ""
