#!/usr/bin/env python3
"""How long `add_memory` takes to acknowledge, and how fast the queue drains, on
memorybench-mcp with an LLM-backed memory system (docs/service.md, "Ingest").

    python3 benches/mcp_ingest.py [--adds 500] [--system hybrid] [--llm offline|local]
        [--embedder hashing|onnx] [--workers 4] [--users 8] [--compare-wait 50]

Starts the server over stdio on a fresh store, sends `--adds` dialogs one after another
(users in turn), each acknowledged once queued durably (synced write), and times each call
from the client (JSON-RPC over the pipe included). Then it waits for the queue to drain and
reports the draining rate; `--compare-wait N` also times N calls with `"wait": true`, which
return only after the memory system (and its model) memorized the dialog: the latency an
agent would see without the queue. Needs `cargo build --release -p memorybench-mcp`.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BINARY = os.path.join(ROOT, "target", "release", "memorybench-mcp")

FACTS = [
    "I moved to Lisbon in May and I am looking for a flat near the river.",
    "My daughter Ines starts school in September; she loves drawing horses.",
    "I am allergic to peanuts, so please never suggest satay.",
    "We adopted a border collie called Pixel last winter.",
    "I run 10 km every Sunday morning along the coast.",
]


class Client:
    def __init__(self, args, store):
        command = [BINARY, "--store", store, "--memory-system", args.system,
                   "--llm", args.llm, "--workers", str(args.workers)]
        if args.embedder:
            command += ["--embedder", args.embedder]
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=sys.stderr, text=True, bufsize=1, cwd=ROOT)
        self.next_id = 1
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "bench", "version": "0"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message):
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def request(self, method, params):
        rid = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise SystemExit(f"the server exited during {method}")
            message = json.loads(line)
            if message.get("id") == rid:
                return message

    def call(self, tool, arguments):
        result = self.request("tools/call", {"name": tool, "arguments": arguments})["result"]
        if result.get("isError"):
            raise SystemExit(f"{tool}: {result['content'][0]['text']}")
        return result["structuredContent"]

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def dialog(i, users):
    return {"user_id": f"user{i % users}", "messages": [
        {"role": "user", "content": f"{FACTS[i % len(FACTS)]} (note {i})"},
        {"role": "assistant", "content": "Thanks, I will remember that."}]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--adds", type=int, default=500)
    parser.add_argument("--system", default="hybrid")
    parser.add_argument("--llm", default="offline")
    parser.add_argument("--embedder", default="hashing")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--users", type=int, default=8)
    parser.add_argument("--compare-wait", type=int, default=50)
    parser.add_argument("--drain-seconds", type=float, default=1800,
                        help="stop waiting for the queue after this long (reports the rate so far)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        client = Client(args, os.path.join(tmp, "store"))
        latencies = []
        started = time.perf_counter()
        for i in range(args.adds):
            t0 = time.perf_counter()
            client.call("add_memory", dialog(i, args.users))
            latencies.append((time.perf_counter() - t0) * 1000)
        enqueued = time.perf_counter() - started
        depth_after = client.call("memory_status", {})["queue_depth"]
        print(f"acknowledged {args.adds} in {enqueued:.2f} s: p50 "
              f"{statistics.median(latencies):.2f} ms, p99 {percentile(latencies, 99):.2f} ms, "
              f"max {max(latencies):.2f} ms; {depth_after} still queued", flush=True)
        depth = depth_after
        while time.perf_counter() - started < args.drain_seconds:
            depth = client.call("memory_status", {})["queue_depth"]
            if depth == 0:
                break
            time.sleep(0.05)
        drained = time.perf_counter() - started
        done = args.adds - depth
        waited = []
        for i in range(args.compare_wait if depth == 0 else 0):
            arguments = dialog(args.adds + i, args.users)
            arguments["wait"] = True
            t0 = time.perf_counter()
            client.call("add_memory", arguments)
            waited.append((time.perf_counter() - t0) * 1000)
        client.close()

    print(f"| system | llm | workers | adds | ack p50 ms | ack p99 ms | ack max ms | "
          f"queued after acks | memorized | in s | dialogs/s memorized | wait:true p50 ms | p99 ms |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    wait_p50 = f"{statistics.median(waited):.1f}" if waited else "-"
    wait_p99 = f"{percentile(waited, 99):.1f}" if waited else "-"
    print(f"| {args.system} | {args.llm} | {args.workers} | {args.adds} | "
          f"{statistics.median(latencies):.2f} | {percentile(latencies, 99):.2f} | "
          f"{max(latencies):.2f} | {depth_after} | {done} | {drained:.2f} | "
          f"{done / drained:.2f} | {wait_p50} | {wait_p99} |")


if __name__ == "__main__":
    main()
