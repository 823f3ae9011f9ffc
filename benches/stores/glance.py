"""The stores benchmark at a glance: for one size, each operation's engine figures beside the
best peer's, computed from the run's rows (nothing typed in).

Its parts:
- `OPERATIONS`: the table's rows, each an operation with how to read it off a run and which
  way is better;
- `vector_at_equal_recall`: the vector row, where a latency means something only beside its
  recall;
- `glance`: the rows for one size, each engine figure against the peer closest to it.

An operation a store lacks, or that failed for it, is left out of that store's comparison.
"""

# The engine's two drivers, as `results.jsonl` keys them; every other key is a peer.
ENGINE = ("memorybench-rust", "memorybench")
# Two recalls are equal when they differ by less than this: the engine's beam widths step
# recall by about 0.01-0.03, so a peer's point is matched to the engine's fastest point that
# reaches within a hundredth of its recall.
RECALL_TOLERANCE = 0.01


def _indexed_rate(r):
    """Records/s from the first write until the store searches with a vector index: the bulk
    load, its own index building, and any index a vector setting made (LanceDB's IVF_HNSW_SQ).
    A setting that only reloads an index (Chroma's new client after `modify`) does not count;
    rows written before `builds_index` existed count every setting, as they did then."""
    tune = sum(c.get("tune_s") or 0.0 for c in r.get("vector_curve") or []
               if c.get("builds_index", True))
    return (r["n"] - 200) / (r["bulk_indexed_s"] + tune)


def _above_data(r):
    """Peak RSS less the data the driver was handed."""
    return r["peak_rss_mib"] - r["rss_after_data_mib"]


def _disk_ratio(r, raw):
    return r["disk_mib"] / raw


# (label, unit, higher is better, steady, value of a run row or None). `raw` is the raw text
# and vectors in MiB, for the disk row. Steady rows are sizes, not timings: they do not move
# between runs, so they are never called level.
OPERATIONS = [
    ("bulk insert, as written", "records/s", True, False,
     lambda r, raw: (r["n"] - 200) / r["bulk_write_s"]),
    ("bulk insert, until searchable with a vector index", "records/s", True, False,
     lambda r, raw: _indexed_rate(r)),
    ("durable single insert, p50", "ms", False, False, lambda r, raw: r.get("insert_p50_ms")),
    ("durable single insert, p99", "ms", False, False, lambda r, raw: r.get("insert_p99_ms")),
    ("full-text top-10, p50", "ms", False, False, lambda r, raw: r.get("text_p50_ms")),
    ("hybrid top-10, p50", "ms", False, False, lambda r, raw: r.get("hybrid_p50_ms")),
    ("delete by id, p50", "ms", False, False, lambda r, raw: r.get("delete_id_p50_ms")),
    ("delete by filter, median of 3", "ms", False, False,
     lambda r, raw: r.get("delete_filter_median_ms", r.get("delete_filter_ms"))),
    ("reopen: the open, median of 5", "ms", False, False,
     lambda r, raw: r.get("reopen_median_ms", r.get("reopen_ms"))),
    ("reopen: open to first vector answer, median of 5", "ms", False, False,
     lambda r, raw: r.get("reopen_first_query_median_ms", r.get("reopen_first_query_ms"))),
    ("disk / raw text and vectors", "×", False, True, lambda r, raw: _disk_ratio(r, raw)),
    ("peak RSS above the data", "MiB", False, True, lambda r, raw: _above_data(r)),
]


def _value(op, r, raw):
    get = op[-1]
    if r is None or "error" in r:
        return None
    try:
        v = get(r, raw)
    except (KeyError, TypeError, ZeroDivisionError):
        return None
    return v if isinstance(v, (int, float)) else None


def fmt(v, unit):
    if v is None:
        return "—"
    if unit == "×":
        return f"{v:.2f}×"
    if v >= 1000:
        return f"{v:,.0f} {unit}"
    if v >= 100:
        return f"{v:.0f} {unit}"
    return f"{v:.2f} {unit}"


def _lead(engine, peer, higher):
    """How far the engine is ahead (> 1) or behind (< 1) of a peer, as a factor."""
    if engine is None or peer is None or engine <= 0 or peer <= 0:
        return None
    return engine / peer if higher else peer / engine


