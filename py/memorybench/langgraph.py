"""LangGraph long-term memory on a memorybench engine: :class:`MemoryBenchStore` implements
``langgraph.store.base.BaseStore`` (what ``graph.compile(store=...)`` takes and what nodes
read and write as ``runtime.store``), and keeps everything in the engine, so memories outlive
the process, unlike LangGraph's ``InMemoryStore``.

Layout in one engine namespace (``"langgraph"`` by default):

- each item is one state key, ``item.<label>.<label>...\\x00<key>`` (LangGraph forbids ``.``
  and NUL in labels, so the key is unambiguous and a namespace prefix is a key prefix),
  holding ``{"value", "created_at", "updated_at", "vectors"}``;
- with an ``index`` (semantic search), each embedded text of an item is one record with its
  vector in the engine space ``space``, the item's state key and namespace labels as
  attributes (``ns.0``, ``ns.1``, ... so that a namespace prefix is an engine filter); the
  item lists its records' ids in ``vectors``, and a search counts a record only if its item
  lists it.

A put embeds first, then writes the new vector records, then the items together with the
removal of their former records in one atomic write: a crash in between leaves at most some
new records no item lists, which searches ignore.
"""

from __future__ import annotations

import asyncio
import functools
import json
import threading
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple

from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    ensure_embeddings,
    get_text_at_path,
    validate_op_namespace,
)

from ._native import Batch, Engine
from ._opened import engine_for_store
from .errors import InvalidInputError

Namespace = Tuple[str, ...]
_ITEM = "item"
_OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")


@dataclass
class _Plan:
    """What a batch will do, worked out before any embedding or engine work: the last put
    of each item, the texts to embed for them, and the search queries to embed."""

    puts: Dict[Tuple[Namespace, str], PutOp] = field(default_factory=dict)
    texts: List[str] = field(default_factory=list)
    targets: List[Tuple[Namespace, str, str]] = field(default_factory=list)
    queries: List[str] = field(default_factory=list)


