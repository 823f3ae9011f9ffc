"""The stores benchmark's tables and plot from `target/stores/results.jsonl`.

Usage: report.py RESULTS.jsonl — prints the markdown report (also written to
`target/stores/report.md`): per size, the engine against the closest peer on every operation
(`glance.py`), then every store's row and every vector setting. Draws latency against recall per
store into `docs/img/stores.png` and writes the whole report, plot inlined, as one HTML page,
`target/stores/report.html` (`page.py`). For each (store, size) the newest run counts.
"""

import io
import json
import os
import sys

from glance import glance
from page import write_page

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
ORDER = ["memorybench-rust", "memorybench", "memvid", "lancedb", "chroma", "qdrant"]


def fmt(v, unit="", digits=2):
    if v is None:
        return "n/a"
    if isinstance(v, float):
        if v >= 100:
            return f"{v:,.0f}{unit}"
        return f"{v:.{digits}f}{unit}"
    return f"{v}{unit}"


def both(r, key):
    p50, p99 = r.get(f"{key}_p50_ms"), r.get(f"{key}_p99_ms")
    if r.get(f"{key}_error"):
        return f"failed: {r[f'{key}_error']}"
    if p50 is None:
        return "not supported"
    return f"{fmt(p50)} / {fmt(p99)}"


def reopen_cell(opened, vector, text):
    """Open time (+ the first vector answer after it; + the first text answer after that)."""
    if opened is None or vector is None:
        return "n/a"
    cell = f"{fmt(opened)} (+{fmt(vector - opened)}"
    return cell + (f"; +{fmt(text - vector)})" if text is not None else ")")


def reopen(r):
    """The median reopen round and the first one (a run before rounds shows its only one)."""
    first = reopen_cell(r.get("reopen_ms"), r.get("reopen_first_query_ms"), r.get("reopen_first_text_ms"))
    rounds = r.get("reopen_rounds")
    if not rounds:
        return first
    median = reopen_cell(r.get("reopen_median_ms"), r.get("reopen_first_query_median_ms"),
                         r.get("reopen_first_text_median_ms"))
    return f"{median}, median of {len(rounds)}; first {first}"


def delete_filter(r):
    """The median filtered delete and the first one, with the records each removed."""
    runs = r.get("delete_filter_runs")
    if not runs:
        return f"{fmt(r.get('delete_filter_ms'))} ({r.get('delete_filter_count')} rec)"
    counts = sorted(count for _, count in runs)
    return (f"{fmt(r.get('delete_filter_median_ms'))}, median of {len(runs)} "
            f"({counts[0]}–{counts[-1]} rec); first {fmt(r.get('delete_filter_ms'))}")


def best_default(r):
    """The store's default setting: the engine's default beam (ef 96), else the first."""
    c = r.get("vector_curve") or [{}]
    return next((x for x in c if x.get("setting") == "ef 96"), c[0])


def raw_mib(n, data):
    """Bytes of the first n records' text plus their f32 vectors (the disk target's basis), in
    the data set the runs read: `real` (`prepare.py`'s) or `stand-in` (`stand_in.py`'s)."""
    folder = "data-stand-in" if data == "stand-in" else "data"
    path = os.path.join(ROOT, "target", "stores", folder, "records.jsonl")
    text = 0
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f):
            if i >= n:
                break
            text += len(json.loads(line)["text"].encode("utf-8"))
    return (text + n * 384 * 4) / 1048576.0


