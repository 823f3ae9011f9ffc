"""Empirical probe of mem0ai's open-source Memory class.

Run: /tmp/mem0-venv/bin/python /tmp/mem0-research/probe.py > probe-output.txt 2> probe-stderr.txt
Each record is printed as '### <label>' followed by JSON (result or raised error).
"""
import asyncio
import hashlib
import inspect
import json
import os
import re
import uuid
from datetime import datetime

from common import CONNECTS, config, non_loopback_connects
import stub

import mem0
from mem0 import AsyncMemory, Memory

LOG = stub.LOG


def out(label, obj):
    print(f"### {label}")
    print(json.dumps(obj, indent=1, default=str, sort_keys=False))


def rec(label, fn):
    try:
        r = fn()
        out(label, {"ok": r})
        return r
    except Exception as e:  # record type and message
        out(label, {"raised": type(e).__module__ + "." + type(e).__name__, "message": str(e)[:600]})
        return None


def log_mark():
    try:
        return sum(1 for _ in open(LOG))
    except FileNotFoundError:
        return 0


def log_since(mark):
    with open(LOG) as f:
        lines = f.readlines()[mark:]
    return [json.loads(l) for l in lines]


def summarize_requests(reqs):
    s = []
    for r in reqs:
        b = r["body"]
        if r["path"].endswith("/embeddings"):
            s.append({"path": "embeddings", "input": b.get("input"), "keys": sorted(b)})
        else:
            msgs = b.get("messages", [])
            item = {"path": "chat", "keys": sorted(b), "response_format": b.get("response_format"),
                    "roles": [m["role"] for m in msgs], "model": b.get("model")}
            user = next((m["content"] for m in msgs if m["role"] == "user"), "")
            if "## New Messages" in user:
                item["sections"] = {k: v for k, v in stub.sections(user).items()}
                item["system_prompt_len"] = len(msgs[0]["content"])
                item["system_prompt_tail"] = msgs[0]["content"][-120:]
            else:
                item["messages"] = msgs
            s.append(item)
    return s


print("mem0 version", mem0.__version__)

# ---------------------------------------------------------------- signatures
sigs = {}
for cls in (Memory, AsyncMemory):
    for name in ["__init__", "from_config", "add", "search", "get", "get_all", "update", "delete",
                 "delete_all", "history", "reset", "close", "chat"]:
        f = getattr(cls, name)
        sigs[f"{cls.__name__}.{name}"] = {
            "sig": str(inspect.signature(f)),
            "async": inspect.iscoroutinefunction(f),
            "kwonly": [p.name for p in inspect.signature(f).parameters.values() if p.kind == p.KEYWORD_ONLY],
        }
out("signatures", sigs)

# ---------------------------------------------------------------- from_config
from mem0.configs.base import MemoryConfig
out("MemoryConfig fields", {k: str(v.default) for k, v in MemoryConfig.model_fields.items()})
out("MemoryConfig extra policy", str(MemoryConfig.model_config))
rec("from_config unknown top-level key 'bogus' + custom_fact_extraction_prompt + graph_store",
    lambda: type(Memory.from_config(config("cfg1", bogus=1, custom_fact_extraction_prompt="x",
                                           custom_update_memory_prompt="y",
                                           graph_store={"provider": "neo4j"}))).__name__)
bad = config("cfg2"); bad["vector_store"]["config"]["nope"] = 1
rec("from_config unknown vector_store.config key", lambda: Memory.from_config(bad))
bad = config("cfg3"); bad["llm"]["config"]["nope"] = 1
rec("from_config unknown llm.config key", lambda: Memory.from_config(bad))
bad = config("cfg4"); bad["llm"]["provider"] = "nope"
rec("from_config unknown llm provider", lambda: Memory.from_config(bad))
bad = config("cfg5"); bad["vector_store"]["provider"] = "nope"
rec("from_config unknown vector store provider", lambda: Memory.from_config(bad))
rec("from_config version v1.0 accepted?", lambda: Memory.from_config(config("cfg6", version="v1.0")).api_version)

m = Memory.from_config(config("main"))

