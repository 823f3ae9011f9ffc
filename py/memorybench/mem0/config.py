"""The configuration of the drop-in: mem0's ``from_config`` dict, checked key by key.

Unlike mem0 (whose pydantic model silently ignores unknown top-level keys such as a
misspelt ``custom_instruction`` or the 1.x ``custom_fact_extraction_prompt``), every key that
is not understood is refused with a ``ValueError`` naming it and listing the accepted ones.

Accepted::

    {
      "vector_store": {"provider": "memorybench" | "qdrant",
                       "config": {"path", "collection_name", "embedding_model_dims", "on_disk"}},
      "llm": {"provider": "openai" | "vllm" | "ollama" | "lmstudio" | "memorybench",
              "config": {"model", "api_key", "temperature", "max_tokens", "top_p", ...}},
      "embedder": {"provider": "openai" | "vllm" | "ollama" | "lmstudio" | "memorybench",
                   "config": {"model", "api_key", "embedding_dims", "<provider>_base_url"}},
      "custom_instructions": str, "version": str,
      "history_db_path": str (accepted, unused: history lives in the engine directory),
      "reranker": None,
      "async_mode": bool (memorybench's, not mem0's: the default of add(async_mode=...)),
    }
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict, Optional, Tuple

TOP_KEYS = (
    "vector_store", "llm", "embedder", "history_db_path", "reranker", "version",
    "custom_instructions", "async_mode",
)
STORE_KEYS = ("path", "collection_name", "embedding_model_dims", "on_disk")
QDRANT_REMOTE_KEYS = ("host", "port", "url", "api_key", "client", "https")
REMOTE_PROVIDERS = ("openai", "vllm", "ollama", "lmstudio")
LLM_KEYS = (
    "model", "api_key", "temperature", "max_tokens", "top_p", "top_k", "enable_vision",
    "vision_details", "reasoning_effort", "is_reasoning_model", "store", "response_callback",
    "base_url",
)
EMBEDDER_KEYS = ("model", "api_key", "embedding_dims", "base_url")
DEFAULT_BASE_URLS = {
    "openai": "https://api.openai.com/v1",
    "vllm": "http://localhost:8000/v1",
    "ollama": "http://localhost:11434",
    "lmstudio": "http://localhost:1234/v1",
}
DEFAULT_LLM_MODELS = {
    "openai": "gpt-5-mini",
    "vllm": "Qwen/Qwen2.5-32B-Instruct",
    "ollama": "llama3.1:70b",
    "lmstudio": "lmstudio-community/Meta-Llama-3.1-70B-Instruct-GGUF/"
    "Meta-Llama-3.1-70B-Instruct-IQ2_M.gguf",
}
DEFAULT_EMBED_MODELS = {
    "openai": ("text-embedding-3-small", 1536),
    "vllm": ("text-embedding-3-small", 1536),
    "ollama": ("nomic-embed-text", 512),
    "lmstudio": ("nomic-ai/nomic-embed-text-v1.5-GGUF/nomic-embed-text-v1.5.f16.gguf", 1536),
}


def default_directory() -> str:
    """Where ``Memory()`` keeps its engine: ``~/.memorybench/mem0`` (a configuration's
    ``vector_store.config.path`` names another place)."""
    return str(Path.home() / ".memorybench" / "mem0")


def _refuse_unknown(given: Dict[str, Any], accepted: Tuple[str, ...], where: str) -> None:
    unknown = [k for k in given if k not in accepted]
    if unknown:
        raise ValueError(
            f"unknown key(s) {', '.join(repr(k) for k in unknown)} in {where} "
            f"(accepted: {', '.join(accepted)})"
        )


def _section(value: Any, name: str, unnamed: str) -> Tuple[str, Dict[str, Any]]:
    """(provider, config) of a section: a missing section is memorybench's offline choice, a
    section without a provider gets mem0's default provider ``unnamed``."""
    if value is None:
        return "memorybench", {}
    if not isinstance(value, dict):
        raise ValueError(f"config {name!r} must be a dict with 'provider' and 'config'")
    _refuse_unknown(value, ("provider", "config"), name)
    provider = value.get("provider", unnamed)
    if not isinstance(provider, str):
        raise ValueError(f"{name}.provider must be a string, got {provider!r}")
    inner = value.get("config") or {}
    if not isinstance(inner, dict):
        raise ValueError(f"{name}.config must be a dict, got {type(inner).__name__}")
    return provider, dict(inner)


