"""The fixed cases of the mem0 drop-in differential: every behaviour docs/mem0-dropin-plan.md
measured (shapes, errors, scoping, the filter language, update/delete/history, the
infer=True protocol with each stub marker, procedural memories, the message window,
AsyncMemory), as calls driver.py runs on both implementations.

An add with ``"label": "x"`` names the ids it returns; ``"@x"`` (first id), ``"@x.1"``
(second) and ``"@x^"`` (first id in upper case) refer to them in later calls.
"""


def A(messages, label=None, infer=False, **kw):
    scope = {k: kw.pop(k) for k in ("user_id", "agent_id", "run_id") if k in kw}
    call = {"op": "add", "messages": messages, "scope": scope, "metadata": kw.pop("metadata", None),
            "infer": infer, **kw}
    if label:
        call["label"] = label
    return call


def S(query, filters, top_k=20, threshold=None, **kw):
    return {"op": "search", "query": query, "filters": filters, "top_k": top_k,
            "threshold": threshold, **kw}


def G(filters, top_k=20, **kw):
    return {"op": "get_all", "filters": filters, "top_k": top_k, **kw}


def both(filters, query="car apple thing"):
    return [G(filters, top_k=50), S(query, filters, top_k=50, threshold=0.0)]


def shapes():
    return [
        A("I love green tea", "tea", user_id="alice"),
        A({"role": "assistant", "content": "Assistant note about hiking"}, user_id="alice"),
        A([{"role": "system", "content": "sys"},
           {"role": "user", "content": "My dog is named Rex", "name": "alice_n"},
           {"role": "assistant", "content": "Nice dog"},
           {"role": "tool", "content": "tool output text"},
           {"role": "user"},
           {"role": "user", "content": [{"type": "text", "text": "part one"},
                                        {"type": "image_url", "image_url": {"url": "u"}},
                                        {"type": "text", "text": "part two"}]},
           {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "u"}}]}],
          user_id="alice"),
        A("I prefer window seats", "seats", user_id="alice", agent_id="travel", run_id="r1",
          metadata={"category": "travel", "priority": 3, "tags": ["a", "b"],
                    "user_id": "mallory", "actor_id": "x", "data": "overwritten",
                    "hash": "h", "created_at": "2020-01-01T00:00:00+00:00"}),
        A("Old coupon code", "old", user_id="alice", expiration_date="2001-01-01"),
        A("Future coupon code", user_id="alice", expiration_date="2999-12-31"),
        A("I love green tea", user_id="alice"),
        A("", "empty", user_id="alice"),
        A("int id", user_id=42), A("padded id", user_id=" u9 "),
        A([], user_id="alice"),
        G({"user_id": "alice"}), G({"user_id": "alice"}, show_expired=True),
        G({"user_id": 42}), G({"user_id": "u9"}),
        {"op": "get", "memory_id": "@seats"}, {"op": "get", "memory_id": "@tea"},
        {"op": "get", "memory_id": "@tea^"}, {"op": "get", "memory_id": "not-a-uuid"},
        {"op": "get", "memory_id": 7},
        {"op": "get", "memory_id": "0b0b0b0b-0b0b-4b0b-8b0b-0b0b0b0b0b0b"},
        {"op": "get", "memory_id": "@old"},
        S("coupon code", {"user_id": "alice"}), S("coupon code", {"user_id": "alice"},
                                                  show_expired=True),
        S("green tea", {"user_id": "alice"}, explain=True), S("", {"user_id": "alice"}),
        S("anything", {"user_id": "alice"}, threshold=0.0),
    ]


def errors():
    m = "some text"
    return [
        A(m), A(m, user_id="  "), A(m, user_id="a b"), A(m, user_id=["x", "y"]),
        A(42, user_id="e"), A(None, user_id="e"),
        A(m, user_id="e", memory_type="episodic"), A(m, user_id="e", timestamp=123),
        A(m, user_id="e", expiration_date="12/31/2999"), A(m, user_id="e", expiration_date=5),
        A([m], user_id="e"), A([{"role": "user", "content": 5}], user_id="e"),
        S("q", {"user_id": "e"}, threshold=1.5), S("q", {"user_id": "e"}, threshold=-0.1),
        S("q", {"user_id": "e"}, threshold="0.5"), S("q", {"user_id": "e"}, top_k=True),
        S("q", {"user_id": "e"}, top_k=2.0), S("q", {"user_id": "e"}, top_k=-1),
        S("   ", {"user_id": "e"}), S(5, {"user_id": "e"}),
        S("q", {"user_id": "e"}, reference_date="2024-01-01"),
        S("q", None), S("q", {"color": "red"}),
        S("q", {"user_id": "e"}, top_level={"user_id": "e"}),
        S("q", {"user_id": "e"}, top_level={"limit": 5}), S("q", {"user_id": "e"}, rerank=True),
        G(None), G({"color": "red"}), G({"user_id": "e"}, top_level={"user_id": "e"}),
        G({"user_id": "e"}, top_level={"limit": 5}), G({"user_id": "e"}, top_k=-1),
        G({"user_id": "e"}, top_k="5"), G({"user_id": ""}), G({"user_id": None}),
        {"op": "delete_all", "scope": {}}, {"op": "delete_all", "scope": {"user_id": " "}},
        {"op": "update", "memory_id": "0b0b0b0b-0b0b-4b0b-8b0b-0b0b0b0b0b0b", "text": "x"},
        {"op": "update", "memory_id": "0b0b0b0b-0b0b-4b0b-8b0b-0b0b0b0b0b0b"},
        {"op": "delete", "memory_id": "0b0b0b0b-0b0b-4b0b-8b0b-0b0b0b0b0b0b"},
        {"op": "delete", "memory_id": "not-a-uuid"}, {"op": "delete", "memory_id": 7},
        {"op": "history", "memory_id": "not-a-uuid"},
    ]