# ---------------------------------------------------------------- add errors
rec("add no scope", lambda: m.add("hi", infer=False))
rec("add user_id whitespace-only", lambda: m.add("hi", user_id="  ", infer=False))
rec("add user_id with inner space", lambda: m.add("hi", user_id="a b", infer=False))
rec("add user_id int 42 (coerced)", lambda: m.add("int id", user_id=42, infer=False))
rec("add user_id padded ' u9 ' (trimmed)", lambda: m.add("padded id", user_id=" u9 ", infer=False))
rec("get_all(filters user_id=42 int)", lambda: [x["user_id"] for x in m.get_all(filters={"user_id": 42})["results"]])
rec("add messages=int", lambda: m.add(5, user_id="u0", infer=False))
rec("add messages=None", lambda: m.add(None, user_id="u0", infer=False))
rec("add memory_type bogus", lambda: m.add("x", user_id="u0", memory_type="bogus"))
rec("add timestamp=...", lambda: m.add("x", user_id="u0", timestamp=123))
rec("add positional user_id", lambda: m.add("x", "u0"))
rec("add expiration_date bad", lambda: m.add("x", user_id="u0", expiration_date="tomorrow", infer=False))
rec("add list with non-dict element", lambda: m.add(["plain string"], user_id="u0", infer=False))
rec("add empty list infer=False", lambda: m.add([], user_id="u0", infer=False))
rec("add empty string infer=False", lambda: m.add("", user_id="u0", infer=False))

# ---------------------------------------------------------------- add infer=False shapes
r = rec("add str infer=False", lambda: m.add("I love green tea", user_id="alice", infer=False))
mid_tea = r["results"][0]["id"]
out("uuid version of id", {"id": mid_tea, "version": uuid.UUID(mid_tea).version,
                           "canonical": str(uuid.UUID(mid_tea)) == mid_tea})
rec("add dict infer=False", lambda: m.add({"role": "assistant", "content": "Assistant note about hiking"},
                                           user_id="alice", infer=False))
rec("add list infer=False (system skipped, name->actor_id, missing content skipped)", lambda: m.add([
    {"role": "system", "content": "You are helpful"},
    {"role": "user", "content": "My dog is named Rex", "name": "alice_n"},
    {"role": "assistant", "content": "Nice dog"},
    {"role": "user"},
    {"role": "tool", "content": "tool output text"},
    {"role": "user", "content": ["not", "text", "parts"]},
    {"role": "user", "content": [{"type": "text", "text": "part one"}, {"type": "text", "text": "part two"}]},
], user_id="alice", infer=False))
rec("add with metadata infer=False (incl identity + reserved keys)", lambda: m.add(
    "I prefer window seats", user_id="alice", agent_id="travel", run_id="r1",
    metadata={"category": "travel", "priority": 3, "user_id": "mallory", "role": "x-role",
              "data": "overwritten?", "hash": "h", "created_at": "2020-01-01T00:00:00+00:00",
              "text_lemmatized": "lem", "tags": ["a", "b"]}, infer=False))
rec("add expiration_date good (past date)", lambda: m.add("Old coupon code", user_id="alice",
                                                          expiration_date="2000-01-01", infer=False))
rec("add duplicate text infer=False (no dedup?)", lambda: m.add("I love green tea", user_id="alice", infer=False))

rec("get_all alice", lambda: m.get_all(filters={"user_id": "alice"}))
rec("get_all alice show_expired", lambda: [x["memory"] for x in m.get_all(filters={"user_id": "alice"}, show_expired=True)["results"]])

# ---------------------------------------------------------------- get
rec("get existing (with metadata)", lambda: m.get(next(x["id"] for x in m.get_all(filters={"user_id": "alice"})["results"] if x["memory"] == "I prefer window seats")))
rec("get existing plain", lambda: m.get(mid_tea))
rec("get unknown uuid", lambda: m.get(str(uuid.uuid4())))
rec("get malformed id", lambda: m.get("not-a-uuid"))
rec("get int id 7", lambda: m.get(7))

