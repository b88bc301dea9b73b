"""``mpsched compare``, ``mpsched plot`` and ``mpsched report``: sweeps and their results."""

# No `from __future__ import annotations`: typer reads these annotations at run time.
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console

from .. import _core, experiment
from .._display import print_table, print_written
from ..dataset import Dataset, ResultsError, load_results
from ..matrix import MatrixError, format_seeds
from ..stats import seed_identical_variants, summarize
from ..sweep import (
    BackendError,
    OutputDirError,
    SweepInterrupted,
    check_backend,
    check_output_dir,
)
from .errors import EXIT_FAILURE, EXIT_INTERRUPTED, fail, fail_missing_extra, require_extra
from .run import PluginOption, ScenarioArgument, load_plugins


class Backend(str, Enum):
    """Where `mpsched compare` runs the matrix."""

    local = "local"
    ray = "ray"


def default_compare_dir(scenario: Path) -> Path:
    """``out/<stem>-compare``."""
    return Path("out") / f"{scenario.stem}-compare"


def _load_results_or_fail(results: Path) -> Dataset:
    try:
        return load_results(results)
    except ResultsError as e:
        fail(str(e))


def _print_dataset_summary(console: Console, ds: Dataset) -> None:
    from ..report import summary_table, text_columns

    headers, rows = summary_table(summarize(ds.flows, ds.variants, ds.fairness))
    if ds.kind == "run":
        title = f"{ds.scenario}: run {ds.path.name}, seed {ds.seeds[0]}"
    else:
        title = f"{ds.scenario}: {len(ds.variants)} variant(s) × {len(ds.seeds)} seed(s), means over seeds (± 95 % CI)"
    print_table(console, title, headers, rows, text_columns=text_columns(headers))
    same = seed_identical_variants(ds.flows, ds.variants) if ds.kind != "run" else []
    if same:
        which = "every variant" if len(same) == len(ds.variants) else ", ".join(same)
        console.print(
            f"Every seed gave identical results for {which}: nothing random differs between seeds "
            '(a real trace replays from the same point: set `trace_offset_s = "random"`).',
            highlight=False,
        )


