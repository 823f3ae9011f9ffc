"""Runs the `engram-search` retriever (PyPI, pinned) on the same development data as
`mb-harness retrieve`, its embedder swapped for the project's in-process MiniLM (the int8
ONNX model in .cache/models/all-minilm-l6-v2-int8/), no reranker, with its own parser, fusion
and boosts; then prints its metrics beside the memories of `mb-harness retrieve` (issue 37).

Setup (a venv of its own, so engram's dependencies do not touch the project's):
  python3 -m venv .cache/venv-engram
  .cache/venv-engram/bin/pip install --no-deps engram-search==0.1.7
  .cache/venv-engram/bin/pip install faiss-cpu numpy==2.4.6 rank-bm25 onnxruntime==1.31.1 \
      tokenizers==0.23.3
  (sentence-transformers, which engram would load its model with, is not needed.)

Usage: .cache/venv-engram/bin/python benches/retrievers/engram_compare.py LOCOMO.json LME.json \
           [--ours NAME=REPORT.json ...]
  LME.json is benches/retrievers/locomo_to_longmemeval.py's output for LOCOMO.json; each
  REPORT.json is the `--json` report of `mb-harness retrieve --longmemeval LME.json` or
  `--locomo LOCOMO.json` of one of our memories, shown in the same table.

Metrics: on LongMemEval format, the official session-level recall_any@5 and recall_all@5 (the
user's turns only, questions with no evidence among them skipped, as `retrieve` does); on
LoCoMo, engram's own session hit rate in the top 5 (any evidence session among the first five
distinct sessions) and the turn-level T@5 of `retrieve` (the ranked documents expanded into
the turns they hold, turns seen before not counted again).
"""
import argparse
import json
import os
import re
import statistics
import sys
import time

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

from engram.backends.base import Document
from engram.ingestion.parser import _chunk_turns, session_to_documents
from engram.retrieval.pipeline import RetrievalPipeline

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODEL = os.path.join(ROOT, ".cache", "models", "all-minilm-l6-v2-int8")
CATEGORIES = {1, 2, 3, 4}
EVIDENCE = re.compile(r"D(\d+):(\d+)")


class MiniLM:
    """all-MiniLM-L6-v2 (int8 ONNX) with engram's Embedder interface: mean pooling over the
    attention mask, unit vectors, 256 tokens at most (the model's max_seq_length)."""

    def __init__(self, directory=MODEL):
        self.tokenizer = Tokenizer.from_file(os.path.join(directory, "tokenizer.json"))
        self.tokenizer.enable_truncation(256)
        self.tokenizer.enable_padding()
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        self.session = ort.InferenceSession(os.path.join(directory, "model.onnx"), options)
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.dimension = 384
        # The instances made from one conversation share their documents: each text once.
        self.cache = {}

    def _encode(self, texts, batch_size=32):
        missing = list({t for t in texts if t not in self.cache})
        for text, vector in zip(missing, self._run(missing, batch_size)):
            self.cache[text] = vector
        return np.array([self.cache[t] for t in texts], dtype=np.float32).reshape(
            len(texts), self.dimension
        )

    def _run(self, texts, batch_size):
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for start in range(0, len(order), batch_size):
            part = order[start : start + batch_size]
            encodings = self.tokenizer.encode_batch([texts[i] for i in part])
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self.inputs:
                feed["token_type_ids"] = np.zeros_like(ids)
            states = self.session.run(None, feed)[0]
            summed = (states * mask[..., None]).sum(axis=1)
            vectors = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1)
            vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
            out[part] = vectors
        return out

    def encode_documents(self, texts, batch_size=32):
        """Document vectors."""
        return self._encode(list(texts), batch_size)

    def encode_query(self, text):
        """One query vector."""
        return self._run([text], 1)[0]


def documents(pipeline, sessions):
    """engram's documents for `sessions` [(session id, timestamp, turns, turn ids)], embedded,
    each with the turn ids it holds (synthetic documents hold none)."""
    made, covered = [], []
    for session_id, timestamp, turns, ids, options in sessions:
        for doc in session_to_documents(turns, session_id, timestamp, **options):
            made.append(doc)
            covered.append(turns_of(doc, turns, ids, options))
    vectors = pipeline.embedder.encode_documents([d["text"] for d in made])
    docs = [
        Document(id=d["id"], text=d["text"], embedding=list(v), metadata=d["metadata"])
        for d, v in zip(made, vectors)
    ]
    return docs, {d.id: c for d, c in zip(docs, covered)}


def turns_of(doc, turns, ids, options):
    """Turn ids of one of engram's documents, found by chunking as engram does."""
    if doc["is_synthetic"]:
        return []
    kept = [
        (t, i)
        for t, i in zip(turns, ids)
        if options.get("include_assistant") or t.get("role") == "user"
    ]
    chunks = _chunk_turns(kept, max_turns=options.get("chunk_max_turns", 6))
    match = re.search(r"_c(\d+)$", doc["id"])
    chunk = chunks[int(match.group(1))] if match and len(chunks) > 1 else chunks[0]
    return [i for _, i in chunk]


def ranked_sessions(ranked):
    """Distinct session ids of ranked documents, in order."""
    seen, out = set(), []
    for doc in ranked:
        session = doc.metadata["session_id"]
        if session not in seen:
            seen.add(session)
            out.append(session)
    return out


