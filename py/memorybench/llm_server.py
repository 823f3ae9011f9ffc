#!/usr/bin/env python3
"""Serves a GGUF model over llama.cpp's OpenAI-compatible HTTP server (the xllamacpp wheel).

memorybench-rs starts this launcher for `--llm local` (mb_llm::LocalServer) and stops it when
the command ends. The launcher never outlives the process that started it: the kernel signals it
when its parent dies (PR_SET_PDEATHSIG), and a watch on the parent's pid covers the cases the
kernel signal misses. On success it prints one line, `listening http://HOST:PORT`, on stdout;
every failure is one line on stderr starting with `llm_server: error:` and a non-zero exit.

Usage: llm_server.py --model FILE --alias NAME [--host 127.0.0.1] [--port 0] [--ctx 2048]
                     [--threads N] [--parallel 1] [--parent-pid PID] [--lora FILE]
A port of 0 lets the system choose a free one; the line on stdout says which.
"""

import argparse
import ctypes
import os
import signal
import socket
import sys
import threading
import time

# Exit codes, so that callers can tell the failures apart without parsing text.
EXIT_BAD_MODEL = 2
EXIT_PORT_IN_USE = 3
EXIT_NO_SERVER = 4
EXIT_PARENT_GONE = 5

PR_SET_PDEATHSIG = 1
GGUF_MAGIC = b"GGUF"
PARENT_POLL_SECONDS = 0.5


def fail(code, message):
    # One write, starting and ending a line: llama.cpp logs to the same stderr from its own
    # threads, and print() writes the text and its newline separately, so a log line of
    # llama.cpp could otherwise begin or end in the middle of this one.
    sys.stderr.write(f"\nllm_server: error: {message}\n")
    sys.stderr.flush()
    sys.exit(code)


def die_with_parent(parent_pid):
    """Ends this process when `parent_pid` is no longer its parent (the parent died)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            print("llm_server: warning: prctl(PR_SET_PDEATHSIG) failed; "
                  "relying on the parent watch", file=sys.stderr, flush=True)
    except (OSError, AttributeError):
        print("llm_server: warning: no prctl; relying on the parent watch",
              file=sys.stderr, flush=True)
    # The parent may have died before prctl took effect.
    if os.getppid() != parent_pid:
        os._exit(EXIT_PARENT_GONE)

    def watch():
        while True:
            if os.getppid() != parent_pid:
                os._exit(EXIT_PARENT_GONE)
            time.sleep(PARENT_POLL_SECONDS)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def check_model(path):
    if not os.path.isfile(path):
        fail(EXIT_BAD_MODEL, f"model file {path} does not exist (run bash scripts/setup.sh, "
                             "or name an existing GGUF file in the [server] settings)")
    try:
        with open(path, "rb") as f:
            magic = f.read(len(GGUF_MAGIC))
    except OSError as e:
        fail(EXIT_BAD_MODEL, f"model file {path} cannot be read: {e}")
    if magic != GGUF_MAGIC:
        fail(EXIT_BAD_MODEL, f"model file {path} is not a GGUF file (it starts with {magic!r})")


def check_adapter(path):
    """A LoRA adapter must be a GGUF file (llama.cpp says more if it does not fit the model)."""
    if not os.path.isfile(path):
        fail(EXIT_BAD_MODEL, f"LoRA adapter {path} does not exist (train one with "
                             "mb-harness sft-train)")
    with open(path, "rb") as f:
        magic = f.read(len(GGUF_MAGIC))
    if magic != GGUF_MAGIC:
        fail(EXIT_BAD_MODEL, f"LoRA adapter {path} is not a GGUF file (it starts with {magic!r})")


def check_port(host, port):
    """A port given explicitly must be free; port 0 always is."""
    if port == 0:
        return
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind((host, port))
        except OSError as e:
            fail(EXIT_PORT_IN_USE, f"port {port} on {host} is in use ({e.strerror})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True, help="GGUF model file")
    parser.add_argument("--alias", required=True, help="model name clients send")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: any free port")
    parser.add_argument("--ctx", type=int, default=2048, help="context tokens of each request")
    parser.add_argument("--threads", type=int, default=0, help="0: llama.cpp's default")
    parser.add_argument("--parallel", type=int, default=1, help="requests served at once")
    parser.add_argument("--parent-pid", type=int, default=None,
                        help="stop when this process dies (default: the parent at start)")
    parser.add_argument("--lora", default=None,
                        help="a LoRA adapter GGUF applied (scale 1) to every request")
    args = parser.parse_args()
    if args.ctx <= 0 or args.parallel <= 0 or args.threads < 0 or not 0 <= args.port < 65536:
        fail(EXIT_NO_SERVER, "--ctx and --parallel must be positive, --threads at least 0, "
                             "--port within 0..65535")

    die_with_parent(args.parent_pid if args.parent_pid is not None else os.getppid())
    check_model(args.model)
    if args.lora is not None:
        check_adapter(args.lora)
    check_port(args.host, args.port)
    try:
        import xllamacpp
    except ImportError as e:
        fail(EXIT_NO_SERVER, f"cannot import xllamacpp ({e}) with {sys.executable}: "
                             "run bash scripts/setup.sh")

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.model_alias = args.alias
    params.hostnames = [args.host]
    params.port = args.port
    # llama.cpp divides its context among the parallel slots.
    params.n_ctx = args.ctx * args.parallel
    params.n_parallel = args.parallel
    if args.threads > 0:
        params.cpuparams.n_threads = args.threads
        params.cpuparams_batch.n_threads = args.threads
    params.ui = False
    if args.lora is not None:
        # Requests that name no adapters get it at this scale (a request's `lora` field
        # would set the scales of its own).
        params.lora_adapters = [xllamacpp.CommonAdapterLoraInfo(args.lora, 1.0)]
    try:
        server = xllamacpp.Server(params)
    except RuntimeError as e:
        fail(EXIT_NO_SERVER, f"llama.cpp could not serve {args.model} on {args.host}:"
                             f"{args.port} ({e})")
    print(f"listening {server.listening_address}", flush=True)
    # The server runs on its own threads; this one only waits to be stopped.
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
