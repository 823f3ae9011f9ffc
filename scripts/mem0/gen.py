"""The seeded call generator of the mem0 drop-in differential (driver.py).

``gen_call(rng, known)`` draws one call of mem0's public API from small pools (two users, an
optional agent and run, a 20-word vocabulary whose sentences collide in the stub's embedding)
so that scopes overlap, facts repeat (hash dedup), filters hit and miss, and ids are reused
after deletion. ``known`` is the list of (id, text) of every memory an add returned.
Everything depends on ``rng`` and ``known`` only, so both implementations draw the same
calls as long as their results agree.
"""

import uuid

WORDS = ("tea coffee jazz piano cat dog paris tokyo red blue car bike swim run book film "
         "apple pear chess golf rain snow").split()
USERS = ["u1", "u2"]
AGENTS = [None, "a1"]
RUNS = [None, None, "r1"]
THRESHOLDS = [None, 0.05, 0.1, 0.23, 0.41, 0.62]
MARKERS = ["", "", "", "", " !!EMPTY", " !!FENCE", " !!PROSEJSON", " !!BADJSON", " !!ATTR=bob"]
FAR = ["2001-01-01", "2999-12-31"]


def scope(rng):
    s = {"user_id": rng.choice(USERS)}
    a, r = rng.choice(AGENTS), rng.choice(RUNS)
    if a:
        s["agent_id"] = a
    if r:
        s["run_id"] = r
    if rng.random() < 0.1:
        s.pop("user_id")
        s.setdefault("agent_id", "a1")
    return s


def sentence(rng):
    words = rng.sample(WORDS, rng.randint(1, 3))
    return rng.choice(["I like ", "I like ", "like I ", "We love "]) + " ".join(words)


def fresh_id(rng):
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def metadata(rng):
    if rng.random() < 0.5:
        return None
    md = {"color": rng.choice(["red", "blue", "green"]), "n": rng.randint(0, 5)}
    if rng.random() < 0.3:
        md["tags"] = rng.sample(["x", "y", "z"], rng.randint(1, 2))
    if rng.random() < 0.3:
        md["when"] = rng.choice(["2024-05-01", "2024-05-01T10:00:00+00:00", "2023-01-15"])
    if rng.random() < 0.2:
        md["f"] = rng.choice([1.5, 3.0, 2])
    if rng.random() < 0.1:
        md["user_id"] = "intruder"  # dropped with a warning
    return md


def condition(rng):
    key = rng.choice(["color", "color", "n", "n", "tags", "when", "f", "role", "actor_id"])
    if key == "color":
        return key, rng.choice(["red", "blue", ["red", "green"], {"eq": "blue"}, {"ne": "red"},
                                {"in": ["red", "blue"]}, {"nin": ["green"]}, "*",
                                {"contains": "RED"}, {"icontains": "blu"}])
    if key == "n":
        op = rng.choice(["gt", "gte", "lt", "lte", "eq", "ne", "in", "range"])
        if op == "range":
            return key, {"gte": rng.randint(0, 2), "lte": rng.randint(2, 5)}
        if op == "in":
            return key, {"in": rng.sample(range(6), 2)}
        return key, {op: rng.randint(0, 5)}
    if key == "tags":
        return key, rng.choice(["x", {"in": ["y"]}, {"nin": ["z"]}])
    if key == "when":
        return key, rng.choice([{"gte": "2024-01-01"}, {"lt": "2024-05-01T12:00:00Z"},
                                {"gt": "2023-06-01", "lte": "2024-12-31"}])
    if key == "f":
        return key, rng.choice([{"gt": 2}, {"lte": 1.5}, 2])
    if key == "role":
        return key, rng.choice(["user", "assistant"])
    return key, rng.choice(["ann", {"ne": "ann"}])


def query_filters(rng):
    f = scope(rng)
    if "user_id" in f and rng.random() < 0.5:
        f = {"user_id": f["user_id"]}
    if rng.random() < 0.05:
        f["user_id"] = "*"
    if rng.random() < 0.4:
        k, v = condition(rng)
        f[k] = v
    r = rng.random()
    if r < 0.08:
        f["OR"] = [dict([condition(rng)]), dict([condition(rng)])]
    elif r < 0.14:
        f["NOT"] = [dict([condition(rng)])]
    elif r < 0.2:
        f["AND"] = [dict([condition(rng)]), dict([condition(rng)])]
    return f


def messages_raw(rng):
    kind = rng.choice(["str", "dict", "list", "list", "parts"])
    if kind == "str":
        return sentence(rng)
    if kind == "dict":
        return {"role": rng.choice(["user", "assistant"]), "content": sentence(rng)}
    if kind == "parts":
        return [{"role": "user", "content": [{"type": "text", "text": sentence(rng)},
                                             {"type": "image_url", "image_url": {"url": "x"}},
                                             {"type": "text", "text": rng.choice(WORDS)}]}]
    out = []
    for _ in range(rng.randint(1, 3)):
        m = {"role": rng.choice(["user", "assistant", "system"]), "content": sentence(rng)}
        if rng.random() < 0.3:
            m["name"] = rng.choice(["ann", "ben"])
        out.append(m)
    return out