row = m.get(mid_tea)
out("hash check", {"hash": row["hash"], "md5": hashlib.md5(row["memory"].encode()).hexdigest(),
                   "created_at": row["created_at"],
                   "parsed": str(datetime.fromisoformat(row["created_at"]))})

# ---------------------------------------------------------------- scoping
ms = Memory.from_config(config("scope"))
ms.add("alpha fact", user_id="u", agent_id="a", infer=False)
ms.add("beta fact", user_id="u", infer=False)
ms.add("gamma fact", agent_id="a", infer=False)
ms.add("delta fact", user_id="u", agent_id="a", run_id="r", infer=False)
ms.add("epsilon fact", run_id="r", infer=False)
scopes = {}
for f in [{"user_id": "u"}, {"agent_id": "a"}, {"run_id": "r"}, {"user_id": "u", "agent_id": "a"},
          {"user_id": "u", "agent_id": "b"}, {"user_id": "u", "run_id": "r"}, {"user_id": "nobody"}]:
    scopes[json.dumps(f)] = {
        "get_all": sorted(x["memory"] for x in ms.get_all(filters=f)["results"]),
        "search": sorted(x["memory"] for x in ms.search("fact", filters=f, threshold=0.0)["results"]),
    }
out("scoping matrix", scopes)
rec("get_all top-level user_id", lambda: ms.get_all(user_id="u"))
rec("search top-level user_id", lambda: ms.search("fact", user_id="u"))
rec("get_all no filters", lambda: ms.get_all())
rec("get_all filters without entity id", lambda: ms.get_all(filters={"category": "x"}))
rec("search no filters", lambda: ms.search("fact"))
rec("get_all unknown kwarg limit=5", lambda: len(ms.get_all(filters={"user_id": "u"}, limit=5)["results"]))
rec("search unknown kwarg limit=5", lambda: len(ms.search("fact", filters={"user_id": "u"}, limit=5)["results"]))
rec("get_all filters user_id empty string", lambda: ms.get_all(filters={"user_id": ""}))
rec("get_all filters user_id None", lambda: ms.get_all(filters={"user_id": None}))
rec("delete_all no args", lambda: ms.delete_all())
rec("delete_all filters kw", lambda: ms.delete_all(filters={"user_id": "u"}))

# ---------------------------------------------------------------- get_all limits / order
mo = Memory.from_config(config("order"))
for i in range(30):
    mo.add(f"note number {i}", user_id="o", infer=False)
ga = mo.get_all(filters={"user_id": "o"})["results"]
out("get_all default count + order", {"count": len(ga), "memories": [x["memory"] for x in ga],
                                      "ids_sorted": [x["id"] for x in ga] == sorted(x["id"] for x in ga)})
rec("get_all top_k=5 order", lambda: [x["memory"] for x in mo.get_all(filters={"user_id": "o"}, top_k=5)["results"]])
rec("get_all top_k=0", lambda: mo.get_all(filters={"user_id": "o"}, top_k=0))
rec("get_all top_k=-1", lambda: mo.get_all(filters={"user_id": "o"}, top_k=-1))
rec("get_all top_k=100 count", lambda: len(mo.get_all(filters={"user_id": "o"}, top_k=100)["results"]))
rec("get_all top_k='5'", lambda: mo.get_all(filters={"user_id": "o"}, top_k="5"))

