#!/usr/bin/env python3
"""Deterministic OpenAI-compatible stub for the mem0 drop-in differential.

Serves POST /v1/chat/completions and POST /v1/embeddings on 127.0.0.1.
Every request body is appended (one JSON object per line) to the log file.

Chat rule (mem0 2.x sends one extraction call per add(infer=True)):
  * the user prompt is split into "## <Section>" blocks; the "## New Messages"
    block holds lines "role: content".
  * each content of a `user:` line is split on ';' and every non-empty trimmed
    piece becomes one fact {"id": str(i), "text": piece}.  Lines of other roles
    contribute nothing, except that `assistant:` lines starting with "FACT "
    contribute the remainder (lets tests exercise assistant facts).
  * control markers in the new messages change the reply:
      !!BADJSON   -> reply is plain prose (not JSON)
      !!EMPTY     -> {"memory": []}
      !!FENCE     -> the normal JSON wrapped in a ```json fence
      !!PROSEJSON -> the normal JSON with prose before and after it
      !!ATTR=<x>  -> each fact gets "attributed_to": "<x>"
      !!HTTP500   -> HTTP 500 error response
    markers are removed from the fact text.
  * any other chat request (procedural memory etc.) gets the reply
    "STUB SUMMARY: <n> messages".

Embedding rule: lowercase, tokens = runs of [a-z0-9]; each token t adds
sign * 1.0 at index (md5(t) mod DIM) where sign is from another md5 byte;
the vector is L2-normalised; an empty token list gives e_0.
"""
import hashlib
import json
import math
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DIM = int(os.environ.get("STUB_DIM", "64"))
# Seconds each chat request takes before its reply, standing in for a model's time
# (benches/mem0_adds.py sets it; the differential leaves it at 0).
CHAT_SECONDS = 0.0
LOG = os.environ.get("STUB_LOG", "/tmp/mem0-research/stub-requests.jsonl")
_lock = threading.Lock()
TOKEN_RE = re.compile(r"[a-z0-9]+")
MARKER_RE = re.compile(r"!!(BADJSON|EMPTY|FENCE|PROSEJSON|HTTP500|ATTR=[A-Za-z0-9_]+)")


def embed(text: str):
    v = [0.0] * DIM
    toks = TOKEN_RE.findall(text.lower())
    for t in toks:
        h = hashlib.md5(t.encode()).digest()
        idx = int.from_bytes(h[:4], "little") % DIM
        sign = 1.0 if h[4] & 1 == 0 else -1.0
        v[idx] += sign
    n = math.sqrt(sum(x * x for x in v))
    if n == 0:
        v[0] = 1.0
        return v
    return [x / n for x in v]


def sections(prompt: str):
    out = {}
    cur = None
    for line in prompt.split("\n"):
        if line.startswith("## "):
            cur = line[3:].strip()
            out[cur] = []
        elif line.startswith("# "):
            cur = None
        elif cur is not None:
            out[cur].append(line)
    return {k: "\n".join(v).strip("\n") for k, v in out.items()}


def extraction_reply(user_prompt: str):
    new = sections(user_prompt).get("New Messages", "")
    markers = set(MARKER_RE.findall(new))
    if "HTTP500" in markers:
        return None
    attr = None
    for m in markers:
        if m.startswith("ATTR="):
            attr = m[5:]
    facts = []
    for line in new.split("\n"):
        role, sep, content = line.partition(": ")
        if not sep:
            continue
        content = MARKER_RE.sub("", content)
        if role == "user":
            pieces = content.split(";")
        elif role == "assistant" and content.startswith("FACT "):
            pieces = content[5:].split(";")
        else:
            continue
        for p in pieces:
            p = p.strip()
            if p:
                f = {"id": str(len(facts)), "text": p}
                if attr:
                    f["attributed_to"] = attr
                facts.append(f)
    if "EMPTY" in markers:
        facts = []
    body = json.dumps({"memory": facts})
    if "BADJSON" in markers:
        return "I could not find anything worth remembering here."
    if "FENCE" in markers:
        return "```json\n" + body + "\n```"
    if "PROSEJSON" in markers:
        return "Here you go: " + body + " Hope that helps."
    return body


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def _send(self, code, obj):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(n)
        try:
            body = json.loads(raw)
        except Exception:
            body = {"_raw": raw.decode("utf-8", "replace")}
        with _lock:
            with open(LOG, "a") as f:
                f.write(json.dumps({"path": self.path, "body": body}) + "\n")
        if not self.path.endswith("/embeddings") and CHAT_SECONDS > 0:
            time.sleep(CHAT_SECONDS)
        if self.path.endswith("/embeddings"):
            inp = body.get("input")
            if isinstance(inp, str):
                inp = [inp]
            data = [{"object": "embedding", "index": i, "embedding": embed(t)} for i, t in enumerate(inp)]
            return self._send(200, {"object": "list", "data": data, "model": body.get("model", "stub"),
                                    "usage": {"prompt_tokens": 0, "total_tokens": 0}})
        if self.path.endswith("/chat/completions"):
            msgs = body.get("messages", [])
            user = next((m.get("content", "") for m in msgs if m.get("role") == "user"), "")
            if "## New Messages" in (user or ""):
                content = extraction_reply(user)
                if content is None:
                    return self._send(500, {"error": {"message": "stub forced failure", "type": "server_error"}})
            else:
                content = f"STUB SUMMARY: {len(msgs)} messages"
            return self._send(200, {
                "id": "chatcmpl-stub", "object": "chat.completion", "created": 0,
                "model": body.get("model", "stub"),
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": content}}],
                "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
            })
        self._send(404, {"error": {"message": "not found"}})


def serve(port=0):
    srv = ThreadingHTTPServer(("127.0.0.1", port), H)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    return srv


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8765
    srv = ThreadingHTTPServer(("127.0.0.1", port), H)
    print(f"stub on 127.0.0.1:{port}, log {LOG}", flush=True)
    srv.serve_forever()
