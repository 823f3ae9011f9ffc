#!/usr/bin/env python3
"""How long `add` keeps the caller waiting while a model works: mem0ai 2.2.1's `Memory.add`
against `memorybench.mem0`'s, synchronous and with `async_mode=True` (docs/benchmarks.md,
"mem0 drop-in: adds that do not block").

    .cache/venv/bin/python benches/mem0_adds.py [--adds 12] [--model-seconds 2] [--out DIR]

Both libraries get the same configuration: model and embedder are the differential test's
deterministic OpenAI-compatible stub (scripts/mem0/stub.py), each chat request answered after
`--model-seconds` (the model's time: mem0's users report 20 s to 2 min per add, mem0 #2813 and
#4479), the vector store a local directory. Each mode runs in its own process and store (mem0ai
from .cache/mem0-venv, the drop-in from .cache/venv), adding the same dialogs one after the
other with `infer=True` (one extraction call each). Reported per mode: the time `add` took to
return (median and maximum), the wall time until every add was processed (for `async_mode`,
until `wait()` returned) and the memories stored.

Why not the local model: mem0 2.2.1's extraction prompt is 8 633 tokens in SmolLM2's
tokenizer, over the 8 192-token context llama.cpp's server caps SmolLM2's slots to whatever
`--ctx` asks, so every `infer=True` add fails there, in mem0ai and in the drop-in alike (which
sends the same request): `request (8633 tokens) exceeds the available context size (8192
tokens)`. `--local` runs the same modes on that server to show it.
"""

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts" / "mem0"))
os.environ.setdefault("STUB_LOG", os.path.join(tempfile.gettempdir(), "mem0-adds-stub.jsonl"))
import stub  # noqa: E402  (the differential's stub model and embedder)

MODEL = ROOT / ".cache/models/smollm2-135m-instruct-q4_1/model.gguf"
ALIAS = "smollm2-135m-instruct-q4_1"
# Both libraries ask for at most this many tokens (mem0's default, 2 000, lets a small model
# ramble for minutes).
MAX_TOKENS = 512
LAUNCHER = ROOT / "py/memorybench/llm_server.py"
PYTHONS = {"mem0ai": ROOT / ".cache/mem0-venv/bin/python",
           "memorybench": ROOT / ".cache/venv/bin/python"}
MODES = [("mem0ai", False), ("memorybench", False), ("memorybench", True)]
DIALOGS = [
    "I moved to Lisbon last spring.", "My sister Ines is a nurse in Porto.",
    "I am allergic to peanuts.", "Our dog Pixel is a border collie.",
    "I run the Lisbon half marathon every October.", "I work as a sound engineer.",
    "I play the cello on Sunday mornings.", "My favourite food is grilled sardines.",
    "I am learning Japanese for a trip to Kyoto.", "I drive an old blue Fiat 500.",
    "My partner Joao teaches chemistry.", "I cannot stand horror films.",
]


