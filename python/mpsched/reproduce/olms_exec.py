"""Figs. 10-11 of the OLMS paper: the execution time of path selection, measured.

The paper times MPQUIC's ``selectPath()`` per scheduler (Fig. 10) and OLMS's with decision
cycles of 1-5 packets (Fig. 11, §VI-E2: "Cyclic LP solving"). The simulator charges no
computing time to the sender, but our OLMS is real code whose cost can be measured: this
module runs the Fig. 12 scenario (the dumbbell, both flows 30 MB, both on the variant's
scheduler) in this process and measures its CPU time (``time.process_time``) per path
selection (the flows' ``slots``: new-data segments scheduled). Per seed and variant:

* ``cpu_us_per_slot`` — CPU time of the whole run / path selections (µs), the smallest of
  :data:`REPEATS` runs (the runs are deterministic, so the minimum is the least disturbed);
* ``exec_us`` — the same minus minRTT's (``minrtt-norp``, same seed): the extra time each path
  selection costs over minRTT's, i.e. the scheduler's own execution time beyond the cheapest
  rule. OLMS sends exactly as minRTT does in these runs at the paper's settings (docs/olms.md),
  so the difference is the scheduler's work, not a different number of packets.

These are wall-clock-derived measurements of this machine under its load at the time: unlike
every other number of the reproduction they are not deterministic (a re-run moves them by a few
percent), and they are kept per seed in ``OUT/exec/<regime>.json`` so that a resumed or
``--collect-only`` call reuses them instead of measuring again.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Callable, Dict, Sequence, Tuple

from .olms_runs import CYCLES, cases_by_name, variant_scenario

#: The case name of the claims (``olms_claims``: ``<regime>-cycle-exec``) and the reference.
CASE = "cycle-time"
REFERENCE = "minrtt-norp"
VARIANTS = (REFERENCE, *(f"olms-cycle{c}" for c in CYCLES))
#: Runs per (seed, variant); the fastest counts.
REPEATS = 3

#: {(regime, case, metric): {variant: {seed: value}}}, as :func:`olms_metrics.collect`.
Values = Dict[Tuple[str, str, str], Dict[str, Dict[int, float]]]


def _scenario(regime: str, variant: str, scenario_dir: Path, quick: bool) -> Dict[str, Any]:
    """The Fig. 12 scenario with ``variant`` on both flows (``minrtt-norp`` too)."""
    case = cases_by_name()["cycle"]
    sc = variant_scenario(case, regime, variant, scenario_dir, quick)
    if variant == REFERENCE:
        for f in sc["flows"]:
            f.pop("scheduler_params", None)  # the file's OLMS parameters: unused by minRTT
    return sc


def _cpu_per_slot(sc: Dict[str, Any], seed: int, repeats: int) -> float:
    """The smallest CPU time per path selection (µs) of ``repeats`` runs of ``sc``."""
    from .. import run as run_scenario

    sc = {**sc, "sim": {**sc["sim"], "seed": seed}}
    best, slots = float("inf"), 0
    for _ in range(repeats):
        t0 = time.process_time()
        res = run_scenario(sc)
        best = min(best, time.process_time() - t0)
        slots = sum(res.flows.column("slots").to_pylist())
    return best * 1e6 / max(slots, 1)


def measure(
    out: Path,
    seeds: Sequence[int],
    regimes: Sequence[str],
    *,
    scenario_dir: Path,
    quick: bool = False,
    run: bool = True,
    log: Callable[[str], None] = lambda m: None,
) -> Values:
    """Measures (or reuses from ``out/exec``) every seed × variant of each regime; with
    ``run`` False only reuses (``--collect-only``)."""
    values: Values = {}
    repeats = 1 if quick else REPEATS
    for regime in regimes:
        path = out / "exec" / f"{regime}.json"
        done: Dict[str, Dict[str, float]] = (
            json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        )
        scenarios = {v: _scenario(regime, v, scenario_dir, quick) for v in VARIANTS}
        for seed in seeds:
            if str(seed) not in done:
                if not run:
                    continue
                log(f"{regime} {CASE} seed {seed}")
                done[str(seed)] = {v: _cpu_per_slot(scenarios[v], seed, repeats) for v in VARIANTS}
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(json.dumps(done, indent=1), encoding="utf-8")
            per = done[str(seed)]
            for v in VARIANTS:
                cell = values.setdefault((regime, CASE, "cpu_us_per_slot"), {})
                cell.setdefault(v, {})[seed] = per[v]
                if v != REFERENCE:
                    cell = values.setdefault((regime, CASE, "exec_us"), {})
                    cell.setdefault(v, {})[seed] = per[v] - per[REFERENCE]
    return values
