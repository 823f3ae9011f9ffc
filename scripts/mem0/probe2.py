"""Second probe: filter edge cases, wildcard scope, dedup window, deterministic ids.

Run: /tmp/mem0-venv/bin/python /tmp/mem0-research/probe2.py > probe2-output.txt 2> probe2-stderr.txt
"""
import json
import random
import uuid
from datetime import date, datetime

from common import config, non_loopback_connects
import stub

import mem0.memory.main as mm
from mem0 import Memory


def out(label, obj):
    print(f"### {label}")
    print(json.dumps(obj, indent=1, default=str))


def rec(label, fn):
    try:
        r = fn()
        out(label, {"ok": r})
        return r
    except Exception as e:
        out(label, {"raised": type(e).__module__ + "." + type(e).__name__, "message": str(e)[:400]})
        return None


def texts(r):
    return sorted(x["memory"] for x in r["results"])


m = Memory.from_config(config("p2"))
m.add("Fast Blue Car", user_id="f", metadata={"note": "Fast Blue Car", "tags": ["a", "b"], "x": 3.0,
                                                 "when": "2024-05-01T10:00:00+00:00", "nested": {"k": 1}},
      infer=False)
m.add("slow red bike", user_id="f", metadata={"note": "slow red bike", "tags": ["c"], "x": 3,
                                                 "when": "2023-01-01"}, infer=False)
m.add("other tenant secret", user_id="g", infer=False)
cases = {
    "contains substring 'lue'": {"note": {"contains": "lue"}},
    "contains two tokens reordered 'car fast'": {"note": {"contains": "car fast"}},
    "contains 'FAST'": {"note": {"contains": "FAST"}},
    "array field eq 'a'": {"tags": "a"},
    "array field in ['c','z']": {"tags": {"in": ["c", "z"]}},
    "float payload eq 3.0": {"x": 3.0},
    "int 3 matches float payload?": {"x": 3},
    "range gte 3 (int & float payloads)": {"x": {"gte": 3}},
    "string range non-date": {"note": {"gt": "a"}},
    "datetime range on 'when'": {"when": {"gte": "2024-01-01T00:00:00Z"}},
    "date-only payload with range": {"when": {"lt": "2024-01-01"}},
    "nested dict eq": {"nested": {"k": 1}},
    "dotted key nested.k": {"nested.k": 1},
    "in with empty list": {"note": {"in": []}},
    "actor filter missing": {"actor_id": "nobody"},
}
res = {}
for name, extra in cases.items():
    e = {}
    for meth in ("get_all", "search"):
        try:
            f = {"user_id": "f", **extra}
            r = m.get_all(filters=f) if meth == "get_all" else m.search("fast car bike", filters=f, threshold=0.0)
            e[meth] = texts(r)
        except Exception as ex:
            e[meth] = f"RAISED {type(ex).__name__}: {str(ex)[:160]}"
    res[name] = e
out("filter edge cases", res)

rec("WILDCARD user_id '*' get_all (cross-tenant?)", lambda: texts(m.get_all(filters={"user_id": "*"})))
rec("WILDCARD user_id '*' search", lambda: texts(m.search("secret tenant", filters={"user_id": "*"}, threshold=0.0)))
rec("user_id as list get_all", lambda: texts(m.get_all(filters={"user_id": ["f", "g"]})))
rec("user_id in-op search", lambda: texts(m.search("x", filters={"user_id": {"in": ["f", "g"]}}, threshold=0.0)))
rec("OR across users", lambda: texts(m.get_all(filters={"user_id": "f", "OR": [{"user_id": "g"}]})))

# negative cosine and threshold 0
m2 = Memory.from_config(config("neg"))
words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"]
for w in words:
    m2.add(w, user_id="n", infer=False)
q = "kilo"
allr = m2.search(q, filters={"user_id": "n"}, threshold=0.0, top_k=50)["results"]
cos = {w: sum(a * b for a, b in zip(stub.embed(q), stub.embed(w))) for w in words}
out("threshold 0 with negative cosines", {"returned": [(x["memory"], x["score"]) for x in allr], "cos": cos})

# dedup window: hash dedup only against top-10 similar existing memories
m3 = Memory.from_config(config("dedup"))
m3.add("tea", user_id="d", infer=False)
for i in range(12):
    m3.add(f"tea tea{i}", user_id="d", infer=False)  # similar to 'tea'
rec("infer=True re-add 'tea' with 13 similar in scope", lambda: m3.add("tea", user_id="d"))
m4 = Memory.from_config(config("dedup2"))
for w in ["I like tea"] + [f"I like tea {i}" for i in range(11)]:
    m4.add(w, user_id="d", infer=False)
