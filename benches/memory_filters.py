#!/usr/bin/env python3
"""What a metadata filter costs a search of `memorybench.Memory` (docs/benchmarks.md, "Searching
with metadata filters").

    .cache/venv/bin/python benches/memory_filters.py [--memories 10000] [--system bm25_message]

Stores `--memories` one-message dialogs, each with metadata `{"n": i % 1000, "day":
"2024-MM-DD"}`, then times `search(query, k=10)` without a filter and with filters that keep
10 %, 1 % and 0.1 % of the memories (an `in` list, a date range, an equality). A filtered search
asks the system for 4x more candidates until `k` match (at most 10 000), so its cost grows as
the filter gets rarer among the query's matches. Reports the median and the 95th percentile
over 50 queries, and the results each returned.
"""

import argparse
import statistics
import tempfile
import time

import memorybench as mb

WORDS = ["garden", "violin", "harbour", "lantern", "orchard", "meadow", "compass", "kettle"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--system", default="bm25_message")
    parser.add_argument("--queries", type=int, default=50)
    args = parser.parse_args()
    if not 100 <= args.memories <= 1_000_000:
        parser.error("--memories must be 100 to 1 000 000")
    with tempfile.TemporaryDirectory() as path, mb.Engine(path) as engine, mb.Memory(
        engine, "bench", system=args.system, embedder=mb.Embedder.hashing(384)
    ) as memory:
        started = time.perf_counter()
        for i in range(args.memories):
            text = f"note {i}: the {WORDS[i % 8]} by the {WORDS[(i // 8) % 8]}"
            day = f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}"
            memory.add([{"role": "user", "content": text}], metadata={"n": i % 1000, "day": day})
        print(f"stored {args.memories} memories in {time.perf_counter() - started:.1f} s "
              f"({args.system})")
        cases = [
            ("no filter", None),
            ("10 %: `n` in 100 values", {"n": {"in": list(range(100))}}),
            ("1 %: `n` in 10 values", {"n": {"in": list(range(10))}}),
            ("0.1 %: `n` equal", {"n": 7}),
            ("date range (March)", {"day": {"gte": "2024-03-01", "lt": "2024-04-01"}}),
        ]
        print("| filter | median | p95 | results |")
        print("|---|---:|---:|---:|")
        for label, filters in cases:
            times, found = [], 0
            for q in range(args.queries):
                query = f"{WORDS[q % 8]} {WORDS[(q * 3) % 8]}"
                before = time.perf_counter()
                found = len(memory.search(query, k=10, filters=filters))
                times.append(time.perf_counter() - before)
            times.sort()
            p95 = times[int(len(times) * 0.95) - 1]
            print(f"| {label} | {statistics.median(times) * 1000:.2f} ms "
                  f"| {p95 * 1000:.2f} ms | {found} |")


if __name__ == "__main__":
    main()
