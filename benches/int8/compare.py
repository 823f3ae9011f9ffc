"""Accuracy and speed of candidate embedding models against today's model.

  venv/bin/python compare.py accuracy MODEL...          # cosine + overlap@10 vs the shipped model
  venv/bin/python compare.py speed [--rounds N] MODEL... # interleaved throughput / latency

A MODEL is a path, optionally suffixed ':nosln' to disable ORT's SkipLayerNormFusion (as the Rust
side does) or ':all' to keep every ORT optimization. 'base' means the shipped model.onnx.
Texts: 125 evenly spaced turns from each of the 8 LoCoMo conversations (1000) and the first 38
questions of each (304). Tokenization: no padding, truncation at 256 tokens (max_seq_length),
batches are length-sorted and padded to their longest text, mean pooling + L2 norm.
"""
import json, sys, time, statistics, os, argparse
import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODEL_DIR = os.path.join(ROOT, ".cache/models/all-minilm-l6-v2-int8")
BASE = f"{MODEL_DIR}/model.onnx"
DATA = os.path.join(ROOT, "../shared/data/locomo/locomo10-dev.json")
TURNS_PER_CONV, QS_PER_CONV, MAX_TOKENS = 125, 38, 256

tok = Tokenizer.from_file(f"{MODEL_DIR}/tokenizer.json")
tok.no_padding()
tok.enable_truncation(max_length=MAX_TOKENS)


def load_texts():
    data = json.load(open(DATA))
    turns, turn_conv, qs, q_conv = [], [], [], []
    for ci, item in enumerate(data):
        conv = item["conversation"]
        keys = sorted((k for k in conv if k.startswith("session_") and isinstance(conv[k], list)),
                      key=lambda k: int(k.split("_")[1]))
        all_turns = [t["text"] for k in keys for t in conv[k]]
        n = len(all_turns)
        idx = sorted({round(i * n / TURNS_PER_CONV) for i in range(TURNS_PER_CONV)})
        turns += [all_turns[i] for i in idx]
        turn_conv += [ci] * len(idx)
        q = [x["question"] for x in item["qa"][:QS_PER_CONV]]
        qs += q
        q_conv += [ci] * len(q)
    return turns, np.array(turn_conv), qs, np.array(q_conv)


def session(spec, threads=1):
    path, _, flag = spec.partition(":")
    path = BASE if path == "base" else path
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    disabled = ["SkipLayerNormFusion"] if flag == "nosln" else []
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"],
                                disabled_optimizers=disabled)


def encode(texts):
    return tok.encode_batch(texts)


def batches(encs, bs):
    order = sorted(range(len(encs)), key=lambda i: len(encs[i].ids))
    out = []
    for s in range(0, len(order), bs):
        idx = order[s:s + bs]
        w = max(len(encs[i].ids) for i in idx)
        ids = np.zeros((len(idx), w), np.int64)
        mask = np.zeros((len(idx), w), np.int64)
        for r, i in enumerate(idx):
            L = len(encs[i].ids)
            ids[r, :L] = encs[i].ids
            mask[r, :L] = 1
        out.append((idx, ids, mask))
    return out


def run(sess, prepared, n):
    vecs = np.zeros((n, 384), np.float32)
    for idx, ids, mask in prepared:
        h = sess.run(None, {"input_ids": ids, "attention_mask": mask,
                            "token_type_ids": np.zeros_like(ids)})[0]
        m = mask[:, :, None].astype(np.float32)
        p = (h * m).sum(1) / np.maximum(m.sum(1), 1.0)
        vecs[idx] = p / np.linalg.norm(p, axis=1, keepdims=True)
    return vecs


