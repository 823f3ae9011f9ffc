"""Prepare the stores benchmark's data once: real conversational records and their MiniLM vectors.

Records are DialSim transcript turns and LoCoMo turns (`../shared/data`), then windows of two
and more consecutive turns (a conversation's rounds) until there are enough distinct texts.
Each record has `source` (show or LoCoMo sample) and `speaker` attributes. Queries are LoCoMo's
questions. Everything is embedded once with the `memorybench` package's in-process MiniLM and
written to the cache directory, which every store's run reads:

    records.jsonl        one {"id", "text", "source", "speaker"} per line
    vectors.f32          N x 384 little-endian float32, L2-normalized, in record order
    queries.jsonl        one {"text"} per line
    query_vectors.f32    Q x 384

Usage: prepare.py --out DIR --max N [--queries Q]
"""

import argparse
import json
import os
import random
import re
import sys
import time

import numpy as np

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "data")
SHOWS = ("friends", "bigbang", "theoffice")
LINE = re.compile(r"^([^:\[\]]{1,40}):\s*(.+)$")


def dialsim_sessions():
    """Each DialSim session as a list of (speaker, text), tagged with its show."""
    for show in SHOWS:
        path = os.path.join(DATA, "dialsim", f"dialsim_corpus_{show}.txt")
        session = []
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if line.startswith("[Date:"):
                    if session:
                        yield show, session
                    session = []
                    continue
                m = LINE.match(line)
                if m and m.group(2).strip():
                    session.append((m.group(1).strip(), m.group(2).strip()))
        if session:
            yield show, session


def locomo():
    """LoCoMo sessions as (speaker, text) lists, and every question."""
    with open(os.path.join(DATA, "locomo", "locomo10-dev.json"), encoding="utf-8") as f:
        samples = json.load(f)
    sessions, questions = [], []
    for i, sample in enumerate(samples):
        conv = sample["conversation"]
        n = 1
        while f"session_{n}" in conv:
            turns = [(t["speaker"], t["text"]) for t in conv[f"session_{n}"] if t.get("text")]
            sessions.append((f"locomo{i}", turns))
            n += 1
        questions += [qa["question"] for qa in sample["qa"] if qa.get("question")]
    return sessions, questions


def records(max_n):
    """Distinct record texts: single turns first, then windows of 2, 3, ... consecutive turns."""
    lc_sessions, questions = locomo()
    sessions = list(dialsim_sessions()) + lc_sessions
    seen, out = set(), []
    width = 1
    while len(out) < max_n and width <= 8:
        level = []
        for source, turns in sessions:
            for i in range(0, len(turns) - width + 1):
                window = turns[i : i + width]
                text = "\n".join(f"{s}: {t}" for s, t in window)
                if text not in seen:
                    seen.add(text)
                    level.append({"text": text, "source": source, "speaker": window[0][0]})
        random.Random(width).shuffle(level)
        out += level
        width += 1
    out = out[:max_n]
    # Shuffle within the whole set so a prefix of any size mixes sources.
    random.Random(42).shuffle(out)
    for i, r in enumerate(out):
        r["id"] = i
    return out, questions


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--max", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=500)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    vec_path = os.path.join(args.out, "vectors.f32")
    if os.path.exists(vec_path) and os.path.getsize(vec_path) >= args.max * 384 * 4:
        print(f"{vec_path} already holds {args.max} vectors; nothing to do")
        return
    recs, questions = records(args.max)
    if len(recs) < args.max:
        sys.exit(f"only {len(recs)} distinct records available, {args.max} asked")
    qs = random.Random(7).sample(questions, min(args.queries, len(questions)))
    import memorybench

    emb = memorybench.Embedder()
    t0 = time.time()
    qv = np.asarray(emb.embed(qs), dtype=np.float32)
    with open(os.path.join(args.out, "queries.jsonl"), "w", encoding="utf-8") as f:
        for q in qs:
            f.write(json.dumps({"text": q}) + "\n")
    qv.tofile(os.path.join(args.out, "query_vectors.f32"))
    with open(os.path.join(args.out, "records.jsonl"), "w", encoding="utf-8") as f:
        for r in recs:
            f.write(json.dumps(r) + "\n")
    tmp = vec_path + ".part"
    done = resumable(tmp, args.max, len(recs))
    with open(tmp, "r+b" if done else "wb") as f:
        f.truncate(done * 384 * 4)
        f.seek(0, os.SEEK_END)
        step = 2048
        for i in range(done, len(recs), step):
            chunk = [r["text"] for r in recs[i : i + step]]
            np.asarray(emb.embed(chunk), dtype=np.float32).tofile(f)
            f.flush()
            os.fsync(f.fileno())
            end = i + len(chunk)
            rate = (end - done) / (time.time() - t0)
            print(f"embedded {end}/{len(recs)} ({rate:.0f}/s)", flush=True)
    os.replace(tmp, vec_path)
    os.remove(tmp + ".n")
    print(f"embedding took {time.time() - t0:.0f} s")


def resumable(part, n, total):
    """How many vectors of an interrupted run's `part` file can be kept: whole vectors of a run
    for the same `n` (its sidecar says which), else none. The records are the same for the same
    `n` (the shuffle is seeded), so the vectors already written stay right."""
    sidecar = part + ".n"
    try:
        with open(sidecar, encoding="utf-8") as f:
            same = int(f.read().strip()) == n
        kept = os.path.getsize(part) // (384 * 4) if same else 0
    except (OSError, ValueError):
        kept = 0
    with open(sidecar, "w", encoding="utf-8") as f:
        f.write(f"{n}\n")
    if kept:
        print(f"resuming: {min(kept, total)} of {total} vectors already embedded", flush=True)
    return min(kept, total)


if __name__ == "__main__":
    main()
