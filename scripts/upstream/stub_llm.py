#!/usr/bin/env python3
"""A deterministic OpenAI-compatible stub server (Python stdlib only).

It answers every request the same way, records each request body, and so lets a run of
upstream MemoryBench's Python code and a run of our Rust harness be compared request for
request.

Endpoints:
  POST /v1/chat/completions (also /chat/completions): a chat.completion whose content is
       '{"facts": [], "memory": []}' when the request asks for response_format json_object,
       an object filled from the schema for json_schema (see schema_reply), else
       'stub answer'.
  POST /v1/embeddings (also /embeddings): deterministic unit vectors (hashed bag of words
       plus a small text-seeded dense part, so that scores do not tie),
       `dimensions` from the request or --embedding-dim, for the embedder / mem0 systems.
  GET  /v1/models (also /models): the model list (--model, plus every model seen so far).

Flags:
  --host HOST          address to bind (default 127.0.0.1)
  --port N             port (0 = any free port; default 0)
  --port-file PATH     write the bound port there once listening
  --record PATH        append {"path": ..., "body": <parsed JSON body>} per POST request,
                       one JSON line each, flushed after each line
  --model NAME         the model GET /v1/models lists first (default stub-model)
  --embedding-dim N    embedding size when a request gives no `dimensions` (default 1024)

Exits cleanly (status 0) on SIGTERM or SIGINT.
"""

import argparse
import base64
import hashlib
import json
import math
import os
import random
import re
import signal
import struct
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

JSON_REPLY = '{"facts": [], "memory": []}'
TEXT_REPLY = "stub answer"


def word_count(text):
    return len(re.findall(r"\S+", text or ""))


def message_text(messages):
    """All text of a chat request's messages (string or content-part contents)."""
    parts = []
    for message in messages or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            for part in content:
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    parts.append(part["text"])
    return "\n".join(parts)


def picked_words(text, most=12):
    """About a third of the distinct words of `text`, chosen by hash, in order: a reply that
    depends on the request (so A-Mem's keyword searches differ from question to question)
    and is the same for the same request."""
    picked = []
    for word in re.findall(r"\w+", text or ""):
        if hashlib.sha256(word.lower().encode("utf-8")).digest()[0] < 85 and word not in picked:
            picked.append(word)
            if len(picked) == most:
                break
    return ", ".join(picked)


def schema_value(schema, text):
    """A value of JSON schema `schema`: strings are words picked from `text`, lists empty."""
    kind = schema.get("type") if isinstance(schema, dict) else None
    if kind == "object":
        properties = schema.get("properties") or {}
        return {key: schema_value(value, text) for key, value in properties.items()}
    return {"string": picked_words(text), "array": [], "boolean": False,
            "integer": 0, "number": 0}.get(kind)


def schema_reply(response_format, messages):
    """The reply to a `json_schema` request: an object of its schema, built from the last
    message's text."""
    schema = (response_format.get("json_schema") or {}).get("schema") or {}
    last = (messages or [{}])[-1]
    text = last.get("content") if isinstance(last, dict) else ""
    return json.dumps(schema_value(schema, text if isinstance(text, str) else ""))


# Weight of each vector's text-seeded dense part (see embed).
DENSE_WEIGHT = 0.01


def embed(text, dim):
    """A deterministic unit vector: hashed, signed bag of lowercase words, plus a small dense
    part seeded by the whole text. Without it two texts sharing no word with a query would
    both score exactly 0, and such ties are ordered by each side's sort algorithm rather than
    by the texts (numpy's argsort puts the later of two equal scores first, for example);
    real embeddings practically never tie."""
    seed = int.from_bytes(hashlib.sha256((text or "").encode("utf-8")).digest()[:8], "little")
    dense = random.Random(seed)
    vector = [DENSE_WEIGHT * dense.uniform(-1.0, 1.0) for _ in range(dim)]
    for word in re.findall(r"\w+", (text or "").lower()):
        digest = hashlib.sha256(word.encode("utf-8")).digest()
        index = int.from_bytes(digest[:4], "little") % dim
        vector[index] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(v * v for v in vector))
    if norm == 0.0:
        vector[0] = 1.0
        norm = 1.0
    return [v / norm for v in vector]