def main():
    rows = {}
    with open(sys.argv[1], encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            rows[(r["key"], r["n"])] = r
    sizes = sorted({n for _, n in rows})
    data = {n: next((r.get("data", "real") for (_, m), r in rows.items() if m == n), "real")
            for n in sizes}
    # Each size's raw bytes read the data set once, for the glance and the full table alike.
    raws = {n: raw_mib(n, data[n]) for n in sizes}
    sections = []
    for n in sizes:
        kind = " (stand-in records: stand_in.py)" if data[n] == "stand-in" else ""
        sections.append((f"At a glance, {n:,} records{kind}",
                         "Each operation: the engine from Rust and through its Python package "
                         "against the peer with the best figure (the vector row: the peer "
                         "where the Rust driver leads least, at equal recall).",
                         glance(rows, n, raws[n])))
    lines = []
    header = ("| store | n | bulk insert rec/s: written / all indexes built | durable insert p50 / p99 ms | vector top-10 p50 / p99 ms "
              "(default) | recall@10 | full-text top-10 p50 / p99 ms | hybrid p50 / p99 ms | "
              "delete by id p50 / p99 ms | delete by filter ms | reopen ms (+ first vector answer; + then first text answer) | disk MiB | "
              "disk / raw | peak RSS MiB (data alone) |")
    lines += [header, "|" + "---|" * (header.count("|") - 1)]
    for n in sizes:
        raw = raws[n]
        for key in ORDER:
            r = rows.get((key, n))
            if r is None:
                continue
            if "error" in r:
                lines.append(f"| {key} | {n} | failed: {' '.join(r['error'])} |")
                continue
            d = best_default(r)
            lines.append(
                f"| {r['store']} | {n:,} | {fmt((n - 200) / r['bulk_write_s'])} / {fmt(r['bulk_rate'])} | "
                f"{both(r, 'insert')} | "
                f"{fmt(d.get('p50_ms'))} / {fmt(d.get('p99_ms'))} ({d.get('setting')}) | "
                f"{fmt(d.get('recall'), digits=3)} | {both(r, 'text')} | {both(r, 'hybrid')} | "
                f"{both(r, 'delete_id')} | {delete_filter(r)} | "
                f"{reopen(r)} | "
                f"{fmt(r.get('disk_mib'))} | {fmt(r.get('disk_mib') / raw)}× | {fmt(r.get('peak_rss_mib'))} ({fmt(r.get('rss_after_data_mib'))}) |")
    sections.append(("Every store", "Medians beside the first of the delete-by-filter "
                     "and reopen rounds; peak RSS beside what the data alone took.", lines))
    lines = ["| store | n | setting | p50 ms | p99 ms | recall@10 |", "|---|---|---|---|---|---|"]
    for n in sizes:
        for key in ORDER:
            r = rows.get((key, n))
            for c in (r or {}).get("vector_curve", []):
                lines.append(f"| {r['store']} | {n:,} | {c['setting']} | {fmt(c['p50_ms'])} | "
                             f"{fmt(c['p99_ms'])} | {fmt(c['recall'], digits=3)} |")
    sections.append(("Vector search settings", "Latency against recall, the plot's points.",
                     lines))
    text = "\n\n".join(f"## {h}\n\n{note}\n\n" + "\n".join(t) for h, note, t in sections)
    print(text)
    out = os.path.join(ROOT, "target", "stores")
    with open(os.path.join(out, "report.md"), "w", encoding="utf-8") as f:
        f.write(text + "\n")
    svg = plot(rows, sizes)
    stamps = sorted(r["at"] for r in rows.values() if r.get("at"))
    stamp = (f"Runs of {stamps[0]} to {stamps[-1]} on {cpu()}, "
             "by python3 benches/stores/run.py." if stamps else "")
    write_page(os.path.join(out, "report.html"), sections, svg, stamp)
    print(f"page: {os.path.join(out, 'report.html')}")


def cpu():
    """The machine's processor, as /proc/cpuinfo names it, with its core count."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            names = [l.split(":", 1)[1].strip() for l in f if l.startswith("model name")]
    except OSError:
        return "an unknown machine"
    return f"{len(names)} × {names[0]}" if names else "an unknown machine"


def plot(rows, sizes):
    """Draws latency against recall per store, one panel per size, into docs/img/stores.png;
    returns the same figure as SVG text for the HTML page."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(sizes), figsize=(6 * len(sizes), 4.5), squeeze=False)
    for ax, n in zip(axes[0], sizes):
        for key in ORDER:
            r = rows.get((key, n))
            curve = (r or {}).get("vector_curve")
            if not curve:
                continue
            curve = sorted(curve, key=lambda c: (c["recall"], c["p50_ms"]))
            # memvid's two points are two states of the store (before and after the single
            # inserts), not two settings: points, no line.
            style = "none" if key == "memvid" else "-"
            # One colour per store in every panel, whichever stores a size has.
            ax.plot([c["recall"] for c in curve], [c["p50_ms"] for c in curve], marker="o",
                    linestyle=style, label=r["store"], color=f"C{ORDER.index(key)}")
        ax.set_yscale("log")
        ax.set_xlabel("recall@10 (against exact search)")
        ax.set_ylabel("top-10 vector search p50 (ms, log)")
        ax.set_title(f"{n:,} records (DialSim + LoCoMo, MiniLM)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    path = os.path.join(ROOT, "docs", "img", "stores.png")
    fig.savefig(path, dpi=110)
    print(f"plot: {path}")
    svg = io.StringIO()
    fig.savefig(svg, format="svg")
    text = svg.getvalue()
    return text[text.find("<svg"):]


if __name__ == "__main__":
    main()