def scoping():
    calls = [A("alpha fact", user_id="u", agent_id="a"), A("beta fact", user_id="u"),
             A("gamma fact", agent_id="a"), A("delta fact", user_id="u", agent_id="a", run_id="r"),
             A("epsilon fact", run_id="r"), A("other tenant secret", user_id="v")]
    for f in ({"user_id": "u"}, {"agent_id": "a"}, {"run_id": "r"},
              {"user_id": "u", "agent_id": "a"},
              {"user_id": "u", "agent_id": "b"}, {"user_id": "u", "run_id": "r"},
              {"user_id": "nobody"}, {"user_id": "*"}):
        calls += both(f, "fact")
    return calls


def filter_matrix():
    u = {"user_id": "fm"}
    calls = [
        A("red car", user_id="fm", metadata={"color": "red", "n": 3, "kind": "vehicle"}),
        A("green apple", user_id="fm", metadata={"color": "green", "n": 2, "kind": "fruit",
                                                   "flag": False, "f": 2.0}),
        A("red apple", user_id="fm", metadata={"color": "red", "n": 1, "kind": "fruit",
                                                 "flag": True, "when": "2024-03-01"}),
        A("plain thing", user_id="fm"),
        A("blue car", user_id="fm", metadata={"color": "blue", "n": 4, "kind": "vehicle",
                                                "note": "Fast Blue Car", "tags": ["a", "b"],
                                                "f": 3.0, "when": "2024-05-01T10:00:00Z",
                                                "nested": {"k": "v"}}),
        A([{"role": "user", "content": "from ann", "name": "ann"}], user_id="fm"),
    ]
    for cond in (
        {"color": "red"}, {"color": {"eq": "red"}}, {"color": {"ne": "red"}},
        {"color": {"in": ["red", "blue"]}}, {"color": {"nin": ["red", "blue"]}},
        {"color": ["red", "blue"]}, {"n": {"gt": 2}}, {"n": {"gte": 2}}, {"n": {"lt": 2}},
        {"n": {"lte": 2}}, {"n": {"gte": 2, "lte": 3}}, {"note": {"contains": "Blue"}},
        {"note": {"contains": "blue"}}, {"note": {"icontains": "BLUE"}},
        {"note": {"contains": "lue"}}, {"note": {"contains": "car fast"}}, {"color": "*"},
        {"flag": True}, {"n": 3}, {"n": "3"}, {"f": 3}, {"f": 3.0}, {"f": {"gte": 3}},
        {"n": {"gte": True}}, {"n": {"gte": "2"}}, {"n": {"gt": "a"}},
        {"AND": [{"color": "red"}, {"n": {"gt": 2}}]}, {"OR": [{"color": "blue"}, {"n": 2}]},
        {"NOT": [{"color": "red"}]}, {"OR": []}, {"AND": {"color": "red"}},
        {"AND": [{"color": "red"}, {"color": "blue"}]}, {"AND": ["x"]},
        {"color": {"regex": "r.*"}}, {"color": {"regex": "r"}, "n": {"gt": 0}},
        {"n": {"gte": 1, "eq": 2}}, {"n": {}}, {"n": {}, "flag": {"eq": True}},
        {"n": {"eq": 3, "regex": 1}},
        {"created_at": {"gte": "2020-01-01T00:00:00"}}, {"created_at": {"lt": "2020-01-01"}},
        {"when": {"gte": "2024-04-01"}}, {"when": {"lt": "2024-05-01T12:00:00+00:00"}},
        {"when": {"gte": "2024-13-45"}}, {"when": {"gte": "2024-01-01", "lte": 5}},
        {"missing": "x"}, {"role": "user"}, {"actor_id": "ann"}, {"actor_id": {"ne": "ann"}},
        {"data": "red car"}, {"tags": "a"}, {"tags": {"in": ["b", "z"]}}, {"tags": {"nin": ["a"]}},
        {"nested": {"k": "v"}}, {"nested.k": "v"}, {"color": {"in": []}}, {"n": None},
        {"n": (3,)}, {"color": {"in": [True]}}, {"n": {"in": [3, "3"]}}, {"n": {"in": "3"}},
        {"note": {"contains": 3}},
    ):
        calls += both({**u, **cond})
    calls += both({"user_id": ["fm"]}) + both({"user_id": {"in": ["fm"]}})
    calls += both({"user_id": "fm", "OR": [{"user_id": "fm"}, {"user_id": "v"}]})
    return calls