def add_infer(rng, known):
    facts = [sentence(rng) for _ in range(rng.randint(1, 3))]
    if known and rng.random() < 0.4:
        facts.insert(rng.randint(0, len(facts)), rng.choice(known)[1])
    if rng.random() < 0.1:
        facts.append(facts[0])  # duplicate inside one reply
    content = "; ".join(facts) + rng.choice(MARKERS)
    msgs = [{"role": "user", "content": content}]
    if rng.random() < 0.25:
        msgs.append({"role": "assistant", "content": rng.choice(
            ["Welcome!", "Noted.", "FACT " + sentence(rng)])})
    if rng.random() < 0.1:
        msgs.insert(0, {"role": "system", "content": "be brief"})
    call = {"op": "add", "messages": msgs, "scope": scope(rng), "metadata": metadata(rng),
            "infer": True}
    if rng.random() < 0.15:
        call["prompt"] = "Keep only hobbies."
    if rng.random() < 0.1:
        call["expiration_date"] = rng.choice(FAR)
    return call


def error_call(rng):
    s = scope(rng)
    return rng.choice([
        {"op": "add", "messages": sentence(rng), "scope": {}, "metadata": None, "infer": False},
        {"op": "add", "messages": sentence(rng), "scope": {"user_id": "  "}, "metadata": None,
         "infer": False},
        {"op": "add", "messages": sentence(rng), "scope": {"user_id": "a b"}, "metadata": None,
         "infer": False},
        {"op": "add", "messages": 42, "scope": s, "metadata": None, "infer": False},
        {"op": "add", "messages": sentence(rng), "scope": s, "metadata": None, "infer": False,
         "memory_type": "episodic"},
        {"op": "add", "messages": sentence(rng), "scope": s, "metadata": None, "infer": False,
         "expiration_date": "31/12/2999"},
        {"op": "add", "messages": [sentence(rng)], "scope": s, "metadata": None, "infer": False},
        {"op": "search", "query": "tea", "filters": s, "top_k": 3, "threshold": 1.5},
        {"op": "search", "query": "   ", "filters": s, "top_k": 3, "threshold": None},
        {"op": "search", "query": "tea", "filters": s, "top_k": -1, "threshold": None},
        {"op": "search", "query": "tea", "filters": s, "top_k": True, "threshold": None},
        {"op": "search", "query": "tea", "filters": {"color": "red"}, "top_k": 3,
         "threshold": None},
        {"op": "search", "query": "tea", "filters": s, "top_k": 3, "threshold": None,
         "top_level": {"user_id": "u1"}},
        {"op": "get_all", "filters": s, "top_k": 5, "top_level": {"agent_id": "a1"}},
        {"op": "get_all", "filters": {**s, "color": {"regex": "r.*"}}, "top_k": 5},
        {"op": "search", "query": "tea", "filters": {**s, "n": {"gte": 1, "eq": 2}}, "top_k": 3,
         "threshold": None},
        {"op": "get_all", "filters": {**s, "n": 2.5}, "top_k": 5},
        {"op": "get_all", "filters": {"user_id": 7}, "top_k": 5},
        {"op": "delete_all", "scope": {}},
        {"op": "update", "memory_id": fresh_id(rng)},
    ])


OPS = ["add_raw", "add_infer", "search", "get", "get_all", "update", "delete", "delete_all",
       "history", "reset", "error"]
WEIGHTS = [14, 14, 16, 6, 10, 8, 5, 2, 6, 0.3, 4]


def gen_call(rng, known):
    op = rng.choices(OPS, WEIGHTS)[0]
    if op == "add_raw":
        call = {"op": "add", "messages": messages_raw(rng), "scope": scope(rng),
                "metadata": metadata(rng), "infer": False}
        if rng.random() < 0.15:
            call["expiration_date"] = rng.choice(FAR)
        return call
    if op == "add_infer":
        return add_infer(rng, known)
    if op == "search":
        q = " ".join(rng.sample(WORDS, rng.randint(1, 3)))
        r = rng.random()
        if known and r < 0.3:
            q = rng.choice(known)[1] or "tea"
        elif r < 0.6:
            q = "I like " + q
        if rng.random() < 0.1:
            q = "  " + q.upper() + " "
        call = {"op": "search", "query": q, "filters": query_filters(rng),
                "top_k": rng.choice([0, 1, 3, 3, 20, 20]), "threshold": rng.choice(THRESHOLDS)}
        if rng.random() < 0.2:
            call["show_expired"] = True
        if rng.random() < 0.15:
            call["explain"] = True
        return call
    if op == "get_all":
        f = query_filters(rng)
        for key in ("OR", "NOT", "AND"):
            f.pop(key, None)
        if rng.random() < 0.4:
            k, v = condition(rng)
            f[k] = v
        call = {"op": "get_all", "filters": f, "top_k": rng.choice([0, 2, 20, 1000])}
        if rng.random() < 0.2:
            call["show_expired"] = True
        return call
    if op in ("get", "history", "delete"):
        target = rng.choice(known)[0] if known and rng.random() < 0.85 else fresh_id(rng)
        return {"op": op, "memory_id": target}
    if op == "update":
        target = rng.choice(known)[0] if known and rng.random() < 0.9 else fresh_id(rng)
        call = {"op": "update", "memory_id": target}
        if rng.random() < 0.6:
            call["text"] = sentence(rng)
        if rng.random() < 0.4:
            call["metadata"] = {"color": rng.choice(["red", "blue"]), "k": rng.randint(0, 3)}
        if rng.random() < 0.15:
            call["expiration_date"] = rng.choice(FAR + [None])
        return call
    if op == "delete_all":
        s = scope(rng)
        if rng.random() < 0.5 and len(s) > 1:
            s.pop(rng.choice(sorted(s)))
        return {"op": "delete_all", "scope": s}
    if op == "reset":
        return {"op": "reset"}
    return error_call(rng)
