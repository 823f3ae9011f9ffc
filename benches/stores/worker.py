"""Times one store at one size, each operation in its own phase; prints one JSON object.

Usage: worker.py STORE DATA_DIR N STORE_DIR   (STORE: memorybench, lancedb, chroma, qdrant)

Runs in its own process so that its peak RSS is the store's (plus the data it was given). The
phases match `stores_engine` (the engine from Rust): bulk insert of N - 200 records until
searchable, 200 single inserts in the store's durable mode, top-10 vector search (recall@10
against exact search) for each setting, top-10 full-text and hybrid search, 100 deletes by id,
three deletes by filter, close, on-disk size, then five rounds of reopen, the first vector and
text answers and close. A single timing of a few milliseconds moves by a third between runs on
this machine, so the last two phases report their median beside the first one.
"""

import json
import os
import resource
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import adapters  # noqa: E402

SINGLES = 200
QUERIES = 200
# Records whose vectors are read and converted at a time.
BLOCK = 20_000
# The sources whose records the delete-by-filter phase removes, one delete each (1 089, 1 099
# and 1 175 records of the 100k data set); the first is the one earlier runs deleted alone.
DELETE_SOURCES = ("locomo3", "locomo2", "locomo4")
# Rounds of the reopen phase.
REOPENS = 5


def load(data_dir, n):
    """The first `n` records, their vectors as Python lists, the queries with their vectors,
    and each query's exact top 10 over the `n` records (the truth for recall).

    The vectors are read and converted a block at a time, and the truth kept up to date block
    by block, so that the process holds the lists and nothing else of the data: a whole array
    beside them (1.5 GiB at a million records), once freed, would leave a hole in "the data
    alone" that a store's memory then fills unseen."""
    rows = []
    with open(os.path.join(data_dir, "records.jsonl"), encoding="utf-8") as f:
        for line in f:
            if len(rows) >= n:
                break
            rows.append(json.loads(line))
    with open(os.path.join(data_dir, "queries.jsonl"), encoding="utf-8") as f:
        queries = [json.loads(line)["text"] for line in f]
    qv = np.fromfile(os.path.join(data_dir, "query_vectors.f32"), dtype=np.float32)
    qv = qv.reshape(-1, 384)[:QUERIES]
    vec_lists = []
    best_scores = np.full((len(qv), 10), -np.inf, dtype=np.float32)
    best_ids = np.zeros((len(qv), 10), dtype=np.int64)
    with open(os.path.join(data_dir, "vectors.f32"), "rb") as f:
        for start in range(0, n, BLOCK):
            count = min(BLOCK, n - start)
            block = np.fromfile(f, dtype=np.float32, count=count * 384).reshape(count, 384)
            scores = np.concatenate([best_scores, qv @ block.T], axis=1)
            ids = np.concatenate([best_ids, np.broadcast_to(
                np.arange(start, start + count), (len(qv), count))], axis=1)
            top = np.argpartition(-scores, 10, axis=1)[:, :10]
            best_scores = np.take_along_axis(scores, top, axis=1)
            best_ids = np.take_along_axis(ids, top, axis=1)
            vec_lists += block.tolist()
    truth = [set(row.tolist()) for row in best_ids]
    return rows, vec_lists, queries[:QUERIES], qv.tolist(), truth


def pct(times):
    a = np.asarray(times) * 1e3
    return float(np.percentile(a, 50)), float(np.percentile(a, 99))


def rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def dir_mib(path):
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(root, name))
            except OSError:
                pass
    return total / 1048576.0


def main():
    name, data_dir, n, path = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    rows, vec_lists, queries, qv_lists, truth = load(data_dir, n)
    out = {"n": n, "rss_after_data_mib": rss_mib()}
    s = adapters.make(name, path)
    out["store"] = s.name
    out["durable"] = s.durable
    bulk = n - SINGLES

    s.open(path, True)
    t = time.perf_counter()
    s.bulk(rows[:bulk], vec_lists[:bulk])
    out["bulk_write_s"] = time.perf_counter() - t
    s.finish_bulk(qv_lists[0], queries[0])
    out["bulk_indexed_s"] = time.perf_counter() - t
    out["bulk_rate"] = bulk / out["bulk_indexed_s"]

    times = []
    for i in range(bulk, n):
        t = time.perf_counter()
        s.insert(rows[i], vec_lists[i])
        times.append(time.perf_counter() - t)
    out["insert_p50_ms"], out["insert_p99_ms"] = pct(times)
    if hasattr(s, "after_inserts"):
        t = time.perf_counter()
        s.after_inserts()
        out["after_inserts_s"] = time.perf_counter() - t

    curve = []
    for setting in s.settings:
        t = time.perf_counter()
        s.tune(setting)
        tune_s = time.perf_counter() - t
        times, found = [], 0
        for q, v in enumerate(qv_lists):
            t = time.perf_counter()
            got = s.vector(v)
            times.append(time.perf_counter() - t)
            found += len(truth[q] & set(got))
        p50, p99 = pct(times)
        curve.append({"setting": setting, "p50_ms": p50, "p99_ms": p99,
                      "recall": found / (10 * len(qv_lists)), "tune_s": tune_s,
                      "builds_index": s.tune_builds_index})
    out["vector_curve"] = curve

    for op, call in (("text", lambda q: s.text(queries[q])),
                     ("hybrid", lambda q: s.hybrid(queries[q], qv_lists[q]))):
        if getattr(s, op) is None:
            continue
        times = []
        for q in range(len(queries)):
            t = time.perf_counter()
            call(q)
            times.append(time.perf_counter() - t)
        out[f"{op}_p50_ms"], out[f"{op}_p99_ms"] = pct(times)

    times = []
    for row in range(0, 100):
        t = time.perf_counter()
        s.delete_one(rows[row]["id"])
        times.append(time.perf_counter() - t)
    out["delete_id_p50_ms"], out["delete_id_p99_ms"] = pct(times)
    runs = []
    for source in DELETE_SOURCES:
        t = time.perf_counter()
        s.delete_filter(source)
        runs.append(((time.perf_counter() - t) * 1e3,
                     sum(1 for r in rows[100:] if r["source"] == source)))
    out["delete_filter_ms"], out["delete_filter_count"] = runs[0]
    out["delete_filter_runs"] = runs
    out["delete_filter_median_ms"] = float(np.median([ms for ms, _ in runs]))
    s.close()
    del s

    out["disk_mib"] = dir_mib(path)
    rounds = [reopen(name, path, qv_lists[0], queries[0]) for _ in range(REOPENS)]
    out["reopen_ms"], out["reopen_first_query_ms"], out["reopen_first_text_ms"] = rounds[0]
    out["reopen_rounds"] = rounds
    for i, key in enumerate(("reopen", "reopen_first_query", "reopen_first_text")):
        if rounds[0][i] is not None:
            out[f"{key}_median_ms"] = float(np.median([r[i] for r in rounds]))
    out["peak_rss_mib"] = rss_mib()
    print(json.dumps(out))


def reopen(name, path, qv, query):
    """Opens the store, asks a vector then a text question, closes it: the milliseconds from
    the open to its end, to the first vector answer, and to the text answer (None where the
    store ranks no text). Timed apart, so that stores compare on the same work."""
    s = adapters.make(name, path)
    t = time.perf_counter()
    s.open(path, False)
    opened = (time.perf_counter() - t) * 1e3
    s.vector(qv)
    vector = (time.perf_counter() - t) * 1e3
    text = None
    if s.text:
        s.text(query)
        text = (time.perf_counter() - t) * 1e3
    s.close()
    return opened, vector, text


if __name__ == "__main__":
    main()
