"""The ``mpsched`` command line: run scenarios, compare schedulers over seeds, plot and report
results, run benchmarks, print the version.

Exit codes: 0 success; 2 bad input (invalid scenario, unreadable file, bad argument), reported
as one ``error: <message>`` line on stderr; 1 any other failure (e.g. the output directory
cannot be written). A failed run never leaves an output directory behind.
"""

# No `from __future__ import annotations`: typer reads these annotations at run time.
import json
import sys
import time
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, List, NoReturn, Optional

import pyarrow as pa
import typer
from rich.console import Console
from typer.core import TyperGroup

from . import __version__, _core
from ._display import print_bench, print_summary, print_table, print_written
from .api import MAX_SEED
from .api import run as run_scenario
from .dataset import Dataset, ResultsError, load_results
from .matrix import MatrixError, build_matrix, format_seeds, parse_names, parse_seeds
from .results import OUTPUT_FILES, write_results
from .stats import summarize
from .sweep import (
    BackendError,
    OutputDirError,
    SweepInterrupted,
    check_backend,
    check_output_dir,
    run_sweep,
)

EXIT_FAILURE = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130

# click's ClickException, found through a class typer exports: typer >= 0.22 vendors click,
# older versions import it, so neither `click` nor `typer._click` is a stable import path.
_ClickException = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


def _one_line(message: str) -> str:
    """Collapse a (possibly multi-line) message onto one line."""
    return " ".join(line.strip() for line in str(message).splitlines() if line.strip())


def fail(message: str, code: int = EXIT_BAD_INPUT) -> NoReturn:
    """Print ``error: <message>`` as one line on stderr and exit with ``code``."""
    sys.stderr.write(f"error: {_one_line(message)}\n")
    sys.stderr.flush()
    raise typer.Exit(code)


class _Group(TyperGroup):
    """Typer's command group, reporting usage errors as one ``error:`` line (exit code 2).

    Typer draws usage errors as a multi-line panel; scripts and the tests want one line.
    """

    def main(self, *args: Any, standalone_mode: bool = True, **kwargs: Any) -> Any:
        if not standalone_mode:
            return super().main(*args, standalone_mode=False, **kwargs)
        try:
            rv = super().main(*args, standalone_mode=False, **kwargs)
        except _ClickException as e:
            if type(e).__name__ == "NoArgsIsHelpError":  # `mpsched` alone: help, then exit 2
                if e.format_message().strip():
                    e.show()
                sys.exit(e.exit_code)
            message = e.format_message()
            ctx = getattr(e, "ctx", None)
            if ctx is not None:
                message += f" (see '{ctx.command_path} --help')"
            sys.stderr.write(f"error: {_one_line(message)}\n")
            sys.exit(e.exit_code)
        except typer.Abort:
            sys.stderr.write("error: aborted\n")
            sys.exit(EXIT_FAILURE)
        # Without standalone mode click returns the exit code of typer.Exit, else the
        # command's return value (None for ours).
        sys.exit(rv if isinstance(rv, int) else 0)