class MemoryBenchStore(BaseStore):
    """LangGraph's ``BaseStore`` kept in a memorybench engine: namespaced JSON items with
    put/get/delete, search with value filters and (given ``index``) semantic search,
    ``list_namespaces``, and ``batch``/``abatch``.

    Give either an open ``engine`` (shared, left open by :meth:`close`) or a ``path`` (opened
    here, closed by :meth:`close`). ``index`` is LangGraph's index configuration:
    ``{"dims": 384, "embed": MemoryBenchEmbeddings(), "fields": ["text"]}`` (``embed`` is
    LangChain ``Embeddings`` or an embedding function, sync or async; ``fields`` defaults to
    the whole value, ``["$"]``). Without it, ``query`` is ignored and ``index`` of puts has
    no effect, as in LangGraph's stores.

    Reads of a batch see the store as it was before the batch; puts of one item in a batch
    keep the last. Search without a query lists items by namespace, then key; with a query,
    by best cosine similarity over the item's embedded texts, then the items without any.
    TTLs are not supported (``supports_ttl`` is False).
    """

    supports_ttl = False

    def __init__(
        self,
        *,
        engine: Optional[Engine] = None,
        path: Optional[str] = None,
        namespace: str = "langgraph",
        index: Optional[IndexConfig] = None,
        space: str = "langgraph",
    ) -> None:
        self.engine, self._owns_engine = engine_for_store(engine, path)
        self.namespace = namespace
        self.space = space
        self.engine.ensure_namespace(namespace)
        self.index_config = dict(index) if index else None
        self.embeddings = None
        self._fields: List[str] = ["$"]
        if self.index_config is not None:
            dims = self.index_config.get("dims")
            if isinstance(dims, bool) or not isinstance(dims, int) or dims < 1:
                raise InvalidInputError(f"index needs 'dims', a positive int, got {dims!r}")
            if self.index_config.get("embed") is None:
                raise InvalidInputError("index needs 'embed': Embeddings or a function")
            self.embeddings = ensure_embeddings(self.index_config["embed"])
            self._fields = list(self.index_config.get("fields") or ["$"])
            existing = self.engine.spaces().get(space)
            if existing is None:
                self.engine.create_space(space, dims)
            elif existing != dims:
                raise InvalidInputError(
                    f"space {space!r} holds {existing}-dimensional vectors, index says {dims}"
                )
        self._lock = threading.Lock()

    def close(self) -> None:
        """Closes the engine if this store opened it."""
        if self._owns_engine:
            self.engine.close()

    def __enter__(self) -> "MemoryBenchStore":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    # The operations

    def batch(self, ops: Iterable[Op]) -> List[Result]:
        """Runs ``ops`` (gets, searches, namespace listings, puts and deletes) and returns
        one result per op, in order."""
        ops = list(ops)
        plan = self._plan(ops)
        queries = {q: self.embeddings.embed_query(q) for q in plan.queries}
        vectors = self.embeddings.embed_documents(plan.texts) if plan.texts else []
        return self._run(ops, plan, queries, vectors)

    async def abatch(self, ops: Iterable[Op]) -> List[Result]:
        """:meth:`batch` for asyncio: embeds with the embedder's async methods and does the
        engine work on a worker thread (the engine releases the GIL)."""
        ops = list(ops)
        plan = self._plan(ops)
        embedded = await asyncio.gather(*(self.embeddings.aembed_query(q) for q in plan.queries))
        queries = dict(zip(plan.queries, embedded))
        vectors = await self.embeddings.aembed_documents(plan.texts) if plan.texts else []
        run = functools.partial(self._run, ops, plan, queries, vectors)
        return await asyncio.get_running_loop().run_in_executor(None, run)

    def _plan(self, ops: List[Op]) -> _Plan:
        plan = _Plan()
        for op in ops:
            if not isinstance(op, (GetOp, SearchOp, ListNamespacesOp, PutOp)):
                raise InvalidInputError(f"unknown store operation {type(op).__name__}")
            validate_op_namespace(op)
            if isinstance(op, (GetOp, PutOp)) and not isinstance(op.key, str):
                raise InvalidInputError(f"item keys must be str, got {type(op.key).__name__}")
            if isinstance(op, SearchOp):
                _check_page(op.limit, op.offset)
                if op.query and self.embeddings is not None and op.query not in plan.queries:
                    plan.queries.append(op.query)
            elif isinstance(op, ListNamespacesOp):
                _check_page(op.limit, op.offset)
                for condition in op.match_conditions or ():
                    if condition.match_type not in ("prefix", "suffix"):
                        raise InvalidInputError(
                            f"unknown match type {condition.match_type!r}: "
                            "expected 'prefix' or 'suffix'"
                        )
            elif isinstance(op, PutOp):
                if op.ttl is not None:
                    raise InvalidInputError("TTLs are not supported by MemoryBenchStore")
                if op.value is not None:
                    _check_value(op)
                plan.puts[(op.namespace, op.key)] = op
        for (namespace, key), op in plan.puts.items():
            for path, text in self._texts(op):
                plan.texts.append(text)
                plan.targets.append((namespace, key, path))
        return plan

    def _texts(self, op: PutOp) -> List[Tuple[str, str]]:
        """The (path, text) pairs a put embeds: one per path, or ``path.i`` for each of
        several texts a path selects."""
        if self.embeddings is None or op.value is None or op.index is False:
            return []
        paths = self._fields if op.index is None else list(op.index)
        pairs = []
        for path in paths:
            texts = get_text_at_path(op.value, path)
            if len(texts) == 1:
                pairs.append((path, texts[0]))
            else:
                pairs.extend((f"{path}.{i}", text) for i, text in enumerate(texts))
        return pairs

    def _run(
        self,
        ops: List[Op],
        plan: _Plan,
        queries: Dict[str, List[float]],
        vectors: List[List[float]],
    ) -> List[Result]:
        if len(vectors) != len(plan.texts):
            raise InvalidInputError(
                f"the embedder returned {len(vectors)} vectors for {len(plan.texts)} texts"
            )
        with self._lock:
            results: List[Result] = []
            for op in ops:
                if isinstance(op, GetOp):
                    results.append(self._get(op.namespace, op.key))
                elif isinstance(op, SearchOp):
                    results.append(self._search(op, queries.get(op.query or "")))
                elif isinstance(op, ListNamespacesOp):
                    results.append(self._list_namespaces(op))
                else:
                    results.append(None)
            if plan.puts:
                self._apply(plan, vectors)
        return results

    # Reading

    def _get(self, namespace: Namespace, key: str) -> Optional[Item]:
        state = self.engine.get_state(self.namespace, _state_key(namespace, key))
        return None if state is None else _item(Item, namespace, key, state)

    def _search(self, op: SearchOp, query: Optional[List[float]]) -> List[SearchItem]:
        if query is None:
            page = self._listed(op.namespace_prefix, op.filter, op.offset, op.limit)
            return [_item(SearchItem, ns, key, state) for ns, key, state in page]
        want = op.offset + op.limit
        if op.limit == 0:
            return []
        ranked = self._ranked(op, query, want)
        page = [
            _item(SearchItem, ns, key, state, score=score)
            for score, ns, key, state in ranked[op.offset : want]
        ]
        if len(ranked) < want:  # every scored item is in: the unscored ones follow
            unscored = self._listed(
                op.namespace_prefix,
                op.filter,
                max(0, op.offset - len(ranked)),
                op.limit - len(page),
                unembedded_only=True,
            )
            page.extend(_item(SearchItem, ns, key, state) for ns, key, state in unscored)
        return page

    def _ranked(
        self, op: SearchOp, query: List[float], want: int
    ) -> List[Tuple[float, Namespace, str, dict]]:
        """Items under the prefix that pass the filter, by their best vector's cosine
        similarity to ``query``: the first ``want``, or all when there are fewer."""
        prefix = {f"ns.{i}": label for i, label in enumerate(op.namespace_prefix)}
        n = max(2 * want, 16)
        while True:
            hits = self.engine.search_vector(
                self.namespace, self.space, query, n, filter=prefix or None
            )
            ranked, seen = [], set()
            for hit in hits:
                state_key = hit.record.attributes.get("item")
                if state_key is None or state_key in seen:
                    continue
                state = self.engine.get_state(self.namespace, state_key)
                if state is None or hit.record.id not in state["vectors"]:
                    continue  # a record no item lists (left by a crash): not a match
                seen.add(state_key)
                if _matches(state["value"], op.filter):
                    namespace, key = _parse_state_key(state_key)
                    ranked.append((hit.score, namespace, key, state))
                    if len(ranked) == want:
                        return ranked
            if len(hits) < n:
                return ranked
            n *= 4

    def _listed(
        self,
        prefix: Namespace,
        filter: Optional[dict],
        offset: int,
        limit: int,
        unembedded_only: bool = False,
    ) -> List[Tuple[Namespace, str, dict]]:
        """Items under ``prefix`` that pass ``filter``, by namespace then key, from the
        ``offset``-th on, at most ``limit``."""
        keys = sorted(_parse_state_key(k) for k in self._state_keys_under(prefix))
        if not filter and not unembedded_only:
            keys = keys[offset : offset + limit]
            offset = 0
        out: List[Tuple[Namespace, str, dict]] = []
        for namespace, key in keys:
            if len(out) == limit:
                break
            state = self.engine.get_state(self.namespace, _state_key(namespace, key))
            if state is None or (unembedded_only and state["vectors"]):
                continue
            if _matches(state["value"], filter):
                if offset:
                    offset -= 1
                else:
                    out.append((namespace, key, state))
        return out

    def _list_namespaces(self, op: ListNamespacesOp) -> List[Namespace]:
        conditions = tuple(op.match_conditions or ())
        scan: Namespace = ()
        for condition in conditions:  # a literal prefix narrows the scan
            if condition.match_type == "prefix":
                literal = []
                for label in condition.path:
                    if label == "*":
                        break
                    literal.append(label)
                scan = tuple(literal) if len(literal) > len(scan) else scan
        namespaces = {_parse_state_key(k)[0] for k in self._state_keys_under(scan)}
        kept = [ns for ns in namespaces if all(_ns_matches(c, ns) for c in conditions)]
        if op.max_depth is not None:
            kept = list({ns[: op.max_depth] for ns in kept})
        return sorted(kept)[op.offset : op.offset + op.limit]

    def _state_keys_under(self, prefix: Namespace) -> List[str]:
        """State keys of the items whose namespace starts with ``prefix``."""
        stem = _ITEM + "".join("." + label for label in prefix)
        if not prefix:
            return self.engine.state_keys(self.namespace, stem)
        deeper = self.engine.state_keys(self.namespace, stem + ".")
        return self.engine.state_keys(self.namespace, stem + "\x00") + deeper

    # Writing

    def _apply(self, plan: _Plan, vectors: List[List[float]]) -> None:
        now = datetime.now(timezone.utc).isoformat()
        keys = {item: _state_key(*item) for item in plan.puts}
        before = {item: self.engine.get_state(self.namespace, keys[item]) for item in plan.puts}
        new_ids: Dict[Tuple[Namespace, str], List[int]] = {item: [] for item in plan.puts}
        if vectors:
            records = Batch()
            for (namespace, key, path), vector in zip(plan.targets, vectors):
                attributes = {f"ns.{i}": label for i, label in enumerate(namespace)}
                attributes.update(item=keys[(namespace, key)], path=path)
                records.put("", vectors={self.space: vector}, attributes=attributes)
            receipt = self.engine.write(self.namespace, records)
            for (namespace, key, _), record_id in zip(plan.targets, receipt.ids):
                new_ids[(namespace, key)].append(record_id)
        items = Batch()
        for item, op in plan.puts.items():
            old = before[item]
            for record_id in old["vectors"] if old else ():
                items.delete(record_id)
            if op.value is None:
                items.delete_state(keys[item])
                continue
            state = {
                "value": dict(op.value),
                "created_at": old["created_at"] if old else now,
                "updated_at": now,
                "vectors": new_ids[item],
            }
            items.put_state(keys[item], state)
        self.engine.write(self.namespace, items)


