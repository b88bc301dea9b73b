"""How much EdAR-p depends on the amount of offline data (issue 20: the paper collects 100
trajectories per setting, the shipped EdAR-p 10): an EdAR-p trained on more data against the
shipped one, on the held-out seeds, with the metrics and paired gains of ``reproduce edar``.

    mpsched train edar --scenario scenarios/edar-setting-{1,2,3}.toml --offline-episodes 300 \\
        --offline-iterations 6000 --steps 0 --seed 1 --out out/edar-p100
    python -m mpsched.reproduce.edar_sensitivity out/edar-p100/edar-p.json out/edar-p100-eval

writes ``OUT/offline-data.json``: per case and metric, the other checkpoint's mean ± CI, the
shipped one's, and the paired gain of the other over the shipped one (percent).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Dict

from ..matrix import build_matrix
from ..sweep import run_sweep
from . import edar as E
from . import edar_runs as R
from .protocol import HELD_OUT

#: The cases where the offline data matters (the handoff scenario and the offline settings).
CASES = ("edar-handoff", "edar-setting-1", "edar-setting-2", "edar-setting-3")
METRICS = ("goodput", "handoff_goodput", "stable_goodput", "ooo")


def compare_checkpoints(other: Path, out: Path, jobs: int = 2) -> Dict[str, Any]:
    """Runs the shipped EdAR-p and ``other`` on :data:`CASES` × the held-out seeds and returns
    {"case metric": [other mean, ci, shipped mean, ci, gain %, ci]}."""
    shipped, alt = f"edar:{R.DEFAULT_P.resolve()}", f"edar:{Path(other).resolve()}"
    datasets = []
    for name in CASES:
        case = next(c for c in R.CASES if c.name == name)
        matrix = build_matrix(
            E.default_scenario_dir() / f"{name}.toml",
            seeds=list(HELD_OUT),
            schedulers=[shipped, alt],
        )
        run_sweep(matrix, out / name, jobs=jobs)
        datasets.append(R.Dataset(case, out / name, {shipped: "shipped", alt: "other"}))
    values, _ = E.collect(datasets)
    res: Dict[str, Any] = {}
    for (case, _point, metric), by in sorted(values.items(), key=lambda kv: str(kv[0])):
        if metric in METRICS and "other" in by and "shipped" in by:
            g, ci = E._gain(metric, by["other"], by["shipped"])
            res[f"{case} {metric}"] = [
                *E.mean_ci(list(by["other"].values())),
                *E.mean_ci(list(by["shipped"].values())),
                g,
                ci,
            ]
    return res


if __name__ == "__main__":  # pragma: no cover - a measurement, run by hand
    out = Path(sys.argv[2])
    res = compare_checkpoints(Path(sys.argv[1]), out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "offline-data.json").write_text(json.dumps(res, indent=1), encoding="utf-8")
    for k, (m, c, ms, cs, g, gc) in res.items():
        print(
            f"{k:32s} other {m:.3g} ± {c:.2g}  shipped {ms:.3g} ± {cs:.2g}  gain {g:+.1f} ± {gc:.1f} %"
        )
