"""``mpsched algorithms``: the registered schedulers and congestion controllers with their
parameters (the same reference as docs/algorithms.md, from the core's registries)."""

# No `from __future__ import annotations`: typer reads these annotations at run time.
import json
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.table import Table

from .. import _core
from .errors import fail
from .run import PluginOption, load_plugins

KINDS = {"scheduler": "Schedulers", "cc": "Congestion controllers"}


def algorithms_command(
    kind: Annotated[
        Optional[str],
        typer.Argument(
            metavar="[scheduler|cc]",
            help="Only schedulers or only congestion controllers (default: both).",
            show_default=False,
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the registries as JSON.")] = False,
    plugin: PluginOption = None,
) -> None:
    """List every scheduler and congestion controller, its aliases and parameters.

    Use them as `NAME` or `NAME:key=value,...` in `--scheduler`, `--cc` and scenario files.
    With `--plugin FILE`, the Python schedulers the file defines follow the built-ins.
    """
    if kind is not None and kind not in KINDS:
        fail(f'kind: expected "scheduler" or "cc", got {kind!r}')
    load_plugins(plugin)
    kinds = [kind] if kind else list(KINDS)
    data = {k: _core.algorithms(k) for k in kinds}
    if "scheduler" in data:
        from ..plugins import describe

        data["scheduler"] = list(data["scheduler"]) + describe()
    if as_json:
        typer.echo(json.dumps(data, indent=2))
        return
    console = Console()
    for k in kinds:
        table = Table(title=KINDS[k], title_justify="left", show_lines=False)
        for col in ("name", "aliases", "parameters (default)", "what"):
            table.add_column(col, overflow="fold")
        for a in data[k]:
            aliases = ", ".join(f"{n}" + (f" ({p})" if p else "") for n, p in a["aliases"])
            params = ", ".join(f"{p['name']}={_show(p['default'])}" for p in a["params"])
            table.add_row(a["name"], aliases, params, a["doc"])
        console.print(table)


def _show(v: object) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)
