"""memorybench.mem0's background adds (``add(..., async_mode=True)``, memorybench's addition):
they return before the work is done, give what synchronous adds in the same order give,
refuse bad input at once, survive a crash exactly once (``kill -9`` and a process dying just
before or just after its write), record a failing model as FAILED, and interplay with
reset, delete_all and close."""

import asyncio
import itertools
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

import memorybench.mem0.background as background
import memorybench.mem0.memory as memory_module
from memorybench import Engine
from memorybench.mem0 import AsyncMemory, LLMError, Memory, ValidationError
from memorybench.mem0.extraction import OfflineChat


def config(path=":memory:", **extra):
    return {"vector_store": {"provider": "memorybench", "config": {"path": str(path)}},
            "embedder": {"provider": "memorybench", "config": {"model": "hashing"}}, **extra}


class Gate:
    """A chat model that answers as the offline one once ``release()`` was called."""

    def __init__(self):
        self.entered, self.opened, self.calls = threading.Event(), threading.Event(), 0

    def chat(self, messages, response_format=None):
        self.calls += 1
        self.entered.set()
        assert self.opened.wait(20), "the test never released the model"
        return OfflineChat().chat(messages, response_format)

    def release(self):
        self.opened.set()


class Down:
    """A chat model that always fails."""

    def chat(self, messages, response_format=None):
        raise RuntimeError("model down")


def queued(memory):
    return memory._store.engine.state_keys(memory._store.namespace, background.QUEUE)


def event_id(added):
    [result] = added["results"]
    assert list(result) == ["message", "status", "event_id"] and result["status"] == "PENDING"
    assert result["message"] == "Memory processing has been queued for background execution"
    return result["event_id"]


def texts(memory, **scope):
    return sorted(r["memory"] for r in memory.get_all(filters=scope, top_k=1000)["results"])


def test_an_async_add_returns_before_the_model_answers_and_wait_follows_it():
    with Memory.from_config(config()) as m:
        m.llm = gate = Gate()
        added = m.add("I keep bees. I live in Porto.", user_id="u", async_mode=True)
        ident = event_id(added)
        assert gate.entered.wait(10)
        assert m.event(ident) == {"event_id": ident, "status": "PENDING"}
        assert texts(m, user_id="u") == [] and len(queued(m)) == 1
        assert m.wait(timeout=0.2) is False
        gate.release()
        assert m.wait(timeout=10) is True
        outcome = m.event(ident)
        assert outcome["status"] == "SUCCEEDED" and queued(m) == []
        assert [r["memory"] for r in outcome["results"]] == ["I keep bees", "I live in Porto"]
        assert texts(m, user_id="u") == ["I keep bees", "I live in Porto"]
        assert m.event("no-such-event") is None and m.event(7) is None
        with pytest.raises(ValueError, match="timeout"):
            m.wait(timeout=-1)


CALLS = [
    ("I have a cat. I live in Oslo.", {"user_id": "u"}),
    ("I have a cat. I play the cello.", {"user_id": "u"}),  # the cat is known by then: skipped
    ([{"role": "system", "content": "be brief"},
      {"role": "user", "content": "I like tea", "name": "ann"},
      {"role": "assistant", "content": "Noted"}],
     {"user_id": "u", "infer": False, "metadata": {"topic": "drinks", "n": [1, 2]}}),
    ([{"role": "system", "content": "nothing to store"}], {"user_id": "u", "infer": False}),
    ("Hello! Thanks.", {"user_id": "u", "run_id": "r1"}),  # no facts: only the message window
    ("I booked a flight; step 1 done.",
     {"agent_id": "planner", "memory_type": "procedural_memory"}),
    ("I have a dog.", {"user_id": "v", "expiration_date": "2999-01-01"}),
]


def run_calls(m, async_mode, monkeypatch):
    counter = itertools.count()
    monkeypatch.setattr(memory_module, "new_id",
                        lambda: f"00000000-0000-4000-8000-{next(counter):012d}")
    if not async_mode:
        return [m.add(messages, **kwargs)["results"] for messages, kwargs in CALLS]
    ids = [event_id(m.add(messages, async_mode=True, **kwargs)) for messages, kwargs in CALLS]
    assert m.wait(timeout=30)
    outcomes = [m.event(ident) for ident in ids]
    assert all(o["status"] == "SUCCEEDED" for o in outcomes), outcomes
    return [o["results"] for o in outcomes]


