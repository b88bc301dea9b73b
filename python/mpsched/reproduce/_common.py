"""What the ``reproduce`` commands share: finding the scenario library and writing the edited
copy of a scenario that a compare run reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict


def default_scenario_dir(marker: str) -> Path:
    """The repository's ``scenarios/`` (the first parent holding ``scenarios/<marker>``), else
    ``./scenarios``."""
    for parent in Path(__file__).resolve().parents:
        if (parent / "scenarios" / marker).is_file():
            return parent / "scenarios"
    return Path("scenarios")


def write_scenario(scenario: Dict[str, Any], out: Path, name: str) -> Path:
    """Writes ``scenario`` as ``out/scenarios/<name>.json`` and returns the path."""
    path = out / "scenarios" / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(scenario, indent=1), encoding="utf-8")
    return path
