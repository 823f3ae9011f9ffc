"""The stores benchmark as one self-contained HTML page, in the style of `mb-harness report`.

The report's markdown tables (the glance per size, every store's row, the vector settings) and
its plot, inlined as SVG, so the page opens anywhere without a network or the files beside it.
"""

import html
import re

STYLE = (
    "body{font-family:sans-serif;margin:2em;max-width:90em}table{border-collapse:collapse;"
    "margin-bottom:1.5em}svg{max-width:100%;height:auto}td,th{border:1px solid #ccc;"
    "padding:4px 8px;text-align:right}td:first-child,th:first-child{text-align:left}"
    ".behind{color:#c00;font-weight:bold}p.note{color:#444;max-width:60em}"
)


def _cell(text, tag):
    escaped = html.escape(text.strip())
    escaped = re.sub(r"\*\*(.+?)\*\*", r"\1", escaped)
    cls = ' class="behind"' if "behind" in text else ""
    return f"<{tag}{cls}>{escaped}</{tag}>"


def table_html(lines):
    """A markdown table (header, rule, rows) as an HTML table."""
    rows = [line.strip().strip("|").split("|") for line in lines if line.startswith("|")]
    if len(rows) < 2:
        return ""
    head = "".join(_cell(c, "th") for c in rows[0])
    body = "".join("<tr>" + "".join(_cell(c, "td") for c in row) + "</tr>" for row in rows[2:])
    return f"<table><tr>{head}</tr>{body}</table>"


def write_page(path, sections, svg, stamp):
    """Writes the page: `sections` is a list of (heading, note, markdown table lines)."""
    parts = [
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>memorybench-rs: stores"
        f"</title><style>{STYLE}</style></head><body>",
        "<h1>memorybench-rs beside the embedded stores</h1>",
        f"<p class=\"note\">{html.escape(stamp)}</p>",
    ]
    for heading, note, lines in sections:
        parts.append(f"<h2>{html.escape(heading)}</h2>")
        if note:
            parts.append(f"<p class=\"note\">{html.escape(note)}</p>")
        parts.append(table_html(lines))
        if heading.startswith("Vector search") and svg:
            parts.append(svg)
    parts.append("</body></html>")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(parts) + "\n")