# ---------------------------------------------------------------- search semantics
rec("search shape", lambda: mo.search("note number 7", filters={"user_id": "o"}, top_k=3))
rec("search explain", lambda: mo.search("note number 7", filters={"user_id": "o"}, top_k=2, explain=True))
rec("search default top_k count (30 stored, query matches all)", lambda: len(mo.search("note number", filters={"user_id": "o"})["results"]))
rec("search threshold 0.99", lambda: mo.search("note number 7", filters={"user_id": "o"}, threshold=0.99))
rec("search threshold 1.5", lambda: mo.search("x", filters={"user_id": "o"}, threshold=1.5))
rec("search threshold -0.1", lambda: mo.search("x", filters={"user_id": "o"}, threshold=-0.1))
rec("search threshold None", lambda: len(mo.search("note", filters={"user_id": "o"}, threshold=None)["results"]))
rec("search top_k=0", lambda: mo.search("note", filters={"user_id": "o"}, top_k=0))
rec("search top_k=True", lambda: mo.search("note", filters={"user_id": "o"}, top_k=True))
rec("search empty query", lambda: mo.search("   ", filters={"user_id": "o"}))
rec("search non-str query", lambda: mo.search(5, filters={"user_id": "o"}))
rec("search rerank=True without reranker", lambda: len(mo.search("note", filters={"user_id": "o"}, rerank=True)["results"]))
rec("search reference_date", lambda: mo.search("note", filters={"user_id": "o"}, reference_date="2024-01-01"))
# score = cosine similarity of stub embeddings?
import math
def cos(a, b):
    return sum(x * y for x, y in zip(a, b))
q = "note number 7"
res = mo.search(q, filters={"user_id": "o"}, top_k=5, threshold=0.0)["results"]
out("score vs cosine", [{"memory": x["memory"], "score": x["score"],
                         "cos": cos(stub.embed(q), stub.embed(x["memory"]))} for x in res])
res = mo.search("unrelated zebra words", filters={"user_id": "o"}, top_k=5, threshold=0.0)["results"]
out("score with no overlap (threshold 0)", [{"memory": x["memory"], "score": x["score"]} for x in res])
rec("search low-overlap default threshold", lambda: mo.search("zebra words note", filters={"user_id": "o"}, top_k=3))

# ---------------------------------------------------------------- filters
mf = Memory.from_config(config("filters"))
rows = [("red apple", {"color": "red", "n": 1, "kind": "fruit", "flag": True}),
        ("green apple", {"color": "green", "n": 2, "kind": "fruit", "flag": False}),
        ("red car", {"color": "red", "n": 3, "kind": "vehicle"}),
        ("blue car", {"color": "blue", "n": 4, "kind": "vehicle", "note": "Fast Blue Car"}),
        ("plain thing", {})]
for text, md in rows:
    mf.add(text, user_id="f", metadata=md or None, infer=False)
filt = {}
cases = {
    "eq scalar": {"color": "red"},
    "eq op": {"color": {"eq": "red"}},
    "ne": {"color": {"ne": "red"}},
    "in": {"color": {"in": ["red", "blue"]}},
    "nin": {"color": {"nin": ["red", "blue"]}},
    "list shorthand": {"color": ["red", "blue"]},
    "gt": {"n": {"gt": 2}},
    "gte": {"n": {"gte": 2}},
    "lt": {"n": {"lt": 2}},
    "lte": {"n": {"lte": 2}},
    "gte+lte": {"n": {"gte": 2, "lte": 3}},
    "contains": {"note": {"contains": "Blue"}},
    "contains lowercase": {"note": {"contains": "blue"}},
    "icontains": {"note": {"icontains": "blue"}},
    "wildcard": {"note": "*"},
    "bool eq": {"flag": True},
    "int eq": {"n": 3},
    "int eq as str": {"n": "3"},
    "AND": {"AND": [{"color": "red"}, {"kind": "vehicle"}]},
    "OR": {"OR": [{"color": "green"}, {"kind": "vehicle"}]},
    "NOT": {"NOT": [{"color": "red"}]},
    "OR empty": {"OR": []},
    "AND not list": {"AND": {"color": "red"}},
    "bad op": {"color": {"regex": "r.*"}},
    "mixed range+eq": {"n": {"gte": 1, "eq": 2}},
    "created_at gte datetime": {"created_at": {"gte": "2000-01-01T00:00:00Z"}},
    "created_at lt datetime": {"created_at": {"lt": "2000-01-01T00:00:00Z"}},
    "created_at gte date only": {"created_at": {"gte": "2000-01-01"}},
    "missing key eq": {"nosuchkey": "x"},
    "role eq": {"role": "user"},
    "memory text key data": {"data": "red car"},
}
for name, extra in cases.items():
    entry = {}
    for meth in ("get_all", "search"):
        f = {"user_id": "f", **extra}
        try:
            if meth == "get_all":
                r = mf.get_all(filters=f)
            else:
                r = mf.search("apple car thing", filters=f, threshold=0.0)
            entry[meth] = sorted(x["memory"] for x in r["results"])
        except Exception as e:
            entry[meth] = f"RAISED {type(e).__name__}: {str(e)[:200]}"
    filt[name] = entry
