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
from .stats import SummaryRow, seed_identical_variants, summarize

__all__ = [
    "summary_table",
    "text_columns",
    "markdown_report",
    "html_report",
    "write_report",
    "engine_table",
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


SEEDS_NOTE = (
    "nothing random differs between seeds (a real trace replays from the same point: set "
    '`trace_offset_s = "random"`).'
)


def _num(value: Optional[float], fmt: str, scale: float = 1.0) -> str:
    return MISSING if value is None else format(value * scale, fmt)


def _with_ci(value: Optional[float], ci: Optional[float], fmt: str) -> str:
    text = _num(value, fmt)
    return text if value is None or ci is None else f"{text} ± {format(ci, fmt)}"


_TEXT_HEADERS = ("scheduler", "cc", "parameters", "engine", "flow")


def text_columns(headers: Sequence[str]) -> int:
    """Number of leading text columns of the summary table (the rest are numbers)."""
    return sum(h in _TEXT_HEADERS for h in headers)


def summary_table(rows: Sequence[SummaryRow]) -> Tuple[List[str], List[List[str]]]:
    """Headers and formatted cells of the summary table (columns that say nothing are dropped)."""
    many_flows = len({r.flow for r in rows}) > 1
    sized = any(r.sized for r in rows)
    swept = any(r.params for r in rows)
    engines = len({r.engine for r in rows}) > 1
    headers = ["scheduler", "cc"] + (["parameters"] if swept else [])
    headers += (["engine"] if engines else []) + (["flow"] if many_flows else [])
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
        row = [r.scheduler, r.cc] + ([r.params] if swept else [])
        row += ([r.engine] if engines else []) + ([r.flow] if many_flows else [])
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


def engine_table(ds: Dataset) -> Optional[Tuple[List[str], List[List[str]]]]:
    """Headers and cells of the engines side by side: per variant and flow, the mean goodput
    on the simulator and on the kernel and their difference (kernel − sim, in Mbit/s and in
    % of the simulator's); None unless ``ds`` has both engines."""
    if not {"sim", "kernel"} <= set(ds.engines):
        return None
    rows = summarize(ds.flows, ds.variants, ds.fairness)
    by_key = {}
    for r in rows:
        base = r.variant.rsplit(" / ", 1)[0]
        by_key.setdefault((base, r.flow), {})[r.engine] = r
    many_flows = len({r.flow for r in rows}) > 1
    swept = any(r.params for r in rows)
    headers = (
        ["scheduler", "cc"] + (["parameters"] if swept else []) + (["flow"] if many_flows else [])
    )
    headers += ["sim", "kernel", "Δ", "Δ (%)"]
    cells = []
    for (_, flow), pair in by_key.items():
        sim, kernel = pair.get("sim"), pair.get("kernel")
        first = sim or kernel
        assert first is not None
        row = [first.scheduler, first.cc] + ([first.params] if swept else [])
        row += [flow] if many_flows else []
        a = sim.goodput_mbps if sim is not None else None
        b = kernel.goodput_mbps if kernel is not None else None
        delta = b - a if a is not None and b is not None else None
        pct = 100.0 * delta / a if delta is not None and a else None
        row += [_num(a, ".2f"), _num(b, ".2f"), _num(delta, "+.2f"), _num(pct, "+.1f")]
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
            f"{len(ds.seeds)} seed(s) ({seeds}) = {ds.runs} runs of "
            + (
                f"{len(ds.scenarios)} scenarios ({', '.join(f'`{s}`' for s in ds.scenarios)})."
                if ds.scenarios
                else f"scenario `{ds.scenario}`."
            )
            + (f" Engines: {', '.join(ds.engines)}." if ds.engines != ("sim",) else "")
        )
    return f"`mpsched run` results in `{ds.path}`: scenario `{ds.scenario}`, seed {seeds}."


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def _md_table(headers: Sequence[str], cells: Sequence[Sequence[str]]) -> List[str]:
    text_cols = text_columns(headers)  # then numbers, right-aligned
    lines = ["| " + " | ".join(headers) + " |"]
    lines.append(
        "|" + "|".join(" --- " if i < text_cols else " ---: " for i in range(len(headers))) + "|"
    )
    lines += ["| " + " | ".join(_md_escape(c) for c in row) + " |" for row in cells]
    return lines


