"""``mpsched reproduce olms --keep-from DIR``: a partial re-run completed by a previous one.

A full OLMS reproduction takes hours (every figure in two regimes on 20 seeds). When a change
touches some cases only (the 5 ms jitter of the App I paths), the cases re-run in this call
replace those of a previous reproduction (``DIR``, e.g. ``docs/reproductions/olms``) and every
other (regime, case) keeps the previous run's claims and results, marked: a case whose scenario
the change touched says so in its ``where`` column ("measured before …"), so no number measured
on an older scenario passes for a new one.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any, Dict, List, Sequence, Set, Tuple

from . import olms_runs as runs
from .protocol import NOT_MEASURED, Claim, load_committed

#: Marks a kept claim of a case whose scenario changed since the previous run.
STALE = " (before the jitter)"


def complete_cases(datasets: Sequence[runs.Dataset]) -> Set[Tuple[str, str]]:
    """The (regime, case) pairs whose every variant has a finished dataset in this call."""
    have: Dict[Tuple[str, str], Set[str]] = {}
    for d in datasets:
        have.setdefault((d.regime, d.case), set()).add(d.variant)
    by_name = runs.cases_by_name()
    return {k for k, v in have.items() if set(by_name[k[1]].variants) <= v}


def keep_previous(
    claims: List[Claim],
    table: Dict[str, Any],
    previous: Path,
    ran: Set[Tuple[str, str]],
    changed: Set[str],
) -> Tuple[List[Claim], Dict[str, Any]]:
    """Claims and results table of this call, with every (regime, case) not in ``ran`` taken
    from ``previous``; a kept, measured claim of a case in ``changed`` gets :data:`STALE`."""
    old, _ = load_committed(previous)
    old_results = json.loads((previous / "results.json").read_text(encoding="utf-8"))["results"]
    out: List[Claim] = []
    for c in claims:
        key = (c.extra.get("regime"), c.extra.get("case"))
        if key in ran or c.id not in old:
            out.append(c)
            continue
        o = old[c.id]
        stale = key[1] in changed and o.verdict != NOT_MEASURED
        out.append(replace(o, where=o.where + STALE) if stale else o)
    merged: Dict[str, Any] = {r: dict(cases) for r, cases in table.items()}
    for regime, cases in old_results.items():
        for case, metrics in cases.items():
            if (regime, case) not in ran:
                merged.setdefault(regime, {})[case] = metrics
    return out, merged


def changed_cases() -> Set[str]:
    """The cases built on the App I scenario, which carries the paper's 5 ms jitter."""
    return {c.name for c in runs.cases() if c.base == "olms-app1"}


def kept_note(ran: Set[Tuple[str, str]], previous: Path) -> str:
    """The preamble line saying which cases this call ran and where the others come from."""
    names = ", ".join(f"{c} [{r}]" for r, c in sorted(ran)) or "none"
    return (
        f"Measured in this output (on the current scenarios): {names}. Every other case's claims and results are those of the "
        f"previous reproduction ({previous}); where the case's scenario has changed since (the "
        f"App I paths' 5 ms jitter), its `where` says{STALE}."
    )
