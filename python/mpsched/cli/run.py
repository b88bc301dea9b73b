"""``mpsched run`` and ``mpsched version``."""

# No `from __future__ import annotations`: typer reads these annotations at run time.
import time
from pathlib import Path
from typing import Annotated, Any, List, Optional

import pyarrow as pa
import typer
from rich.console import Console

from .. import __version__, _core
from .._display import print_summary, print_written
from ..api import run_to_dir
from ..matrix import MatrixError, parse_seed
from ..results import OUTPUT_FILES, check_replaceable
from .errors import EXIT_FAILURE, fail
from .progress import RunProgress

#: The SCENARIO argument of `run` and `compare`.
ScenarioArgument = Annotated[
    Path,
    typer.Argument(
        metavar="SCENARIO",
        help="Scenario file: TOML (or JSON if it ends in `.json`, any case). See docs/scenarios.md.",
        show_default=False,
    ),
]

#: The `--plugin` option of `run` and `compare`.
PluginOption = Annotated[
    Optional[List[Path]],
    typer.Option(
        "--plugin",
        metavar="FILE",
        help='Python file defining schedulers with `@mpsched.scheduler("NAME")`, loaded '
        "before the scenario so `--scheduler NAME` (or the scenario) can use them; repeatable. "
        "See docs/python-schedulers.md.",
        show_default=False,
    ),
]


def load_plugins(paths: Optional[List[Path]]) -> None:
    """Load every `--plugin` file; a bad one exits with one `error:` line (code 2)."""
    from ..plugins import PluginError, load_plugin

    for path in paths or []:
        try:
            load_plugin(path)
        except PluginError as e:
            fail(f"--plugin {e}")


def default_out_dir(scenario: Path, seed: Optional[int]) -> Path:
    """``out/<stem>``, or ``out/<stem>-seed<N>`` when the seed is overridden."""
    stem = scenario.stem if seed is None else f"{scenario.stem}-seed{seed}"
    return Path("out") / stem


def _seed(text: str) -> int:
    """``--seed``: the range and digits of ``compare --seeds`` (:func:`parse_seed`)."""
    try:
        return parse_seed(text)
    except MatrixError as e:
        raise typer.BadParameter(str(e).removeprefix("--seed: ")) from None


