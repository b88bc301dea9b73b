"""The CLI hub: the ``mpsched`` Typer app with every sub-command registered.

Sub-command modules define plain functions and never import this module; this module only
collects them. ``mpsched.cli.app`` (the console-script entry point) is the :data:`app` here.
"""

import typer

from . import algorithms, bench, collect, compare, emulate, export, results, run, trace, train
from .errors import OneLineErrorGroup

app = typer.Typer(
    name="mpsched",
    cls=OneLineErrorGroup,
    help="mpsched: a deterministic packet-level multipath network simulator.",
    epilog="Scenario format: docs/scenarios.md. Exit codes: 0 ok, 1 failure, 2 bad input.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="markdown",
    pretty_exceptions_show_locals=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

# In the order `mpsched --help` lists them.
app.command("run")(run.run_command)
app.command("emulate")(emulate.emulate_command)
app.command("calibrate")(emulate.calibrate_command)
app.command("bench")(bench.bench_command)
app.command("collect")(collect.collect_command)
app.command("version")(run.version_command)
app.command("compare")(compare.compare_command)
app.command("plot")(results.plot_command)
app.command("report")(results.report_command)
app.command("algorithms")(algorithms.algorithms_command)
app.add_typer(trace.trace_app, name="trace")
app.add_typer(train.train_app, name="train")
app.add_typer(export.export_app, name="export")


def _add_reproduce() -> None:
    """`mpsched reproduce <paper> ...` (python/mpsched/reproduce/)."""
    from ..reproduce import app as reproduce_app

    app.add_typer(reproduce_app, name="reproduce")


_add_reproduce()


def _add_train_pdaa3c() -> None:
    """`mpsched train pdaa3c` (its own module, registered on the `train` group)."""
    from . import train_pdaa3c  # noqa: F401


_add_train_pdaa3c()
