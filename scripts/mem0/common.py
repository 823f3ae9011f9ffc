"""Shared setup: env vars, socket audit, in-process stub, mem0 config factory."""
import os
import sys

os.environ.setdefault("MEM0_TELEMETRY", "False")
os.environ.setdefault("MEM0_DIR", "/tmp/mem0-research/mem0dir")
os.environ.pop("OPENAI_API_KEY", None)
os.environ.pop("OPENROUTER_API_KEY", None)

CONNECTS = []


def _audit(event, args):
    if event == "socket.connect":
        CONNECTS.append(repr(args[1]))
    elif event == "socket.getaddrinfo":
        CONNECTS.append("dns:" + repr(args[0]))


sys.addaudithook(_audit)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stub  # noqa: E402

_SRV = None


def base_url():
    global _SRV
    if _SRV is None:
        _SRV = stub.serve(0)
    return f"http://127.0.0.1:{_SRV.server_address[1]}/v1"


def config(tag, dims=64, **extra):
    url = base_url()
    cfg = {
        "llm": {"provider": "openai", "config": {"model": "stub-llm", "api_key": "sk-stub",
                                                 "openai_base_url": url, "temperature": 0}},
        "embedder": {"provider": "openai", "config": {"model": "stub-embed", "api_key": "sk-stub",
                                                      "openai_base_url": url, "embedding_dims": dims}},
        "vector_store": {"provider": "qdrant", "config": {"collection_name": "mem0_" + tag,
                                                          "path": ":memory:",
                                                          "embedding_model_dims": dims}},
        "history_db_path": ":memory:",
    }
    cfg.update(extra)
    return cfg


def non_loopback_connects():
    return [c for c in CONNECTS if "127.0.0.1" not in c and "::1" not in c and "localhost" not in c]
