"""The ``mpsched`` command line: run scenarios, run benchmarks, print the version.

Exit codes: 0 success; 2 bad input (invalid scenario, unreadable file, bad argument), reported
as one ``error: <message>`` line on stderr; 1 any other failure (e.g. the output directory
cannot be written). A failed run never leaves an output directory behind.
"""

# No `from __future__ import annotations`: typer reads these annotations at run time.
import json
import sys
import time
from pathlib import Path
from typing import Annotated, Any, List, NoReturn, Optional

import pyarrow as pa
import typer
from rich.console import Console
from typer.core import TyperGroup

from . import __version__, _core
from ._display import print_bench, print_summary, print_written
from .api import MAX_SEED
from .api import run as run_scenario
from .results import OUTPUT_FILES, write_results

EXIT_FAILURE = 1
EXIT_BAD_INPUT = 2

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
            help="Scenario file: TOML (or JSON if it ends in `.json`). "
            "See docs/scenarios.md.",
            show_default=False,
        ),
    ],
    seed: Annotated[
        Optional[int],
        typer.Option(
            "--seed", "-s", min=0, max=MAX_SEED, help="Random seed; overrides `[sim].seed`.",
            show_default=False,
        ),
    ] = None,
    out: Annotated[
        Optional[Path],
        typer.Option(
            "--out", "-o", metavar="DIR",
            help="Output directory; an earlier run's output there is replaced. "
            "Default: `out/<stem>`, or `out/<stem>-seed<N>` with `--seed`.",
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
        results = run_scenario(scenario, seed=seed)
    except _core.ScenarioError as e:
        fail(str(e))
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
        fail(f"unknown benchmark {', '.join(map(repr, unknown))} (available: {', '.join(available)})")

    status = Console(stderr=True)
    rows = []
    for name in selected:
        with status.status(f"bench {name}"):
            rows.append(dict(_core.bench(name, repeats)))
    if as_json:
        typer.echo(json.dumps(rows, indent=2, sort_keys=True))
    else:
        print_bench(Console(), rows)


@app.command("version")
def version_command() -> None:
    """Print the package and simulator-core versions."""
    typer.echo(f"mpsched {__version__} (core {_core.version()})")
