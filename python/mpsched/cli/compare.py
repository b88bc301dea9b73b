"""``mpsched compare``: one scenario file or several, every scheduler × cc × sweep value × seed,
on the simulator and/or the kernel engine, into one dataset."""

# No `from __future__ import annotations`: typer reads these annotations at run time.
import signal
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Dict, List, Optional, Tuple

import typer
from rich.console import Console

from .. import _core, experiment
from ..dataset import load_results
from ..matrix import Matrix, MatrixError, format_seeds
from ..sweep import (
    BackendError,
    DoneCallback,
    OutputDirError,
    StartCallback,
    SweepInterrupted,
    SweepResult,
    check_backend,
    check_output_dir,
)
from .errors import EXIT_FAILURE, EXIT_INTERRUPTED, fail, fail_missing_extra
from .run import PluginOption, load_plugins


class Backend(str, Enum):
    """Where `mpsched compare` runs the matrix."""

    local = "local"
    ray = "ray"


ScenariosArgument = Annotated[
    List[Path],
    typer.Argument(
        metavar="SCENARIO",
        help="Scenario files: TOML (or JSON if it ends in `.json`). Several files make one "
        "dataset with a `scenario` column (each file's stem, made unique).",
        show_default=False,
    ),
]
SchedulerOption = Annotated[
    Optional[str],
    typer.Option(
        "--scheduler",
        metavar="NAMES",
        help="Comma-separated schedulers (e.g. `minrtt,blest,ecf,redundant`), each applied to "
        "every multipath flow (a flow or workload with `paths`); trained policies too: `edar` "
        "(shipped checkpoint), `edar:CHECKPOINT`; Python schedulers of `--plugin` files. "
        "Default: as in the scenario.",
        show_default=False,
    ),
]
CcOption = Annotated[
    Optional[str],
    typer.Option(
        "--cc",
        metavar="NAMES",
        help="Comma-separated congestion controls (e.g. `lia,olia`), each applied to every "
        "flow and workload. Default: as in the scenario.",
        show_default=False,
    ),
]
SeedsOption = Annotated[
    Optional[str],
    typer.Option(
        "--seeds",
        metavar="SEEDS",
        help="Seeds to run: `7`, `1-10`, `1,3,5` or a mix (`1-3,7`). "
        "Default: the scenario's `[sim].seed`.",
        show_default=False,
    ),
]
JobsOption = Annotated[
    Optional[int],
    typer.Option(
        "--jobs",
        "-j",
        min=1,
        help="Runs in parallel. Default: the number of CPUs (local); Ray's CPUs (ray).",
        show_default=False,
    ),
]
OutOption = Annotated[
    Optional[Path],
    typer.Option(
        "--out",
        "-o",
        metavar="DIR",
        help="Output directory. Runs already there (same scenario, seed and overrides) "
        "are kept: an interrupted sweep resumes. Default: `out/<stem>-compare` "
        "(several files: their stems joined by `+`).",
        show_default=False,
    ),
]
BackendOption = Annotated[
    Backend,
    typer.Option(
        "--backend",
        help="`local`: a process pool on this machine; `ray`: Ray tasks "
        "(needs `ray` installed; joins the cluster at `RAY_ADDRESS` if set).",
    ),
]
EngineOption = Annotated[
    str,
    typer.Option(
        "--engine",
        metavar="ENGINES",
        help="`sim` (the simulator), `kernel` (`mpsched emulate`: the machine's Linux "
        "TCP/MPTCP, root, real time, one run at a time) or `sim,kernel`: every run on each, "
        "in one dataset with an `engine` column. See docs/emulate.md.",
    ),
]


@dataclass
class CompareRequest:
    """The options of one `mpsched compare`."""

    scenarios: List[Path]
    scheduler: Optional[str]
    cc: Optional[str]
    seeds: Optional[str]
    jobs: Optional[int]
    out: Optional[Path]
    backend: str
    engine: str


def default_compare_dir(scenarios: List[Path]) -> Path:
    """``out/<stem>-compare``; several files: ``out/<stem1>+<stem2>...-compare`` (at most three
    stems, then ``+N``)."""
    stems = [p.stem for p in scenarios]
    name = "+".join(stems[:3]) + (f"+{len(stems) - 3}" if len(stems) > 3 else "")
    return Path("out") / f"{name}-compare"


