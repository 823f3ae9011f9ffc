"""Runs a memory system written in Python for the Rust harness (``mb-harness --baseline
py:module.path:ClassName``), over JSON lines on stdin and stdout.

The harness starts one host per memory (``python -c <this file> module.path:ClassName``); the
host imports the class, builds it, and answers the harness's requests one at a time. It needs
only the standard library, so it runs in any interpreter that can import the system (upstream's
own venv, say), with or without the memorybench package.

The system's interface is upstream's agent and solver (every method but the constructor and
``generate_response`` optional)::

    class MySystem:
        def __init__(self, config: dict, models, memory_dir: str): ...
        def add_conversation_to_memory(self, messages, conversation_idx): ...
        def memory_locomo_conversation(self, conversation, session_cnt): ...   # -> ids or None
        def memory_dialsim_conversation(self, conversation, session_cnt): ...  # -> ids or None
        def retrieve_memory(self, content, k=10): ...     # -> texts, or dicts with "text"
        def generate_response(self, messages, lang="en", retrieve_k=None): ...  # -> str
        def delete_memory(self, doc_id): ...
        def save_memories(self): ...
        def load_memories(self): ...

``models`` reaches the harness's model layer (record and replay, accounting, ``--llm``):
``models.generate_response(messages)`` asks the answer model (upstream's LLM client method,
so ``agent.llm = models`` fits), ``models.memory.generate_response(messages)`` the memory
model, ``models.embed(texts)`` the harness's embedder. ``generate_response`` may change
``messages`` in place (upstream puts the filled template in the last one): the messages sent
are reported as they are after the call.

Protocol: a request is ``{"id", "op", ...}`` and gets ``{"id", "ok", "result" | "error",
"stats", "seconds"}``; while serving one, the host may send ``{"call", "parent", "kind":
"chat" | "embed", ...}`` and waits for ``{"call", "ok", "content" | "vectors" | "error"}``.
Anything the system prints goes to stderr, never into the protocol.
"""

import importlib
import json
import os
import sys
import threading
import time
import traceback

PROTOCOL = 1


class ModelCallError(RuntimeError):
    """The harness could not answer a model or embedding call."""


class Channel:
    """The protocol's two streams: requests read by a thread of their own, replies to calls
    handed to whoever waits for them."""

    def __init__(self):
        # The protocol keeps the real stdout; everything printed goes to stderr.
        self._out = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
        os.dup2(2, 1)
        sys.stdout = sys.stderr
        self._write_lock = threading.Lock()
        self._requests = []
        self._calls = {}
        self._cond = threading.Condition()
        self._closed = False
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in sys.stdin:
            if not line.strip():
                continue
            message = json.loads(line)
            with self._cond:
                if "call" in message:
                    self._calls[message["call"]] = message
                else:
                    self._requests.append(message)
                self._cond.notify_all()
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def send(self, message):
        text = json.dumps(message, ensure_ascii=False)
        with self._write_lock:
            self._out.write(text + "\n")
            self._out.flush()

    def next_request(self):
        with self._cond:
            while not self._requests and not self._closed:
                self._cond.wait()
            return self._requests.pop(0) if self._requests else None

    def wait_call(self, call):
        with self._cond:
            while call not in self._calls and not self._closed:
                self._cond.wait()
            if call not in self._calls:
                raise ModelCallError("the harness closed the connection during a model call")
            return self._calls.pop(call)


class Calls:
    """Model and embedding calls of the request being served, answered by the harness."""

    def __init__(self, channel):
        self._channel = channel
        self._next = 0
        self.parent = None
        self.seconds = 0.0
        self.evidence = None

    def ask(self, message):
        self._next += 1
        call = self._next
        started = time.perf_counter()
        self._channel.send(dict(message, call=call, parent=self.parent))
        reply = self._channel.wait_call(call)
        self.seconds += time.perf_counter() - started
        if not reply.get("ok"):
            raise ModelCallError(reply.get("error", {}).get("message", "model call failed"))
        return reply


class Client:
    """One model role, with upstream's LLM client method."""

    def __init__(self, calls, role):
        self._calls = calls
        self._role = role

    def generate_response(self, messages, **_sampling):
        message = {"kind": "chat", "role": self._role, "messages": list(messages)}
        if self._role == "answer" and self._calls.evidence is not None:
            message["evidence"] = self._calls.evidence
        return self._calls.ask(message)["content"]


class Models(Client):
    """What a system gets to reach the harness's models: the answer model (``generate_response``),
    ``memory`` (the memory model) and ``embed``."""

    def __init__(self, calls):
        super().__init__(calls, "answer")
        self.memory = Client(calls, "memory")

    def embed(self, texts):
        return self._calls.ask({"kind": "embed", "texts": list(texts)})["vectors"]


def load_class(target):
    module_name, _, class_name = target.partition(":")
    if not module_name or not class_name:
        raise ValueError(f"{target!r}: name the system as module.path:ClassName")
    module = importlib.import_module(module_name)
    try:
        return getattr(module, class_name)
    except AttributeError:
        raise ValueError(f"module {module_name} has no {class_name}") from None


def as_retrieved(items):
    """Retrieved memories as the harness reads them: ``{"doc_id", "text", "score", "turns"}``."""
    out = []
    for rank, item in enumerate(items or []):
        if isinstance(item, str):
            item = {"text": item}
        out.append(
            {
                "doc_id": str(item.get("doc_id", "")),
                "text": str(item.get("text", "")),
                "score": float(item.get("score", -rank)),
                "turns": [str(t) for t in item.get("turns", [])],
            }
        )
    return out


