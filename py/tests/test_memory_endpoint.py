"""A model given as an endpoint URL and the model it serves, in one call; an endpoint nobody
listens on fails at once, named, instead of after a minute of retries."""

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import memorybench as mb


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_endpoint_fails_at_once_naming_it(engine):
    url = f"http://127.0.0.1:{free_port()}/v1"
    started = time.monotonic()
    with pytest.raises(mb.ModelError) as raised:
        mb.Memory(engine, "u", system="mem0", embedder=mb.Embedder.hashing(64), llm=url, model="m")
    assert time.monotonic() - started < 10
    assert f"127.0.0.1:{url.split(':')[2].split('/')[0]}" in str(raised.value)


def test_an_endpoint_needs_its_model_and_a_model_needs_an_endpoint(engine):
    with pytest.raises(mb.InvalidInputError, match="model="):
        mb.Memory(engine, "u", llm="http://127.0.0.1:1/v1")
    with pytest.raises(mb.InvalidInputError, match="endpoint"):
        mb.Memory(engine, "u", llm="offline", model="llama3.2")


class _Chat(BaseHTTPRequestHandler):
    """An OpenAI-compatible chat endpoint recording what it is sent."""

    seen: list = []

    def do_POST(self):  # noqa: N802 (the handler's name is http.server's)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Chat.seen.append(body)
        reply = {
            "choices": [
                {
                    "message": {"role": "assistant", "content": '{"facts": ["Likes tea"]}'},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5},
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def test_every_role_goes_to_the_endpoints_model(engine):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Chat)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        with mb.Memory(
            engine, "u", system="mem0", embedder=mb.Embedder.hashing(64), llm=url, model="tiny-model"
        ) as memory:
            memory.add([{"role": "user", "content": "I drink tea every morning."}])
            assert memory.usage()["calls"] >= 1
    finally:
        server.shutdown()
    assert _Chat.seen, "the endpoint was never asked"
    assert all(request["model"] == "tiny-model" for request in _Chat.seen)
