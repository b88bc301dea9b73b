"""``mpsched export sb3``: a trained network as a policy file for the Rust runtime."""

# No `from __future__ import annotations`: typer reads these annotations at run time.
from pathlib import Path
from typing import Annotated, Optional

import typer

from .errors import OneLineErrorGroup, fail, require_extra

export_app = typer.Typer(
    name="export",
    cls=OneLineErrorGroup,
    help="Export trained networks as policy files (docs/policies.md).",
    no_args_is_help=True,
    add_completion=False,
)


@export_app.command("sb3")
def export_sb3_command(
    model: Annotated[
        Path,
        typer.Argument(
            help="A stable-baselines3 zip (PPO, A2C, DQN, SAC, TD3).", show_default=False
        ),
    ],
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            "-o",
            metavar="STEM",
            help="Writes STEM.json and STEM.safetensors.",
            show_default=False,
        ),
    ],
    activation: Annotated[
        Optional[str],
        typer.Option("--activation", help="tanh or relu, if the model set its own activation_fn."),
    ] = None,
) -> None:
    """Export the deterministic actor of a stable-baselines3 zip. Reads only the zip's JSON and
    its tensors (never its pickled parts), so an untrusted zip cannot run code."""
    require_extra(["torch"], "mpsched export sb3")
    from ..agents.checkpoint import CheckpointError
    from ..sb3_zip import export_sb3_zip

    try:
        js, st = export_sb3_zip(model, out, activation)
    except CheckpointError as e:
        fail(str(e))
    typer.echo(f"wrote {js} and {st}")