def run_command(
    scenario: ScenarioArgument,
    seed: Annotated[
        Optional[int],
        typer.Option(
            "--seed",
            "-s",
            parser=_seed,
            metavar="INTEGER",
            help="Random seed in [0, 2**63 - 1] (as `compare --seeds`); overrides `[sim].seed`.",
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
            "`edar` (shipped checkpoint), `edar:CHECKPOINT` (.json of `mpsched train edar`) or "
            "`policy:PATH` (any exported policy, docs/policies.md), or a Python scheduler of a "
            "`--plugin` file.",
            show_default=False,
        ),
    ] = None,
    cc: Annotated[
        Optional[str],
        typer.Option(
            "--cc",
            metavar="NAME",
            help="Congestion control for every flow (as `compare --cc`), e.g. `lia`, or a "
            "trained host policy: `drl-cc` (shipped), `drl-cc:PATH` or `policy:PATH` "
            "(docs/policies.md).",
            show_default=False,
        ),
    ] = None,
    plugin: PluginOption = None,
    trace_packets: Annotated[
        Optional[List[str]],
        typer.Option(
            "--trace-packets",
            metavar="FLOW",
            help="Write packets.parquet: every segment event (send, retransmit, drop and why, "
            "arrive; ACKs, SACK blocks, DSN mapping, the scheduler's choice) of the flow named "
            "FLOW, or `all` flows; repeatable or comma-separated. See docs/packet-trace.md.",
            show_default=False,
        ),
    ] = None,
    pcap: Annotated[
        bool,
        typer.Option(
            "--pcap",
            help="With --trace-packets: also write packets.pcap (synthetic IPv4/TCP/MPTCP "
            "headers, zero-filled payload) for Wireshark/tshark.",
        ),
    ] = False,
) -> None:
    """Simulate a scenario and write its results.

    Writes summary.json, flows.parquet, subflows.parquet, timeseries.parquet, links.parquet and scenario.toml
    (the scenario with every default filled in) to the output directory, all at once: a
    failed run leaves no directory behind. The timeseries goes to disk as the run goes (memory
    stays bounded however long the run); on a terminal, a run longer than a second shows a
    progress bar. Prints per-flow and per-link summaries.
    """
    # pyarrow imports pandas the first time it builds an array (~0.4 s): do it before timing.
    pa.array([0])
    load_plugins(plugin)
    traced = [n.strip() for t in trace_packets or [] for n in t.split(",") if n.strip()]
    if pcap and not traced:
        fail("--pcap: needs --trace-packets FLOW (or all)")
    out_dir = out if out is not None else default_out_dir(scenario, seed)
    try:
        check_replaceable(out_dir)
    except (FileExistsError, NotADirectoryError) as e:  # a bad --out, found before the run
        fail(f"{out_dir}: {e.strerror or e}")
    source = _with_overrides(scenario, scheduler, cc)
    started = time.perf_counter()
    try:
        with RunProgress() as progress:
            results = run_to_dir(
                source,
                out_dir,
                seed=seed,
                progress=progress,
                trace_packets=traced or None,
                pcap=pcap,
            )
    except _core.SchedulerError as e:
        fail(str(e), code=EXIT_FAILURE)
    except _core.ScenarioError as e:
        message = str(e)
        fail(f"{scenario}{message[len('<dict>') :]}" if message.startswith("<dict>") else message)
    except UnicodeDecodeError:
        fail(f"{scenario}: not a UTF-8 text file")
    except NotADirectoryError as e:  # --out is a file
        fail(f"{out_dir}: {e.strerror or e}")
    except OSError as e:
        fail(f"cannot write {out_dir}: {e.strerror or e}", code=EXIT_FAILURE)
    wall_s = time.perf_counter() - started
    for warning in results.summary.get("warnings", []):
        text = str(warning)
        typer.echo(
            f"warning: {scenario}{text[len('<dict>') :]}"
            if text.startswith("<dict>")
            else f"warning: {text}",
            err=True,
        )

    console = Console()
    print_summary(console, results.summary, wall_s)
    optional = ("udp_flows.parquet", "probes.parquet", "packets.parquet", "packets.pcap")
    extra = [n for n in optional if (out_dir / n).exists()]
    print_written(console, out_dir, [*OUTPUT_FILES, *extra])
    print_decisions(console, results.decisions)


def print_decisions(console: Console, decisions: dict) -> None:
    """One line per policy-scheduled flow (and per host controller, ``host <label>``): its
    decisions and their latency in Rust."""
    for flow, d in decisions.items():
        where = f"the host ({flow[5:]})" if flow.startswith("host ") else flow
        console.print(
            f"policy on {where}: {d['decisions']} decisions in Rust, "
            f"{d['mean_ns'] / 1000:.1f} µs per decision (p99 {d['p99_ns'] / 1000:.1f} µs)"
        )


def _with_overrides(scenario: Path, scheduler: Optional[str], cc: Optional[str]) -> Any:
    """The scenario path, or (with `--scheduler` / `--cc`) the scenario as a dict with that
    scheduler on every multipath flow and that congestion control on every flow."""
    if scheduler is None and cc is None:
        return scenario
    from ..matrix import (
        MatrixError,
        apply_overrides,
        check_scheduler_applies,
        load_scenario,
        resolve_trace_paths,
    )

    for option, value in (("--scheduler", scheduler), ("--cc", cc)):
        if value is not None and not value.strip():
            fail(
                f"{option}: expected a {'scheduler' if option == '--scheduler' else 'congestion control'} name"
            )
    try:
        sc = load_scenario(scenario)
    except _core.ScenarioError as e:
        fail(str(e))
    if scheduler is not None:
        try:
            check_scheduler_applies(sc, scenario)
        except MatrixError as e:
            fail(str(e))
    return resolve_trace_paths(apply_overrides(sc, scheduler, cc), scenario.parent)


def version_command() -> None:
    """Print the package and simulator-core versions."""
    typer.echo(f"mpsched {__version__} (core {_core.version()})")
