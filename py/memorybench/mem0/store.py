"""Where the drop-in keeps everything: one namespace of a memorybench engine per collection.

Three kinds of records, told apart by the attribute ``kind``:

- ``memory``: text = the memory, body = mem0's payload as JSON (metadata keys flat, scope
  ids, ``data``, ``hash``, timestamps, ``role``...), attributes ``id`` (the uuid) and the
  scope ids (``user_id``, ``agent_id``, ``run_id``) so that the engine narrows searches and
  listings by scope; the vector goes to the engine space named like the collection.
- ``history``: one row of ``Memory.history`` (body), attribute ``memory_id``.
- ``message``: one message of an ``add(infer=True)`` window (body), attribute ``scope``.

Every operation is one atomic engine write (a memory with its history rows and the messages
of the call), so a crash never leaves a memory without its ADD row.
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
import weakref
from datetime import datetime, timezone
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

from .._native import Batch, Engine

logger = logging.getLogger(__name__)

WINDOW = 10
SCOPE_KEYS = ("user_id", "agent_id", "run_id")

Payload = Dict[str, Any]


def _attributes(memory_id: str, payload: Payload) -> Dict[str, str]:
    attributes = {"kind": "memory", "id": memory_id}
    for key in SCOPE_KEYS:
        value = payload.get(key)
        if isinstance(value, str) and value:
            attributes[key] = value
    return attributes


def _second(stamp: Any) -> Optional[str]:
    """An ISO timestamp to the second in UTC, as SQLite's DATETIME() gives it (None when
    unreadable): mem0 orders history rows by it."""
    if not isinstance(stamp, str):
        return None
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc)
    return moment.strftime("%Y-%m-%d %H:%M:%S")


def _nulls_first(value: Optional[str]) -> Tuple[int, str]:
    return (0, "") if value is None else (1, value)


class Writes:
    """What one operation writes, applied atomically by :meth:`Store.apply`."""

    def __init__(self) -> None:
        self.batch = Batch()

    def put_memory(self, memory_id: str, vector: List[float], payload: Payload, space: str) -> None:
        self.batch.put(
            payload.get("data") or "",
            vectors={space: vector},
            attributes=_attributes(memory_id, payload),
            body=json.dumps(payload, ensure_ascii=False),
        )

    def update_memory(
        self, record_id: int, memory_id: str, vector: List[float], payload: Payload, space: str
    ) -> None:
        self.batch.update(
            record_id,
            payload.get("data") or "",
            vectors={space: vector},
            attributes=_attributes(memory_id, payload),
            body=json.dumps(payload, ensure_ascii=False),
        )

    def delete(self, record_id: int) -> None:
        self.batch.delete(record_id)

    def history(self, row: Dict[str, Any]) -> None:
        self.batch.put(
            "mem0 history row",
            attributes={"kind": "history", "memory_id": str(row["memory_id"])},
            body=json.dumps(row, ensure_ascii=False),
        )

    def message(self, scope: str, message: Dict[str, Any]) -> None:
        self.batch.put(
            "mem0 message",
            attributes={"kind": "message", "scope": scope},
            body=json.dumps(message, ensure_ascii=False, default=str),
        )


class Store:
    """The engine namespace of one collection, its vector space, and (for ``path=None``)
    the temporary directory it lives in."""

    def __init__(self, path: Optional[str], collection: str, dims: int, identity: str) -> None:
        self._tmp = None if path is not None else tempfile.mkdtemp(prefix="memorybench-mem0-")
        # a temporary store is removed at close(), or when garbage-collected or at exit
        self._cleanup = None
        if self._tmp:
            self._cleanup = weakref.finalize(self, shutil.rmtree, self._tmp, True)
        self.engine = Engine(self._tmp or path)
        self.namespace = collection
        self.space = collection
        self.dims = dims
        try:
            spaces = self.engine.spaces()
            if self.space in spaces and spaces[self.space] != dims:
                raise ValueError(
                    f"collection {collection!r} in {self.engine.path} holds "
                    f"{spaces[self.space]}-dimensional vectors, the embedder gives {dims}: use "
                    "another collection_name or path"
                )
            if self.space not in spaces:
                self.engine.create_space(self.space, dims)
            self.engine.ensure_namespace(self.namespace)
            self.embedder_identity = identity
            self._mark()
        except BaseException:
            self.close()
            raise

    def _mark(self) -> None:
        """Records which embedder wrote the collection; another one is allowed (as in mem0)
        but logged, since old and new vectors are then not comparable."""
        mark = self.engine.get_state(self.namespace, "mem0")
        if mark is None:
            self.engine.put_state(self.namespace, "mem0", {"embedder": self.embedder_identity})
        elif mark.get("embedder") != self.embedder_identity:
            logger.warning(
                "collection %r was written with the embedder %r, now %r: old and new vectors "
                "do not compare", self.namespace, mark.get("embedder"), self.embedder_identity,
            )

    # -- memories -----------------------------------------------------------------------------

    def find(self, memory_id: str) -> Optional[Tuple[int, Payload]]:
        """The record id and payload of a memory, or None."""
        found = self.engine.records_where(self.namespace, {"id": memory_id})
        for record in found:
            if record.attributes.get("kind") == "memory":
                return record.id, json.loads(record.body or "{}")
        return None

    def memories(
        self, scope: Dict[str, str], predicate: Optional[Callable[[Payload], bool]] = None
    ) -> List[Tuple[str, Payload, int]]:
        """(id, payload, record id) of every memory matching ``scope`` (attribute equality)
        and ``predicate``, in ascending id order (the order of mem0's local qdrant listing)."""
        wanted = dict(scope)
        wanted["kind"] = "memory"
        out = []
        for record in self.engine.records_where(self.namespace, wanted):
            payload = json.loads(record.body or "{}")
            if predicate is None or predicate(payload):
                out.append((record.attributes["id"], payload, record.id))
        out.sort(key=lambda item: item[0])
        return out

    def nearest(
        self,
        vector: List[float],
        k: int,
        scope: Dict[str, str],
        predicate: Optional[Callable[[Payload], bool]] = None,
    ) -> List[Tuple[str, Payload, float]]:
        """The ``k`` memories most similar (cosine) to ``vector`` among those matching
        ``scope`` and ``predicate``, best first (equal scores: older first)."""
        if k <= 0:
            return []
        wanted = dict(scope)
        wanted["kind"] = "memory"
        asked = k
        while True:
            hits = self.engine.search_vector(
                self.namespace, self.space, vector, asked, filter=wanted
            )
            out = []
            for hit in hits:
                payload = json.loads(hit.record.body or "{}")
                if predicate is None or predicate(payload):
                    out.append((hit.record.attributes["id"], payload, float(hit.score)))
                    if len(out) == k:
                        return out
            if len(hits) < asked:
                return out
            asked *= 4

    # -- history and messages ------------------------------------------------------------------

    def history(self, memory_id: str) -> List[Dict[str, Any]]:
        """History rows in mem0's order: by ``created_at``, then ``updated_at`` to the second
        (missing ones first), then as written."""
        rows = [
            json.loads(r.body or "{}")
            for r in self.engine.records_where(
                self.namespace, {"kind": "history", "memory_id": memory_id}
            )
        ]
        rows.sort(key=lambda row: (_nulls_first(row.get("created_at")),
                                   _nulls_first(_second(row.get("updated_at")))))
        return rows

    def window(self, scope: str) -> List[Tuple[int, Dict[str, Any]]]:
        """The stored messages of a scope, newest ``WINDOW`` (equal times: first written
        first), oldest first, with their record ids."""
        records = self.engine.records_where(self.namespace, {"kind": "message", "scope": scope})
        rows = [(r.id, json.loads(r.body or "{}")) for r in records]
        newest = sorted(rows, key=lambda row: row[1].get("created_at") or "", reverse=True)
        kept = newest[:WINDOW]
        return sorted(kept, key=lambda row: row[1].get("created_at") or "")

    def save_messages(self, writes: Writes, scope: str, messages: Iterable[Dict[str, Any]]) -> None:
        """Adds the messages of a call to ``writes`` and evicts what falls out of the window
        (the newest ``WINDOW`` of the scope are kept)."""
        now = datetime.now(timezone.utc).isoformat()
        new = [
            {"role": m.get("role"), "content": m.get("content"), "name": m.get("name"),
             "created_at": now}
            for m in messages
        ]
        if not new:
            return
        records = self.engine.records_where(self.namespace, {"kind": "message", "scope": scope})
        rows: List[Tuple[Optional[int], Dict[str, Any]]] = [
            (r.id, json.loads(r.body or "{}")) for r in records
        ]
        rows.extend((None, m) for m in new)
        newest = sorted(rows, key=lambda row: row[1].get("created_at") or "", reverse=True)
        kept = {id(row) for row in newest[:WINDOW]}
        for row in rows:
            if id(row) in kept:
                if row[0] is None:
                    writes.message(scope, row[1])
            elif row[0] is not None:
                writes.delete(row[0])

    # -- whole store -------------------------------------------------------------------------

    def apply(self, writes: Writes) -> List[int]:
        if len(writes.batch) == 0:
            return []
        return list(self.engine.write(self.namespace, writes.batch).ids)

    def reset(self) -> None:
        self.engine.drop_namespace(self.namespace)
        self.engine.ensure_namespace(self.namespace)
        self._mark()

    def close(self) -> None:
        if not self.engine.closed:
            self.engine.close()
        if self._cleanup is not None:
            self._cleanup()