class Host:
    """One memory system and the state the harness asks about."""

    def __init__(self, channel, target):
        self.channel = channel
        self.calls = Calls(channel)
        self.models = Models(self.calls)
        self.target = target
        self.system = None
        self.items = 0
        self.text_bytes = 0
        self.retrieved = []

    # ------------------------------------------------------------------ operations

    def op_open(self, request):
        directory = request["dir"]
        os.makedirs(directory, exist_ok=True)
        cls = load_class(self.target)
        self.system = cls(request.get("config") or {}, self.models, directory)
        saved = os.path.join(directory, "saved.json")
        if os.path.exists(saved):
            with open(saved, encoding="utf-8") as file:
                counts = json.load(file)
            self.items, self.text_bytes = counts["items"], counts["text_bytes"]
            self._optional("load_memories")
        self._capture_retrieval()
        return {"retries_with_fewer_memories": bool(getattr(self.system, "retries_with_fewer_memories", True))}

    def op_memorize_dialog(self, request):
        messages = request["messages"]
        self.system.add_conversation_to_memory(messages, request["test_idx"])
        self.items += len(messages)
        self.text_bytes += sum(len(m.get("content", "").encode()) for m in messages)
        return {}

    def op_memorize_corpus(self, request):
        conversation = request["conversation"]
        method = f"memory_{request['format']}_conversation"
        if not hasattr(self.system, method):
            raise NotImplementedError(f"{self.target} has no {method}: it cannot memorize this corpus")
        ids = getattr(self.system, method)(conversation, request["session_cnt"])
        turns = [
            turn
            for key, value in conversation.items()
            if key.startswith("session_") and isinstance(value, list)
            for turn in value
        ]
        self.items += len(turns)
        self.text_bytes += sum(len(t.get("text", "").encode()) for t in turns)
        units = []
        for unit in ids or []:
            if isinstance(unit, str):
                unit = {"doc_id": unit}
            units.append({"doc_id": str(unit["doc_id"]), "turns": [str(t) for t in unit.get("turns", [])]})
        return {"units": units}

    def op_retrieve(self, request):
        if not hasattr(self.system, "retrieve_memory"):
            raise NotImplementedError(f"{self.target} has no retrieve_memory")
        return {"retrieved": as_retrieved(self.system.retrieve_memory(request["query"], request["k"]))}

    def op_answer(self, request):
        messages = [dict(m) for m in request["messages"]]
        self.retrieved = []
        self.calls.evidence = None
        response = self.system.generate_response(messages, lang=request["lang"], retrieve_k=request["k"])
        retrieved = self.retrieved
        if isinstance(response, dict):
            retrieved = as_retrieved(response.get("retrieved")) or retrieved
            messages = response.get("messages", messages)
            response = response["response"]
        return {"messages": messages, "response": str(response), "retrieved": retrieved}

    def op_delete_corpus(self, request):
        delete = getattr(self.system, "delete_memory", None)
        if delete is None:
            raise NotImplementedError(f"{self.target} has no delete_memory")
        for doc_id in request["doc_ids"]:
            delete(doc_id)
        return {}

    def op_save(self, request):
        self._optional("save_memories")
        with open(os.path.join(request["dir"], "saved.json"), "w", encoding="utf-8") as file:
            json.dump({"items": self.items, "text_bytes": self.text_bytes}, file)
        return {}

    # ------------------------------------------------------------------ helpers

    def _optional(self, name):
        method = getattr(self.system, name, None)
        if method is not None:
            method()

    def _capture_retrieval(self):
        """What ``retrieve_memory`` returns while answering becomes the answer's retrieved
        memories and the evidence the harness's offline answer model reads."""
        original = getattr(self.system, "retrieve_memory", None)
        if original is None:
            return
        host = self

        def retrieve_memory(content, *args, **kwargs):
            found = original(content, *args, **kwargs)
            host.retrieved = as_retrieved(found)
            host.calls.evidence = {"question": content, "retrieved": [r["text"] for r in host.retrieved]}
            return found

        try:
            self.system.retrieve_memory = retrieve_memory
        except AttributeError:
            pass

    def serve(self):
        while True:
            request = self.channel.next_request()
            if request is None or request.get("op") == "close":
                return
            self.calls.parent = request["id"]
            self.calls.seconds = 0.0
            started = time.perf_counter()
            try:
                handler = getattr(self, "op_" + request["op"], None)
                if handler is None:
                    raise ValueError(f"unknown operation {request['op']!r}")
                if self.system is None and request["op"] != "open":
                    raise RuntimeError("the system is not open")
                reply = {"id": request["id"], "ok": True, "result": handler(request)}
            except Exception as error:  # the system's own errors are reported, not fatal
                kind = "model" if isinstance(error, ModelCallError) else type(error).__name__
                traceback.print_exc(file=sys.stderr)
                reply = {"id": request["id"], "ok": False, "error": {"kind": kind, "message": str(error)}}
            reply["stats"] = {"items": self.items, "text_bytes": self.text_bytes}
            reply["seconds"] = {"host": time.perf_counter() - started, "models": self.calls.seconds}
            self.channel.send(reply)


def main():
    if len(sys.argv) != 2:
        sys.stderr.write("usage: host.py module.path:ClassName\n")
        sys.exit(2)
    channel = Channel()
    channel.send({"hello": PROTOCOL, "python": sys.version.split()[0], "pid": os.getpid()})
    Host(channel, sys.argv[1]).serve()


if __name__ == "__main__":
    main()
