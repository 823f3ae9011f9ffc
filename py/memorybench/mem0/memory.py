"""``Memory``: mem0 2.2.1's open-source ``Memory`` API on a memorybench engine.

Same methods, keyword-only arguments, defaults, return shapes (key order included), events,
errors and quirks as mem0's (see docs/python.md, "mem0 drop-in", and docs/parity.md for the
measured differences). Memory ids come from :func:`new_id` (a module-level function, so a test
can replace it to draw seeded ids, as the differential does for mem0's ``uuid``).

``add(..., async_mode=True)`` (or ``"async_mode": True`` in the configuration) is
memorybench's addition: the add is queued durably and run by a background worker (see
:mod:`memorybench.mem0.background`); :meth:`Memory.wait` and :meth:`Memory.event` follow it.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import uuid
from copy import deepcopy
from datetime import datetime, timezone
from typing import Any, Dict, List, Optional

from . import validate
from .background import Background, Seal, check_queueable
from .config import MemoryConfig
from .errors import LLMError, ValidationError
from .extraction import (
    AGENT_SCOPE_PARAGRAPH,
    EXTRACTION_SYSTEM_PROMPT,
    PROCEDURAL_REQUEST,
    PROCEDURAL_SYSTEM_PROMPT,
    extraction_prompt,
    parse_facts,
    strip_fence,
    transcript,
)
from .reading import Reads, canonical_id
from .store import Store, Writes
from .wiring import build_embedder, build_llm

logger = logging.getLogger(__name__)

PROCEDURAL = "procedural_memory"
_UNSET = object()


def new_id() -> str:
    """A new memory id (uuid4). Tests replace this function to draw seeded ids."""
    return str(uuid.uuid4())


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


def _md5(text: str) -> str:
    return hashlib.md5(text.encode()).hexdigest()


def _history_row(memory_id: str, old: Any, new: Any, event: str, **fields: Any) -> Dict[str, Any]:
    return {
        "id": str(uuid.uuid4()), "memory_id": memory_id, "old_memory": old, "new_memory": new,
        "event": event, "created_at": fields.get("created_at"),
        "updated_at": fields.get("updated_at"), "is_deleted": bool(fields.get("is_deleted")),
        "actor_id": fields.get("actor_id"), "role": fields.get("role"),
    }


def _session_scope(scope: Dict[str, str]) -> str:
    def escape(value: str) -> str:
        return value.replace("%", "%25").replace("&", "%26").replace("=", "%3D")

    return "&".join(f"{k}={escape(scope[k])}" for k in sorted(scope) if scope.get(k))


class Memory(Reads):
    """mem0's ``Memory`` on a memorybench engine. ``Memory()`` works offline in
    ``~/.memorybench/mem0``; ``Memory.from_config(dict)`` takes
    mem0's configuration dict (see :mod:`memorybench.mem0.config`)."""

    def __init__(self, config: Optional[Any] = None) -> None:
        if config is None:
            config = MemoryConfig()
        elif isinstance(config, dict):
            config = MemoryConfig(**config)
        elif not isinstance(config, MemoryConfig):
            raise TypeError("config must be a memorybench.mem0.MemoryConfig or a dict")
        self.config = config
        self.embedding_model = build_embedder(config)
        self.llm = build_llm(config)
        self.collection_name = config.collection_name
        self.api_version = config.version
        self.custom_instructions = config.custom_instructions
        self._store = Store(
            config.path, config.collection_name, self.embedding_model.dims,
            self.embedding_model.identity,
        )
        self._lock = threading.RLock()
        self.async_mode = config.async_mode
        try:  # last: it starts processing what a previous process left queued
            self._background = Background(self._store, self._lock, self._run_queued)
        except BaseException:
            self._store.close()
            raise

    @classmethod
    def from_config(cls, config_dict: Dict[str, Any]) -> "Memory":
        """A Memory from mem0's configuration dict (see :mod:`memorybench.mem0.config`)."""
        if not isinstance(config_dict, dict):
            raise TypeError("from_config takes the configuration dict")
        return cls(MemoryConfig(**config_dict))

    # -- add ------------------------------------------------------------------------------------

    def add(self, messages, *, user_id: Optional[str] = None, agent_id: Optional[str] = None,
            run_id: Optional[str] = None, metadata: Optional[Dict[str, Any]] = None,
            timestamp: Optional[Any] = None, expiration_date: Optional[Any] = None,
            infer: bool = True, memory_type: Optional[str] = None,
            prompt: Optional[str] = None, async_mode: Optional[bool] = None):
        """Stores memories from ``messages`` (a str, a message dict or a list of them) in the
        scope of the given ids (one at least). ``infer=False`` stores each non-system message
        as it is; ``infer=True`` asks the language model for facts (one call) and stores the
        ones not already stored word for word. Returns ``{"results": [{"id", "memory",
        "event": "ADD", ...}]}``. ``async_mode=True`` (memorybench's; None: the
        configuration's ``async_mode``, False unless set) checks the arguments, queues the add
        durably and returns ``{"results": [{"message", "status": "PENDING", "event_id"}]}``
        at once; :meth:`wait` and :meth:`event` follow it."""
        return self._add(messages, user_id, agent_id, run_id, metadata, timestamp,
                         expiration_date, infer, memory_type, prompt, None, async_mode)

    def _add(self, messages, user_id, agent_id, run_id, metadata, timestamp, expiration_date,
             infer, memory_type, prompt, llm, async_mode=None, seal: Optional[Seal] = None):
        if async_mode is None:
            async_mode = self.async_mode
        elif not isinstance(async_mode, bool):
            raise TypeError(f"async_mode must be True, False or None, got {async_mode!r}")
        if async_mode and llm is not None:
            raise ValueError("llm= cannot be used with async_mode: a queued add is stored, and "
                             "a chat model object cannot be")
        if timestamp is not None:
            raise ValueError("The timestamp parameter is not supported by the OSS Memory SDK.")
        expiry = validate.expiration(expiration_date)
        base, scope = validate.scope_and_metadata(user_id, agent_id, run_id, metadata)
        if expiry is not None:
            base["expiration_date"] = expiry
        if memory_type is not None and memory_type != PROCEDURAL:
            raise ValidationError(
                f"Invalid 'memory_type'. Please pass {PROCEDURAL} to create procedural memories.",
                "VALIDATION_002",
                details={"provided_type": memory_type, "valid_type": PROCEDURAL},
                suggestion=f"Use '{PROCEDURAL}' to create procedural memories.",
            )
        messages = validate.message_list(messages)
        if prompt is not None:
            if not isinstance(prompt, str):
                raise TypeError(f"prompt must be a str, got {type(prompt).__name__}")
            validate.text(prompt, "prompt")
        for i, message in enumerate(messages):
            if isinstance(message, dict) and isinstance(message.get("content"), str):
                validate.text(message["content"], f"messages[{i}].content")
        procedural = agent_id is not None and memory_type == PROCEDURAL
        if async_mode:
            check_queueable(messages, procedural=procedural, infer=infer)
            return self._background.submit({
                "messages": messages, **{k: scope.get(k) for k in validate.SCOPE_KEYS},
                "metadata": metadata, "expiration_date": expiry, "infer": bool(infer),
                "memory_type": memory_type, "prompt": prompt,
            })
        if procedural:
            return self._procedural(messages, base, prompt, llm, seal)
        messages = validate.text_messages(messages)
        if not infer:
            return {"results": self._add_raw(messages, base, seal)}
        return {"results": self._add_inferred(messages, base, scope, prompt, seal)}

    def _run_queued(self, request: Dict[str, Any], seal: Seal) -> None:
        """Runs a queued add (``request``: its arguments) as a synchronous add, ``seal``
        adding the queue bookkeeping to its write."""
        self._add(**request, timestamp=None, llm=None, async_mode=False, seal=seal)

    def _payload(self, text: str, meta: Dict[str, Any], created_at: Optional[str] = None):
        payload = deepcopy(meta)
        payload["data"] = text
        payload["hash"] = _md5(text)
        if "created_at" not in payload:
            payload["created_at"] = created_at or _now()
        payload["updated_at"] = payload["created_at"]
        return payload

    def _add_raw(self, messages: List[Dict[str, Any]], base: Dict[str, Any],
                 seal: Optional[Seal]) -> List[dict]:
        writes, results = Writes(), []
        for i, message in enumerate(messages):
            role, content = message.get("role"), message.get("content")
            if role is None or content is None:
                logger.warning("skipping a message without role or content: %.200r", message)
                continue
            if role == "system":
                continue
            meta = deepcopy(base)
            meta["role"] = role
            name = message.get("name")
            if name:
                meta["actor_id"] = name
            vector = self.embedding_model.embed(validate.text(content, f"messages[{i}].content"))
            memory_id = new_id()
            payload = self._payload(content, meta)
            writes.put_memory(memory_id, vector, payload, self._store.space)
            writes.history(_history_row(
                memory_id, None, content, "ADD", created_at=payload["created_at"],
                updated_at=payload["updated_at"], actor_id=payload.get("actor_id"),
                role=payload.get("role"),
            ))
            results.append({"id": memory_id, "memory": content, "event": "ADD",
                            "actor_id": name if name else None, "role": role})
        self._commit(writes, results, seal)
        return results

    def _commit(self, writes: Writes, results: List[dict], seal: Optional[Seal],
                session: Optional[str] = None, messages: Optional[List[dict]] = None) -> None:
        """Applies an add's writes (with the call's messages, for infer=True) in one batch."""
        with self._lock:
            if session is not None:
                self._store.save_messages(writes, session, messages)
            if seal is not None:
                seal(writes, results)
            self._store.apply(writes)

    def _add_inferred(self, messages, base, scope, prompt, seal) -> List[dict]:
        session = _session_scope(scope)
        last = [row for _, row in self._store.window(session)]
        new_messages = transcript(messages)
        query = self.embedding_model.embed(new_messages)
        existing = self._store.nearest(query, 10, scope)
        system = EXTRACTION_SYSTEM_PROMPT
        if scope.get("agent_id") and not scope.get("user_id"):
            system += AGENT_SCOPE_PARAGRAPH
        user = extraction_prompt(
            existing=[{"id": str(i), "text": payload.get("data", "")}
                      for i, (_, payload, _) in enumerate(existing)],
            new_messages=new_messages, last_messages=last,
            today=datetime.now(timezone.utc).date().isoformat(),
            custom_instructions=prompt or self.custom_instructions,
        )
        try:
            reply = self.llm.chat(
                [{"role": "system", "content": system}, {"role": "user", "content": user}],
                response_format={"type": "json_object"},
            )
        except Exception as exc:
            raise LLMError(f"LLM extraction failed: {exc}") from exc
        facts = parse_facts(reply)
        texts = [f["text"] for f in facts if isinstance(f.get("text"), str) and f["text"]]
        vectors = dict(zip(texts, self.embedding_model.embed_batch(texts))) if texts else {}
        known = {p.get("hash") for _, p, _ in existing if p.get("hash")}
        writes, results = Writes(), []
        for fact in facts:
            text = fact.get("text")
            if not isinstance(text, str) or text not in vectors:
                continue
            digest = _md5(text)
            if digest in known:
                continue
            known.add(digest)
            memory_id = new_id()
            payload = self._payload(text, base)
            if fact.get("attributed_to"):
                payload["attributed_to"] = fact["attributed_to"]
            writes.put_memory(memory_id, vectors[text], payload, self._store.space)
            writes.history(_history_row(memory_id, None, text, "ADD",
                                        created_at=payload["created_at"]))
            results.append({"id": memory_id, "memory": text, "event": "ADD"})
        self._commit(writes, results, seal, session, messages)
        return results

    def _procedural(self, messages, base, prompt, llm, seal) -> Dict[str, Any]:
        request = [{"role": "system", "content": prompt or PROCEDURAL_SYSTEM_PROMPT}, *messages,
                   {"role": "user", "content": PROCEDURAL_REQUEST}]
        if llm is not None:  # a LangChain chat model (AsyncMemory.add(llm=...))
            reply = getattr(llm.invoke(input=request), "content", "")
        else:
            reply = self.llm.chat(request)
        summary = strip_fence(reply)
        if not summary:
            raise ValueError("The language model returned no content for the procedural memory "
                             "summary (it may have declined the request).")
        meta = {**base, "memory_type": PROCEDURAL}
        vector = self.embedding_model.embed(summary)
        memory_id = new_id()
        payload = self._payload(summary, meta)
        writes = Writes()
        writes.put_memory(memory_id, vector, payload, self._store.space)
        writes.history(_history_row(memory_id, None, summary, "ADD",
                                    created_at=payload["created_at"],
                                    updated_at=payload["updated_at"]))
        results = [{"id": memory_id, "memory": summary, "event": "ADD"}]
        self._commit(writes, results, seal)
        return {"results": results}

    # -- changes --------------------------------------------------------------------------------

    def update(self, memory_id, text: Optional[str] = None,
               metadata: Optional[Dict[str, Any]] = None, expiration_date: Any = _UNSET,
               data: Optional[str] = None):
        """Replaces the text and/or merges ``metadata`` into the memory (keys are never
        removed; scope ids and actor_id cannot change) and/or sets ``expiration_date`` (None
        clears it). Every call adds an UPDATE history row."""
        if data is not None:
            logger.warning("update(data=...) is deprecated: use text=...")
            if text is None:
                text = data
        if text is None and metadata is None and expiration_date is _UNSET:
            raise ValueError("At least one of text, metadata, or expiration_date must be provided.")
        changes = validate.metadata(metadata) if isinstance(metadata, dict) else metadata
        if expiration_date is not _UNSET:
            changes = changes or {}
            changes["expiration_date"] = validate.expiration(expiration_date)
        vector = None
        if text is not None:
            vector = self.embedding_model.embed(validate.text(text, "text"))
        with self._lock:
            key = canonical_id(memory_id)
            found = self._store.find(key) if key else None
            if found is None:
                raise ValueError(
                    f"Memory with id {memory_id} not found. Please provide a valid 'memory_id'"
                )
            record_id, old = found
            previous = old.get("data")
            if text is None:
                text = previous
            if not isinstance(text, str):
                raise ValueError(f"Memory with id {memory_id} does not have text content to update")
            payload = deepcopy(old)
            if changes is not None:
                if not isinstance(changes, dict):
                    raise AttributeError(f"metadata must be a dict, got {type(changes).__name__}")
                payload.update(validate.strip_identity(changes, old, "update()"))
            payload["data"] = text
            payload["hash"] = _md5(text)
            payload["created_at"] = old.get("created_at")
            payload["updated_at"] = _now()
            if vector is None:
                vector = self.embedding_model.embed(text)
            writes = Writes()
            writes.update_memory(record_id, key, vector, payload, self._store.space)
            writes.history(_history_row(
                memory_id, previous, text, "UPDATE", created_at=payload["created_at"],
                updated_at=payload["updated_at"], actor_id=payload.get("actor_id"),
                role=payload.get("role"),
            ))
            self._store.apply(writes)
        return {"message": "Memory updated successfully!"}

    def _delete_into(self, writes: Writes, memory_id: str, record_id: int, payload: dict) -> None:
        writes.delete(record_id)
        writes.history(_history_row(
            memory_id, payload.get("data", ""), None, "DELETE",
            created_at=validate.utc_iso(payload.get("created_at")), updated_at=_now(),
            actor_id=payload.get("actor_id"), role=payload.get("role"), is_deleted=True,
        ))

    def delete(self, memory_id):
        """Deletes a memory (its history stays)."""
        with self._lock:
            key = canonical_id(memory_id)
            found = self._store.find(key) if key else None
            if found is None:
                raise ValueError(f"Memory with id {memory_id} not found")
            writes = Writes()
            self._delete_into(writes, memory_id, found[0], found[1])
            self._store.apply(writes)
        return {"message": "Memory deleted successfully!"}

    def delete_all(self, user_id: Optional[str] = None, agent_id: Optional[str] = None,
                   run_id: Optional[str] = None):
        """Deletes every memory carrying all the given ids (one DELETE history row each)."""
        given = {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}
        scope = {}
        for key, value in given.items():
            value = validate.scope_id(value, key)
            if value:
                scope[key] = value
        if not scope:
            raise ValueError(
                "At least one filter is required to delete all memories. If you want to delete "
                "all memories, use the `reset()` method."
            )
        self._background.wait()  # what was queued before this call is deleted too
        with self._background.exclusive(), self._lock:
            writes = Writes()
            for memory_id, payload, record_id in self._store.memories(scope):
                self._delete_into(writes, memory_id, record_id, payload)
            self._store.apply(writes)
        return {"message": "Memories deleted successfully!"}

    def reset(self):
        """Deletes every memory, history row and stored message of the collection, and the
        queued background adds (recorded as FAILED, cancelled), after the one running."""
        with self._background.exclusive(), self._lock:
            self._background.reset(self._store.reset)

    # -- background adds (memorybench's) --------------------------------------------------------

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Blocks until every background add queued before the call has run: True, or False
        when ``timeout`` seconds passed first (or the memory was closed). Raises
        ``RuntimeError`` if the worker stopped because it could not write to the engine."""
        return self._background.wait(timeout)

    def event(self, event_id: str) -> Optional[Dict[str, Any]]:
        """The outcome of a background add by its ``event_id``: ``{"event_id", "status":
        "PENDING"}``, ``{..., "status": "SUCCEEDED", "results": [...]}`` (what a synchronous
        add returns under "results") or ``{..., "status": "FAILED", "error", "request"}``
        (``add(**request)`` resubmits it); None when unknown (never issued here, older than
        the newest 1 000 outcomes, or from before a ``reset()``)."""
        return self._background.event(event_id)

    def close(self):
        """Stops the background worker after the add it is running (what is still queued
        stays on disk for the next open), then closes the engine (and deletes a
        ``:memory:`` store's temporary directory)."""
        self._background.stop()
        self._store.close()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.close()
        return False

    def chat(self, query):
        """Not implemented, as in mem0."""
        raise NotImplementedError("Chat function not implemented yet.")