def _tables(ds: Dataset) -> List[Tuple[str, List[str], List[List[str]]]]:
    """(heading, headers, cells) of the tables of each scenario of ``ds``: its summary, and
    the engines side by side when it has both; headings name the scenario when several."""
    out = []
    for label, part in ds.parts():
        headers, cells = summary_table(summarize(part.flows, part.variants, part.fairness))
        out.append((f"Scenario `{label}`" if label else "", headers, cells))
        engines = engine_table(part)
        if engines is not None:
            where = f" (`{label}`)" if label else ""
            out.append((f"Simulator and kernel{where}: goodput (Mbit/s)", *engines))
    return out


def _seed_notes(ds: Dataset) -> List[str]:
    """The variants, per scenario, whose seeds all gave identical results."""
    notes = []
    for label, part in ds.parts():
        same = seed_identical_variants(part.flows, part.variants) if ds.kind != "run" else []
        if same:
            which = "every variant" if len(same) == len(part.variants) else ", ".join(same)
            where = f" of `{label}`" if label else ""
            notes.append(f"Every seed gave identical results for {which}{where}: {SEEDS_NOTE}")
    return notes


def markdown_report(ds: Dataset, figures: Sequence[Tuple[str, str]]) -> str:
    """The report as Markdown; ``figures`` are (caption, path relative to the report)."""
    lines = [f"# {_title(ds)}", "", _description(ds), "", "## Summary", ""]
    for heading, headers, cells in _tables(ds):
        lines += ([f"### {heading}", ""] if heading else []) + _md_table(headers, cells) + [""]
    for note in _seed_notes(ds):
        lines += [note, ""]
    lines += [NOTES, "", "## Figures", ""]
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


def _html_table(headers: Sequence[str], cells: Sequence[Sequence[str]]) -> List[str]:
    text_cols = text_columns(headers)

    def cell(tag: str, i: int, value: str) -> str:
        cls = "" if i < text_cols else ' class="num"'
        return f"<{tag}{cls}>{html.escape(value)}</{tag}>"

    out = ["<table>", "<tr>" + "".join(cell("th", i, h) for i, h in enumerate(headers)) + "</tr>"]
    out += [
        "<tr>" + "".join(cell("td", i, v) for i, v in enumerate(row)) + "</tr>" for row in cells
    ]
    return out + ["</table>"]


def html_report(ds: Dataset, figures: Sequence[Tuple[str, bytes]]) -> str:
    """The report as one self-contained HTML page; ``figures`` are (caption, PNG bytes)."""
    e = html.escape
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
    ]
    for heading, headers, cells in _tables(ds):
        out += [f"<h3>{_inline_code(heading)}</h3>"] if heading else []
        out += _html_table(headers, cells)
    out += [f'<p class="notes">{_inline_code(note)}</p>' for note in _seed_notes(ds)]
    out += [f'<p class="notes">{e(NOTES)}</p>', "<h2>Figures</h2>"]
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
    from .plot import render_figures  # matplotlib: only when drawing

    pages = []
    for label, part in ds.parts():  # several scenarios: plots/<label>/, captions name it
        plots = ds.path / PLOTS_DIR / label if label else ds.path / PLOTS_DIR
        pages += [
            (
                (f"{label}: " if label else "")
                + (spec.caption if len(paths) == 1 else f"{spec.caption} ({i} of {len(paths)})"),
                path,
            )
            for spec, paths in render_figures(part, plots, ["png"])
            for i, path in enumerate(paths, start=1)
        ]
    if as_html:
        text = html_report(ds, [(caption, png.read_bytes()) for caption, png in pages])
        path = ds.path / "report.html"
    else:
        rel = [(caption, png.relative_to(ds.path).as_posix()) for caption, png in pages]
        text = markdown_report(ds, rel)
        path = ds.path / "report.md"
    write_file_atomic(path, text.encode("utf-8"))
    return path