def _positive_int(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1 or value > 65536:
        raise ValueError(f"{where} must be an int between 1 and 65536, got {value!r}")
    return value


def _string(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{where} must be a non-empty string, got {value!r}")
    return value


class MemoryConfig:
    """A checked configuration (what ``Memory(config)`` takes; ``Memory.from_config(dict)``
    builds one). Attributes: ``path`` (engine directory, None for a temporary one),
    ``collection_name``, ``dims`` (None: the embedder's), ``llm`` and ``embedder`` (each
    ``(provider, settings)``), ``custom_instructions``, ``version``, ``async_mode``
    (memorybench's own key, not mem0's: whether ``add`` queues by default)."""

    def __init__(self, **sections: Any) -> None:
        _refuse_unknown(sections, TOP_KEYS, "the memory configuration")
        self.version = sections.get("version", "v1.1")
        if not isinstance(self.version, str):
            raise ValueError(f"version must be a string, got {self.version!r}")
        self.custom_instructions = sections.get("custom_instructions")
        if self.custom_instructions is not None and not isinstance(self.custom_instructions, str):
            raise ValueError("custom_instructions must be a string")
        if sections.get("reranker") is not None:
            raise ValueError("reranker is not supported by memorybench.mem0 (give None)")
        self.async_mode = sections.get("async_mode", False)
        if not isinstance(self.async_mode, bool):
            raise ValueError(f"async_mode (memorybench's, not mem0's) must be True or False, got "
                             f"{self.async_mode!r}")
        history = sections.get("history_db_path")
        if history is not None and not isinstance(history, (str, os.PathLike)):
            raise ValueError("history_db_path must be a path string")
        self._vector_store(sections.get("vector_store"))
        self.llm = self._llm(*_section(sections.get("llm"), "llm", "openai"))
        self.embedder = self._embedder(
            *_section(sections.get("embedder"), "embedder", "openai")
        )

    def _vector_store(self, value: Any) -> None:
        provider, inner = _section(value, "vector_store", "qdrant")
        if provider not in ("memorybench", "qdrant"):
            raise ValueError(
                f"vector_store.provider {provider!r} is not supported: use 'memorybench' "
                "(or 'qdrant' with a local 'path', mapped to a memorybench engine)"
            )
        remote = [k for k in inner if k in QDRANT_REMOTE_KEYS and inner[k] is not None]
        if provider == "qdrant" and remote:
            raise ValueError(
                f"vector_store.config {', '.join(remote)}: a qdrant server cannot be used by "
                "memorybench.mem0; give 'path' (a local directory, or ':memory:')"
            )
        inner = {k: v for k, v in inner.items() if not (k in QDRANT_REMOTE_KEYS and v is None)}
        _refuse_unknown(inner, STORE_KEYS, "vector_store.config")
        path = inner.get("path")
        if path is None:
            path = default_directory()
        if not isinstance(path, (str, os.PathLike)):
            raise ValueError(f"vector_store.config.path must be a path, got {path!r}")
        self.path: Optional[str] = None if str(path) == ":memory:" else os.fspath(path)
        name = _string(inner.get("collection_name", "mem0"), "vector_store.config.collection_name")
        if len(name) > 200 or "\x00" in name:
            raise ValueError("vector_store.config.collection_name is too long or holds NUL")
        self.collection_name = name
        dims = inner.get("embedding_model_dims")
        where = "vector_store.config.embedding_model_dims"
        self.dims = None if dims is None else _positive_int(dims, where)

    @staticmethod
    def _llm(provider: str, inner: Dict[str, Any]) -> Tuple[str, Dict[str, Any]]:
        if provider == "memorybench":
            _refuse_unknown(inner, ("model",), "llm.config (provider 'memorybench')")
            if inner.get("model", "offline") != "offline":
                raise ValueError("llm.config.model of provider 'memorybench' must be 'offline'")
            return provider, {}
        if provider not in REMOTE_PROVIDERS:
            raise ValueError(
                f"llm.provider {provider!r} is not supported: use one of "
                f"{', '.join(REMOTE_PROVIDERS)} (OpenAI-compatible) or 'memorybench' (offline)"
            )
        url_key = f"{provider}_base_url"
        _refuse_unknown(inner, LLM_KEYS + (url_key,), f"llm.config (provider {provider!r})")
        if inner.get("enable_vision"):
            raise ValueError("llm.config.enable_vision: memorybench.mem0 does not support vision")
        settings = {
            "model": _string(inner.get("model") or DEFAULT_LLM_MODELS[provider],
                             "llm.config.model"),
            "api_key": inner.get("api_key"),
            "base_url": _base_url(provider, inner.get(url_key) or inner.get("base_url"), "llm"),
            "temperature": inner.get("temperature", 0.1),
            "max_tokens": inner.get("max_tokens", 2000),
            "top_p": inner.get("top_p", 0.1),
            "reasoning": inner.get("is_reasoning_model"),
            "reasoning_effort": inner.get("reasoning_effort"),
            "store": inner.get("store"),
            "response_callback": inner.get("response_callback"),
        }
        for key in ("temperature", "top_p"):
            if isinstance(settings[key], bool) or not isinstance(settings[key], (int, float)):
                raise ValueError(f"llm.config.{key} must be a number, got {settings[key]!r}")
        _positive_int(settings["max_tokens"], "llm.config.max_tokens")
        settings["api_key"] = _api_key(provider, settings["api_key"], settings["base_url"], "llm")
        return provider, settings

    def _embedder(self, provider: str, inner: Dict[str, Any]) -> Tuple[str, Dict[str, Any]]:
        dims = inner.get("embedding_dims")
        if dims is not None:
            dims = _positive_int(dims, "embedder.config.embedding_dims")
        if provider == "memorybench":
            _refuse_unknown(inner, ("model", "model_dir", "embedding_dims"),
                            "embedder.config (provider 'memorybench')")
            model = inner.get("model")
            if model is not None:
                _string(model, "embedder.config.model")
            return provider, {"model": model, "model_dir": inner.get("model_dir"), "dims": dims}
        if provider not in REMOTE_PROVIDERS:
            raise ValueError(
                f"embedder.provider {provider!r} is not supported: use one of "
                f"{', '.join(REMOTE_PROVIDERS)} (OpenAI-compatible) or 'memorybench' (offline)"
            )
        url_key = f"{provider}_base_url"
        _refuse_unknown(inner, EMBEDDER_KEYS + (url_key,),
                        f"embedder.config (provider {provider!r})")
        model, default_dims = DEFAULT_EMBED_MODELS[provider]
        base_url = _base_url(provider, inner.get(url_key) or inner.get("base_url"), "embedder")
        if dims is not None and self.dims is not None and dims != self.dims:
            raise ValueError(
                f"embedder.config.embedding_dims ({dims}) differs from "
                f"vector_store.config.embedding_model_dims ({self.dims})"
            )
        return provider, {
            "model": _string(inner.get("model") or model, "embedder.config.model"),
            "api_key": _api_key(provider, inner.get("api_key"), base_url, "embedder"),
            "base_url": base_url,
            "dims": dims or self.dims or default_dims,
            "send_dimensions": dims is not None,
        }


def _base_url(provider: str, given: Optional[str], section: str) -> str:
    url = given
    if url is None and provider == "openai":
        url = os.environ.get("OPENAI_BASE_URL") or (
            os.environ.get("OPENAI_API_BASE") if section == "embedder" else None
        )
    if url is None and provider == "vllm":
        url = os.environ.get("VLLM_BASE_URL")
    url = url or DEFAULT_BASE_URLS[provider]
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise ValueError(f"{section}.config base URL must be an http(s) URL, got {url!r}")
    if provider == "ollama" and not url.rstrip("/").endswith("/v1"):
        url = url.rstrip("/") + "/v1"  # Ollama's OpenAI-compatible API
    return url


def _api_key(provider: str, given: Any, base_url: str, section: str) -> Optional[str]:
    if given is not None and not isinstance(given, str):
        raise ValueError(f"{section}.config.api_key must be a string")
    key = given
    if key is None and provider == "openai":
        key = os.environ.get("OPENAI_API_KEY")
        if key is None and base_url.startswith("https://api.openai.com"):
            raise ValueError(
                f"{section}.config.api_key is missing and OPENAI_API_KEY is not set "
                f"(needed by {base_url})"
            )
    if key is None and provider == "vllm":
        key = os.environ.get("VLLM_API_KEY") or "vllm-api-key"
    if key is None and provider == "lmstudio":
        key = "lm-studio"
    return key