def _state_key(namespace: Namespace, key: str) -> str:
    return _ITEM + "".join("." + label for label in namespace) + "\x00" + key


def _parse_state_key(state_key: str) -> Tuple[Namespace, str]:
    labels, key = state_key[len(_ITEM) :].split("\x00", 1)
    return tuple(labels.split(".")[1:]), key


def _item(cls, namespace: Namespace, key: str, state: dict, **extra: Any):
    return cls(
        namespace=namespace,
        key=key,
        value=state["value"],
        created_at=datetime.fromisoformat(state["created_at"]),
        updated_at=datetime.fromisoformat(state["updated_at"]),
        **extra,
    )


def _check_page(limit: Any, offset: Any) -> None:
    for name, number in (("limit", limit), ("offset", offset)):
        if isinstance(number, bool) or not isinstance(number, int) or number < 0:
            raise InvalidInputError(f"{name} must be a non-negative int, got {number!r}")


def _check_value(op: PutOp) -> None:
    """Refuses, before anything is embedded or written, a value the engine cannot keep."""
    if not isinstance(op.value, Mapping):
        raise InvalidInputError(
            f"the value of {op.key!r} is a {type(op.value).__name__}, not a dict"
        )
    try:
        json.dumps(dict(op.value), allow_nan=False)
    except (TypeError, ValueError) as error:
        raise InvalidInputError(f"the value of {op.key!r} is not JSON: {error}") from None
    if _has_non_str_key(dict(op.value)):  # json.dumps would turn 1 into "1" silently
        raise InvalidInputError(f"the value of {op.key!r} has a dict key that is not a str")


