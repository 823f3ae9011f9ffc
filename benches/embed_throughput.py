#!/usr/bin/env python3
"""Embedding throughput: mb-embed (Rust, ort) against Python onnxruntime, same model, same texts.

    .cache/venv/bin/python benches/embed_throughput.py [--seconds 2] [--quick]

Builds two input sets -- short chat messages (~35 tokens, LoCoMo turns when ../shared/data is
present, else synthetic) and long ones (~200 tokens) -- then measures sentences/s at batch sizes
1, 8 and 32 for every configuration below, and prints the best Python and the best Rust
configuration side by side with their ratio, plus how far each is from the CPU's arithmetic
limit. Both sides embed the whole set per pass (a corpus ingestion), on this machine's cores.

Python configurations: intra-op threads 1 or 2; one session, or one session per core driven by
threads (onnxruntime releases the GIL); padding to the tokenizer's shipped fixed 128, to the
longest text of each batch, or to the longest of length-sorted batches; graph optimization
"all" (onnxruntime's default) or "basic". Two ratios are printed: against the best single-session
Python configuration (how Python pipelines such as sentence-transformers run a model) and against
the best Python configuration of all (including the session-per-core pool ported to Python).
Rust configurations: sessions x intra-op threads in (2x1 = the default, 1x1, 1x2), with the
embedder's defaults otherwise (length-sorted batches of at most 512 padded tokens).
Needs `bash scripts/setup.sh`; builds the Rust example itself.
"""

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

ROOT = Path(__file__).resolve().parent.parent
MODEL_DIR = ROOT / ".cache/models/all-minilm-l6-v2-int8"
LOCOMO = ROOT.parent / "shared/data/locomo/locomo10-dev.json"
MAX_TOKENS = 256
BATCHES = (1, 8, 32)
# all-MiniLM-L6-v2: 6 layers, hidden 384, feed-forward 1536.
LAYERS, HIDDEN, FFN = 6, 384, 1536


def tokenizer(pad_fixed: bool) -> Tokenizer:
    t = Tokenizer.from_file(str(MODEL_DIR / "tokenizer.json"))
    t.enable_truncation(max_length=MAX_TOKENS)
    if not pad_fixed:
        t.no_padding()
    return t


def synthetic_turns(count: int) -> list[str]:
    words = ("we talked about the trip to the mountains and how my sister finally got her "
             "new job at the hospital while the kids started painting classes on weekends "
             "remember that concert last summer it was amazing and I still listen to the band "
             "every morning before work because it makes me feel calm and ready").split()
    rng = random.Random(7)
    return [" ".join(rng.choice(words) for _ in range(rng.randint(20, 40))) for _ in range(count)]


def input_sets() -> tuple[list[str], list[str], str]:
    count = tokenizer(False)
    if LOCOMO.exists():
        turns = []
        for sample in json.loads(LOCOMO.read_text()):
            conversation = sample["conversation"]
            for key in sorted(k for k in conversation if k.startswith("session_") and k[8:].isdigit()):
                for turn in conversation[key]:
                    turns.append(f'{turn["speaker"]}: {turn["text"]}')
        source = "LoCoMo turns"
    else:
        turns = synthetic_turns(4000)
        source = "synthetic turns (../shared/data absent)"
    lengths = [len(count.encode(t).ids) for t in turns]
    short = [t for t, n in zip(turns, lengths) if 28 <= n <= 42][:256]
    long, current, tokens = [], [], 0
    for t, n in zip(turns, lengths):
        current.append(t)
        tokens += n
        if tokens >= 190:
            long.append(" ".join(current))
            current, tokens = [], 0
        if len(long) == 64:
            break
    return short, long, source


def mean_tokens(texts: list[str]) -> float:
    t = tokenizer(False)
    return sum(len(t.encode(x).ids) for x in texts) / len(texts)


LEVELS = {"all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL, "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC}


def python_session(intra: int, level: str) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.intra_op_num_threads = intra
    options.inter_op_num_threads = 1
    options.graph_optimization_level = LEVELS[level]
    return ort.InferenceSession(str(MODEL_DIR / "model.onnx"), options,
                                providers=["CPUExecutionProvider"])


def embed_python(session, tok, texts):
    encodings = tok.encode_batch(texts)
    # Fixed padding leaves texts longer than 128 tokens unpadded: pad those batches to their
    # longest text.
    width = max(len(e.ids) for e in encodings)

    def padded(rows):
        return np.array([r + [0] * (width - len(r)) for r in rows], dtype=np.int64)

    ids = padded([e.ids for e in encodings])
    mask = padded([e.attention_mask for e in encodings])
    types = padded([e.type_ids for e in encodings])
    states = session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})[0]
    m = mask[:, :, None].astype(np.float32)
    pooled = (states * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1.0)
    return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


def measure_python(texts, batch, intra, workers, padding, level, seconds):
    tok = tokenizer(padding == "fixed128")
    if padding == "fixed128":
        # The shipped tokenizer.json pads to 128; truncation stays at the model's 256 so that
        # every configuration embeds the same tokens.
        tok.enable_padding(length=128)
    elif padding == "longest":
        tok.enable_padding()
    else:
        tok.enable_padding()
        texts = sorted(texts, key=lambda x: len(tokenizer(False).encode(x).ids))
    sessions = [python_session(intra, level) for _ in range(workers)]
    chunks = [texts[i:i + batch] for i in range(0, len(texts), batch)]

    def run_share(k):
        for chunk in chunks[k::workers]:
            embed_python(sessions[k], tok, chunk)

    def one_pass():
        if workers == 1:
            run_share(0)
        else:
            with ThreadPoolExecutor(workers) as pool:
                list(pool.map(run_share, range(workers)))

    one_pass()
    start, passes = time.perf_counter(), 0
    while passes == 0 or time.perf_counter() - start < seconds:
        one_pass()
        passes += 1
    return len(texts) * passes / (time.perf_counter() - start)


