"""What the ``reproduce`` commands share: finding the shipped scenarios and writing the edited
copy of a scenario that a compare run reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Sequence

from rich.console import Console

from ..scenario import shipped_scenario
from .protocol import verdict_counts


def default_scenario_dir(marker: str) -> Path:
    """The shipped scenarios (:data:`mpsched.scenario.SCENARIO_DIR`, inside the package: found
    from any working directory); ``marker`` is a file the caller needs there."""
    return shipped_scenario(marker).parent


def write_scenario(scenario: Dict[str, Any], out: Path, name: str) -> Path:
    """Writes ``scenario`` as ``out/scenarios/<name>.json`` and returns the path."""
    path = out / "scenarios" / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(scenario, indent=1), encoding="utf-8")
    return path


def print_outcome(out: Path, claims: Sequence[Any], quick: bool) -> None:
    """What a ``reproduce`` command wrote and its verdict counts (a quick run is flagged as a
    test of the pipeline)."""
    counts = verdict_counts(claims)
    con = Console()
    con.print(f"wrote {out}/claims.md, {out}/claims.json, {out}/results.md, {out}/figures/")
    con.print("verdicts: " + ", ".join(f"{n} {v}" for v, n in counts.items()), markup=False)
    if quick:
        con.print(
            "QUICK RUN: a test of the pipeline, NOT the reproduction; its verdicts mean nothing."
        )


def setting_names(settings: "str | None", known: Sequence[str]) -> List[str]:
    """The names of a ``--settings a,b`` option (every one of ``known`` when it is not given);
    an unknown or empty list is one ``error:`` line, exit 2."""
    if settings is None:
        return list(known)
    names = [n.strip() for n in settings.split(",") if n.strip()]
    if not names or any(n not in known for n in names):
        from ..cli.errors import fail

        fail(f"--settings: expected names of {', '.join(known)}, got {settings!r}")
    return names