# Within this factor either way, two figures are called level: one timing of a few
# milliseconds moves by more than that between runs of the same code on these machines.
LEVEL = 1.05


def _verdict(lead, steady=False):
    if lead is None:
        return "—"
    if not steady and 1 / LEVEL <= lead < LEVEL:
        return f"level ({lead:.2f}×)"
    if lead >= 1.0:
        return f"ahead, {lead:.2f}×" if lead < 10 else f"ahead, {lead:.0f}×"
    return f"**behind**, {1 / lead:.2f}× {'larger' if steady else 'slower'}"


def vector_at_equal_recall(engine_row, peer_row):
    """The engine's fastest vector point that reaches a peer point's recall (within
    `RECALL_TOLERANCE`), against that point; of all the peer's points, the one where the engine
    leads least. Points below the engine's lowest recall, or above its highest, are not
    compared. Returns (engine point, peer point, lead) or None."""
    mine = engine_row.get("vector_curve") or []
    theirs = peer_row.get("vector_curve") or []
    if not mine:
        return None
    lowest = min(c["recall"] for c in mine)
    worst = None
    for p in theirs:
        # A point below the engine's lowest recall has no engine point to match: the engine
        # would be compared at a higher recall than the peer's, which says nothing.
        if p["recall"] < lowest - RECALL_TOLERANCE or p["p50_ms"] <= 0:
            continue
        reach = [c for c in mine if c["recall"] >= p["recall"] - RECALL_TOLERANCE]
        if not reach:
            continue
        e = min(reach, key=lambda c: c["p50_ms"])
        lead = p["p50_ms"] / e["p50_ms"]
        if worst is None or lead < worst[2]:
            worst = (e, p, lead)
    return worst


def glance(rows, n, raw):
    """The markdown lines of the at-a-glance table for size `n` (`rows`: (key, n) -> row)."""
    peers = [(k, r) for (k, m), r in sorted(rows.items()) if m == n and k not in ENGINE]
    engines = [rows.get((k, n)) for k in ENGINE]
    lines = [
        "| operation | memorybench (Rust) | memorybench (Python) | closest peer | Rust against it | Python against it |",
        "|---|---|---|---|---|---|",
    ]
    for op in OPERATIONS:
        label, unit, higher, steady, _ = op
        mine = [_value(op, e, raw) for e in engines]
        best = None
        for key, r in peers:
            v = _value(op, r, raw)
            if v is None:
                continue
            if best is None or (v > best[1] if higher else v < best[1]):
                best = (r["store"], v)
        if best is None:
            peer_cell, leads = "no peer has it", [None, None]
        else:
            peer_cell = f"{best[0]}: {fmt(best[1], unit)}"
            leads = [_lead(m, best[1], higher) for m in mine]
        lines.append(f"| {label} | {fmt(mine[0], unit)} | {fmt(mine[1], unit)} | {peer_cell} | "
                     f"{_verdict(leads[0], steady)} | {_verdict(leads[1], steady)} |")
    lines.append(_vector_line(engines, peers))
    return lines


def _vector_line(engines, peers):
    """The vector row: the peer where the Rust driver leads least, and both drivers against
    that peer's points."""
    rust = engines[0]
    closest = None
    for _, r in peers:
        if rust is None or "error" in rust or "error" in r:
            continue
        got = vector_at_equal_recall(rust, r)
        if got and (closest is None or got[2] < closest[1][2]):
            closest = (r, got)
    if closest is None:
        return "| vector top-10 p50, at the peer's recall | — | — | no peer has it | — | — |"
    peer, (_, point, _) = closest
    cells = []
    for e in engines:
        got = None if e is None or "error" in e else vector_at_equal_recall(e, peer)
        if got is None:
            cells.append(("—", "—"))
        else:
            mine, _, lead = got
            cells.append((f"{mine['p50_ms']:.2f} ms at recall {mine['recall']:.3f}", _verdict(lead)))
    peer_cell = (f"{peer['store']}: {point['p50_ms']:.2f} ms at recall {point['recall']:.3f} "
                 f"({point['setting']})")
    return (f"| vector top-10 p50, at the peer's recall (±{RECALL_TOLERANCE}) | {cells[0][0]} | "
            f"{cells[1][0]} | {peer_cell} | {cells[0][1]} | {cells[1][1]} |")
