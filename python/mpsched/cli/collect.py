"""``mpsched collect``: transitions of a fixed policy for offline learning."""

# No `from __future__ import annotations`: typer reads these annotations at run time.
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.console import Console

from .errors import fail, require_extra


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
