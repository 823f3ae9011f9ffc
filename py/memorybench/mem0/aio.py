"""``AsyncMemory``: the same API as coroutines (mem0's ``AsyncMemory``).

Each coroutine runs the synchronous method in a worker thread (``asyncio.to_thread``); the
engine releases the GIL while it works, so concurrent calls overlap. ``from_config`` and
``close`` stay synchronous, as in mem0; ``add`` takes mem0's extra ``llm=`` (a LangChain chat
model used for procedural memories). Background adds (memorybench's ``async_mode``) as in
:class:`Memory`, with ``wait`` and ``event`` as coroutines.
"""

from __future__ import annotations

import asyncio
from typing import Any, Dict, Optional

from .memory import _UNSET, Memory


class AsyncMemory:
    """mem0's ``AsyncMemory`` on a memorybench engine; wraps a :class:`Memory`
    (``self.memory``)."""

    def __init__(self, config: Optional[Any] = None) -> None:
        self.memory = Memory(config)
        self.config = self.memory.config

    @classmethod
    def from_config(cls, config_dict: Dict[str, Any]) -> "AsyncMemory":
        """An AsyncMemory from mem0's configuration dict (synchronous, as mem0's)."""
        if not isinstance(config_dict, dict):
            raise TypeError("from_config takes the configuration dict")
        return cls(config_dict)

    async def add(self, messages, *, user_id: Optional[str] = None,
                  agent_id: Optional[str] = None, run_id: Optional[str] = None,
                  metadata: Optional[Dict[str, Any]] = None, timestamp: Optional[Any] = None,
                  expiration_date: Optional[Any] = None, infer: bool = True,
                  memory_type: Optional[str] = None, prompt: Optional[str] = None, llm=None,
                  async_mode: Optional[bool] = None):
        """:meth:`Memory.add` as a coroutine; ``llm`` (a LangChain chat model) writes
        procedural memories, and cannot be combined with ``async_mode``."""
        return await asyncio.to_thread(
            self.memory._add, messages, user_id, agent_id, run_id, metadata, timestamp,
            expiration_date, infer, memory_type, prompt, llm, async_mode,
        )

    async def wait(self, timeout: Optional[float] = None) -> bool:
        """:meth:`Memory.wait` as a coroutine."""
        return await asyncio.to_thread(self.memory.wait, timeout)

    async def event(self, event_id: str) -> Optional[Dict[str, Any]]:
        """:meth:`Memory.event` as a coroutine."""
        return await asyncio.to_thread(self.memory.event, event_id)

    async def get(self, memory_id):
        """:meth:`Memory.get` as a coroutine."""
        return await asyncio.to_thread(self.memory.get, memory_id)

    async def get_all(self, *, filters: Optional[Dict[str, Any]] = None, top_k: int = 20,
                      show_expired: bool = False, **kwargs):
        """:meth:`Memory.get_all` as a coroutine."""
        return await asyncio.to_thread(
            lambda: self.memory.get_all(filters=filters, top_k=top_k,
                                        show_expired=show_expired, **kwargs)
        )

    async def search(self, query: str, *, top_k: int = 20,
                     filters: Optional[Dict[str, Any]] = None, threshold: float = 0.1,
                     rerank: bool = False, explain: bool = False,
                     reference_date: Optional[Any] = None, show_expired: bool = False, **kwargs):
        """:meth:`Memory.search` as a coroutine."""
        return await asyncio.to_thread(
            lambda: self.memory.search(
                query, top_k=top_k, filters=filters, threshold=threshold, rerank=rerank,
                explain=explain, reference_date=reference_date, show_expired=show_expired,
                **kwargs,
            )
        )

    async def update(self, memory_id, text: Optional[str] = None,
                     metadata: Optional[Dict[str, Any]] = None, expiration_date: Any = _UNSET,
                     data: Optional[str] = None):
        """:meth:`Memory.update` as a coroutine."""
        return await asyncio.to_thread(
            self.memory.update, memory_id, text, metadata, expiration_date, data
        )

    async def delete(self, memory_id):
        """:meth:`Memory.delete` as a coroutine."""
        return await asyncio.to_thread(self.memory.delete, memory_id)

    async def delete_all(self, user_id=None, agent_id=None, run_id=None):
        """:meth:`Memory.delete_all` as a coroutine."""
        return await asyncio.to_thread(self.memory.delete_all, user_id, agent_id, run_id)

    async def history(self, memory_id):
        """:meth:`Memory.history` as a coroutine."""
        return await asyncio.to_thread(self.memory.history, memory_id)

    async def reset(self):
        """:meth:`Memory.reset` as a coroutine."""
        return await asyncio.to_thread(self.memory.reset)

    def close(self):
        """:meth:`Memory.close` (synchronous, as mem0's)."""
        self.memory.close()

    async def __aenter__(self):
        return self

    async def __aexit__(self, exc_type, exc_val, exc_tb):
        self.close()
        return False

    async def chat(self, query):
        """Not implemented, as in mem0."""
        raise NotImplementedError("Chat function not implemented yet.")