def changes():
    return [
        A([{"role": "user", "content": "I work at Acme", "name": "bob_actor"}], "job",
          user_id="bob", metadata={"team": "x"}),
        {"op": "update", "memory_id": "@job", "text": "I work at Globex"},
        {"op": "get", "memory_id": "@job"},
        {"op": "update", "memory_id": "@job",
         "metadata": {"team": "y", "level": 2, "user_id": "zz", "actor_id": "bob_actor"}},
        {"op": "update", "memory_id": "@job", "data": "I work at Initech"},
        {"op": "update", "memory_id": "@job", "text": "I work at Initech"},
        {"op": "update", "memory_id": "@job", "expiration_date": "2999-12-31"},
        {"op": "get", "memory_id": "@job"},
        {"op": "update", "memory_id": "@job", "expiration_date": None},
        {"op": "update", "memory_id": "@job", "metadata": {}},
        {"op": "update", "memory_id": "@job", "metadata": {"role": "assistant",
                                                          "created_at": "1999-01-01"}},
        {"op": "update", "memory_id": "@job", "text": 5},
        {"op": "update", "memory_id": "@job^", "text": "I work at Hooli"},
        {"op": "get", "memory_id": "@job"}, {"op": "history", "memory_id": "@job"},
        {"op": "history", "memory_id": "@job^"},
        {"op": "delete", "memory_id": "@job"}, {"op": "get", "memory_id": "@job"},
        {"op": "delete", "memory_id": "@job"},
        {"op": "update", "memory_id": "@job", "text": "again"},
        {"op": "history", "memory_id": "@job"},
        A("one", "x1", user_id="d", agent_id="a"), A("two", user_id="d"),
        A("three", agent_id="a"),
        {"op": "delete_all", "scope": {"agent_id": "a"}}, G({"user_id": "d"}),
        G({"agent_id": "a"}), {"op": "history", "memory_id": "@x1"},
        {"op": "delete_all", "scope": {"user_id": "nobody"}},
        {"op": "delete_all", "scope": {"user_id": "d", "run_id": "zz"}}, G({"user_id": "d"}),
    ]


def inferred():
    c = {"user_id": "carol"}
    return [
        A([{"role": "user", "content": "I like jazz; I play the piano"},
           {"role": "assistant", "content": "Great taste"}], "jazz", infer=True, **c),
        A("I like jazz; I own a cat", infer=True, **c),
        A("I drink coffee; I drink coffee", infer=True, **c),
        A("nothing here !!EMPTY", infer=True, **c), A("I sail boats !!BADJSON", infer=True, **c),
        A("I grow tomatoes !!FENCE", infer=True, **c),
        A("I knit scarves !!PROSEJSON", infer=True, **c),
        A("I ride bikes !!ATTR=carol_x", infer=True, **c),
        A("I collect stamps", infer=True, metadata={"src": "chat"}, **c),
        A("I fence", infer=True, prompt="Only hobbies.", **c),
        A("I bake bread", infer=True, expiration_date="2999-12-31", **c),
        G(c), {"op": "history", "memory_id": "@jazz"},
        A([{"role": "user", "content": "hello"},
           {"role": "assistant", "content": "FACT Agent prefers short answers"}],
          infer=True, agent_id="helper"),
        A({"role": "system", "content": "sys only"}, infer=True, **c),
        A([{"role": "user", "content": [{"type": "text", "text": "I paint"},
                                        {"type": "text", "text": "watercolours"}]}],
          infer=True, **c),
        A("I fail !!HTTP500", infer=True, **c),
        A("After failure", infer=True, **c),
        A([{"role": "user", "content": "step one"}], infer=True, agent_id="helper",
          memory_type="procedural_memory"),
        A([{"role": "user", "content": "step two"}], infer=True, agent_id="helper",
          memory_type="procedural_memory", prompt="Summarise tersely."),
        A("I swim", infer=True, user_id="dave", memory_type="procedural_memory"),
        A("raw note not saved as message", user_id="dave"),
        A("I am dave", infer=True, user_id="dave"),
        G({"agent_id": "helper"}),
    ] + [A(f"msg {i} !!EMPTY", infer=True, user_id="win") for i in range(12)] + [
        A("I like sailing", infer=True, user_id="win"),
        A("I like tea", infer=True, user_id="win", run_id="r9"),
        A("I like tea", infer=True, user_id="win"),
    ]


def lifecycle():
    return [
        A("keep me", "keep", user_id="z"),
        {"op": "reset"}, G({"user_id": "z"}), G({"user_id": "carol"}),
        {"op": "history", "memory_id": "@keep"}, A("after reset", user_id="z"),
        A("I restart", infer=True, user_id="carol"), G({"user_id": "z"}),
        {"op": "async_round"},
    ]


def calls():
    return shapes() + errors() + scoping() + filter_matrix() + changes() + inferred() + lifecycle()
