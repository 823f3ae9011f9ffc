"""Background adds (a memorybench addition, off by default): ``add(..., async_mode=True)``.

The add is checked as a synchronous one would be, then its request (``add``'s arguments as
JSON) is stored under the state key ``mem0.queue/<seq>/<event id>`` of the collection's
namespace, one synced engine write, before ``add`` returns ``{"results": [{"message", "status":
"PENDING", "event_id"}]}``. One worker thread per :class:`Background` runs the queued adds
in order through the same code as a synchronous add; the add's writes, the removal of its
queue record and its outcome (``mem0.event/<seq>/<event id>``) are one engine batch, so after
a crash the queue holds exactly the adds not applied, and reopening runs them: none twice,
none lost. A failing add (the model raising, say) is not retried here (the HTTP clients
already retry 5xx and 429 twice, and a retry would hold every later add back): it is logged
and recorded as FAILED with the error and its request, which ``add(**request)`` resubmits.
The newest :data:`KEEP_OUTCOMES` outcomes are kept.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections import OrderedDict
from contextlib import contextmanager
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from . import validate
from .store import Store, Writes

logger = logging.getLogger(__name__)

QUEUE = "mem0.queue/"
OUTCOME = "mem0.event/"
KEEP_OUTCOMES = 1000
QUEUED = "Memory processing has been queued for background execution"
CANCELLED = "cancelled: reset() emptied the collection before this add was processed"

Seal = Callable[[Writes, List[dict]], None]


def _key(prefix: str, seq: int, event_id: str) -> str:
    return f"{prefix}{seq:020d}/{event_id}"


def _split(key: str) -> Tuple[int, str]:
    seq, event_id = key.split("/", 2)[1:]
    return int(seq), event_id


def _plain(value: Any, where: str) -> None:
    """Refuses what would not come back equal from the JSON of the queue (tuples, sets,
    objects, non-string keys), naming where it is."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return
    if isinstance(value, list):
        for i, item in enumerate(value):
            _plain(item, f"{where}[{i}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"{where} cannot be queued: key {key!r} is not a string")
            _plain(item, f"{where}[{key!r}]")
    else:
        raise TypeError(f"{where} cannot be queued: {type(value).__name__} is not a JSON value")


def check_queueable(messages: List[Any], *, procedural: bool, infer: Any) -> None:
    """Raises now what the queued add would raise later on its input (the same class and
    field as a synchronous add), and refuses messages that are not plain JSON."""
    if procedural:
        for i, message in enumerate(messages):
            if not isinstance(message, dict):
                raise AttributeError(f"messages[{i}] must be a dict, got "
                                     f"{type(message).__name__}")
    else:
        texts = validate.text_messages(messages)
        if not infer:
            for i, message in enumerate(texts):
                role, content = message.get("role"), message.get("content")
                if role is not None and content is not None and role != "system":
                    validate.text(content, f"messages[{i}].content")
    for i, message in enumerate(messages):
        _plain(message, f"messages[{i}]")


class Background:
    """The durable queue of one collection and its worker thread. ``run(request, seal)``
    performs one add (``request``: add's keyword arguments) and calls ``seal(writes,
    results)`` under ``store_lock`` just before applying ``writes``. What must not
    interleave with a queued add (reset, delete_all) runs inside :meth:`exclusive`."""

    def __init__(self, store: Store, store_lock: Any, run: Callable[..., Any]) -> None:
        self._store = store
        self._store_lock = store_lock
        self._run = run
        self._lock = threading.Lock()  # held while an add runs
        self._cond = threading.Condition()
        self._holders = 0  # callers of exclusive(): the worker lets them go first
        self._pending: "OrderedDict[str, Tuple[int, str]]" = OrderedDict()  # id -> seq, key
        self._outcomes: "OrderedDict[str, str]" = OrderedDict()  # event id -> key, oldest first
        self._thread: Optional[threading.Thread] = None
        self._stopped = False
        self._error: Optional[BaseException] = None
        namespace = store.namespace
        last = 0
        for key in store.engine.state_keys(namespace, OUTCOME):
            seq, event_id = _split(key)
            self._outcomes[event_id] = key
            last = max(last, seq)
        for key in store.engine.state_keys(namespace, QUEUE):
            seq, event_id = _split(key)
            self._pending[event_id] = (seq, key)
            last = max(last, seq)
        self._next = last + 1
        if self._pending:
            logger.info("%d queued adds left in collection %r: processing them",
                        len(self._pending), namespace)
            self._start()

    def _start(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._error = None
            self._thread = threading.Thread(target=self._work, daemon=True,
                                            name=f"mem0-background-{self._store.namespace}")
            self._thread.start()

    def submit(self, request: Dict[str, Any]) -> Dict[str, Any]:
        """Stores ``request`` durably at the end of the queue; returns the PENDING shape."""
        body = json.dumps(request, ensure_ascii=False)
        with self._cond:
            if self._stopped:
                raise RuntimeError("the memory is closed: background adds are not accepted")
            event_id = str(uuid.uuid4())
            seq = self._next
            key = _key(QUEUE, seq, event_id)
            self._store.engine.put_state(self._store.namespace, key, body)
            self._next += 1
            self._pending[event_id] = (seq, key)
            self._start()
            self._cond.notify_all()
        return {"results": [{"message": QUEUED, "status": "PENDING", "event_id": event_id}]}

    # -- the worker ---------------------------------------------------------------------------

    def _work(self) -> None:
        while True:
            with self._cond:
                while (not self._pending or self._holders) and not self._stopped:
                    self._cond.wait()
                if self._stopped:
                    return
            with self._lock:
                with self._cond:
                    if self._stopped:
                        return
                    if not self._pending:  # reset() emptied the queue meanwhile
                        continue
                    event_id, (seq, key) = next(iter(self._pending.items()))
                try:
                    outcome_key = self._process(event_id, seq, key)
                except Exception as exc:  # the outcome could not be written: stop, keep the queue
                    logger.error("background adds stopped: recording event %s failed: %s",
                                 event_id, exc, exc_info=exc)
                    with self._cond:
                        self._error = exc
                        self._cond.notify_all()
                    return
                with self._cond:
                    del self._pending[event_id]
                    self._outcomes[event_id] = outcome_key
                    while len(self._outcomes) > KEEP_OUTCOMES:
                        self._outcomes.popitem(last=False)
                    self._cond.notify_all()

    def _outcome(self, writes: Writes, key: str, outcome_key: str, outcome: dict) -> None:
        """Adds to ``writes``: the queue record removed, the outcome stored, the oldest
        outcomes beyond :data:`KEEP_OUTCOMES` removed."""
        writes.batch.delete_state(key)
        writes.batch.put_state(outcome_key, json.dumps(outcome, ensure_ascii=False))
        for old in list(self._outcomes.values())[: max(0, len(self._outcomes) + 1 - KEEP_OUTCOMES)]:
            writes.batch.delete_state(old)

    def _process(self, event_id: str, seq: int, key: str) -> str:
        outcome_key = _key(OUTCOME, seq, event_id)

        def seal(writes: Writes, results: List[dict]) -> None:
            self._outcome(writes, key, outcome_key, {
                "event_id": event_id, "status": "SUCCEEDED", "results": results})

        request = None
        try:
            request = json.loads(self._store.engine.get_state(self._store.namespace, key))
            self._run(request, seal)
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            logger.error("background add %s failed: %s", event_id, error, exc_info=exc)
            writes = Writes()
            self._outcome(writes, key, outcome_key, {
                "event_id": event_id, "status": "FAILED", "error": error, "request": request})
            with self._store_lock:
                self._store.apply(writes)
        return outcome_key

    # -- waiting, outcomes, reset, stop -------------------------------------------------------

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """Holds the worker off: waits for the add it is running, and no other starts until
        the block ends."""
        with self._cond:
            self._holders += 1
        try:
            with self._lock:
                yield
        finally:
            with self._cond:
                self._holders -= 1
                self._cond.notify_all()

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Blocks until every add queued before the call has run (True), or ``timeout``
        seconds passed or the memory was closed first (False)."""
        if timeout is not None and (isinstance(timeout, bool)
                                    or not isinstance(timeout, (int, float)) or timeout < 0):
            raise ValueError(f"timeout must be None or a number of seconds >= 0, got {timeout!r}")
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            last = self._next - 1
            while self._pending and next(iter(self._pending.values()))[0] <= last:
                if self._error is not None:
                    raise RuntimeError(f"background adds stopped: {self._error}") from self._error
                if self._stopped:
                    return False
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return False
                self._cond.wait(remaining)
            return True

    def event(self, event_id: Any) -> Optional[Dict[str, Any]]:
        """The outcome of a background add: ``{"event_id", "status": "PENDING"}``,
        ``{..., "status": "SUCCEEDED", "results": [...]}`` or ``{..., "status": "FAILED",
        "error", "request"}``; None for an id this collection does not know."""
        if not isinstance(event_id, str):
            return None
        with self._cond:
            if event_id in self._pending:
                return {"event_id": event_id, "status": "PENDING"}
            key = self._outcomes.get(event_id)
            stored = self._store.engine.get_state(self._store.namespace, key) if key else None
        return None if stored is None else json.loads(stored)

    def reset(self, reset_store: Callable[[], None]) -> None:
        """Runs ``reset_store`` (which drops the queue and the outcomes with the namespace)
        and records each add that was still queued as FAILED, cancelled. The caller is
        inside :meth:`exclusive` and holds ``store_lock``."""
        with self._cond:
            reset_store()
            cancelled = list(self._pending.items())
            self._pending.clear()
            self._outcomes.clear()
            writes = Writes()
            for event_id, (seq, _) in cancelled[-KEEP_OUTCOMES:]:
                outcome_key = _key(OUTCOME, seq, event_id)
                writes.batch.put_state(outcome_key, json.dumps(
                    {"event_id": event_id, "status": "FAILED", "error": CANCELLED}))
                self._outcomes[event_id] = outcome_key
            self._store.apply(writes)
            self._cond.notify_all()

    def stop(self) -> None:
        """Stops the worker once the add it is running is done; what is still queued stays
        on disk for the next open."""
        with self._cond:
            self._stopped = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()
