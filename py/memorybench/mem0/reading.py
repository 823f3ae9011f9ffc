"""The reading half of ``Memory``: get, get_all, search, history."""

from __future__ import annotations

import uuid
from typing import Any, Dict, Optional

from . import validate
from .filters import compile_filter, engine_scope, prepare_search_filters
from .payload import is_expired

PROMOTED = ("user_id", "agent_id", "run_id", "actor_id", "role", "attributed_to", "expiration_date")
CORE = frozenset(("data", "hash", "created_at", "updated_at", "id", "text_lemmatized", *PROMOTED))
_NO_SCORE = object()


def canonical_id(memory_id: Any) -> Optional[str]:
    if not isinstance(memory_id, str):
        return None
    try:
        return str(uuid.UUID(memory_id))
    except ValueError:
        return memory_id


def format_item(memory_id: str, payload: Dict[str, Any], score: Any = _NO_SCORE) -> Dict[str, Any]:
    """A memory as mem0 shows it: id, memory, hash, metadata, [score,] created_at,
    updated_at, then the promoted payload keys that are present."""
    item: Dict[str, Any] = {
        "id": memory_id, "memory": payload.get("data", ""), "hash": payload.get("hash"),
        "metadata": None,
    }
    if score is not _NO_SCORE:
        item["score"] = score
    item["created_at"] = payload.get("created_at")
    item["updated_at"] = payload.get("updated_at")
    for key in PROMOTED:
        if key in payload:
            item[key] = payload[key]
    extra = {k: v for k, v in payload.items() if k not in CORE}
    if extra:
        item["metadata"] = extra
    return item


class Reads:
    """get, get_all, search and history over ``self._store`` (mixed into ``Memory``)."""

    def get(self, memory_id):
        """The memory with this id, or None."""
        key = canonical_id(memory_id)
        found = self._store.find(key) if key else None
        if found is None:
            return None
        return format_item(key, found[1], score=None)

    def get_all(self, *, filters: Optional[Dict[str, Any]] = None, top_k: int = 20,
                show_expired: bool = False, **kwargs):
        """The memories matching ``filters`` (which must name user_id, agent_id or run_id),
        in ascending id order, at most ``top_k`` (``top_k=0`` gives one: mem0's quirk)."""
        validate.reject_top_level(kwargs, "get_all")
        validate.search_params(top_k=top_k)
        filters = validate.scope_in_filters(filters, "get_all")
        validate.no_null_scope(filters)
        predicate = compile_filter(filters)
        fetch = top_k if show_expired else max(top_k * 4, 60)
        if fetch == 0:  # mem0 hands the limit to its store, which refuses 0
            raise ValueError("limit value 0 is invalid. Must be 1 or larger.")
        listed = self._store.memories(engine_scope(filters), predicate)[:fetch]
        results = []
        for memory_id, payload, _ in listed:
            if not show_expired and is_expired(payload):
                continue
            results.append(format_item(memory_id, payload))
            if len(results) >= top_k:
                break
        return {"results": results}

    def search(self, query: str, *, top_k: int = 20, filters: Optional[Dict[str, Any]] = None,
               threshold: float = 0.1, rerank: bool = False, explain: bool = False,
               reference_date: Optional[Any] = None, show_expired: bool = False, **kwargs):
        """The memories most similar (cosine) to ``query`` among those matching ``filters``,
        best first, each with its ``score``; at most ``top_k``, none below ``threshold``."""
        if reference_date is not None:
            raise ValueError("The reference_date parameter is not supported by the OSS Memory SDK.")
        validate.reject_top_level(kwargs, "search")
        validate.search_params(threshold=threshold, top_k=top_k)
        query = validate.query(query)
        filters = prepare_search_filters(validate.scope_in_filters(filters, "search"))
        validate.no_null_scope(filters)
        if threshold is None:
            threshold = 0.1
        vector = self.embedding_model.embed(query)
        predicate = compile_filter(filters)  # after embedding, as mem0 (its store builds it)
        candidates = self._store.nearest(vector, max(top_k * 4, 60), engine_scope(filters),
                                         predicate)
        scored = []
        for memory_id, payload, semantic in candidates:
            if (not show_expired and is_expired(payload)) or semantic < threshold:
                continue
            scored.append((memory_id, payload, semantic, min(semantic, 1.0)))
        scored.sort(key=lambda row: row[3], reverse=True)
        results = []
        for memory_id, payload, semantic, score in scored[:top_k]:
            if not payload.get("data"):
                continue
            item = format_item(memory_id, payload, score=score)
            if explain:
                item["score_details"] = {
                    "semantic_score": semantic, "bm25_score": 0.0, "entity_boost": 0.0,
                    "raw_score": semantic, "max_possible_score": 1.0, "final_score": score,
                    "threshold": threshold,
                }
            results.append(item)
        return {"results": results}

    def history(self, memory_id):
        """The changes of a memory, oldest first (ADD, UPDATE..., DELETE); [] when unknown."""
        if not isinstance(memory_id, str):
            return []
        return self._store.history(memory_id)