def measure_rust(binary, texts_file, batch, sessions, intra, seconds, optimization="all"):
    out = subprocess.run(
        [binary, "--texts", texts_file, "--batch-size", str(batch), "--sessions", str(sessions),
         "--intra-threads", str(intra), "--optimization", optimization, "--seconds", str(seconds)],
        check=True, capture_output=True, text=True)
    return json.loads(out.stdout)["sentences_per_s"]


def cpu_peaks() -> tuple[float, float, int]:
    """(f32 FLOP/s, int8 op/s, cores) at the nominal clock: 2 AVX-512 FMA ports per core,
    16 f32 FMAs or 64 int8 VNNI multiply-adds per port per cycle (an upper bound)."""
    cores = os.cpu_count() or 1
    mhz = 2000.0
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("cpu MHz"):
            mhz = float(line.split(":")[1])
            break
    hz = mhz * 1e6
    return cores * hz * 2 * 16 * 2, cores * hz * 2 * 64 * 2, cores


def flops_per_token(seq: float) -> float:
    macs = LAYERS * (4 * HIDDEN * HIDDEN + 2 * HIDDEN * FFN + 2 * seq * HIDDEN)
    return 2 * macs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="measuring time per configuration")
    parser.add_argument("--quick", action="store_true", help="only the default configurations")
    args = parser.parse_args()

    subprocess.run(["cargo", "build", "--release", "-q", "-p", "mb-embed", "--example", "embed_throughput"],
                   check=True, cwd=ROOT)
    binary = str(ROOT / "target/release/examples/embed_throughput")
    short, long, source = input_sets()
    f32_peak, int8_peak, cores = cpu_peaks()
    print(f"inputs: {len(short)} short texts ({mean_tokens(short):.0f} tokens avg) and "
          f"{len(long)} long texts ({mean_tokens(long):.0f} tokens avg) from {source}; {cores} cores")

    python_configs = [(1, 1), (2, 1), (1, 2)]  # (intra threads, sessions)
    paddings = ["fixed128", "longest", "sorted"]
    levels = ["all", "basic"]
    rust_configs = [(2, 1), (1, 1), (1, 2)]  # (sessions, intra threads); first = default
    if args.quick:
        python_configs, paddings, levels, rust_configs = [(1, 1), (1, 2)], ["sorted"], ["basic"], [(2, 1)]

    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, texts in (("short", short), ("long", long)):
            texts_file = os.path.join(tmp, f"{name}.json")
            Path(texts_file).write_text(json.dumps(texts))
            tokens = mean_tokens(texts)
            for batch in BATCHES:
                py = {}
                for intra, workers in python_configs:
                    for padding in paddings:
                        for level in levels:
                            label = f"{workers} session(s) x {intra} thread(s), {padding}, {level}"
                            py[label] = measure_python(texts, batch, intra, workers, padding, level, args.seconds)
                rs = {}
                for sessions, intra in rust_configs:
                    label = f"{sessions} session(s) x {intra} thread(s)"
                    rs[label] = measure_rust(binary, texts_file, batch, sessions, intra, args.seconds)
                best_py = max(py, key=py.get)
                single = {k: v for k, v in py.items() if k.startswith("1 session")}
                best_single = max(single, key=single.get)
                best_rs = max(rs, key=rs.get)
                default_rs = next(iter(rs))
                row = {
                    "input": name, "tokens": tokens, "batch": batch,
                    "python_best": py[best_py], "python_config": best_py,
                    "python_single": py[best_single], "python_single_config": best_single,
                    "rust_default": rs[default_rs], "rust_best": rs[best_rs], "rust_config": best_rs,
                    "python_all": py, "rust_all": rs,
                }
                results.append(row)
                print(f"{name:5} batch {batch:2}: python single-session best {py[best_single]:6.1f}/s "
                      f"({best_single}), best {py[best_py]:6.1f}/s ({best_py}); "
                      f"rust default {rs[default_rs]:6.1f}/s, best {rs[best_rs]:6.1f}/s ({best_rs})", flush=True)

    print()
    print("| input | batch | Python, 1 session | Python, best of all | Rust default | vs 1 session | vs best | Rust GFLOP/s (% of f32 peak) |")
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        flops = r["rust_default"] * r["tokens"] * flops_per_token(r["tokens"])
        print(f"| {r['input']} (~{r['tokens']:.0f} tok) | {r['batch']} | {r['python_single']:.0f} | "
              f"{r['python_best']:.0f} | {r['rust_default']:.0f} | "
              f"{r['rust_default'] / r['python_single']:.2f}x | {r['rust_default'] / r['python_best']:.2f}x | "
              f"{flops / 1e9:.0f} ({100 * flops / f32_peak:.0f}%) |")
    print(f"\nThe model keeps int8 weights but computes in f32 (Cast, Mul, MatMul), so the limit is the "
          f"f32 FMA peak: {f32_peak / 1e9:.0f} GFLOP/s at the nominal clock "
          f"(int8 VNNI would be {int8_peak / 1e9:.0f} Gop/s); the model costs "
          f"{flops_per_token(35) / 1e6:.1f} MFLOP per token at 35 tokens.")
    out = ROOT / "target/embed_throughput.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=1))
    print(f"raw results: {out}")


if __name__ == "__main__":
    sys.exit(main())