def _has_non_str_key(value: Any) -> bool:
    if isinstance(value, dict):
        return any(not isinstance(k, str) or _has_non_str_key(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return any(_has_non_str_key(v) for v in value)
    return False


def _ns_matches(condition: MatchCondition, namespace: Namespace) -> bool:
    """Whether ``namespace`` starts (``prefix``) or ends (``suffix``) with the condition's
    path, ``"*"`` matching any one label."""
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        labels = namespace[: len(path)]
    else:  # "suffix": batch checked the match types
        labels = namespace[len(namespace) - len(path) :]
    return all(want in ("*", label) for want, label in zip(path, labels))


def _matches(value: dict, filter: Optional[dict]) -> bool:
    """Whether an item's value passes a search filter: every field equals the given value
    (dicts field by field, lists element by element), or satisfies its operators."""
    return not filter or all(_holds(value.get(name), want) for name, want in filter.items())


def _holds(actual: Any, want: Any) -> bool:
    if isinstance(want, dict):
        if any(str(name).startswith("$") for name in want):
            return all(_compare(actual, op, operand) for op, operand in want.items())
        return isinstance(actual, dict) and all(
            _holds(actual.get(name), sub) for name, sub in want.items()
        )
    if isinstance(want, (list, tuple)):
        return (
            isinstance(actual, list)
            and len(actual) == len(want)
            and all(_holds(a, w) for a, w in zip(actual, want))
        )
    return actual == want


def _compare(actual: Any, op: str, operand: Any) -> bool:
    """One operator of a filter. Order comparisons hold between two numbers or two strings
    only; anything else (a missing field among them) does not match."""
    if op not in _OPERATORS:
        raise InvalidInputError(f"unknown filter operator {op!r}: expected one of {_OPERATORS}")
    if op == "$eq":
        return actual == operand
    if op == "$ne":
        return actual != operand
    numbers = all(
        isinstance(x, (int, float)) and not isinstance(x, bool) for x in (actual, operand)
    )
    if not (numbers or (isinstance(actual, str) and isinstance(operand, str))):
        return False
    if op == "$gt":
        return actual > operand
    if op == "$gte":
        return actual >= operand
    if op == "$lt":
        return actual < operand
    return actual <= operand


__all__ = ["MemoryBenchStore"]