def stored(m):
    def clean(item):
        return {k: v for k, v in item.items() if k not in ("created_at", "updated_at")}

    out = {}
    for scope in ({"user_id": "u"}, {"user_id": "v"}, {"agent_id": "planner"}):
        items = m.get_all(filters=scope, top_k=100)["results"]
        out[json.dumps(scope)] = [
            (clean(item), [row["event"] for row in m.history(item["id"])]) for item in items]
    window = [{k: v for k, v in row.items() if k != "created_at"}
              for _, row in m._store.window("user_id=u")]
    return out, window


def test_background_adds_give_what_synchronous_adds_in_the_same_order_give(monkeypatch):
    with Memory.from_config(config()) as sync, Memory.from_config(config()) as queued_:
        expected = run_calls(sync, False, monkeypatch)
        got = run_calls(queued_, True, monkeypatch)
        assert got == expected
        assert [r["memory"] for r in got[1]] == ["I play the cello"]
        assert got[3] == [] and got[4] == []
        assert stored(queued_) == stored(sync)


def test_infer_false_stores_the_messages_as_given_without_the_model():
    with Memory.from_config(config(async_mode=True)) as m:
        m.llm = Down()
        messages = [{"role": "user", "content": "  Call me  Bo \n", "name": "bo"},
                    {"role": "system", "content": "ignored"},
                    {"role": "assistant", "content": [{"type": "text", "text": "Hi"},
                                                      {"type": "text", "text": "Bo"}]}]
        ident = event_id(m.add(messages, user_id="u", infer=False, metadata={"k": 1}))
        assert m.wait(timeout=10)
        results = m.event(ident)["results"]
        assert [(r["memory"], r["role"], r["actor_id"]) for r in results] == [
            ("  Call me  Bo \n", "user", "bo"), ("Hi Bo", "assistant", None)]
        items = {r["memory"]: r for r in m.get_all(filters={"user_id": "u"})["results"]}
        assert items["  Call me  Bo \n"]["metadata"] == {"k": 1}
        assert items["  Call me  Bo \n"]["actor_id"] == "bo"


@pytest.mark.parametrize("messages, kwargs, error, match", [
    ("tea", {}, ValidationError, "At least one of"),
    (5, {"user_id": "u"}, ValidationError, "messages must be str"),
    ("tea", {"user_id": "u", "memory_type": "episodic"}, ValidationError, "memory_type"),
    ("tea", {"user_id": "  "}, ValueError, "user_id"),
    ("tea", {"user_id": "u", "timestamp": 1}, ValueError, "timestamp"),
    ("tea", {"user_id": "u", "expiration_date": "soon"}, ValueError, "expiration_date"),
    ("tea", {"user_id": "u", "metadata": {"when": object()}}, TypeError, "'when'"),
    ("tea", {"user_id": "u", "prompt": 3}, TypeError, "prompt"),
    ([{"role": "user", "content": 5}], {"user_id": "u", "infer": False}, AttributeError,
     r"messages\[0\]\.content"),
    (["tea"], {"user_id": "u"}, AttributeError, r"messages\[0\] must be a dict"),
    ([{"role": "user", "content": ("a", "b")}], {"user_id": "u"}, TypeError,
     r"messages\[0\]\['content'\] cannot be queued"),
    ("x" * (4 << 20 | 1), {"user_id": "u"}, ValueError, r"messages\[0\]\.content"),
    ("tea", {"user_id": "u", "async_mode": "yes"}, TypeError, "async_mode"),
])
def test_bad_input_raises_at_once_naming_the_field_and_queues_nothing(messages, kwargs, error,
                                                                      match):
    with Memory.from_config(config()) as m:
        m.llm = Down()
        kwargs.setdefault("async_mode", True)
        with pytest.raises(error, match=match):
            m.add(messages, **kwargs)
        assert queued(m) == [] and m.wait(timeout=0) is True


