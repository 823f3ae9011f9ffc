#!/usr/bin/env python3
"""The memory service under hostile clients, end to end against the release binary.

`.ci/run` runs this after the test build (issue 76), bounded to about a minute:

1. sessions: one tenant opens sessions it never closes, past its cap; another tenant still
   gets in, and the first gets room again once its unused sessions expire;
2. slow clients: connections that send half their headers or half their body are cut off at the
   deadline (408 for a body) while the server keeps answering others;
3. a truncated export: `import` refuses it, exits non-zero and keeps nothing of the tenant;
4. a full disk (a small tmpfs, in a private mount namespace): writes fail with an error naming
   the disk, reads and `memory_status` keep working, dialogs queued before stay queued rather
   than fail, and once space is free every write works again without a restart.

Usage: python3 scripts/hostile_clients.py target/release/memorybench-mcp
Only the standard library is used. Each check prints one line; any failure exits 1.
"""

import hashlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "hostile", "version": "0"},
    },
}


def check(condition, what):
    """Prints the check; exits 1 when it failed."""
    print(("ok: " if condition else "FAILED: ") + what, flush=True)
    if not condition:
        sys.exit(1)


def start_http(binary, store, *flags):
    """Starts the server over HTTP on a free port; returns the process and the /mcp URL."""
    server = subprocess.Popen(
        [binary, "--store", store, "--memory-system", "bm25_message", "--http", "0", *flags],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    for line in server.stderr:
        if "listening on " in line:
            url = line.split("listening on ")[1].strip()
            # Keep reading its log, so that the pipe never fills.
            subprocess.Popen(["cat"], stdin=server.stderr, stdout=subprocess.DEVNULL)
            return server, url
    sys.exit("FAILED: the server printed no address")


def initialize(url, token=None):
    """Opens a session as `token`'s tenant (none: the tokenless local one); returns the status."""
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=json.dumps(INITIALIZE).encode(), headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            response.read()
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def sessions(binary, work):
    config = os.path.join(work, "service.toml")
    with open(config, "w") as f:
        for name in ["acme", "bravo"]:
            digest = hashlib.sha256(f"token-{name}".encode()).hexdigest()
            f.write(f'[[tenants]]\nname = "{name}"\ntoken_sha256 = "{digest}"\n\n')
    server, url = start_http(
        binary,
        os.path.join(work, "sessions"),
        "--config", config,
        "--max-sessions-per-tenant", "40",
        "--session-idle-secs", "3",
    )
    try:
        statuses = [initialize(url, "token-acme") for _ in range(60)]
        check(statuses[:40] == [200] * 40 and set(statuses[40:]) == {429},
              f"one tenant's 60 unclosed sessions: 40 opened, 20 refused with 429 ({statuses.count(429)})")
        check(initialize(url, "token-bravo") == 200, "another tenant still opens a session")
        time.sleep(4)
        check(initialize(url, "token-acme") == 200, "unused sessions expired and made room")
    finally:
        server.kill()


def raw_request(address, payload):
    """Sends `payload` on a new connection and returns the socket."""
    connection = socket.create_connection(address, timeout=15)
    connection.sendall(payload)
    return connection


def slow_clients(binary, work):
    server, url = start_http(binary, os.path.join(work, "slow"), "--http-deadline-secs", "2")
    host_port = url.removeprefix("http://").removesuffix("/mcp")
    host, port = host_port.rsplit(":", 1)
    address = (host, int(port))
    try:
        body = json.dumps(INITIALIZE).encode()
        head = (
            f"POST /mcp HTTP/1.1\r\nHost: {host_port}\r\nContent-Type: application/json\r\n"
            f"Accept: application/json, text/event-stream\r\nContent-Length: {len(body)}\r\n\r\n"
        ).encode()
        started = time.monotonic()
        # Six bodies hold six of the tokenless tenant's eight request slots until the deadline
        # (a request counts once its headers are in, so that slow bodies cannot pile up
        # memory); headers still arriving hold none.
        half_bodies = [raw_request(address, head + body[: len(body) // 2]) for _ in range(6)]
        half_heads = [raw_request(address, head[:30]) for _ in range(30)]
        time.sleep(0.5)
        check(initialize(url) == 200, "a normal client is served beside 36 slow ones")
        answers = [c.recv(200).decode(errors="replace") for c in half_bodies]
        closed = [c.recv(200) for c in half_heads]
        took = time.monotonic() - started
        check(all(a.startswith("HTTP/1.1 408") for a in answers),
              f"6 half-sent bodies answered 408 ({answers[0][:20]!r})")
        check(all(c == b"" for c in closed), "30 half-sent headers closed")
        check(took < 8, f"all cut off at the 2 s deadline ({took:.1f} s)")
    finally:
        server.kill()


def truncated_import(binary, work):
    source = os.path.join(work, "source")
    server = subprocess.Popen([binary, "--store", source, "--memory-system", "bm25_message"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
    client = Stdio(server)
    for n in range(50):
        client.call("create_entities", {"entities": [
            {"name": f"e{n}", "entityType": "t", "observations": [f"fact {n}"]}]})
    server.kill()
    server.wait()
    export = os.path.join(work, "local.jsonl")
    done = subprocess.run([binary, "export", "--store", source, "--tenant", "local", "--out", export],
                          capture_output=True, text=True)
    check(done.returncode == 0, "export of a 50-entity graph")
    with open(export, "rb") as f:
        whole = f.read()
    with open(export, "wb") as f:
        f.write(whole[: len(whole) * 2 // 3])
    target = os.path.join(work, "target")
    done = subprocess.run([binary, "import", "--store", target, "--tenant", "local", "--in", export],
                          capture_output=True, text=True)
    check(done.returncode != 0, f"import of a truncated export fails: {done.stderr.strip()[:100]}")
    server = subprocess.Popen([binary, "--store", target, "--memory-system", "bm25_message"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
    graph = Stdio(server).call("read_graph", {})
    server.kill()
    check(json.loads(graph["content"][0]["text"]) == {"entities": [], "relations": []},
          "nothing of the truncated export was kept")


class Stdio:
    """A JSON-RPC client of a server over stdio."""

    def __init__(self, server):
        self.server, self.next_id = server, 1
        self.request("initialize", INITIALIZE["params"])
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message):
        self.server.stdin.write(json.dumps(message) + "\n")
        self.server.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            line = self.server.stdout.readline()
            if not line:
                sys.exit(f"FAILED: the server closed its output during {method}")
            message = json.loads(line)
            if message.get("id") == self.next_id:
                return message

    def call(self, tool, arguments):
        return self.request("tools/call", {"name": tool, "arguments": arguments})["result"]

    def ok(self, tool, arguments):
        """Whether the call succeeded, and its text."""
        result = self.call(tool, arguments)
        return not result.get("isError", False), result["content"][0]["text"]


def full_disk(binary, work):
    """Runs inside a private mount namespace (see main)."""
    disk = os.path.join(work, "disk")
    os.makedirs(disk, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=160m", "tmpfs", disk], check=True)
    server = subprocess.Popen([binary, "--store", os.path.join(disk, "store"), "--embedder", "hashing"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
    client = Stdio(server)
    check(client.ok("create_entities", {"entities": [
        {"name": "first", "entityType": "t", "observations": ["x"]}]})[0], "a write before")
    ballast = os.path.join(disk, "ballast")
    with open(ballast, "wb") as f:
        try:
            while True:
                f.write(b"\0" * (1 << 20))
                f.flush()
        except OSError:
            pass
    # Leave 2 MiB: dialogs queue, and memorizing them fills the disk.
    os.truncate(ballast, os.path.getsize(ballast) - (2 << 20))
    queued = 0
    for k in range(400):
        accepted, text = client.ok("add_memory", {"user_id": "pre", "messages": [
            {"role": "user", "content": f"queued fact number {k} " + "w" * 3000}]})
        if not accepted:
            check("out of disk space" in text, f"a refused add names the disk: {text[:90]}")
            break
        queued += 1
    accepted, text = client.ok("create_entities", {"entities": [
        {"name": "refused", "entityType": "t", "observations": ["z" * 8000]}]})
    check(not accepted and "out of disk space" in text, f"a write while full: {text[:90]}")
    check(client.ok("open_nodes", {"names": ["first"]})[0], "a read while full")
    check(client.ok("memory_status", {"user_id": "pre"})[0], "memory_status while full")
    os.remove(ballast)
    started = time.monotonic()
    while time.monotonic() - started < 30:
        if client.ok("create_entities", {"entities": [
                {"name": "after", "entityType": "t", "observations": ["z"]}]})[0]:
            break
        time.sleep(0.5)
    check(client.ok("open_nodes", {"names": ["after"]})[1].count('"after"') == 1,
          f"writes resumed without a restart ({time.monotonic() - started:.1f} s after space was freed)")
    while time.monotonic() - started < 40:
        status = json.loads(client.ok("memory_status", {"user_id": "pre"})[1])
        if status["queue"]["waiting"] == 0 and status["queue"]["running"] == 0:
            break
        time.sleep(0.5)
    memories = sum(n["memories"] for n in status["namespaces"] if n["namespace"].endswith("/pre"))
    check(status["queue"]["failed"] == 0 and memories == queued,
          f"the {queued} queued dialogs all memorized, none failed ({memories}, {status['queue']})")
    server.kill()
    server.wait()
    # Lazily: the mount namespace ends with this process anyway.
    subprocess.run(["umount", "--lazy", disk], check=False)


def can_mount():
    """Runs inside the mount namespace: whether a tmpfs can be mounted here."""
    with tempfile.TemporaryDirectory() as work:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", work],
                              capture_output=True)
        subprocess.run(["umount", "--lazy", work], capture_output=True)
        return done.returncode == 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--full-disk":
        with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as work:
            full_disk(sys.argv[2], work)
        return
    if len(sys.argv) == 2 and sys.argv[1] == "--can-mount":
        sys.exit(0 if can_mount() else 3)
    binary = os.path.abspath(sys.argv[1])
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as work:
        sessions(binary, work)
        slow_clients(binary, work)
        truncated_import(binary, work)
    # A tmpfs of our own, in a mount namespace of our own (as root, or as a user namespace's).
    namespace = ["unshare", "--mount"] if os.geteuid() == 0 else \
        ["unshare", "--user", "--map-root-user", "--mount"]
    try:
        probe = subprocess.run([*namespace, sys.executable, __file__, "--can-mount"],
                               capture_output=True)
        why = None if probe.returncode == 0 else probe.stderr.decode(errors="replace").strip()
    except OSError as error:
        why = str(error)
    if why is not None:
        # A machine property, not missing data: said on one line, in CI's log too.
        print("skipped: the full-disk check: this machine gives no mount namespace with a "
              f"tmpfs ({' '.join(namespace)}: {why[:120]})")
    else:
        done = subprocess.run([*namespace, sys.executable, __file__, "--full-disk", binary])
        if done.returncode != 0:
            sys.exit("FAILED: the full-disk check")
    print(f"hostile clients: all checks passed in {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
