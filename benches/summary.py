#!/usr/bin/env python3
"""Prints the median of every criterion benchmark under target/criterion as a Markdown table.

Usage: python3 benches/summary.py [target/criterion]
"""
import json
import pathlib
import sys


def human(ns: float) -> str:
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"


def main() -> None:
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "target/criterion")
    rows = []
    for estimates in sorted(root.glob("**/new/estimates.json")):
        bench = json.loads((estimates.parent / "benchmark.json").read_text())
        median = json.loads(estimates.read_text())["median"]["point_estimate"]
        throughput = bench.get("throughput") or {}
        elements = throughput.get("Elements")
        rate = f"{elements / median * 1e9:,.0f} /s" if elements else ""
        rows.append((bench["full_id"], human(median), rate))
    print("| benchmark | median | throughput |\n|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