app = typer.Typer(
    name="mpsched",
    cls=_Group,
    help="mpsched: a deterministic packet-level multipath network simulator.",
    epilog="Scenario format: docs/scenarios.md. Exit codes: 0 ok, 1 failure, 2 bad input.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="markdown",
    pretty_exceptions_show_locals=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def default_out_dir(scenario: Path, seed: Optional[int]) -> Path:
    """``out/<stem>``, or ``out/<stem>-seed<N>`` when the seed is overridden."""
    stem = scenario.stem if seed is None else f"{scenario.stem}-seed{seed}"
    return Path("out") / stem


@app.command("run")
def run_command(
    scenario: Annotated[
        Path,
        typer.Argument(
            metavar="SCENARIO",
            help="Scenario file: TOML (or JSON if it ends in `.json`, any case). See docs/scenarios.md.",
            show_default=False,
        ),
    ],
    seed: Annotated[
        Optional[int],
        typer.Option(
            "--seed",
            "-s",
            min=0,
            max=MAX_SEED,
            help="Random seed; overrides `[sim].seed`.",
            show_default=False,
        ),
    ] = None,
    out: Annotated[
        Optional[Path],
        typer.Option(
            "--out",
            "-o",
            metavar="DIR",
            help="Output directory; an earlier run's output there is replaced. "
            "Default: `out/<stem>`, or `out/<stem>-seed<N>` with `--seed`.",
            show_default=False,
        ),
    ] = None,
    scheduler: Annotated[
        Optional[str],
        typer.Option(
            "--scheduler",
            metavar="NAME",
            help="Scheduler for every multipath flow, e.g. `blest`, or a trained policy: "
            "`edar` (shipped checkpoint) or `edar:CHECKPOINT` (.json of `mpsched train edar`).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Simulate a scenario and write its results.

    Writes summary.json, flows.parquet, subflows.parquet, timeseries.parquet, links.parquet and scenario.toml
    (the scenario with every default filled in) to the output directory, all at once: a
    failed run leaves no directory behind. Prints per-flow and per-link summaries.
    """
    # pyarrow imports pandas the first time it builds an array (~0.4 s): do it before timing.
    pa.array([0])
    started = time.perf_counter()
    try:
        results = run_scenario(_with_scheduler(scenario, scheduler), seed=seed)
    except _core.ScenarioError as e:
        message = str(e)
        fail(f"{scenario}{message[len('<dict>') :]}" if message.startswith("<dict>") else message)
    except OSError as e:
        fail(f"{e.filename or scenario}: {e.strerror or e}")
    except UnicodeDecodeError:
        fail(f"{scenario}: not a UTF-8 text file")
    wall_s = time.perf_counter() - started

    out_dir = out if out is not None else default_out_dir(scenario, seed)
    try:
        write_results(results, out_dir)
    except (FileExistsError, NotADirectoryError) as e:  # a bad --out
        fail(f"{out_dir}: {e.strerror or e}")
    except OSError as e:
        fail(f"cannot write {out_dir}: {e.strerror or e}", code=EXIT_FAILURE)

    console = Console()
    print_summary(console, results.summary, wall_s)
    print_written(console, out_dir, OUTPUT_FILES)
    if scheduler is not None and scheduler.startswith("edar"):
        from .policy_run import last_stats

        console.print(
            f"{last_stats.get('variant')}: {last_stats.get('decisions', 0)} decisions "
            f"({last_stats.get('redundant', 0)} redundant), "
            f"{last_stats.get('mean_ns', 0.0) / 1000:.1f} µs per decision in Rust"
        )


def _with_scheduler(scenario: Path, scheduler: Optional[str]) -> Any:
    """The scenario path, or (with `--scheduler`) the scenario with that scheduler on every
    multipath flow, as a dict."""
    if scheduler is None:
        return scenario
    from .matrix import apply_overrides, load_scenario, resolve_trace_paths

    if not scheduler.strip():
        fail("--scheduler: expected a scheduler name")
    try:
        sc = load_scenario(scenario)
    except _core.ScenarioError as e:
        fail(str(e))
    if not any(isinstance(f, dict) and "paths" in f for f in sc.get("flows", []) or []):
        fail(
            f"--scheduler: {scenario} has no multipath flow (a flow with 'paths') for a scheduler to apply to"
        )
    return resolve_trace_paths(apply_overrides(sc, scheduler, None), scenario.parent)


@app.command("bench")
def bench_command(
    names: Annotated[
        Optional[List[str]],
        typer.Argument(
            metavar="NAME",
            help="Benchmarks to run. Default: all (see `--list`).",
            show_default=False,
        ),
    ] = None,
    repeats: Annotated[
        int, typer.Option("--repeats", "-n", min=1, help="Times to run each benchmark.")
    ] = 1,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print a JSON list instead of a table.")
    ] = False,
    list_only: Annotated[
        bool, typer.Option("--list", help="List the benchmark names and exit.")
    ] = False,
    env: Annotated[
        bool,
        typer.Option(
            "--env",
            help="Instead, measure learning-environment steps per second (EdAR scenario: "
            "single env, raw core env, vector env on 1 and 2 threads).",
        ),
    ] = False,
    decisions: Annotated[
        bool,
        typer.Option(
            "--decisions",
            help="Instead, measure the cost of pausing at per-packet decision points "
            "(EdAR scenario, paused vs built-in scheduler in the same process).",
        ),
    ] = False,
) -> None:
    """Measure simulator speed on built-in benchmark scenarios.

    Reports simulated and wall-clock seconds, events and packets per second, nanoseconds per
    event and how many times faster than real time the simulation ran.
    """
    if env:
        from .bench_env import bench_env

        with Console(stderr=True).status("bench env"):
            rows = bench_env(steps=20000 * repeats)
        if as_json:
            typer.echo(json.dumps(rows, indent=2, sort_keys=True))
        else:
            base = rows[0]["steps_per_s"]
            for r in rows:
                typer.echo(
                    f"{r['name']:<32} {r['steps_per_s']:>10,.0f} steps/s  ({r['steps_per_s'] / base:.2f}x the single env)"
                )
        return
    if decisions:
        with Console(stderr=True).status("bench decisions"):
            result = dict(_core.bench_decisions(repeats))
        if as_json:
            typer.echo(json.dumps(result, indent=2, sort_keys=True))
        else:
            typer.echo(
                f"{result['decisions']} decision points: built-in {result['wall_builtin_s']:.4f} s, "
                f"paused {result['wall_paused_s']:.4f} s, "
                f"overhead {result['ns_per_decision']:.0f} ns per decision"
            )
        return
    available = list(_core.bench_names())
    if list_only:
        typer.echo("\n".join(available))
        return
    selected = list(names) if names else available
    unknown = [n for n in selected if n not in available]
    if unknown:
        fail(
            f"unknown benchmark {', '.join(map(repr, unknown))} (available: {', '.join(available)})"
        )

    status = Console(stderr=True)
    rows = []
    for name in selected:
        with status.status(f"bench {name}"):
            rows.append(dict(_core.bench(name, repeats)))
    if as_json:
        typer.echo(json.dumps(rows, indent=2, sort_keys=True))
    else:
        print_bench(Console(), rows)


@app.command("collect")
def collect_command(
    scenario: Annotated[
        Path, typer.Argument(help="Scenario file (TOML, or JSON).", show_default=False)
    ],
    policy: Annotated[
        str,
        typer.Option(
            "--policy",
            "-p",
            help="Behaviour policy: always-normal, always-redundant, minrtt or random.",
        ),
    ] = "always-normal",
    episodes: Annotated[int, typer.Option("--episodes", "-e", min=1, help="Episodes to run.")] = 10,
    seed: Annotated[int, typer.Option("--seed", min=0, help="Episode e uses seed + e.")] = 0,
    action: Annotated[
        str, typer.Option("--action", help="Action space: mode, weights or select.")
    ] = "mode",
    reward: Annotated[
        str,
        typer.Option("--reward", help="Reward stored with each transition (terms are stored too)."),
    ] = "edar",
    interval: Annotated[
        str,
        typer.Option(
            "--interval", help="Decision interval: `min-rtt` (EdAR's TI) or a period in ms."
        ),
    ] = "min-rtt",
    history: Annotated[
        int, typer.Option("--history", min=1, max=64, help="Intervals of history per observation.")
    ] = 6,
    max_paths: Annotated[
        int, typer.Option("--max-paths", min=1, max=8, help="Path slots in observations.")
    ] = 4,
    duration: Annotated[
        Optional[float],
        typer.Option(
            "--duration", min=0.001, help="Episode length in s (default: the scenario's)."
        ),
    ] = None,
    out: Annotated[
        Optional[Path],
        typer.Option("--out", "-o", help="Output file. Default: out/<scenario>-<policy>.parquet."),
    ] = None,
) -> None:
    """Collect transitions of a fixed policy for offline learning (one Parquet file).

    Each row: episode, step, obs, action, reward, next_obs, terminated, truncated, time, action
    mask and every reward term; read it back with `mpsched.collect.load_transitions`.
    """
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    from ._core import ScenarioError
    from .collect import CollectError, collect, write_transitions
    from .envs import EnvConfigError

    if interval != "min-rtt":
        try:
            interval_v: Any = float(interval)
        except ValueError:
            fail(f"--interval: expected `min-rtt` or a period in ms, got {interval!r}")
    else:
        interval_v = interval
    dest = out or Path("out") / f"{scenario.stem}-{policy}.parquet"
    try:
        with Progress(
            TextColumn("collect"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=True,
        ) as bar:
            task = bar.add_task("collect", total=episodes)
            table = collect(
                scenario,
                policy,
                episodes,
                seed=seed,
                action=action,
                reward=reward,
                interval=interval_v,
                history=history,
                max_paths=max_paths,
                duration_s=duration,
                progress=lambda done: bar.update(task, completed=done),
            )
    except (CollectError, EnvConfigError, ScenarioError) as e:
        fail(str(e))
    dest.parent.mkdir(parents=True, exist_ok=True)
    write_transitions(table, dest)
    typer.echo(f"Wrote {dest}: {table.num_rows} transitions from {episodes} episode(s) of {policy}")


@app.command("version")
def version_command() -> None:
    """Print the package and simulator-core versions."""
    typer.echo(f"mpsched {__version__} (core {_core.version()})")


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
    from .report import summary_table, text_columns  # matplotlib: only plot and report

    headers, rows = summary_table(summarize(ds.flows, ds.variants))
    if ds.kind == "run":
        title = f"{ds.scenario}: run {ds.path.name}, seed {ds.seeds[0]}"
    else:
        title = f"{ds.scenario}: {len(ds.variants)} variant(s) × {len(ds.seeds)} seed(s), means over seeds (± 95 % CI)"
    print_table(console, title, headers, rows, text_columns=text_columns(headers))


@app.command("compare")
def compare_command(
    scenario: Annotated[
        Path,
        typer.Argument(
            metavar="SCENARIO",
            help="Scenario file: TOML (or JSON if it ends in `.json`, any case). See docs/scenarios.md.",
            show_default=False,
        ),
    ],
    scheduler: Annotated[
        Optional[str],
        typer.Option(
            "--scheduler",
            metavar="NAMES",
            help="Comma-separated schedulers (e.g. `minrtt,blest,ecf,redundant`), each applied to "
            "every multipath flow (a flow with `paths`); trained policies too: `edar` (shipped "
            "checkpoint), `edar:CHECKPOINT`. Default: as in the scenario.",
            show_default=False,
        ),
    ] = None,
    cc: Annotated[
        Optional[str],
        typer.Option(
            "--cc",
            metavar="NAMES",
            help="Comma-separated congestion controls (e.g. `lia,olia`), each applied to every "
            "flow. Default: as in the scenario.",
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
    skips finished runs. Prints per-variant means over seeds. See docs/experiments.md.
    """
    try:
        check_backend(backend.value)
        seed_list = parse_seeds(seeds) if seeds is not None else None
        schedulers = parse_names(scheduler, "--scheduler") if scheduler is not None else None
        ccs = parse_names(cc, "--cc") if cc is not None else None
        matrix = build_matrix(scenario, seed_list, schedulers, ccs)
        out_dir = out if out is not None else default_compare_dir(scenario)
        check_output_dir(out_dir)
    except (MatrixError, OutputDirError, BackendError) as e:
        fail(str(e))

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
        with progress:
            result = run_sweep(
                matrix,
                out_dir,
                backend=backend.value,
                jobs=jobs,
                on_start=on_start,
                on_done=on_done,
            )
    except (KeyboardInterrupt, SweepInterrupted):
        done = counts["reused"] + counts["done"]
        fail(
            f"interrupted: {done} of {total} runs are done; run the same command again to resume",
            code=EXIT_INTERRUPTED,
        )
    except (OutputDirError, BackendError) as e:
        fail(str(e))
    except _core.ScenarioError as e:
        fail(str(e))
    except OSError as e:
        fail(f"cannot write {out_dir}: {e.strerror or e}", code=EXIT_FAILURE)
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


@app.command("plot")
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
            "--format", "-f", metavar="FORMATS", help="Comma-separated image formats: `png`, `svg`."
        ),
    ] = "png",
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
    (sized flows), and for `compare` results mean goodput per variant with 95 % confidence
    intervals across seeds. Same results, byte-identical files.
    """
    from . import plot  # matplotlib: only for the commands that draw

    try:
        fmt_list = plot.parse_formats(formats)
    except ValueError as e:
        fail(str(e))
    ds = _load_results_or_fail(results)
    out_dir = out if out is not None else results / "plots"
    if out_dir.exists() and not out_dir.is_dir():
        fail(f"{out_dir}: exists and is not a directory")
    try:
        written = plot.render(ds, out_dir, fmt_list)
    except OSError as e:
        fail(f"cannot write {out_dir}: {e.strerror or e}", code=EXIT_FAILURE)
    print_written(Console(), out_dir, [p.name for p in written])


@app.command("report")
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

    The table gives, per scheduler (and cc), means over seeds of goodput (± 95 % CI), flow
    completion time, retransmits, RTOs, reinjected bytes and head-of-line figures. The
    figures are drawn as PNG into `RESULTS/plots/`; the report goes to `RESULTS/report.md`
    (or `report.html`).
    """
    from .report import write_report

    ds = _load_results_or_fail(results)
    try:
        path = write_report(ds, as_html=as_html)
    except OSError as e:
        fail(f"cannot write {results}: {e.strerror or e}", code=EXIT_FAILURE)
    console = Console()
    _print_dataset_summary(console, ds)
    console.print(f"Wrote [bold]{path}[/bold]", highlight=False)


trace_app = typer.Typer(
    name="trace",
    cls=_Group,
    help="Synthetic cellular traces (mahimahi format).",
    no_args_is_help=True,
    add_completion=False,
)
app.add_typer(trace_app, name="trace")

# Options of `mpsched trace synth`, by the core's parameter name.
_SYNTH_OPTIONS = {
    "mean_mbps": "--mean-mbps",
    "duration_s": "--duration-s",
    "variability": "--variability",
    "dwell_s": "--dwell-s",
    "outage_per_min": "--outage-per-min",
    "outage_s": "--outage-s",
}


@trace_app.command("synth")
def trace_synth_command(
    mean_mbps: Annotated[
        float, typer.Option("--mean-mbps", help="Long-run mean rate, Mbit/s.", show_default=False)
    ],
    out: Annotated[
        Path,
        typer.Option(
            "--out", "-o", metavar="FILE", help="Trace file to write.", show_default=False
        ),
    ],
    duration_s: Annotated[
        float, typer.Option("--duration-s", help="Length of the trace (it loops), s.")
    ] = 60.0,
    seed: Annotated[
        int, typer.Option("--seed", "-s", min=0, max=MAX_SEED, help="Random seed.")
    ] = 1,
    variability: Annotated[
        float,
        typer.Option(
            "--variability", help="Spread of the rate states (σ of their log), 0 = constant."
        ),
    ] = 0.5,
    dwell_s: Annotated[
        float, typer.Option("--dwell-s", help="Mean time in one rate state, s.")
    ] = 2.0,
    outage_per_min: Annotated[
        float, typer.Option("--outage-per-min", help="Outages per minute of coverage.")
    ] = 0.0,
    outage_s: Annotated[float, typer.Option("--outage-s", help="Mean outage length, s.")] = 1.0,
) -> None:
    """Write a synthetic cellular trace: a Markov-modulated rate with outages, from a seed.

    One millisecond timestamp per line, one line per 1500-byte delivery opportunity (mahimahi
    format): use it as a link's `trace`. Same options and seed, same file. See
    docs/scenarios.md (Synthetic traces).
    """
    try:
        text = _core.synth_trace(
            mean_mbps, duration_s, seed, variability, dwell_s, outage_per_min, outage_s
        )
    except _core.ScenarioError as e:
        field, _, what = str(e).partition(": ")
        fail(f"{_SYNTH_OPTIONS.get(field, field)}: {what}")
    from ._atomic import write_file_atomic

    try:
        write_file_atomic(out, text.encode("ascii"))
    except OSError as e:
        fail(f"cannot write {out}: {e.strerror or e}", code=EXIT_FAILURE)
    lines = text.count("\n")
    typer.echo(f"Wrote {out}: {lines} delivery opportunities over {duration_s:g} s")


# `mpsched train ...` (python/mpsched/train.py).
from .train import train_app  # noqa: E402

app.add_typer(train_app, name="train")

# `mpsched reproduce <paper> ...` (python/mpsched/reproduce/).
from .reproduce import app as reproduce_app  # noqa: E402

app.add_typer(reproduce_app, name="reproduce")