def test_a_failing_model_is_recorded_as_failed_logged_and_the_queue_goes_on(caplog):
    with Memory.from_config(config()) as m:
        m.llm = Down()
        failing = event_id(m.add("I like tea", user_id="u", async_mode=True, metadata={"a": 1}))
        raw = event_id(m.add("I like coffee", user_id="u", async_mode=True, infer=False))
        with caplog.at_level(logging.ERROR, logger="memorybench.mem0.background"):
            assert m.wait(timeout=10)
        outcome = m.event(failing)
        assert outcome["status"] == "FAILED"
        assert outcome["error"] == "LLMError: LLM extraction failed: model down"
        assert outcome["request"]["messages"] == [{"role": "user", "content": "I like tea"}]
        assert any(failing in r.getMessage() and "model down" in r.getMessage()
                   for r in caplog.records)
        assert m.event(raw)["status"] == "SUCCEEDED" and queued(m) == []
        assert texts(m, user_id="u") == ["I like coffee"]
        m.llm = OfflineChat()  # the request resubmits as it was given
        assert [r["memory"] for r in m.add(**outcome["request"])["results"]] == ["I like tea"]
        with pytest.raises(LLMError):  # a synchronous add still raises
            m.llm = Down()
            m.add("I like milk", user_id="u")


def test_outcomes_are_bounded(monkeypatch):
    monkeypatch.setattr(background, "KEEP_OUTCOMES", 3)
    with Memory.from_config(config(async_mode=True)) as m:
        ids = [event_id(m.add(f"fact {i}", user_id="u", infer=False)) for i in range(5)]
        assert m.wait(timeout=10)
        assert [m.event(i) is not None for i in ids] == [False, False, True, True, True]
        keys = m._store.engine.state_keys(m._store.namespace, background.OUTCOME)
        assert len(keys) == 3 and texts(m, user_id="u") == [f"fact {i}" for i in range(5)]


def in_thread(call):
    thread = threading.Thread(target=call)
    thread.start()
    time.sleep(0.3)
    return thread


def test_reset_waits_for_the_running_add_and_cancels_the_queued_ones():
    with Memory.from_config(config()) as m:
        m.llm = gate = Gate()
        first = event_id(m.add("I have a cat", user_id="u", async_mode=True))
        second = event_id(m.add("I have a dog", user_id="u", async_mode=True))
        assert gate.entered.wait(10)
        thread = in_thread(m.reset)
        assert thread.is_alive(), "reset() did not wait for the running add"
        gate.release()
        thread.join(10)
        assert m.event(first) is None
        assert m.event(second) == {"event_id": second, "status": "FAILED",
                                   "error": background.CANCELLED}
        assert texts(m, user_id="u") == [] and queued(m) == [] and m.wait(timeout=1)
        m.add("I have a fish", user_id="u", async_mode=True)
        assert m.wait(timeout=10) and texts(m, user_id="u") == ["I have a fish"]


def test_delete_all_deletes_what_was_queued_before_it():
    with Memory.from_config(config()) as m:
        m.llm = gate = Gate()
        running = event_id(m.add("I have a cat", user_id="u", async_mode=True))
        waiting = event_id(m.add("I have a dog", user_id="u", async_mode=True))
        assert gate.entered.wait(10)
        thread = in_thread(lambda: m.delete_all(user_id="u"))
        assert thread.is_alive(), "delete_all() did not wait for the queued adds"
        gate.release()
        thread.join(10)
        assert texts(m, user_id="u") == []
        for ident in (running, waiting):
            [added] = m.event(ident)["results"]
            assert [row["event"] for row in m.history(added["id"])] == ["ADD", "DELETE"]


def test_close_stops_after_the_running_add_and_the_next_open_runs_the_rest(tmp_path):
    m = Memory.from_config(config(tmp_path / "store"))
    m.llm = gate = Gate()
    ids = [event_id(m.add(f"I own boat number {i}", user_id="u", async_mode=True))
           for i in range(3)]
    assert gate.entered.wait(10)
    thread = in_thread(m.close)
    assert thread.is_alive(), "close() did not wait for the running add"
    gate.release()
    thread.join(10)
    assert gate.calls == 1
    with Memory.from_config(config(tmp_path / "store")) as again:
        assert again.wait(timeout=20)
        assert texts(again, user_id="u") == [f"I own boat number {i}" for i in range(3)]
        assert [again.event(i)["status"] for i in ids] == ["SUCCEEDED"] * 3


def test_async_mode_as_the_configured_default():
    with Memory.from_config(config(async_mode=True)) as m:
        event_id(m.add("I like tea", user_id="u"))
        assert m.add("I like jam", user_id="u", async_mode=False)["results"][0]["event"] == "ADD"
        assert m.wait(timeout=10) and texts(m, user_id="u") == ["I like jam", "I like tea"]
    with Memory.from_config(config()) as m:
        assert m.add("I like tea", user_id="u")["results"][0]["memory"] == "I like tea"
    with pytest.raises(ValueError, match="async_mode"):
        Memory.from_config(config(async_mode="yes"))


