"""One-page report of a results directory: a summary table and the figures.

``report.md`` (Markdown, figures linked from ``plots/``) or ``report.html`` (a single
self-contained file, figures inlined), both written into the results directory. The figures
are drawn as PNG into ``plots/`` first (see :mod:`mpsched.plot`). Same results, same bytes.
"""

from __future__ import annotations

import base64
import html
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

from ._atomic import write_file_atomic
from .dataset import Dataset
from .matrix import format_seeds
from .stats import SummaryRow, summarize

__all__ = [
    "summary_table",
    "text_columns",
    "markdown_report",
    "html_report",
    "write_report",
    "PLOTS_DIR",
]

PLOTS_DIR = "plots"
MISSING = "—"

NOTES = (
    "Means over the runs (seeds) of each row; ± is the half-width of the 95 % confidence "
    "interval (Student's t). FCT: mean over the runs in which the flow completed. "
    "Retransmits and RTOs: per run. Reinjected: data resent on another subflow after an RTO "
    "or a path failure. OOO: time-average of out-of-order bytes in the receive buffer "
    "(head-of-line blocking). rwnd full: time the receive window was closed. "
    "Jain: Jain's fairness index of the flows' goodputs in each run, over the MPTCP flows "
    "(more than one subflow) and over all flows, then its mean over the runs; a figure of the "
    "variant, the same on each of its flow rows."
)


def _num(value: Optional[float], fmt: str, scale: float = 1.0) -> str:
    return MISSING if value is None else format(value * scale, fmt)


def _with_ci(value: Optional[float], ci: Optional[float], fmt: str) -> str:
    text = _num(value, fmt)
    return text if value is None or ci is None else f"{text} ± {format(ci, fmt)}"


_TEXT_HEADERS = ("scheduler", "cc", "parameters", "flow")


def text_columns(headers: Sequence[str]) -> int:
    """Number of leading text columns of the summary table (the rest are numbers)."""
    return sum(h in _TEXT_HEADERS for h in headers)


def summary_table(rows: Sequence[SummaryRow]) -> Tuple[List[str], List[List[str]]]:
    """Headers and formatted cells of the summary table (columns that say nothing are dropped)."""
    many_flows = len({r.flow for r in rows}) > 1
    sized = any(r.sized for r in rows)
    swept = any(r.params for r in rows)
    headers = (
        ["scheduler", "cc"] + (["parameters"] if swept else []) + (["flow"] if many_flows else [])
    )
    headers += ["runs", "goodput (Mbit/s)"]
    # A Jain index over fewer than two flows is 1 whatever happens: such a column says nothing.
    jain_mptcp = any(r.jain_mptcp is not None and r.mptcp_flows > 1 for r in rows)
    jain_all = any(
        r.jain_all is not None and r.all_flows > 1 and r.all_flows != r.mptcp_flows for r in rows
    )
    headers += (["Jain (MPTCP)"] if jain_mptcp else []) + (["Jain (all)"] if jain_all else [])
    if sized:
        headers += ["FCT (s)", "completed"]
    headers += ["retransmits", "RTOs", "reinjected (kB)", "OOO (kB)", "rwnd full (s)"]
    cells = []
    for r in rows:
        goodput = _num(r.goodput_mbps, ".2f")
        if r.goodput_ci_mbps is not None:
            goodput += f" ± {r.goodput_ci_mbps:.2f}"
        row = [r.scheduler, r.cc] + ([r.params] if swept else []) + ([r.flow] if many_flows else [])
        row += [str(r.runs), goodput]
        if jain_mptcp:
            row.append(_with_ci(r.jain_mptcp, r.jain_mptcp_ci, ".3f"))
        if jain_all:
            row.append(_with_ci(r.jain_all, r.jain_all_ci, ".3f"))
        if sized:
            row += [_num(r.fct_s, ".3f"), f"{r.completed}/{r.runs}" if r.sized else MISSING]
        row += [
            _num(r.retransmits, ".1f"),
            _num(r.rto_count, ".1f"),
            _num(r.reinjected_bytes, ".1f", 1e-3),
            _num(r.mean_ooo_bytes, ".1f", 1e-3),
            _num(r.rwnd_full_s, ".2f"),
        ]
        cells.append(row)
    return headers, cells


def _title(ds: Dataset) -> str:
    if ds.kind == "compare":
        return f"{ds.scenario}: {', '.join(ds.variants)}"
    return f"{ds.scenario}: run {ds.path.name}"


