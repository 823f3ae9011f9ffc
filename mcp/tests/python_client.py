"""Drives memorybench-mcp with the official Python MCP SDK (PyPI `mcp`) over both transports.

Usage: python_client.py BINARY STORE_DIR stdio|http
Spawns the binary (stdio: as the SDK's stdio client does; http: with --http 127.0.0.1:0, reading
the bound address from its standard error), then lists the tools, builds and reads a knowledge
graph, adds, searches, lists, updates and deletes memories, and checks that a bad argument is a
tool error naming the field. Exits non-zero with a message on the first difference.
"""

import asyncio
import json
import os
import re
import subprocess
import sys
import threading

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

EXTRA = ["--memory-system", os.environ.get("MCP_TEST_SYSTEM", "bm25_message")]


def check(condition, message):
    if not condition:
        raise SystemExit(f"python client: {message}")


def structured(result):
    check(not result.is_error, f"tool error: {result.content}")
    return result.structured_content


async def exercise(session: ClientSession, transport: str):
    await session.initialize()
    tools = {tool.name for tool in (await session.list_tools()).tools}
    for name in ["create_entities", "read_graph", "search_nodes", "add_memory",
                 "search_memories", "list_memories", "memory_status"]:
        check(name in tools, f"{name} missing from {sorted(tools)}")

    user = f"py-{transport}"
    created = structured(await session.call_tool("create_entities", {"entities": [
        {"name": f"Ada-{transport}", "entityType": "person", "observations": ["writes Rust"]}]}))
    check(len(created["entities"]) == 1, f"create_entities: {created}")
    found = structured(await session.call_tool("search_nodes", {"query": "rust"}))
    check(any(e["name"] == f"Ada-{transport}" for e in found["entities"]), f"search_nodes: {found}")

    added = structured(await session.call_tool("add_memory", {"user_id": user, "wait": True, "messages": [
        {"role": "user", "content": "My cat is called Miso and she likes salmon."},
        {"role": "assistant", "content": "Noted: Miso likes salmon."}]}))
    check(len(added["added"]) >= 1, f"add_memory: {added}")
    results = structured(await session.call_tool(
        "search_memories", {"user_id": user, "query": "what is the cat called?", "limit": 3}))
    check(results["results"] and "Miso" in results["results"][0]["text"], f"search: {results}")

    page = structured(await session.call_tool("list_memories", {"user_id": user, "limit": 1}))
    check(len(page["memories"]) == 1, f"list_memories: {page}")
    memory_id = page["memories"][0]["id"]
    updated = structured(await session.call_tool(
        "update_memory", {"user_id": user, "memory_id": memory_id, "text": "Miso is a grey cat."}))
    check(updated["text"] == "Miso is a grey cat.", f"update_memory: {updated}")
    got = structured(await session.call_tool("get_memory", {"user_id": user, "memory_id": memory_id}))
    check(got["text"] == "Miso is a grey cat.", f"get_memory: {got}")

    bad = await session.call_tool("search_memories", {"user_id": user, "query": 42})
    check(bad.is_error, "a query of the wrong type was accepted")
    check("query" in bad.content[0].text, f"the error does not name the field: {bad.content[0].text}")

    status = structured(await session.call_tool("memory_status", {}))
    check(status["memories"] >= 1 and status["queue_depth"] == 0, f"memory_status: {status}")
    deleted = structured(await session.call_tool("delete_all_memories", {"user_id": user}))
    check(deleted["deleted_namespaces"] == 1, f"delete_all_memories: {deleted}")
    page = structured(await session.call_tool("list_memories", {"user_id": user}))
    check(page["memories"] == [], f"after delete_all_memories: {page}")


async def over_stdio(binary, store):
    params = StdioServerParameters(command=binary, args=["--store", store, *EXTRA])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await exercise(session, "stdio")


async def over_http(binary, store):
    server = subprocess.Popen([binary, "--store", store, "--http", "127.0.0.1:0", *EXTRA],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
    try:
        url = None
        for line in server.stderr:
            match = re.search(r"listening on (http://\S+)", line)
            if match:
                url = match.group(1)
                break
        check(url, "the HTTP server did not say where it listens")
        # Keep reading what the server logs, so its writes never block or fail.
        threading.Thread(target=lambda: [None for _ in server.stderr], daemon=True).start()
        async with streamable_http_client(url) as streams:
            read, write = streams[0], streams[1]
            async with ClientSession(read, write) as session:
                await exercise(session, "http")
    finally:
        server.terminate()
        server.wait(timeout=30)


def main():
    binary, store, transport = sys.argv[1:4]
    run = over_stdio if transport == "stdio" else over_http
    asyncio.run(run(binary, store))
    print(json.dumps({"transport": transport, "ok": True}))


if __name__ == "__main__":
    main()