def compare_command(
    scenario: ScenarioArgument,
    scheduler: Annotated[
        Optional[str],
        typer.Option(
            "--scheduler",
            metavar="NAMES",
            help="Comma-separated schedulers (e.g. `minrtt,blest,ecf,redundant`), each applied to "
            "every multipath flow (a flow or workload with `paths`); trained policies too: `edar` (shipped "
            "checkpoint), `edar:CHECKPOINT`; Python schedulers of `--plugin` files. "
            "Default: as in the scenario.",
            show_default=False,
        ),
    ] = None,
    plugin: PluginOption = None,
    cc: Annotated[
        Optional[str],
        typer.Option(
            "--cc",
            metavar="NAMES",
            help="Comma-separated congestion controls (e.g. `lia,olia`), each applied to every "
            "flow and workload. Default: as in the scenario.",
            show_default=False,
        ),
    ] = None,
    seeds: Annotated[
        Optional[str],
        typer.Option(
            "--seeds",
            metavar="SEEDS",
            help="Seeds to run: `7`, `1-10`, `1,3,5` or a mix (`1-3,7`). "
            "Default: the scenario's `[sim].seed`.",
            show_default=False,
        ),
    ] = None,
    jobs: Annotated[
        Optional[int],
        typer.Option(
            "--jobs",
            "-j",
            min=1,
            help="Runs in parallel. Default: the number of CPUs (local); Ray's CPUs (ray).",
            show_default=False,
        ),
    ] = None,
    out: Annotated[
        Optional[Path],
        typer.Option(
            "--out",
            "-o",
            metavar="DIR",
            help="Output directory. Runs already there (same scenario, seed and overrides) "
            "are kept: an interrupted sweep resumes. Default: `out/<stem>-compare`.",
            show_default=False,
        ),
    ] = None,
    backend: Annotated[
        Backend,
        typer.Option(
            "--backend",
            help="`local`: a process pool on this machine; `ray`: Ray tasks "
            "(needs `ray` installed; joins the cluster at `RAY_ADDRESS` if set).",
        ),
    ] = Backend.local,
) -> None:
    """Run a scenario for every scheduler × congestion control × sweep value × seed and collect the results.

    Writes one directory per run under `DIR/runs/` (the files of `mpsched run`), then
    `flows.parquet`, `subflows.parquet`, `timeseries.parquet` and `links.parquet` with every
    run's rows and the columns `run_id`, `scheduler`, `cc`, `params` and `seed` first, and
    `compare.json` (the matrix). Fields written `{ range = [lo, hi], steps = N }` in the
    scenario are swept: one variant per value (`params`, e.g. `path2.delay_ms=40`). Each run appears complete or not at all; running the same command again
    skips finished runs. Prints per-variant means over seeds (goodput, Jain's fairness index, ...). Sweeps: docs/scenarios.md (Parameter ranges); outputs: docs/scenarios.md (Outputs).
    """
    load_plugins(plugin)
    try:
        check_backend(backend.value)
        matrix = experiment.prepare(scenario, scheduler, cc, seeds, cli=True)
        out_dir = out if out is not None else default_compare_dir(scenario)
        check_output_dir(out_dir)
    except (MatrixError, OutputDirError, BackendError) as e:
        fail(str(e))
    for warning in matrix.warnings:
        typer.echo(f"warning: {warning}", err=True)

    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("elapsed"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=Console(stderr=True),
    )
    task = progress.add_task(matrix.scenario_name, total=None)
    counts = {"done": 0, "reused": 0}

    def on_start(to_run: int, reused: int) -> None:
        counts["reused"] = reused
        note = f" ({reused} already done)" if reused else ""
        progress.update(task, total=to_run, description=f"{matrix.scenario_name}{note}")

    def on_done(run_id: str) -> None:
        counts["done"] += 1
        progress.advance(task)

    total = len(matrix.runs)
    try:
        progress.start()
        try:
            result = experiment.execute(
                matrix,
                out_dir,
                backend=backend.value,
                jobs=jobs,
                on_start=on_start,
                on_done=on_done,
            )
        except BaseException:
            # The error line replaces the progress line (erased on a terminal, never printed
            # otherwise, without Progress.stop's newline): one line on stderr in all.
            progress.live.transient = True
            progress.live.stop()
            raise
        progress.stop()
    except (KeyboardInterrupt, SweepInterrupted):
        done = counts["reused"] + counts["done"]
        fail(
            f"interrupted: {done} of {total} runs are done; run the same command again to resume",
            code=EXIT_INTERRUPTED,
        )
    except (OutputDirError, BackendError) as e:
        fail(str(e))
    except _core.SchedulerError as e:
        fail(str(e), code=EXIT_FAILURE)
    except _core.ScenarioError as e:
        fail(str(e))
    except OSError as e:
        fail(f"cannot write {out_dir}: {e.strerror or e}", code=EXIT_FAILURE)
    except ImportError as e:  # a trained policy without the `rl` extra, say
        fail_missing_extra(e, "compare")
    except Exception as e:  # noqa: BLE001 - a worker died or the core failed: say so in one line
        fail(f"compare failed: {type(e).__name__}: {e}", code=EXIT_FAILURE)

    console = Console()
    _print_dataset_summary(console, load_results(out_dir))
    console.print(
        f"Wrote [bold]{out_dir}/[/bold]: {total} runs ({result.ran} new, {result.reused} reused), "
        f"seeds {format_seeds(list(matrix.seeds))}",
        highlight=False,
    )
    if result.foreign_runs:
        console.print(
            f"  {len(result.foreign_runs)} run(s) in {out_dir}/runs/ are not part of this matrix "
            "and were left out",
            style="dim",
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
    print_written(Console(), out_dir, [p.name for p in written])


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
    _print_dataset_summary(console, ds)
    console.print(f"Wrote [bold]{path}[/bold]", highlight=False)