def worker(impl, async_mode, llm_url, model, embed_url, adds, store):
    """Runs one mode in this process; prints its measurements as one JSON line."""
    os.environ["MEM0_TELEMETRY"] = "False"
    os.environ.setdefault("MEM0_DIR", str(pathlib.Path(store) / "mem0dir"))
    if impl == "mem0ai":
        from mem0 import Memory
    else:
        from memorybench.mem0 import Memory
    config = {
        "llm": {"provider": "openai", "config": {"model": model, "api_key": "sk-local",
                                                 "openai_base_url": llm_url,
                                                 "max_tokens": MAX_TOKENS}},
        "embedder": {"provider": "openai", "config": {"model": "stub-embed", "api_key": "sk-stub",
                                                      "openai_base_url": embed_url,
                                                      "embedding_dims": stub.DIM}},
        "vector_store": {"provider": "qdrant", "config": {"collection_name": "bench",
                                                          "path": str(pathlib.Path(store) / "vs"),
                                                          "embedding_model_dims": stub.DIM}},
        "history_db_path": str(pathlib.Path(store) / "history.db"),
    }
    memory = Memory.from_config(config)
    returned = []
    started = time.perf_counter()
    for text in (DIALOGS * (adds // len(DIALOGS) + 1))[:adds]:
        messages = [{"role": "user", "content": text},
                    {"role": "assistant", "content": "Noted, thank you."}]
        extra = {"async_mode": True} if async_mode else {}
        before = time.perf_counter()
        memory.add(messages, user_id="bench", **extra)
        returned.append(time.perf_counter() - before)
    if async_mode:
        memory.wait()
    wall = time.perf_counter() - started
    stored = len(memory.get_all(filters={"user_id": "bench"}, top_k=10_000)["results"])
    print(json.dumps({"returned": returned, "wall": wall, "stored": stored}))


def start_model():
    """The llama.cpp server on a free port; returns (process, base URL)."""
    process = subprocess.Popen(
        [str(PYTHONS["memorybench"]), str(LAUNCHER), "--model", str(MODEL), "--alias", ALIAS,
         "--ctx", "8192", "--parent-pid", str(os.getpid())],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = process.stdout.readline().strip()
    if not line.startswith("listening "):
        sys.exit(f"the model server did not start ({line!r})")
    return process, line.split(" ", 1)[1] + "/v1"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--adds", type=int, default=12)
    parser.add_argument("--model-seconds", type=float, default=2.0)
    parser.add_argument("--local", action="store_true",
                        help="the model is SmolLM2-135M on llama.cpp's server (see above)")
    parser.add_argument("--out", type=pathlib.Path, default=None)
    parser.add_argument("--worker", nargs=6,
                        metavar=("IMPL", "ASYNC", "LLM", "MODEL", "EMBED", "STORE"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not 1 <= args.adds <= 1000:
        parser.error("--adds must be 1 to 1000")
    if not 0 <= args.model_seconds <= 600:
        parser.error("--model-seconds must be 0 to 600")
    if args.worker:
        impl, async_mode, llm_url, model, embed_url, store = args.worker
        worker(impl, async_mode == "1", llm_url, model, embed_url, args.adds, store)
        return
    for path in [*PYTHONS.values(), *([MODEL] if args.local else [])]:
        if not path.exists():
            sys.exit(f"{path} is missing: run bash scripts/setup.sh")
    stub.CHAT_SECONDS = args.model_seconds
    served = stub.serve(0)
    stub_url = f"http://127.0.0.1:{served.server_address[1]}/v1"
    server, (llm_url, model) = None, (stub_url, "stub-llm")
    if args.local:
        server, llm_url = start_model()
        model = ALIAS
    rows = []
    try:
        for impl, async_mode in MODES:
            with tempfile.TemporaryDirectory(prefix="mem0-adds-") as store:
                command = [str(PYTHONS[impl]), __file__, "--adds", str(args.adds), "--worker",
                           impl, "1" if async_mode else "0", llm_url, model, stub_url, store]
                print("$", " ".join(command[1:]), file=sys.stderr, flush=True)
                done = subprocess.run(command, capture_output=True, text=True)
                if done.returncode != 0:
                    sys.exit(f"{impl} failed:\n{done.stderr[-3000:]}")
                result = json.loads(done.stdout.strip().splitlines()[-1])
            label = f"{impl}, {'async_mode=True' if async_mode else 'synchronous'}"
            rows.append((label, result))
    finally:
        if server is not None:
            server.terminate()
            server.wait()
        served.shutdown()
    model_name = ALIAS if args.local else f"stub model, {args.model_seconds:g} s per call"
    print(f"| `add` ({args.adds} dialogs, {model_name}) | returns, median | returns, max "
          "| all processed | memories |")
    print("|---|---:|---:|---:|---:|")
    for label, r in rows:
        print(f"| {label} | {statistics.median(r['returned']) * 1000:.1f} ms "
              f"| {max(r['returned']) * 1000:.1f} ms | {r['wall']:.1f} s | {r['stored']} |")
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "mem0_adds.json").write_text(json.dumps(dict(rows), indent=1))


if __name__ == "__main__":
    main()
