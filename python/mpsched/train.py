"""``mpsched train``: train learning agents (sub-commands per algorithm).

``mpsched train edar`` runs EdAR's offline learning (EdAR-p) and, with ``--steps N``, online
learning (EdAR-o); see :mod:`mpsched.agents.edar`. Bad input (a scenario, offline data, an
option) is one ``error:`` line and exit code 2; a failed run leaves no output directory.
"""

# No `from __future__ import annotations`: typer reads these annotations at run time.
import time
from pathlib import Path
from typing import Annotated, List, Optional

import typer

train_app = typer.Typer(
    name="train",
    help="Train learning agents (EdAR). Checkpoints: safetensors + JSON; logs: TensorBoard.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="markdown",
)


@train_app.command("edar")
def edar_command(
    scenario: Annotated[
        Optional[List[Path]],
        typer.Option(
            "--scenario",
            help="Training scenario (repeatable; episodes cycle through them). Default: scenarios/edar-handoff.toml.",
            show_default=False,
        ),
    ] = None,
    offline_data: Annotated[
        Optional[List[Path]],
        typer.Option(
            "--offline-data",
            help="Transitions file(s) (Parquet, as `mpsched collect` writes) for offline learning; default: collect them.",
            show_default=False,
        ),
    ] = None,
    out: Annotated[
        Path, typer.Option("--out", "-o", metavar="DIR", help="Output directory (replaced).")
    ] = Path("out/edar"),
    steps: Annotated[
        int,
        typer.Option(
            "--steps", min=0, help="Online-learning environment steps (EdAR-o); 0: EdAR-p only."
        ),
    ] = 2000,
    seed: Annotated[
        int,
        typer.Option(
            "--seed",
            "-s",
            min=0,
            max=2**31 - 1,
            help="Seed of the network, exploration and episodes.",
        ),
    ] = 1,
    offline_episodes: Annotated[
        int,
        typer.Option(
            "--offline-episodes", min=1, help="Flows to collect when no --offline-data is given."
        ),
    ] = 8,
    offline_iterations: Annotated[
        int,
        typer.Option(
            "--offline-iterations", min=1, help="Offline minibatch updates (M of Algorithm 1)."
        ),
    ] = 2000,
    online_iterations: Annotated[
        int,
        typer.Option(
            "--online-iterations", min=1, help="Updates after each online flow (M of Algorithm 2)."
        ),
    ] = 200,
    duration_s: Annotated[
        Optional[float],
        typer.Option(
            "--duration", min=0.1, help="Override the scenarios' duration (s).", show_default=False
        ),
    ] = None,
    max_paths: Annotated[
        int, typer.Option("--max-paths", min=1, max=8, help="Subflow slots of the observation.")
    ] = 4,
    init: Annotated[
        Optional[Path],
        typer.Option(
            "--init",
            metavar="CHECKPOINT",
            help="Start from this checkpoint (e.g. an edar-p.json) and learn online only (EdAR-o on a new network).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Train EdAR (edar.txt): offline learning from always-normal / always-redundant
    trajectories (EdAR-p), then ε-greedy online learning (EdAR-o).

    Writes `edar-p.{json,safetensors}`, `edar-o.*` (with `--steps` > 0), `offline.parquet` (when
    collected) and TensorBoard logs under `runs/` to the output directory. Use a checkpoint with
    `mpsched run SCENARIO --scheduler edar:DIR/edar-o.json`.
    """
    from rich.console import Console

    from . import _core
    from .agents.checkpoint import CheckpointError
    from .agents.edar import Args, DataError, train
    from .cli import fail
    from .envs import EnvConfigError
    from .scenario import load as load_scenario

    args = Args(
        scenario=[str(s) for s in scenario] if scenario else ["scenarios/edar-handoff.toml"],
        seed=seed,
        out=str(out),
        offline_data=[str(p) for p in offline_data or []],
        offline_episodes=offline_episodes,
        offline_iterations=offline_iterations,
        steps=steps,
        online_iterations=online_iterations,
        duration_s=duration_s,
        max_paths=max_paths,
        init=str(init) if init is not None else None,
    )
    for s in args.scenario:
        try:  # the scenario loader's message, as `mpsched run` gives it
            load_scenario(s)
        except _core.ScenarioError as e:
            fail(str(e))
    if out.exists() and not out.is_dir():
        fail(f"--out: {out}: exists and is not a directory")
    console = Console(stderr=True)
    started = time.perf_counter()
    try:
        written = train(args, log=lambda m: console.print(m))
    except (EnvConfigError, DataError, CheckpointError, _core.ScenarioError) as e:
        fail(str(e))
    except ImportError as e:
        fail(f"training needs the `rl` extra (torch, tensorboard, safetensors): {e}", code=1)
    console.print(f"trained in {time.perf_counter() - started:.1f} s")
    for name, path in written.items():
        typer.echo(f"{name}: {path}")