out("filters matrix", filt)
rec("metadata round trip in get_all", lambda: [{k: x.get(k) for k in ("memory", "metadata")} for x in mf.get_all(filters={"user_id": "f"})["results"]])

# ---------------------------------------------------------------- update / delete / history
mu = Memory.from_config(config("upd"))
a = mu.add([{"role": "user", "content": "I work at Acme", "name": "bob_actor"}], user_id="bob",
           metadata={"team": "x"}, infer=False)["results"][0]["id"]
before = mu.get(a)
rec("update text", lambda: mu.update(a, text="I work at Globex"))
rec("get after update text", lambda: mu.get(a))
rec("update metadata only (merge, identity ignored)", lambda: mu.update(a, metadata={"team": "y", "level": 2, "user_id": "eve"}))
rec("get after update metadata", lambda: mu.get(a))
rec("update data= alias", lambda: mu.update(a, data="I work at Initech"))
rec("update positional text", lambda: mu.update(a, "I work at Hooli"))
rec("update nothing", lambda: mu.update(a))
rec("update unknown id", lambda: mu.update(str(uuid.uuid4()), text="x"))
rec("update same text (history?)", lambda: mu.update(a, text="I work at Hooli"))
rec("update expiration_date", lambda: mu.update(a, expiration_date="2999-12-31"))
rec("get after expiration", lambda: mu.get(a))
rec("update expiration_date None (clear)", lambda: mu.update(a, expiration_date=None))
rec("get after clear", lambda: mu.get(a))
rec("history after updates", lambda: mu.history(a))
rec("delete", lambda: mu.delete(a))
rec("get after delete", lambda: mu.get(a))
rec("delete again", lambda: mu.delete(a))
rec("delete unknown", lambda: mu.delete(str(uuid.uuid4())))
rec("update after delete", lambda: mu.update(a, text="zombie"))
rec("history after delete", lambda: mu.history(a))
rec("history unknown", lambda: mu.history(str(uuid.uuid4())))
out("created_at before/after", {"before": before["created_at"]})

# delete_all
md = Memory.from_config(config("delall"))
x1 = md.add("one", user_id="d", agent_id="a", infer=False)["results"][0]["id"]
x2 = md.add("two", user_id="d", infer=False)["results"][0]["id"]
x3 = md.add("three", agent_id="a", infer=False)["results"][0]["id"]
rec("delete_all(agent_id=a)", lambda: md.delete_all(agent_id="a"))
rec("after delete_all(agent_id=a) get_all user d", lambda: [x["memory"] for x in md.get_all(filters={"user_id": "d"})["results"]])
rec("history of x1 after delete_all", lambda: md.history(x1))
rec("delete_all nothing matches", lambda: md.delete_all(user_id="zzz"))
rec("delete_all whitespace id", lambda: md.delete_all(user_id=" "))
rec("reset", lambda: md.reset())
rec("after reset get_all", lambda: md.get_all(filters={"user_id": "d"}))
rec("after reset history", lambda: md.history(x2))
rec("after reset add works", lambda: [r["event"] for r in md.add("four", user_id="d", infer=False)["results"]])

