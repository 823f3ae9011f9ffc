#!/usr/bin/env python3
"""One side of the mem0 drop-in differential: runs a seeded call sequence against mem0's
``Memory`` (``--impl mem0``, in the venv with mem0ai 2.2.1) or ``memorybench.mem0.Memory``
(``--impl memorybench``), each with its own in-process stub LLM/embedder (stub.py), and
prints one normalised JSON line per call (result and the stub requests the call made).

    python driver.py --impl mem0 --seed 3 --calls 150          # random calls (gen.py)
    python driver.py --impl memorybench --fixed                  # the fixed cases (fixed.py)
    python driver.py --impl mem0 --signatures                    # method signatures

Memory ids are seeded on both sides (mem0: its module's ``uuid``; ours: ``new_id``), so the
outputs are comparable line by line; py/tests/test_mem0_dropin.py compares them (scores with
a tolerance). normalise.py holds the normalisations and their reasons.
"""

import argparse
import json
import os
import random
import sys
import tempfile
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

os.environ["MEM0_TELEMETRY"] = "False"
os.environ.setdefault("MEM0_DIR", tempfile.mkdtemp(prefix="mem0dir-"))
for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE", "OPENROUTER_API_KEY"):
    os.environ.pop(name, None)
LOG = os.path.join(tempfile.mkdtemp(prefix="mem0stub-"), "requests.jsonl")
os.environ["STUB_LOG"] = LOG

CONNECTS = []


def _audit(event, args):
    if event == "socket.connect" and isinstance(args[1], tuple):
        CONNECTS.append(str(args[1][0]))


sys.addaudithook(_audit)

import normalise  # noqa: E402
import stub  # noqa: E402
from gen import gen_call  # noqa: E402


class SeededUUID:
    """Stands in for the ``uuid`` module: ``uuid4`` draws from a seeded generator."""

    def __init__(self, seed):
        self.rng = random.Random(seed)

    def uuid4(self):
        return uuid.UUID(int=self.rng.getrandbits(128), version=4)

    def __getattr__(self, name):
        return getattr(uuid, name)


def config(url, tag):
    return {
        "llm": {"provider": "openai", "config": {"model": "stub-llm", "api_key": "sk-stub",
                                                 "openai_base_url": url, "temperature": 0}},
        "embedder": {"provider": "openai", "config": {"model": "stub-embed", "api_key": "sk-stub",
                                                      "openai_base_url": url,
                                                      "embedding_dims": stub.DIM}},
        "vector_store": {"provider": "qdrant", "config": {"collection_name": "mem0_" + tag,
                                                          "path": ":memory:",
                                                          "embedding_model_dims": stub.DIM}},
        "history_db_path": ":memory:",
    }


URL = {}


def open_memory(impl, seed, tag):
    server = stub.serve(0)
    url = URL["stub"] = f"http://127.0.0.1:{server.server_address[1]}/v1"
    ids = SeededUUID(seed)
    if impl == "mem0":
        import mem0.memory.main as main
        from mem0 import Memory

        main.uuid = ids
    else:
        import memorybench.mem0.memory as main
        from memorybench.mem0 import Memory

        main.new_id = lambda: str(ids.uuid4())
    return Memory.from_config(config(url, tag))


class Requests:
    """The stub's request log, read call by call."""

    def __init__(self):
        self.offset = 0

    def take(self):
        if not os.path.exists(LOG):
            return []
        with open(LOG) as f:
            lines = f.read().splitlines()
        new, self.offset = lines[self.offset:], len(lines)
        return [json.loads(line) for line in new]


def run(mem, call, known):
    op = call["op"]
    extra = call.get("top_level", {})
    if op == "add":
        kw = {k: call[k] for k in ("metadata", "infer", "prompt", "expiration_date",
                                   "memory_type", "timestamp") if k in call}
        r = mem.add(call["messages"], **call["scope"], **kw)
        for item in r["results"]:
            known.append((item["id"], item["memory"]))
        return r
    if op == "search":
        kw = {k: call[k] for k in ("show_expired", "explain", "reference_date") if k in call}
        return mem.search(call["query"], filters=call["filters"], top_k=call["top_k"],
                          threshold=call["threshold"], **kw, **extra)
    if op == "get_all":
        kw = {k: call[k] for k in ("show_expired",) if k in call}
        return mem.get_all(filters=call["filters"], top_k=call["top_k"], **kw, **extra)
    if op == "get":
        return mem.get(call["memory_id"])
    if op == "history":
        return mem.history(call["memory_id"])
    if op == "update":
        kw = {k: call[k] for k in ("text", "metadata", "expiration_date", "data") if k in call}
        return mem.update(call["memory_id"], **kw)
    if op == "delete":
        return mem.delete(call["memory_id"])
    if op == "delete_all":
        return mem.delete_all(**call["scope"])
    if op == "reset":
        return mem.reset()
    if op == "async_round":
        return async_round()
    raise ValueError(f"unknown op {op}")