def compare_command(
    scenario: ScenariosArgument,
    scheduler: SchedulerOption = None,
    plugin: PluginOption = None,
    cc: CcOption = None,
    seeds: SeedsOption = None,
    jobs: JobsOption = None,
    out: OutOption = None,
    backend: BackendOption = Backend.local,
    engine: EngineOption = "sim",
) -> None:
    """Run scenarios for every scheduler × congestion control × sweep value × seed (× engine) and collect the results.

    Writes one directory per run under `DIR/runs/` (the files of `mpsched run`), then
    `flows.parquet`, `subflows.parquet`, `timeseries.parquet`, `links.parquet` and
    `queues.parquet` with every run's rows and the columns `run_id`, `scheduler`, `cc`,
    `params` and `seed` first (then `scenario` with several files, `engine` with `--engine`
    other than `sim`), and `compare.json` (the matrix). Fields written `{ range = [lo, hi],
    steps = N }` in the scenario are swept: one variant per value (`params`, e.g.
    `path2.delay_ms=40`). Each run appears complete or not at all; running the same command
    again skips finished runs. Prints per-variant means over seeds (goodput, Jain's fairness
    index, ...), per scenario. Sweeps: docs/scenarios.md (Parameter ranges); outputs:
    docs/scenarios.md (Outputs).
    """
    load_plugins(plugin)
    request = CompareRequest(
        scenario, scheduler, cc, seeds, jobs, out, backend.value, engine.strip() or "sim"
    )
    matrix, out_dir = _prepare(request)
    for warning in matrix.warnings:
        typer.echo(f"warning: {warning}", err=True)
    result = _execute(matrix, out_dir, request)
    _print_outcome(matrix, out_dir, result)


def _prepare(request: CompareRequest) -> Tuple[Matrix, Path]:
    """The checked matrix and output directory, or a one-line error (exit 2)."""
    try:
        check_backend(request.backend)
        matrix = experiment.prepare(
            request.scenarios,
            request.scheduler,
            request.cc,
            request.seeds,
            engines=request.engine,
            cli=True,
        )
        out_dir = request.out if request.out is not None else default_compare_dir(request.scenarios)
        check_output_dir(out_dir)
    except (MatrixError, OutputDirError, BackendError) as e:
        fail(str(e))
    return matrix, out_dir


def _progress(matrix: Matrix) -> Tuple[Any, StartCallback, DoneCallback, Dict[str, int]]:
    """A progress bar on stderr and the sweep's callbacks that move it."""
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

    return progress, on_start, on_done, counts


def _execute(matrix: Matrix, out_dir: Path, request: CompareRequest) -> SweepResult:
    """Run the sweep with a progress bar; every failure is one line (exit 1 or 2, 130)."""
    progress, on_start, on_done, counts = _progress(matrix)
    if "kernel" in matrix.engines:  # SIGTERM cleans the emulated network up as Ctrl-C does
        from .emulate import _interrupt

        signal.signal(signal.SIGTERM, _interrupt)
    try:
        progress.start()
        try:
            result = experiment.execute(
                matrix,
                out_dir,
                backend=request.backend,
                jobs=request.jobs,
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
            f"interrupted: {done} of {len(matrix.runs)} runs are done; run the same command "
            "again to resume",
            code=EXIT_INTERRUPTED,
        )
    except (OutputDirError, BackendError, MatrixError) as e:
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
    return result


def _print_outcome(matrix: Matrix, out_dir: Path, result: SweepResult) -> None:
    from .results import print_dataset_summary

    console = Console()
    print_dataset_summary(console, load_results(out_dir))
    console.print(
        f"Wrote [bold]{out_dir}/[/bold]: {len(matrix.runs)} runs ({result.ran} new, "
        f"{result.reused} reused), seeds {format_seeds(list(matrix.seeds))}",
        highlight=False,
    )
    if result.foreign_runs:
        console.print(
            f"  {len(result.foreign_runs)} run(s) in {out_dir}/runs/ are not part of this matrix "
            "and were left out",
            style="dim",
            highlight=False,
        )