# ---------------------------------------------------------------- infer=True protocol
mi = Memory.from_config(config("infer"))
k = log_mark()
r = rec("add infer=True two user facts + assistant", lambda: mi.add([
    {"role": "user", "content": "I like jazz; I play the piano"},
    {"role": "assistant", "content": "Great taste"},
], user_id="carol"))
out("infer=True requests", summarize_requests(log_since(k)))
k = log_mark()
rec("add infer=True overlapping (dup of 'I like jazz' + new)", lambda: mi.add("I like jazz; I own a cat", user_id="carol"))
out("infer=True second call requests", summarize_requests(log_since(k)))
rec("add infer=True dup within batch", lambda: mi.add("I drink coffee; I drink coffee", user_id="carol"))
k = log_mark()
rec("add infer=True EMPTY", lambda: mi.add("nothing here !!EMPTY", user_id="carol"))
rec("add infer=True BADJSON", lambda: mi.add("I sail boats !!BADJSON", user_id="carol"))
rec("add infer=True FENCE", lambda: mi.add("I grow tomatoes !!FENCE", user_id="carol"))
rec("add infer=True PROSEJSON", lambda: mi.add("I knit scarves !!PROSEJSON", user_id="carol"))
rec("add infer=True ATTR", lambda: mi.add("I ride bikes !!ATTR=carol_x", user_id="carol"))
rec("get_all carol", lambda: mi.get_all(filters={"user_id": "carol"}))
rec("history of an infer=True memory", lambda: mi.history(mi.get_all(filters={"user_id": "carol"})["results"][0]["id"]))
rec("add infer=True with metadata", lambda: mi.add("I collect stamps", user_id="carol", metadata={"src": "chat"}))
rec("get_all carol metadata", lambda: [(x["memory"], x.get("metadata"), x.get("role")) for x in mi.get_all(filters={"user_id": "carol"})["results"]])
k = log_mark()
rec("add infer=True agent-only scope + assistant FACT", lambda: mi.add([
    {"role": "user", "content": "hello"},
    {"role": "assistant", "content": "FACT Agent prefers short answers"}], agent_id="helper"))
out("agent-scope request", summarize_requests(log_since(k)))
k = log_mark()
rec("add infer=True system-only message", lambda: mi.add([{"role": "system", "content": "sys only"}], user_id="carol"))
out("system-only request", summarize_requests(log_since(k)))
rec("add infer=True custom prompt arg", lambda: mi.add("I fence", user_id="carol", prompt="Only extract sports."))
k = log_mark()
rec("add infer=True HTTP500", lambda: mi.add("boom !!HTTP500", user_id="carol"))
out("HTTP500 requests count (client retries)", len(log_since(k)))
k = log_mark()
rec("add procedural memory (agent_id)", lambda: mi.add([{"role": "user", "content": "step one"}], agent_id="helper", memory_type="procedural_memory"))
out("procedural request", summarize_requests(log_since(k)))
rec("get_all helper", lambda: mi.get_all(filters={"agent_id": "helper"}))
rec("add procedural memory user_id only", lambda: mi.add("I swim", user_id="carol2", memory_type="procedural_memory"))
# do infer=False adds feed "Last k Messages"?
mi.add("raw note not saved as message", user_id="dave", infer=False)
k = log_mark()
mi.add("I am dave", user_id="dave")
out("last-k after infer=False add", summarize_requests(log_since(k)))
for i in range(12):
    mi.add(f"msg {i} !!EMPTY", user_id="erin")
k = log_mark()
mi.add("final erin", user_id="erin")
out("last-k window after 12 adds", [x.get("sections", {}).get("Last k Messages") for x in summarize_requests(log_since(k)) if x["path"] == "chat"])

# ---------------------------------------------------------------- Async
async def amain():
    am = AsyncMemory.from_config(config("async"))
    r1 = await am.add("async fact one", user_id="z", infer=False)
    r2 = await am.search("async fact", filters={"user_id": "z"})
    r3 = await am.get_all(filters={"user_id": "z"})
    r4 = await am.get(r1["results"][0]["id"])
    r5 = await am.update(r1["results"][0]["id"], text="async fact two")
    r6 = await am.history(r1["results"][0]["id"])
    r7 = await am.delete(r1["results"][0]["id"])
    r8 = await am.delete_all(user_id="z")
    r9 = await am.reset()
    return {"add": r1, "search": r2, "get_all": r3, "get": r4, "update": r5, "history": r6,
            "delete": r7, "delete_all": r8, "reset": r9}
rec("AsyncMemory round", lambda: asyncio.run(amain()))

out("non-loopback socket connects", non_loopback_connects())
out("total connects", len(CONNECTS))