def async_round():
    """One pass over AsyncMemory's methods (a collection of its own)."""
    import asyncio

    if IMPL["name"] == "mem0":
        from mem0 import AsyncMemory
    else:
        from memorybench.mem0 import AsyncMemory

    async def go():
        am = AsyncMemory.from_config(config(URL["stub"], "async"))
        out = {"add": await am.add("async fact one", user_id="z", infer=False)}
        mid = out["add"]["results"][0]["id"]
        out["add_infer"] = await am.add("I like async tea", user_id="z")
        out["search"] = await am.search("async fact", filters={"user_id": "z"})
        out["get_all"] = await am.get_all(filters={"user_id": "z"})
        out["get"] = await am.get(mid)
        out["update"] = await am.update(mid, text="async fact two")
        out["history"] = await am.history(mid)
        out["delete"] = await am.delete(mid)
        out["delete_all"] = await am.delete_all(user_id="z")
        out["reset"] = await am.reset()
        am.close()
        return out

    raw = asyncio.run(go())
    ops = {"get": "get", "history": "history"}
    return {k: normalise.result({"op": ops.get(k, k)}, v) for k, v in raw.items()}


IMPL = {}


def resolve(call, labels):
    """The call with "@label" ids replaced by the ids those adds returned."""
    target = call.get("memory_id")
    if not (isinstance(target, str) and target.startswith("@")):
        return call
    name, upper = target[1:].rstrip("^"), target.endswith("^")
    name, _, index = name.partition(".")
    ids = labels.get(name) or ["<no id>"]
    value = ids[int(index or 0)] if int(index or 0) < len(ids) else "<no id>"
    return {**call, "memory_id": value.upper() if upper else value}


def execute(mem, calls_or_gen, n, requests, out):
    """Runs the calls (a list, or the generator with ``n`` draws), printing one line each."""
    known, labels = [], {}
    for i in range(n):
        shown = calls_or_gen(known) if callable(calls_or_gen) else calls_or_gen[i]
        call = resolve(shown, labels)
        count = len(known)
        before = normalise.existing_context(mem, call) if call["op"] == "add" else None
        skip = normalise.ambiguous_dedup(before)
        if skip:
            print(json.dumps({"i": i, "call": shown, "skipped": skip}, sort_keys=True), file=out)
            continue
        requests.take()
        try:
            result = normalise.result(call, run(mem, call, known))
        except Exception as exc:  # the error itself is what is compared
            result = normalise.error(exc)
        if call.get("label"):
            labels[call["label"]] = [mid for mid, _ in known[count:]]
        logged = normalise.requests(requests.take(), before, call.get("prompt"))
        if call["op"] == "search" and isinstance(result, dict) and "results" in result:
            result = normalise.search_groups(mem, call, result, run)
            requests.take()
        print(json.dumps({"i": i, "call": shown, "result": result, "requests": logged},
                         sort_keys=True, default=str), file=out)


def signatures(impl):
    import inspect

    if impl == "mem0":
        from mem0 import AsyncMemory, Memory
    else:
        from memorybench.mem0 import AsyncMemory, Memory
    out = {}
    for cls in (Memory, AsyncMemory):
        for name in ("__init__", "from_config", "add", "search", "get", "get_all", "update",
                     "delete", "delete_all", "history", "reset", "close", "chat"):
            fn = getattr(cls, name)
            params = [(p.name, str(p.kind), "<unset>" if p.default is not p.empty
                       and type(p.default) is object else repr(p.default))
                      for p in inspect.signature(fn).parameters.values()]
            if name == "__init__":
                params = [p[:2] for p in params]  # mem0's default is its config object
            if impl == "memorybench" and name == "add":
                # memorybench's addition (background adds, off by default; docs/parity.md)
                params = [p for p in params if p[0] != "async_mode"]
            out[f"{cls.__name__}.{name}"] = {"params": params,
                                             "async": inspect.iscoroutinefunction(fn)}
    print(json.dumps(out, sort_keys=True))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--impl", choices=["mem0", "memorybench"], required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--calls", type=int, default=150)
    ap.add_argument("--fixed", action="store_true")
    ap.add_argument("--signatures", action="store_true")
    args = ap.parse_args()
    IMPL["name"] = args.impl
    if args.signatures:
        return signatures(args.impl)
    out = sys.stdout
    if args.fixed:
        import fixed

        mem = open_memory(args.impl, 0, "fixed")
        calls = fixed.calls()
        execute(mem, calls, len(calls), Requests(), out)
    else:
        mem = open_memory(args.impl, args.seed, f"s{args.seed}")
        rng = random.Random(args.seed)
        execute(mem, lambda known: gen_call(rng, known), args.calls, Requests(), out)
    mem.close()
    outside = sorted({c for c in CONNECTS if c not in ("127.0.0.1", "::1", "localhost")})
    print(json.dumps({"connections_outside_loopback": outside}), file=out)


if __name__ == "__main__":
    main()
