"""``mpsched plot`` and ``mpsched report``: figures and reports of results directories (and the
summary tables ``mpsched compare`` prints)."""

# No `from __future__ import annotations`: typer reads these annotations at run time.
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console

from .._display import print_table, print_written
from ..dataset import Dataset, ResultsError, load_results
from ..stats import seed_identical_variants, summarize
from .errors import EXIT_FAILURE, fail, require_extra


def _load_results_or_fail(results: Path) -> Dataset:
    try:
        return load_results(results)
    except ResultsError as e:
        fail(str(e))


def print_dataset_summary(console: Console, ds: Dataset) -> None:
    """The summary table of ``ds`` (one per scenario), the engines side by side when there
    are two, and the notice of variants whose seeds all gave identical results."""
    for label, part in ds.parts():
        _print_scenario_summary(console, part, label)


def _print_scenario_summary(console: Console, ds: Dataset, label: str) -> None:
    """One scenario's tables; ``label``: its label in a dataset of several, else empty."""
    from ..report import engine_table, summary_table, text_columns

    prefix = f"{ds.scenario}: "
    headers, rows = summary_table(summarize(ds.flows, ds.variants, ds.fairness))
    if ds.kind == "run":
        title = f"{prefix}run {ds.path.name}, seed {ds.seeds[0]}"
    else:
        title = f"{prefix}{len(ds.variants)} variant(s) × {len(ds.seeds)} seed(s), means over seeds (± 95 % CI)"
    print_table(console, title, headers, rows, text_columns=text_columns(headers))
    engines = engine_table(ds)
    if engines is not None:
        headers, rows = engines
        title = f"{prefix}goodput (Mbit/s) on each engine, means over seeds; Δ = kernel − sim"
        print_table(console, title, headers, rows, text_columns=text_columns(headers))
    same = seed_identical_variants(ds.flows, ds.variants) if ds.kind != "run" else []
    if same:
        which = "every variant" if len(same) == len(ds.variants) else ", ".join(same)
        console.print(
            f"Every seed gave identical results for {which}{f' of {label}' if label else ''}: "
            "nothing random differs between seeds "
            '(a real trace replays from the same point: set `trace_offset_s = "random"`).',
            highlight=False,
        )


def plot_command(
    results: Annotated[
        Path,
        typer.Argument(
            metavar="RESULTS",
            help="Output directory of `mpsched run` or `mpsched compare`.",
            show_default=False,
        ),
    ],
    formats: Annotated[
        str,
        typer.Option(
            "--format",
            "-f",
            metavar="FORMATS",
            help="Comma-separated image formats: `png`, `svg`, `pdf`.",
        ),
    ] = "png",
    variants: Annotated[
        Optional[str],
        typer.Option(
            "--variants",
            metavar="NAMES",
            help="Comma-separated variants to draw, in that order (the labels of the summary "
            "table, e.g. `minrtt,blest`). Default: all.",
            show_default=False,
        ),
    ] = None,
    smooth: Annotated[
        float,
        typer.Option(
            "--smooth",
            metavar="SECONDS",
            min=0.0,
            help="Moving average over this many seconds for the time series (0: none).",
        ),
    ] = 0.0,
    out: Annotated[
        Optional[Path],
        typer.Option(
            "--out",
            "-o",
            metavar="DIR",
            help="Directory for the figures. Default: `RESULTS/plots`.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Draw the figures of a results directory.

    Goodput over time per flow and per subflow, congestion window and RTT per subflow,
    out-of-order bytes over time (head-of-line blocking), the CDF of flow completion times
    (sized flows), and for `compare` results mean goodput and Jain's fairness index per
    variant with 95 % confidence intervals across seeds, download-time bars, and for sweeps
    the metrics against the swept parameter with 95 % confidence bands. Time series shade the
    outages and changed-link (handoff) periods of the scenario. More variants than a figure
    holds are split into pages (`NAME-2.png`, ...). Same results, byte-identical files.
    """
    require_extra(["matplotlib"], "mpsched plot")
    from .. import plot
    from ..figures import select_variants

    try:
        fmt_list = plot.parse_formats(formats)
    except ValueError as e:
        fail(str(e))
    ds = _load_results_or_fail(results)
    if variants is not None:
        try:
            ds = select_variants(ds, [v.strip() for v in variants.split(",") if v.strip()])
        except ValueError as e:
            fail(str(e))
    out_dir = out if out is not None else results / "plots"
    if out_dir.exists() and not out_dir.is_dir():
        fail(f"{out_dir}: exists and is not a directory")
    try:
        written = plot.render(ds, out_dir, fmt_list, options=plot.PlotOptions(smooth_s=smooth))
    except OSError as e:
        fail(f"cannot write {out_dir}: {e.strerror or e}", code=EXIT_FAILURE)
    print_written(Console(), out_dir, [p.relative_to(out_dir).as_posix() for p in written])


def report_command(
    results: Annotated[
        Path,
        typer.Argument(
            metavar="RESULTS",
            help="Output directory of `mpsched run` or `mpsched compare`.",
            show_default=False,
        ),
    ],
    as_html: Annotated[
        bool,
        typer.Option(
            "--html", help="Write one self-contained `report.html` instead of `report.md`."
        ),
    ] = False,
) -> None:
    """Write a one-page report: a per-variant summary table and the figures.

    The table gives, per scheduler (and cc), means over seeds of goodput (± 95 % CI), Jain's
    fairness index (± 95 % CI), flow completion time, retransmits, RTOs, reinjected bytes and head-of-line figures. The
    figures are drawn as PNG into `RESULTS/plots/`; the report goes to `RESULTS/report.md`
    (or `report.html`).
    """
    require_extra(["matplotlib"], "mpsched report")
    from ..report import write_report

    ds = _load_results_or_fail(results)
    try:
        path = write_report(ds, as_html=as_html)
    except OSError as e:
        fail(f"cannot write {results}: {e.strerror or e}", code=EXIT_FAILURE)
    console = Console()
    print_dataset_summary(console, ds)
    console.print(f"Wrote [bold]{path}[/bold]", highlight=False)
