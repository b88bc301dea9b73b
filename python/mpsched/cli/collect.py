"""``mpsched collect``: transitions of a fixed policy for offline learning."""

# No `from __future__ import annotations`: typer reads these annotations at run time.
import math
import os
import tempfile
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.console import Console

from .errors import EXIT_FAILURE, fail, require_extra


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

    require_extra(["gymnasium"], "mpsched collect")
    from .._core import ScenarioError
    from ..collect import CollectError, collect, write_transitions
    from ..envs import EnvConfigError

    interval_v = _interval(interval)
    _check_reward(reward)
    dest = out or Path("out") / f"{scenario.stem}-{policy}.parquet"
    _check_out(dest, "--out" if out is not None else "output file")
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
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        write_transitions(table, dest)
    except OSError as e:
        fail(f"cannot write {dest}: {e.strerror or e}", code=EXIT_FAILURE)
    typer.echo(f"Wrote {dest}: {table.num_rows} transitions from {episodes} episode(s) of {policy}")


#: Shortest decision interval, ms (1 µs: the scenario's `decision_interval_ms` bound).
MIN_INTERVAL_MS = 0.001


def _interval(interval: str) -> Any:
    """`min-rtt`, or a period in ms of at least 1 µs; else exit 2 with one line."""
    if interval == "min-rtt":
        return interval
    try:
        ms = float(interval)
    except ValueError:
        ms = math.nan
    if not (math.isfinite(ms) and ms >= MIN_INTERVAL_MS):
        fail(
            f"--interval: expected `min-rtt` or a period of at least {MIN_INTERVAL_MS} ms "
            f"(1 µs), got {interval!r}"
        )
    return ms


def _check_reward(reward: str) -> None:
    """A built-in reward name; else exit 2 with one line (before any episode runs)."""
    from ..rewards import REWARDS

    if reward not in REWARDS:
        fail(f"--reward: expected one of {', '.join(REWARDS)}, got {reward!r}")


def _check_out(dest: Path, option: str) -> None:
    """The output file can be written: not a directory, and its nearest existing parent
    directory takes a new file (probed with a temporary file, removed at once). Exit 2 with
    one line otherwise, before any episode runs."""
    if dest.is_dir():
        fail(f"{option}: {dest} is a directory, expected a file name")
    parent = dest.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        fail(f"{option}: {dest}: {parent} is not a directory")
    try:
        fd, probe = tempfile.mkstemp(prefix=".mpsched-probe-", dir=parent)
    except OSError as e:
        fail(f"{option}: cannot write {dest}: {e.strerror or e}")
    os.close(fd)
    os.unlink(probe)
