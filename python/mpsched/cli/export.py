"""``mpsched export sb3``: a trained network as a policy file for the Rust runtime;
``mpsched export pcap``: a run's packet trace as a pcap file."""

# No `from __future__ import annotations`: typer reads these annotations at run time.
from pathlib import Path
from typing import Annotated, Optional

import typer

from .errors import OneLineErrorGroup, fail, require_extra

export_app = typer.Typer(
    name="export",
    cls=OneLineErrorGroup,
    help="Export trained networks as policy files (docs/policies.md), packet traces as pcap "
    "(docs/packet-trace.md).",
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


@export_app.command("pcap")
def export_pcap_command(
    run_dir: Annotated[
        Path,
        typer.Argument(
            metavar="RUN_DIR",
            help="Output directory of `mpsched run --trace-packets` (its packets.parquet).",
            show_default=False,
        ),
    ],
    out: Annotated[
        Path,
        typer.Option(
            "--out", "-o", metavar="FILE", help="The pcap file to write.", show_default=False
        ),
    ],
    snaplen: Annotated[
        Optional[int],
        typer.Option(
            "--snaplen",
            metavar="BYTES",
            help="Capture at most BYTES of each packet (default: headers and the whole "
            "zero-filled payload).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Write the packets of a run's packet trace as a pcap file (synthetic IPv4/TCP headers with
    MPTCP options, so Wireshark and tshark decode the MPTCP connection)."""
    from ..pcap import PcapError, write_pcap

    try:
        n = write_pcap(run_dir / "packets.parquet", out, snaplen=snaplen)
    except PcapError as e:
        fail(str(e))
    except OSError as e:
        fail(f"cannot write {out}: {e.strerror or e}")
    typer.echo(f"wrote {out} ({n} packets)")