def test_async_memory_queues_waits_and_reports():
    async def main():
        am = AsyncMemory.from_config(config())
        ident = event_id(await am.add("I run every morning", user_id="c", async_mode=True))
        assert await am.wait(timeout=10)
        outcome = await am.event(ident)
        with pytest.raises(ValueError, match="llm="):
            await am.add("x", agent_id="a", memory_type="procedural_memory", llm=object(),
                         async_mode=True)
        found = await am.get_all(filters={"user_id": "c"})
        am.close()
        return outcome, found

    outcome, found = asyncio.run(main())
    assert outcome["status"] == "SUCCEEDED"
    assert [r["memory"] for r in found["results"]] == ["I run every morning"]


# -- crashes: a subprocess dies mid-queue, the next open runs the rest exactly once ---------

FACTS = [f"I own a boat named Wave{i}" for i in range(8)]
CHILD = r"""
import os, sys, threading, time
from memorybench.mem0 import Memory
from memorybench.mem0.extraction import OfflineChat
from memorybench.mem0.store import Store

path, mode, facts = sys.argv[1], sys.argv[2], sys.argv[3:]
ready = threading.Event()

class Slow:
    def chat(self, messages, response_format=None):
        ready.wait()
        print("chat", flush=True)
        time.sleep(0.1)
        return OfflineChat().chat(messages, response_format)

if mode != "kill":  # die just before or just after the n-th write of the worker
    when, n = mode.split("-")
    original, count = Store.apply, [0]
    def apply(self, writes):
        count[0] += 1
        if count[0] == int(n) and when == "before":
            os._exit(9)
        result = original(self, writes)
        if count[0] == int(n) and when == "after":
            os._exit(9)
        return result
    Store.apply = apply

m = Memory.from_config({"vector_store": {"provider": "memorybench", "config": {"path": path}},
                        "embedder": {"provider": "memorybench", "config": {"model": "hashing"}},
                        "async_mode": True})
m.llm = Slow()
for i, fact in enumerate(facts):
    if i == 2:  # an add that writes nothing but its queue bookkeeping
        added = m.add([{"role": "system", "content": "x"}], user_id="u", infer=False)
        print("queued", added["results"][0]["event_id"], flush=True)
    print("queued", m.add(fact + ".", user_id="u")["results"][0]["event_id"], flush=True)
ready.set()
m.wait()
print("finished", flush=True)
"""


@pytest.mark.parametrize("mode", ["kill", "before-2", "after-2", "before-3", "after-3"])
def test_a_crash_mid_queue_loses_nothing_and_applies_nothing_twice(tmp_path, mode):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    path = tmp_path / "store"
    child = subprocess.Popen([sys.executable, str(script), str(path), mode, *FACTS],
                             stdout=subprocess.PIPE, text=True, env=dict(os.environ))
    events, chats = [], 0
    try:
        for line in child.stdout:
            word = line.split()
            if word[0] == "queued":
                events.append(word[1])
            elif word[0] == "chat":
                chats += 1
                if mode == "kill" and chats == 4:
                    os.kill(child.pid, signal.SIGKILL)
            assert word[0] != "finished", "the child was never cut off"
        assert child.wait(20) == (-signal.SIGKILL if mode == "kill" else 9)
    finally:
        child.kill()
        child.wait()
    total = len(FACTS) + 1
    assert len(events) == total
    with Engine(path) as engine:  # what the crash left: a queue that is neither full nor empty
        left = engine.state_keys("mem0", background.QUEUE)
        memories = engine.records_where("mem0", {"kind": "memory"})
    if mode == "kill":
        assert 1 <= len(left) < total - 1 and memories
    else:
        when, n = mode.split("-")
        done = int(n) - (1 if when == "before" else 0)
        assert len(left) == total - done
    assert [key.rsplit("/", 1)[1] for key in left] == events[total - len(left):]
    with Memory.from_config(config(path)) as m:
        assert m.wait(timeout=30)
        assert texts(m, user_id="u") == sorted(FACTS)  # each once: none lost, none twice
        assert [m.event(e)["status"] for e in events] == ["SUCCEEDED"] * total
        assert queued(m) == []
