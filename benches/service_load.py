#!/usr/bin/env python3
"""Load on the knowledge-graph tools, side by side: memorybench-mcp against the reference
`@modelcontextprotocol/server-memory`, the same tool calls from the same clients.

    .cache/venv/bin/python benches/service_load.py [--clients 32] [--seconds 60]
        [--servers ours-http,ours-stdio,reference] [--write-share 0.5]

Each client loops until the time is up: with probability `--write-share` it adds an entity
(`create_entities`, one entity with one observation, a name of its own), else it searches
(`search_nodes` for one entity of any client by its name). The reference server speaks stdio only, so
its clients share one stdio session (concurrent JSON-RPC requests, as an agent host's tools
would); memorybench-mcp is measured both that way and over Streamable HTTP with one session
per client. Afterwards the server is stopped and started again on the same files, and the
entities it acknowledged are counted in `read_graph`: every acknowledged one must be there.

Prints one Markdown table: calls/s, p50 and p99 per tool, errors, acknowledged and lost
entities. Needs `bash scripts/setup.sh` (the venv's `mcp` SDK, node and the reference server
under mcp/tests/node) and `cargo build --release -p memorybench-mcp`.
"""

import argparse
import asyncio
import os
import pathlib
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

ROOT = pathlib.Path(__file__).resolve().parent.parent
OURS = ROOT / "target" / "release" / "memorybench-mcp"
NODE_DIR = ROOT / "mcp" / "tests" / "node" / "node_modules"
REFERENCE = NODE_DIR / "@modelcontextprotocol" / "server-memory" / "dist" / "index.js"


class Tally:
    """Latencies per tool, errors and acknowledged entity names of one run."""

    def __init__(self):
        self.latencies = {"create_entities": [], "search_nodes": []}
        self.errors = 0
        self.acknowledged = set()


async def client_loop(session, client, clients, deadline, share, tally, rng):
    """One client's calls until `deadline`."""
    made = 0
    while time.monotonic() < deadline:
        started = time.monotonic()
        try:
            if rng.random() < share:
                # The trailing dot keeps one name from being a prefix of another's.
                name = f"c{client}-e{made}."
                result = await session.call_tool("create_entities", {"entities": [
                    {"name": name, "entityType": "note",
                     "observations": [f"client {client} wrote note {made} about topic {made % 17}"]}]})
                tool = "create_entities"
                if not result.is_error:
                    tally.acknowledged.add(name)
                made += 1
            else:
                # One entity by its name (or none yet): what a search costs, not how many
                # entities the answer lists.
                other = rng.randrange(clients)
                wanted = rng.randrange(max(1, made))
                result = await session.call_tool("search_nodes", {"query": f"c{other}-e{wanted}."})
                tool = "search_nodes"
        except Exception as error:  # a transport failure is an error of the run, not a crash
            print(f"client {client}: {error!r}", file=sys.stderr)
            tally.errors += 1
            continue
        if result.is_error:
            tally.errors += 1
        else:
            tally.latencies[tool].append(time.monotonic() - started)


async def shared_stdio(params, clients, seconds, share, tally):
    """Every client on one stdio session."""
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            deadline = time.monotonic() + seconds
            await asyncio.gather(*(client_loop(session, c, clients, deadline, share, tally,
                                               random.Random(c)) for c in range(clients)))


async def http_sessions(url, clients, seconds, share, tally):
    """One Streamable HTTP session per client."""
    deadline_box = []

    async def one(client):
        async with streamable_http_client(url) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                while not deadline_box:
                    await asyncio.sleep(0.01)
                await client_loop(session, client, clients, deadline_box[0], share, tally,
                                  random.Random(client))

    tasks = [asyncio.create_task(one(c)) for c in range(clients)]
    await asyncio.sleep(1.0)  # every session opened before the clock starts
    deadline_box.append(time.monotonic() + seconds)
    await asyncio.gather(*tasks)


async def graph_names(params):
    """The entity names of the graph, read by a fresh server on the same files."""
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            graph = await session.call_tool("read_graph", {})
            content = graph.structured_content or {}
            return {entity["name"] for entity in content.get("entities", [])}


def stdio_params(server, work):
    if server == "reference":
        node = NODE_DIR / ".bin" / "node"
        return StdioServerParameters(command=str(node), args=[str(REFERENCE)],
                                     env={**os.environ, "MEMORY_FILE_PATH": str(work / "memory.jsonl")})
    return StdioServerParameters(command=str(OURS), args=["--store", str(work / "store")])


def start_http(work):
    """memorybench-mcp over HTTP on a free loopback port; returns the process and its URL."""
    process = subprocess.Popen([str(OURS), "--store", str(work / "store"), "--http", "127.0.0.1:0"],
                               stderr=subprocess.PIPE, text=True)
    for line in process.stderr:
        found = re.search(r"listening on (\S+)", line)
        if found:
            return process, found.group(1)
    sys.exit("memorybench-mcp --http printed no address")


def measure(server, clients, seconds, share):
    tally = Tally()
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        started = time.monotonic()
        if server == "ours-http":
            process, url = start_http(work)
            try:
                asyncio.run(http_sessions(url, clients, seconds, share, tally))
            finally:
                process.terminate()
                process.wait(timeout=60)
        else:
            asyncio.run(shared_stdio(stdio_params(server, work), clients, seconds, share, tally))
        elapsed = time.monotonic() - started
        kept = asyncio.run(graph_names(stdio_params(server, work)))
    return tally, min(elapsed, seconds + 1.0), kept


def percentile(values, q):
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--write-share", type=float, default=0.5)
    parser.add_argument("--servers", default="ours-http,ours-stdio,reference")
    args = parser.parse_args()
    if not 1 <= args.clients <= 1024 or not 1 <= args.seconds <= 3600:
        sys.exit("--clients must be 1 to 1024 and --seconds 1 to 3600")
    if not 0.0 <= args.write_share <= 1.0:
        sys.exit("--write-share must be between 0 and 1")
    if not OURS.exists():
        sys.exit(f"{OURS} not found: cargo build --release -p memorybench-mcp")
    rows = []
    for server in [s for s in args.servers.split(",") if s]:
        if server not in ("ours-http", "ours-stdio", "reference"):
            sys.exit(f"unknown server {server}")
        if server == "reference" and not REFERENCE.exists():
            sys.exit(f"{REFERENCE} not found: bash scripts/setup.sh")
        print(f"{server}: {args.clients} clients for {args.seconds:.0f} s", file=sys.stderr)
        tally, elapsed, kept = measure(server, args.clients, args.seconds, args.write_share)
        calls = sum(len(v) for v in tally.latencies.values())
        lost = len(tally.acknowledged - kept)
        rows.append((server, calls / elapsed, tally, lost))
    print(f"{args.clients} clients, {args.seconds:.0f} s, {args.write_share:.0%} writes:\n")
    print("| server | calls/s | create_entities p50 / p99 ms | search_nodes p50 / p99 ms | "
          "errors | acknowledged | lost after restart |")
    print("|---|---|---|---|---|---|---|")
    for server, rate, tally, lost in rows:
        create, search = tally.latencies["create_entities"], tally.latencies["search_nodes"]
        print(f"| {server} | {rate:.0f} | {percentile(create, .5) * 1e3:.1f} / "
              f"{percentile(create, .99) * 1e3:.1f} | {percentile(search, .5) * 1e3:.1f} / "
              f"{percentile(search, .99) * 1e3:.1f} | {tally.errors} | {len(tally.acknowledged)} | "
              f"{lost} |")


if __name__ == "__main__":
    main()
