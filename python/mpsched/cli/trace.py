"""``mpsched trace synth``: synthetic cellular traces."""

# No `from __future__ import annotations`: typer reads these annotations at run time.
from pathlib import Path
from typing import Annotated

import typer

from .. import _core
from ..api import MAX_SEED
from .errors import EXIT_FAILURE, OneLineErrorGroup, fail

trace_app = typer.Typer(
    name="trace",
    cls=OneLineErrorGroup,
    help="Synthetic cellular traces (mahimahi format).",
    no_args_is_help=True,
    add_completion=False,
)

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
    from .._atomic import write_file_atomic

    try:
        write_file_atomic(out, text.encode("ascii"))
    except OSError as e:
        fail(f"cannot write {out}: {e.strerror or e}", code=EXIT_FAILURE)
    lines = text.count("\n")
    typer.echo(f"Wrote {out}: {lines} delivery opportunities over {duration_s:g} s")