def longmemeval(pipeline, path):
    """Official session recall_any@5 / recall_all@5 of engram over LongMemEval-format file."""
    with open(path) as f:
        instances = json.load(f)
    any5, all5, latencies = [], [], []
    for inst in instances:
        if not any(
            t.get("has_answer") and t["role"] == "user"
            for s in inst["haystack_sessions"]
            for t in s
        ):
            continue
        sessions = [
            (sid, date, turns, list(range(len(turns))), {})
            for sid, date, turns in zip(
                inst["haystack_session_ids"], inst["haystack_dates"], inst["haystack_sessions"]
            )
        ]
        docs, _ = documents(pipeline, sessions)
        started = time.perf_counter()
        ranked = pipeline.search(
            inst["question"], docs, top_k=len(docs), question_date=inst["question_date"]
        )
        latencies.append(time.perf_counter() - started)
        top = ranked_sessions(ranked)[:5]
        gold = [s for s in inst["haystack_session_ids"] if "answer" in s]
        any5.append(float(any(g in top for g in gold)))
        all5.append(float(all(g in top for g in gold)))
    return {
        "questions": len(any5),
        "recall_any@5": statistics.mean(any5),
        "recall_all@5": statistics.mean(all5),
        "query_p50_ms": 1000 * statistics.median(latencies),
    }


def locomo(pipeline, path):
    """Session hit@5 and turn-level T@5 of engram over LoCoMo conversations."""
    with open(path) as f:
        samples = json.load(f)
    hits, t5, latencies = [], [], []
    for sample in samples:
        conv = sample["conversation"]
        names = {"user": conv["speaker_a"], "assistant": conv["speaker_b"]}
        options = {"include_assistant": True, "speaker_names": names}
        sessions = []
        for key in sorted(
            (k for k in conv if re.fullmatch(r"session_\d+", k) and conv[k]),
            key=lambda k: int(k.split("_")[1]),
        ):
            turns = [
                {"role": "user" if t["speaker"] == names["user"] else "assistant",
                 "content": t["text"]}
                for t in conv[key]
            ]
            ids = [t["dia_id"] for t in conv[key]]
            sessions.append((key, conv.get(key + "_date_time", ""), turns, ids, options))
        docs, covered = documents(pipeline, sessions)
        for qa in sample["qa"]:
            if qa.get("category") not in CATEGORIES:
                continue
            evidence = {m.group(0) for e in qa.get("evidence", []) for m in EVIDENCE.finditer(e)}
            if not evidence:
                continue
            started = time.perf_counter()
            ranked = pipeline.search(qa["question"], docs, top_k=len(docs))
            latencies.append(time.perf_counter() - started)
            gold = {"session_" + e[1:].split(":")[0] for e in evidence}
            hits.append(float(bool(gold & set(ranked_sessions(ranked)[:5]))))
            seen, turns = set(), []
            for doc in ranked:
                for t in covered[doc.id]:
                    if t not in seen:
                        seen.add(t)
                        turns.append(t)
            t5.append(len(evidence & set(turns[:5])) / len(evidence))
    return {
        "questions": len(hits),
        "session_hit@5": statistics.mean(hits),
        "T@5": statistics.mean(t5),
        "query_p50_ms": 1000 * statistics.median(latencies),
    }


def ours(report):
    """The numbers of one `mb-harness retrieve --json` report."""
    with open(report) as f:
        r = json.load(f)
    overall = r.get("overall", {})
    if "session" in overall:
        s = overall["session"]
        return {
            "recall_any@5": s.get("recall_any@5"),
            "recall_all@5": s.get("recall_all@5"),
            "lme_p50_ms": (r.get("query_latency_ms") or {}).get("p50"),
        }
    return {
        "T@5": overall.get("turn_recall@5"),
        "B@500": overall.get("budget_recall@500"),
        "locomo_p50_ms": (r.get("query_latency_ms") or {}).get("p50"),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("locomo")
    parser.add_argument("longmemeval")
    parser.add_argument("--ours", action="append", default=[], metavar="NAME=REPORT.json")
    args = parser.parse_args()
    pipeline = RetrievalPipeline(embedder=MiniLM(), use_reranker=False)
    lme = longmemeval(pipeline, args.longmemeval)
    loc = locomo(pipeline, args.locomo)
    rows = {"engram-search 0.1.7 (MiniLM int8, no reranker)": {
        "recall_any@5": lme["recall_any@5"], "recall_all@5": lme["recall_all@5"],
        "lme_p50_ms": lme["query_p50_ms"], "session_hit@5": loc["session_hit@5"],
        "T@5": loc["T@5"], "locomo_p50_ms": loc["query_p50_ms"]}}
    for item in args.ours:
        name, report = item.split("=", 1)
        rows.setdefault(name, {}).update(ours(report))
    columns = ["recall_any@5", "recall_all@5", "lme_p50_ms", "session_hit@5", "T@5", "B@500",
               "locomo_p50_ms"]
    print(f"LongMemEval format: {lme['questions']} scored questions; LoCoMo: {loc['questions']}")
    print("| retriever | " + " | ".join(columns) + " |")
    print("|---|" + "---|" * len(columns))
    for name, row in rows.items():
        cells = [
            "—" if row.get(c) is None else f"{row[c]:.3f}" if "ms" not in c else f"{row[c]:.1f}"
            for c in columns
        ]
        print(f"| {name} | " + " | ".join(cells) + " |")
    json.dump(rows, sys.stderr, indent=1)


if __name__ == "__main__":
    main()