def _description(ds: Dataset) -> str:
    seeds = format_seeds(list(ds.seeds))
    if ds.kind == "compare":
        return (
            f"`mpsched compare` results in `{ds.path}`: {len(ds.variants)} variant(s) × "
            f"{len(ds.seeds)} seed(s) ({seeds}) = {ds.runs} runs of scenario `{ds.scenario}`."
        )
    return f"`mpsched run` results in `{ds.path}`: scenario `{ds.scenario}`, seed {seeds}."


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def markdown_report(ds: Dataset, figures: Sequence[Tuple[str, str]]) -> str:
    """The report as Markdown; ``figures`` are (caption, path relative to the report)."""
    headers, cells = summary_table(summarize(ds.flows, ds.variants, ds.fairness))
    lines = [f"# {_title(ds)}", "", _description(ds), "", "## Summary", ""]
    lines.append("| " + " | ".join(headers) + " |")
    text_cols = text_columns(headers)  # then numbers, right-aligned
    lines.append(
        "|" + "|".join(" --- " if i < text_cols else " ---: " for i in range(len(headers))) + "|"
    )
    for row in cells:
        lines.append("| " + " | ".join(_md_escape(c) for c in row) + " |")
    lines += ["", NOTES, "", "## Figures", ""]
    for caption, rel in figures:
        lines += [f"### {caption}", "", f"![{caption}]({rel})", ""]
    return "\n".join(lines)


_CSS = """
body { font-family: system-ui, sans-serif; max-width: 1000px; margin: 2em auto; padding: 0 1em; color: #222; }
table { border-collapse: collapse; font-size: 0.9em; }
th, td { border-bottom: 1px solid #ddd; padding: 0.3em 0.7em; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
th { background: #f4f4f4; }
img { max-width: 100%; }
p.notes { color: #555; font-size: 0.85em; }
code { background: #f4f4f4; padding: 0 0.2em; }
""".strip()


def _inline_code(text: str) -> str:
    """Escape ``text`` and turn `backquoted` spans into <code>."""
    parts = html.escape(text).split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))


def html_report(ds: Dataset, figures: Sequence[Tuple[str, bytes]]) -> str:
    """The report as one self-contained HTML page; ``figures`` are (caption, PNG bytes)."""
    headers, cells = summary_table(summarize(ds.flows, ds.variants, ds.fairness))
    text_cols = text_columns(headers)
    e = html.escape

    def cell(tag: str, i: int, value: str) -> str:
        cls = "" if i < text_cols else ' class="num"'
        return f"<{tag}{cls}>{e(value)}</{tag}>"

    out = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f"<title>{e(_title(ds))}</title>",
        f"<style>\n{_CSS}\n</style>",
        "</head>",
        "<body>",
        f"<h1>{e(_title(ds))}</h1>",
        f"<p>{_inline_code(_description(ds))}</p>",
        "<h2>Summary</h2>",
        "<table>",
        "<tr>" + "".join(cell("th", i, h) for i, h in enumerate(headers)) + "</tr>",
    ]
    for row in cells:
        out.append("<tr>" + "".join(cell("td", i, v) for i, v in enumerate(row)) + "</tr>")
    out += ["</table>", f'<p class="notes">{e(NOTES)}</p>', "<h2>Figures</h2>"]
    for caption, png in figures:
        data = base64.b64encode(png).decode("ascii")
        out += [
            f"<h3>{e(caption)}</h3>",
            f'<img alt="{e(caption)}" src="data:image/png;base64,{data}">',
        ]
    out += ["</body>", "</html>", ""]
    return "\n".join(out)


def write_report(ds: Dataset, as_html: bool = False) -> Path:
    """Draw the figures (PNG, into ``plots/``), then write ``report.md`` or ``report.html``."""
    plots = ds.path / PLOTS_DIR
    from .plot import render_figures  # matplotlib: only when drawing

    pages = [
        (spec.caption if len(paths) == 1 else f"{spec.caption} ({i} of {len(paths)})", path)
        for spec, paths in render_figures(ds, plots, ["png"])
        for i, path in enumerate(paths, start=1)
    ]
    if as_html:
        text = html_report(ds, [(caption, png.read_bytes()) for caption, png in pages])
        path = ds.path / "report.html"
    else:
        text = markdown_report(ds, [(caption, f"{PLOTS_DIR}/{png.name}") for caption, png in pages])
        path = ds.path / "report.md"
    write_file_atomic(path, text.encode("utf-8"))
    return path
