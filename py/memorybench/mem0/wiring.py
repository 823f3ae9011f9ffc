"""Builds the embedder and the chat model a checked configuration names."""

from __future__ import annotations

import logging
from typing import Any

from .config import MemoryConfig
from .extraction import OfflineChat
from .models import LocalEmbedder, RemoteChat, RemoteEmbedder

logger = logging.getLogger(__name__)


def build_embedder(config: MemoryConfig) -> Any:
    """The embedder: OpenAI-compatible over HTTP, or memorybench's own. With provider
    'memorybench' and no model, all-MiniLM-L6-v2 (ONNX) when it loads, else the hashing
    embedder (logged)."""
    provider, settings = config.embedder
    if provider != "memorybench":
        return RemoteEmbedder(provider=provider, **settings)
    dims = settings["dims"] or config.dims
    model, model_dir = settings["model"], settings["model_dir"]
    if model is None and dims in (None, 384):
        try:
            embedder = LocalEmbedder("onnx", dims, model_dir)
        except Exception as exc:  # no ONNX Runtime or model on this machine
            logger.warning("the ONNX embedder is unavailable (%s): using the hashing embedder, "
                           "which matches words, not meanings", exc)
            embedder = LocalEmbedder("hashing", dims)
    else:
        embedder = LocalEmbedder(model or "hashing", dims, model_dir)
    if config.dims is not None and config.dims != embedder.dims:
        raise ValueError(
            f"vector_store.config.embedding_model_dims is {config.dims} but the embedder "
            f"{embedder.identity!r} gives {embedder.dims}-dimensional vectors"
        )
    return embedder


def build_llm(config: MemoryConfig) -> Any:
    """The chat model: OpenAI-compatible over HTTP, or the offline one."""
    provider, settings = config.llm
    if provider == "memorybench":
        return OfflineChat()
    return RemoteChat(**settings)
