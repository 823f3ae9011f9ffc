"""memorybench.mem0 beyond what mem0 itself can be compared on: the offline extractor, the
configuration refusing unknown keys, endpoints that are down or failing, persistence,
temporary stores, size bounds, and AsyncMemory running calls concurrently."""

import asyncio
import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from memorybench.mem0 import AsyncMemory, EmbeddingError, LLMError, Memory, ValidationError

HASHING = {"provider": "memorybench", "config": {"model": "hashing"}}


def offline(path=":memory:", **extra):
    return {"vector_store": {"provider": "memorybench", "config": {"path": str(path)}},
            "embedder": HASHING, **extra}


def test_the_offline_extractor_keeps_user_statements_only():
    with Memory.from_config(offline()) as m:
        added = m.add([{"role": "system", "content": "You are a travel agent."},
                       {"role": "user", "content": "Hello! I have two cats. Can you help me?"},
                       {"role": "assistant", "content": "Welcome! I am glad to help."},
                       {"role": "user", "content": "Thanks. My sister lives in Oslo."}],
                      user_id="u")
        assert [r["memory"] for r in added["results"]] == [
            "I have two cats", "My sister lives in Oslo"]
        assert m.add("assistant: Welcome!", user_id="u", infer=True)["results"] == []
        again = m.add("I have two cats.", user_id="u")
        assert again["results"] == []  # the same fact, word for word: skipped
        stored = m.get_all(filters={"user_id": "u"})["results"]
        assert all(item["attributed_to"] == "user" for item in stored)


@pytest.mark.parametrize("config, named", [
    ({"custom_fact_extraction_prompt": "x"}, "custom_fact_extraction_prompt"),
    ({"graph_store": {}}, "graph_store"),
    ({"llm": {"provider": "openai", "config": {"model": "m", "api_key": "k", "nope": 1}}}, "nope"),
    ({"llm": {"provider": "openai", "config": {"api_key": "k", "vllm_base_url": "http://x"}}},
     "vllm_base_url"),
    ({"embedder": {"provider": "memorybench", "config": {"dims": 3}}}, "dims"),
    ({"vector_store": {"provider": "qdrant", "config": {"path": ":memory:", "bogus": 1}}}, "bogus"),
    ({"vector_store": {"provider": "qdrant", "config": {"url": "http://q:6333"}}}, "url"),
    ({"vector_store": {"provider": "chroma", "config": {}}}, "chroma"),
    ({"llm": {"provider": "anthropic", "config": {}}}, "anthropic"),
    ({"llm": {"provider": "openai", "config": {"model": "m"}, "extra": 1}}, "extra"),
    ({"reranker": {"provider": "cohere"}}, "reranker"),
])
def test_configuration_keys_it_does_not_understand_are_refused_by_name(config, named, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ValueError, match=named):
        Memory.from_config(config)


def test_a_missing_openai_key_is_named_before_any_call(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ValueError, match="OPENAI_API_KEY"):
        Memory.from_config({"llm": {"provider": "openai", "config": {"model": "m"}}})


def closed_port():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_endpoint_fails_within_seconds_naming_its_url():
    url = f"http://127.0.0.1:{closed_port()}/v1"
    llm = {"provider": "openai", "config": {"model": "m", "api_key": "k", "openai_base_url": url}}
    with Memory.from_config(offline(llm=llm)) as m:
        started = time.monotonic()
        with pytest.raises(LLMError, match=f"{url}/chat/completions"):
            m.add("I like tea", user_id="u")
        assert time.monotonic() - started < 5
    embedder = {"provider": "openai", "config": {"model": "e", "api_key": "k",
                                                 "openai_base_url": url, "embedding_dims": 8}}
    config = offline(embedder=embedder)
    with Memory.from_config(config) as m:
        with pytest.raises(EmbeddingError, match=f"{url}/embeddings"):
            m.add("I like tea", user_id="u", infer=False)


class Failing(BaseHTTPRequestHandler):
    calls = 0

    def log_message(self, *args):
        pass

    def do_POST(self):
        type(self).calls += 1
        self.rfile.read(int(self.headers["Content-Length"]))
        body = json.dumps({"error": {"message": "boom"}}).encode()
        self.send_response(503)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_a_failing_llm_is_retried_twice_then_reported():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Failing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    llm = {"provider": "vllm", "config": {"model": "m", "vllm_base_url": url}}
    try:
        with Memory.from_config(offline(llm=llm)) as m:
            with pytest.raises(LLMError) as caught:
                m.add("I like tea", user_id="u")
            assert str(caught.value) == "LLM extraction failed: Error code: 503 - boom"
            assert Failing.calls == 3
            assert not isinstance(caught.value, ValueError)
            assert m.get_all(filters={"user_id": "u"})["results"] == []
    finally:
        server.shutdown()


def test_memories_history_and_the_message_window_persist(tmp_path):
    config = offline(tmp_path / "store")
    with Memory.from_config(config) as m:
        first = m.add("I like tea", user_id="u", infer=False)["results"][0]["id"]
        m.update(first, text="I like green tea")
        m.add("I play chess", user_id="u")
    with Memory.from_config(config) as m:
        assert m.get(first)["memory"] == "I like green tea"
        assert [r["event"] for r in m.history(first)] == ["ADD", "UPDATE"]
        assert m._store.window("user_id=u")[0][1]["content"] == "I play chess"
    other = offline(tmp_path / "store")
    other["embedder"] = {"provider": "memorybench", "config": {"model": "hashing",
                                                               "embedding_dims": 16}}
    with pytest.raises(ValueError, match="16"):
        Memory.from_config(other)


def test_an_in_memory_store_leaves_nothing_behind():
    m = Memory.from_config(offline())
    directory = m._store.engine.path
    assert os.path.isdir(directory)
    m.close()
    assert not os.path.exists(directory)


def test_sizes_from_outside_are_bounded():
    with Memory.from_config(offline()) as m:
        with pytest.raises(ValueError, match="top_k"):
            m.search("tea", filters={"user_id": "u"}, top_k=10_001)
        with pytest.raises(ValueError, match=r"messages\[0\].content"):
            m.add("x" * (4 << 20 | 1), user_id="u", infer=False)
        with pytest.raises(TypeError, match="'when'"):
            m.add("tea", user_id="u", infer=False, metadata={"when": object()})
        with pytest.raises(ValidationError) as caught:
            m.add("tea")
        assert caught.value.error_code == "VALIDATION_001"
        assert m.get_all(filters={"user_id": "u"})["results"] == []


def test_async_calls_run_concurrently_and_all_land():
    async def main():
        am = AsyncMemory.from_config(offline())
        texts = [f"I visited city number {i}" for i in range(20)]
        await asyncio.gather(*(am.add(t, user_id="u", infer=False) for t in texts))
        listed = await am.get_all(filters={"user_id": "u"}, top_k=100)
        am.close()
        return sorted(item["memory"] for item in listed["results"]), sorted(texts)

    stored, texts = asyncio.run(main())
    assert stored == texts
