"""``mpsched bench``: simulator speed on the built-in benchmarks."""

# No `from __future__ import annotations`: typer reads these annotations at run time.
import json
from typing import Annotated, List, Optional

import typer
from rich.console import Console

from .. import _core
from .._display import print_bench
from .errors import fail, require_extra

NamesArgument = Annotated[
    Optional[List[str]],
    typer.Argument(
        metavar="NAME",
        help="Benchmarks to run. Default: all (see `--list`); also flows-N, the flows-1000"
        " scenario with N flows (1 to 100000).",
        show_default=False,
    ),
]
RepeatsOption = Annotated[
    int, typer.Option("--repeats", "-n", min=1, help="Times to run each benchmark.")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print a JSON list instead of a table.")]
ListOption = Annotated[bool, typer.Option("--list", help="List the benchmark names and exit.")]
EnvOption = Annotated[
    bool,
    typer.Option(
        "--env",
        help="Instead, measure learning-environment steps per second (EdAR scenario: "
        "single env, raw core env, vector env on 1 and 2 threads; DRL-CC's host env).",
    ),
]
DecisionsOption = Annotated[
    bool,
    typer.Option(
        "--decisions",
        help="Instead, measure the cost of pausing at per-packet decision points "
        "(EdAR scenario, paused vs built-in scheduler in the same process).",
    ),
]
PoliciesOption = Annotated[
    bool,
    typer.Option(
        "--policies",
        help="Instead, measure the decision latency of exported policies in the Rust "
        "runtime against the same forward pass in PyTorch (needs the rl extra).",
    ),
]
PythonSchedulerOption = Annotated[
    bool,
    typer.Option(
        "--python-scheduler",
        help="Instead, measure the per-decision cost of a scheduler written in Python "
        "(EdAR scenario, against the built-in minrtt-norp making the same choices).",
    ),
]
InstructionsOption = Annotated[
    bool,
    typer.Option(
        "--instructions",
        help="Instead, count instructions under callgrind (bench/instructions.sh; needs a "
        "source checkout): per event, per packet and per delivered packet.",
    ),
]
AgainstOption = Annotated[
    Optional[str],
    typer.Option(
        "--against",
        metavar="REV",
        help="Instead, build git revision REV and this checkout's bench binary and "
        "interleave their runs: same-run wall-clock ratios (needs a source checkout).",
        show_default=False,
    ),
]
RoundsOption = Annotated[
    int,
    typer.Option("--rounds", min=1, help="With --against: runs of each side per benchmark."),
]
PlainOption = Annotated[
    bool,
    typer.Option(
        "--plain",
        help="With --instructions or --against: plain release builds instead of the product's "
        "profile-guided build (scripts/pgo.sh), to compare code alone.",
    ),
]


def bench_command(
    names: NamesArgument = None,
    repeats: RepeatsOption = 1,
    as_json: JsonOption = False,
    list_only: ListOption = False,
    env: EnvOption = False,
    decisions: DecisionsOption = False,
    policies: PoliciesOption = False,
    python_scheduler: PythonSchedulerOption = False,
    instructions: InstructionsOption = False,
    against: AgainstOption = None,
    rounds: RoundsOption = 5,
    plain: PlainOption = False,
) -> None:
    """Measure simulator speed on built-in benchmark scenarios.

    Reports simulated and wall-clock seconds, events and packets per second, nanoseconds per
    event and how many times faster than real time the simulation ran.
    """
    modes = [env, decisions, policies, python_scheduler, instructions, against is not None]
    if sum(modes) > 1:
        fail(
            "choose one of --env, --decisions, --policies, --python-scheduler, --instructions, --against"
        )
    if plain and not (instructions or against is not None):
        fail("--plain goes with --instructions or --against")
    if instructions or against is not None:
        _source_bench(names, against, rounds, as_json, not plain)
    elif env:
        _bench_env(repeats, as_json)
    elif policies:
        _bench_policies(repeats, as_json)
    elif python_scheduler:
        _bench_python_scheduler(repeats, as_json)
    elif decisions:
        _bench_decisions(repeats, as_json)
    else:
        _bench_core(names, repeats, as_json, list_only)


def _echo_json(rows: object) -> None:
    typer.echo(json.dumps(rows, indent=2, sort_keys=True))


def _bench_env(repeats: int, as_json: bool) -> None:
    """``--env``: learning-environment steps per second."""
    require_extra(["gymnasium"], "mpsched bench --env")
    from ..bench_env import bench_env

    with Console(stderr=True).status("bench env"):
        rows = bench_env(steps=20000 * repeats)
    if as_json:
        return _echo_json(rows)
    base = rows[0]["steps_per_s"]
    for r in rows:
        typer.echo(
            f"{r['name']:<32} {r['steps_per_s']:>10,.0f} steps/s  ({r['steps_per_s'] / base:.2f}x the single env)"
        )


def _bench_policies(repeats: int, as_json: bool) -> None:
    """``--policies``: exported policies' decision latency, Rust against PyTorch."""
    require_extra(["torch"], "mpsched bench --policies")
    from ..bench_policies import bench_policies

    with Console(stderr=True).status("bench policies"):
        rows = bench_policies(repeats=max(repeats, 3))
    if as_json:
        return _echo_json(rows)
    for r in rows:
        typer.echo(
            f"{r['name']:<34} rust {r['rust_us']:8.2f} µs/decision  "
            f"torch {r['torch_us']:8.2f} µs/decision  ({r['speedup']:.1f}x)"
        )


def _bench_python_scheduler(repeats: int, as_json: bool) -> None:
    """``--python-scheduler``: the per-decision cost of a scheduler written in Python."""
    from ..bench_plugin import bench_python_scheduler

    with Console(stderr=True).status("bench python scheduler"):
        rows = bench_python_scheduler(max(repeats, 3))
    if as_json:
        return _echo_json(rows)
    for r in rows:
        typer.echo(
            f"{r['name']:<18} {r['wall_s']:.4f} s  {r['us_per_decision']:6.2f} µs/decision  "
            f"overhead {r['overhead_us_per_decision']:6.2f} µs/decision  "
            f"{r['ratio']:5.1f}x  identical={r['identical_to_builtin']}  "
            f"({r['decisions']} decisions)"
        )


def _bench_decisions(repeats: int, as_json: bool) -> None:
    """``--decisions``: the cost of pausing at per-packet decision points."""
    with Console(stderr=True).status("bench decisions"):
        result = dict(_core.bench_decisions(repeats))
    if as_json:
        return _echo_json(result)
    typer.echo(
        f"{result['decisions']} decision points: built-in {result['wall_builtin_s']:.4f} s, "
        f"paused {result['wall_paused_s']:.4f} s, "
        f"overhead {result['ns_per_decision']:.0f} ns per decision"
    )


def _flows_n(name: str) -> bool:
    """``flows-N``: the ``flows-1000`` scenario with N flows (the 1,000-flow scaling curve)."""
    try:
        _core.bench_description(name)
    except _core.ScenarioError:
        return False
    return True


def _bench_core(names: Optional[List[str]], repeats: int, as_json: bool, list_only: bool) -> None:
    """The built-in benchmark scenarios (or their names, ``--list``)."""
    available = list(_core.bench_names())
    if list_only:
        typer.echo("\n".join(available))
        return
    selected = list(names) if names else available
    unknown = [n for n in selected if n not in available and not _flows_n(n)]
    if unknown:
        fail(
            f"unknown benchmark {', '.join(map(repr, unknown))} (available: {', '.join(available)},"
            " or flows-N for N from 1 to 100000)"
        )
    status = Console(stderr=True)
    rows = []
    for name in selected:
        with status.status(f"bench {name}"):
            rows.append(dict(_core.bench(name, repeats)))
    if as_json:
        _echo_json(rows)
    else:
        print_bench(Console(), rows)


#: What ``--against`` runs by default: the issue-22 benchmarks that exist in older revisions too.
AGAINST_DEFAULT = ["newreno-10m", "lia-2path", "edar-handoff", "flows-1", "flows-1000"]


def _source_bench(
    names: Optional[List[str]], rev: Optional[str], rounds: int, as_json: bool, pgo: bool
) -> None:
    """``--instructions`` / ``--against REV``: wrappers over the checkout's bench tools."""
    from ..bench_rev import BenchRevError, against, format_ratios, instructions, repo_root

    try:
        root = repo_root()
        if rev is None:
            raise typer.Exit(instructions(list(names or []), root, pgo))
        with Console(stderr=True).status(f"bench against {rev}"):
            rows = against(rev, list(names or AGAINST_DEFAULT), rounds, root, pgo)
    except BenchRevError as e:
        fail(str(e))
    if as_json:
        typer.echo(json.dumps(rows, indent=2, sort_keys=True))
    else:
        typer.echo("\n".join(format_ratios(rows, rev)))