def accuracy(specs, bs=32):
    turns, tconv, qs, qconv = load_texts()
    pt, pq = batches(encode(turns), 32), batches(encode(qs), 1)
    b = session("base")
    bt, bq = run(b, pt, len(turns)), run(b, pq, len(qs))
    pt = batches(encode(turns), bs)  # candidate's batch size for turns
    def topk(T, Q):
        res = []
        for i in range(len(qs)):
            cand = np.where(tconv == qconv[i])[0]
            s = T[cand] @ Q[i]
            res.append(set(cand[np.argsort(-s, kind="stable")[:10]]))
        return res
    btop = topk(bt, bq)
    rows = []
    for spec in specs:
        s = session(spec)
        vt, vq = run(s, pt, len(turns)), run(s, pq, len(qs))
        cos = np.concatenate([(vt * bt).sum(1), (vq * bq).sum(1)])
        vtop = topk(vt, vq)
        ov = np.array([len(a & b) / 10 for a, b in zip(btop, vtop)])
        r = dict(model=spec, turn_bs=bs, n=len(cos), cos_min=float(cos.min()), cos_p1=float(np.percentile(cos, 1)),
                 cos_mean=float(cos.mean()), cos_q_min=float((vq * bq).sum(1).min()),
                 overlap10_mean=float(ov.mean()), overlap10_min=float(ov.min()))
        # top-1 agreement
        t1 = []
        for i in range(len(qs)):
            cand = np.where(tconv == qconv[i])[0]
            t1.append(cand[np.argmax(bt[cand] @ bq[i])] == cand[np.argmax(vt[cand] @ vq[i])])
        r["top1_agree"] = float(np.mean(t1))
        print(json.dumps(r), flush=True)
        rows.append(r)
    return rows


def speed(specs, rounds, n_turns, n_q):
    turns, _, qs, _ = load_texts()
    step = max(1, len(turns) // n_turns)
    turns = turns[::step][:n_turns]
    qs = qs[:: max(1, len(qs) // n_q)][:n_q]
    et, eq = encode(turns), encode(qs)
    p8, p32, pq = batches(et, 8), batches(et, 32), batches(eq, 1)
    s1 = {m: session(m, 1) for m in specs}
    s2 = {m: session(m, 2) for m in specs}
    for m in specs:  # warm-up
        run(s1[m], p32[:2], len(turns)); run(s2[m], pq[:5], len(qs)); run(s1[m], pq[:5], len(qs))
    res = {m: {"bs8": [], "bs32": [], "q1": [], "q2": []} for m in specs}
    for r in range(rounds):
        order = specs if r % 2 == 0 else specs[::-1]
        for m in order:
            t = time.perf_counter(); run(s1[m], p8, len(turns)); res[m]["bs8"].append(len(turns) / (time.perf_counter() - t))
            t = time.perf_counter(); run(s1[m], p32, len(turns)); res[m]["bs32"].append(len(turns) / (time.perf_counter() - t))
            for key, s in (("q1", s1[m]), ("q2", s2[m])):
                for b in pq:
                    t = time.perf_counter(); run(s, [b], len(qs)); res[m][key].append((time.perf_counter() - t) * 1000)
        print(f"round {r+1}/{rounds} done", file=sys.stderr, flush=True)
    base = specs[0]
    out = []
    for m in specs:
        d = res[m]
        row = dict(model=m,
                   bs8_tps=statistics.median(d["bs8"]), bs32_tps=statistics.median(d["bs32"]),
                   q1_p50_ms=statistics.median(d["q1"]), q2_p50_ms=statistics.median(d["q2"]))
        # per-round ratios vs first spec (paired, same round)
        row["bs8_ratio"] = statistics.median([a / b for a, b in zip(d["bs8"], res[base]["bs8"])])
        row["bs32_ratio"] = statistics.median([a / b for a, b in zip(d["bs32"], res[base]["bs32"])])
        row["q1_speedup"] = statistics.median(res[base]["q1"]) / row["q1_p50_ms"]
        row["q2_speedup"] = statistics.median(res[base]["q2"]) / row["q2_p50_ms"]
        row["raw"] = d
        print(json.dumps({k: (round(v, 3) if isinstance(v, float) else v) for k, v in row.items() if k != "raw"}), flush=True)
        out.append(row)
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["accuracy", "speed"])
    ap.add_argument("models", nargs="+")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--turns", type=int, default=400)
    ap.add_argument("--questions", type=int, default=60)
    ap.add_argument("--out")
    ap.add_argument("--bs", type=int, default=32)
    a = ap.parse_args()
    rows = accuracy(a.models, a.bs) if a.mode == "accuracy" else speed(a.models, a.rounds, a.turns, a.questions)
    if a.out:
        json.dump(rows, open(a.out, "w"), indent=1)