rec("infer=True re-add exact 'I like tea' (exact vector in top10)", lambda: m4.add("I like tea", user_id="d"))
m5 = Memory.from_config(config("dedup3"))
m5.add("tea like I", user_id="d", infer=False)
rec("infer=True 'I like tea' when permutation exists (hash differs)", lambda: m5.add("I like tea", user_id="d"))
rec("infer=True fact equal to infer=False memory in other scope", lambda: m5.add("tea like I", user_id="e"))

# timestamps: batch records
m6 = Memory.from_config(config("ts"))
r = m6.add("a1; a2; a3", user_id="t")
ga = m6.get_all(filters={"user_id": "t"})["results"]
out("infer=True batch timestamps", [(x["memory"], x["created_at"], x["updated_at"]) for x in ga])
rec("expiration_date as date object", lambda: m6.get(m6.add("exp obj", user_id="t", expiration_date=date(2999, 1, 2), infer=False)["results"][0]["id"])["expiration_date"])
rec("expiration_date as datetime", lambda: m6.get(m6.add("exp dt", user_id="t", expiration_date=datetime(2999, 1, 2, 5, 6), infer=False)["results"][0]["id"])["expiration_date"])
rec("expiration_date today (not expired: strictly-less test)", lambda: texts(m6.get_all(filters={"user_id": "t", "memory_type": "*"})) if False else m6.get(m6.add("exp today", user_id="t", expiration_date=datetime.utcnow().date().isoformat(), infer=False)["results"][0]["id"]) is not None)
rec("get_all shows today-expiring", lambda: "exp today" in texts(m6.get_all(filters={"user_id": "t"})))
rec("search hides expired, get returns it", lambda: (
    [x["memory"] for x in m6.search("old", filters={"user_id": "t"}, threshold=0.0)["results"]
     if x["memory"] == "old"],
    m6.get(m6.add("old", user_id="t", expiration_date="2001-01-01", infer=False)["results"][0]["id"])["memory"]))
rec("search show_expired", lambda: [x["memory"] for x in m6.search("old", filters={"user_id": "t"}, show_expired=True)["results"]][:2])
rec("empty-memory visibility (get_all vs search)", lambda: (
    m6.add("", user_id="empty", infer=False) and None,
    texts(m6.get_all(filters={"user_id": "empty"})),
    texts(m6.search("anything", filters={"user_id": "empty"}, threshold=0.0))))
rec("update metadata on infer=True memory keeps role absent", lambda: (
    m6.update(ga[0]["id"], metadata={"k": 1}), m6.get(ga[0]["id"]), m6.history(ga[0]["id"])))
rec("update metadata=None + text", lambda: m6.update(ga[1]["id"], text="a2 changed", metadata=None))
rec("update metadata={} only", lambda: m6.update(ga[1]["id"], metadata={}))
rec("update with non-str text", lambda: m6.update(ga[1]["id"], text=5))

# actor_id filter
m7 = Memory.from_config(config("actor"))
m7.add([{"role": "user", "content": "from ann", "name": "ann"}, {"role": "user", "content": "from ben", "name": "ben"}],
       user_id="grp", infer=False)
rec("filter actor_id=ann", lambda: texts(m7.get_all(filters={"user_id": "grp", "actor_id": "ann"})))
rec("search actor_id=ann", lambda: texts(m7.search("from", filters={"user_id": "grp", "actor_id": "ann"})))

# deterministic ids by patching the uuid module used in mem0.memory.main
class SeededUUID:
    def __init__(self, seed):
        self.rng = random.Random(seed)

    def uuid4(self):
        return uuid.UUID(int=self.rng.getrandbits(128), version=4)

    def __getattr__(self, k):
        return getattr(uuid, k)


mm.uuid = SeededUUID(7)
m8 = Memory.from_config(config("seeded"))
ids1 = [m8.add(f"s{i}", user_id="s", infer=False)["results"][0]["id"] for i in range(3)]
ids1 += [x["id"] for x in m8.add("s3; s4", user_id="s")["results"]]
mm.uuid = SeededUUID(7)
m9 = Memory.from_config(config("seeded2"))
ids2 = [m9.add(f"s{i}", user_id="s", infer=False)["results"][0]["id"] for i in range(3)]
ids2 += [x["id"] for x in m9.add("s3; s4", user_id="s")["results"]]
out("seeded ids reproducible", {"ids1": ids1, "equal": ids1 == ids2,
                                "get_all_order_is_id_order": [x["id"] for x in m9.get_all(filters={"user_id": "s"})["results"]] == sorted(ids2)})
mm.uuid = uuid
out("non-loopback socket connects", non_loopback_connects())