class Recorder:
    def __init__(self, path):
        self.lock = threading.Lock()
        self.file = open(path, "a", encoding="utf-8") if path else None
        self.count = 0

    def record(self, path, body):
        if self.file is None:
            return
        line = json.dumps({"path": path, "body": body}, ensure_ascii=False)
        with self.lock:
            self.file.write(line + "\n")
            self.file.flush()
            self.count += 1

    def close(self):
        if self.file is not None:
            with self.lock:
                self.file.close()
                self.file = None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "memorybench-stub-llm/1"

    def log_message(self, format, *args):  # quiet: the record file is the log
        pass

    def _send_json(self, status, payload):
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status, message):
        self._send_json(status, {"error": {"message": message, "type": "invalid_request_error", "code": status}})

    def _route(self):
        path = self.path.split("?", 1)[0].rstrip("/")
        return path[3:] if path.startswith("/v1/") else path

    def do_GET(self):
        route = self._route()
        if route == "/models":
            models = [self.server.model] + sorted(m for m in self.server.seen_models if m != self.server.model)
            self._send_json(200, {
                "object": "list",
                "data": [{"id": m, "object": "model", "created": 0, "owned_by": "stub"} for m in models],
            })
        elif route in ("", "/health"):
            self._send_json(200, {"status": "ok"})
        else:
            self._error(404, f"unknown path {self.path}")

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw.decode("utf-8")) if raw else None
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            self.server.recorder.record(self.path, {"unparsed": raw.decode("utf-8", "replace")})
            self._error(400, f"body is not JSON: {error}")
            return
        self.server.recorder.record(self.path, body)
        if not isinstance(body, dict):
            self._error(400, "body is not a JSON object")
            return
        model = body.get("model") or self.server.model
        self.server.seen_models.add(model)
        route = self._route()
        if route == "/chat/completions":
            self._chat(body, model)
        elif route == "/embeddings":
            self._embeddings(body, model)
        else:
            self._error(404, f"unknown path {self.path}")

    def _chat(self, body, model):
        if body.get("stream"):
            self._error(400, "the stub does not stream")
            return
        response_format = body.get("response_format")
        kind = response_format.get("type") if isinstance(response_format, dict) else None
        if kind == "json_object":
            content = JSON_REPLY
        elif kind == "json_schema":
            content = schema_reply(response_format, body.get("messages"))
        else:
            content = TEXT_REPLY
        prompt_tokens = word_count(message_text(body.get("messages")))
        completion_tokens = word_count(content)
        self._send_json(200, {
            "id": "chatcmpl-" + uuid.uuid4().hex[:24],
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "logprobs": None,
                "finish_reason": "stop",
            }],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        })

    def _embeddings(self, body, model):
        inputs = body.get("input")
        if isinstance(inputs, str):
            inputs = [inputs]
        if not isinstance(inputs, list) or not all(isinstance(i, str) for i in inputs):
            self._error(400, "input must be a string or a list of strings")
            return
        dim = body.get("dimensions") or self.server.embedding_dim
        tokens = sum(word_count(i) for i in inputs)
        as_base64 = body.get("encoding_format") == "base64"  # the openai client's default

        def encode(vector):
            if as_base64:
                return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode("ascii")
            return vector

        self._send_json(200, {
            "object": "list",
            "model": model,
            "data": [{"object": "embedding", "index": n, "embedding": encode(embed(text, dim))} for n, text in enumerate(inputs)],
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        })


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file")
    parser.add_argument("--record")
    parser.add_argument("--model", default="stub-model")
    parser.add_argument("--embedding-dim", type=int, default=1024)
    args = parser.parse_args()

    server = ThreadingHTTPServer((args.host, args.port), Handler)
    server.daemon_threads = True
    server.recorder = Recorder(args.record)
    server.model = args.model
    server.seen_models = set()
    server.embedding_dim = args.embedding_dim

    def stop(signum, frame):
        # shutdown() blocks until serve_forever() returns, so call it from another thread.
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    port = server.server_address[1]
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(f"{port}\n")
        os.replace(tmp, args.port_file)
    print(f"stub LLM listening on http://{args.host}:{port}/v1", file=sys.stderr, flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
        server.recorder.close()
    print(f"stub LLM stopped after recording {server.recorder.count} requests", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
