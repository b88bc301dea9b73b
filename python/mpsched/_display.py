"""Rich renderings of run summaries and benchmark results for the command line."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence

from rich.console import Console
from rich.table import Table

__all__ = [
    "print_summary",
    "print_written",
    "print_table",
    "bench_table",
    "print_bench",
    "si",
    "times",
    "seconds",
    "human_bytes",
]

MISSING = "—"


def si(value: Optional[float], digits: int = 3) -> str:
    """``value`` with an SI suffix and ``digits`` significant digits: 12_345_678 -> '12.3 M'."""
    if value is None or not math.isfinite(value):
        return MISSING
    for factor, suffix in ((1e12, " T"), (1e9, " G"), (1e6, " M"), (1e3, " k")):
        if abs(value) >= factor:
            return f"{value / factor:.{digits}g}{suffix}"
    return f"{value:.{digits}g}"


def times(factor: Optional[float]) -> str:
    """A speed-up factor: 1320.4 -> '1,320×', 3.14 -> '3.1×'."""
    if factor is None or not math.isfinite(factor):
        return MISSING
    return f"{factor:,.0f}×" if factor >= 10 else f"{factor:.2g}×"


def seconds(s: float) -> str:
    """A wall-clock duration: 0.0123 -> '12.3 ms', 2.5 -> '2.50 s'."""
    return f"{s * 1000:.1f} ms" if s < 1 else f"{s:.2f} s"


def human_bytes(n: Optional[float]) -> str:
    """A byte count in decimal units (networking convention): 5_000_000 -> '5.00 MB'."""
    if n is None:
        return MISSING
    for factor, unit in ((1e9, "GB"), (1e6, "MB"), (1e3, "kB")):
        if abs(n) >= factor:
            return f"{n / factor:.2f} {unit}"
    return f"{int(n)} B"


def _num(value: Any, fmt: str) -> str:
    """Format a number, or show a dash for a missing value."""
    return MISSING if value is None else format(value, fmt)


def _flows_table(flows: Sequence[Mapping[str, Any]]) -> Table:
    table = Table(title="Flows (goodput in Mbps)", title_justify="left", title_style="bold")
    table.add_column("flow", no_wrap=True)
    table.add_column("cc")
    table.add_column("goodput", justify="right")
    table.add_column("delivered", justify="right")
    table.add_column("FCT (s)", justify="right")
    table.add_column("retrans", justify="right")
    table.add_column("losses", justify="right")
    for f in flows:
        fct = f.get("fct_s")
        table.add_row(
            str(f.get("name", MISSING)),
            str(f.get("cc", MISSING)),
            _num(f.get("goodput_mbps"), ".2f"),
            human_bytes(f.get("bytes_delivered")),
            MISSING if fct is None else f"{fct:.3f}",
            _num(f.get("retransmits"), ","),
            _num(f.get("losses"), ","),
        )
    return table


def _links_table(links: Sequence[Mapping[str, Any]]) -> Table:
    # Outage drops only matter with a schedule: show the column only when there are some.
    outages = any(link.get("packets_dropped_outage") for link in links)
    table = Table(title="Links (util = utilization)", title_justify="left", title_style="bold")
    table.add_column("link", no_wrap=True)
    table.add_column("util", justify="right")
    table.add_column("pkts sent", justify="right")
    table.add_column("queue drops", justify="right")
    table.add_column("loss drops", justify="right")
    if outages:
        table.add_column("outage drops", justify="right")
    table.add_column("delivered", justify="right")
    for link in links:
        util = link.get("utilization")
        row = [
            str(link.get("name", MISSING)),
            MISSING if util is None else f"{100 * util:.1f} %",
            _num(link.get("packets_sent"), ","),
            _num(link.get("packets_dropped_queue"), ","),
            _num(link.get("packets_dropped_loss"), ","),
        ]
        if outages:
            row.append(_num(link.get("packets_dropped_outage"), ","))
        row.append(human_bytes(link.get("bytes_delivered")))
        table.add_row(*row)
    return table


def print_summary(console: Console, summary: Mapping[str, Any], wall_s: float) -> None:
    """Print a run summary: one header line, then a flow table and a link table."""
    stats: Mapping[str, Any] = summary.get("stats", {})
    sim_s = stats.get("sim_seconds", summary.get("duration_s"))
    speed = f" ({times(sim_s / wall_s)} real time)" if sim_s and wall_s > 0 else ""
    console.print(
        f"[bold]{summary.get('scenario', MISSING)}[/bold] (seed {summary.get('seed', MISSING)}, "
        f"profile {summary.get('profile', MISSING)})",
        highlight=False,
    )
    console.print(
        f"{_num(sim_s, 'g')} s simulated in {seconds(wall_s)}{speed}: "
        f"{si(stats.get('events'))} events, {si(stats.get('packets'))} packets",
        highlight=False,
    )
    console.print(_flows_table(summary.get("flows", [])))
    console.print(_links_table(summary.get("links", [])))


def print_written(console: Console, out_dir: Path, files: Iterable[str]) -> None:
    """Say where the output files went."""
    console.print(f"Wrote [bold]{out_dir}/[/bold]", highlight=False)
    console.print("  " + ", ".join(files), highlight=False)


def bench_table(rows: List[Dict[str, Any]]) -> Table:
    """A table of ``_core.bench`` results, one row per benchmark."""
    table = Table(
        title="mpsched bench (sim s: simulated seconds; speed: × real time)",
        title_justify="left",
        title_style="bold",
    )
    table.add_column("scenario", no_wrap=True)
    table.add_column("sim s", justify="right")
    table.add_column("wall s", justify="right")
    table.add_column("events/s", justify="right")
    table.add_column("pkts/s", justify="right")
    table.add_column("ns/event", justify="right")
    table.add_column("speed", justify="right")
    for r in rows:
        table.add_row(
            str(r["name"]),
            _num(r.get("sim_seconds"), ".1f"),
            _num(r.get("wall_seconds"), ".3f"),
            si(r.get("events_per_s")),
            si(r.get("packets_per_s")),
            _num(r.get("ns_per_event"), ".1f"),
            times(r.get("realtime_factor")),
        )
    return table


def print_bench(console: Console, rows: List[Dict[str, Any]]) -> None:
    """Print the benchmark table, then what each benchmark simulates."""
    console.print(bench_table(rows))
    for r in rows:
        if r.get("description"):
            console.print(f"  {r['name']}: {r['description']}", style="dim", highlight=False)


def print_table(
    console: Console,
    title: str,
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    text_columns: int,
) -> None:
    """A plain table of preformatted cells; columns after the first ``text_columns`` are right-aligned."""
    table = Table(title=title, title_justify="left", title_style="bold")
    for i, header in enumerate(headers):
        table.add_column(header, justify="left" if i < text_columns else "right", no_wrap=True)
    for row in rows:
        table.add_row(*row)
    if not console.is_terminal:  # a pipe or file: no width to respect, so wrap nothing
        wide = console.options.update(max_width=1000)
        console.width = max(console.width, console.measure(table, options=wide).maximum)
    console.print(table)
