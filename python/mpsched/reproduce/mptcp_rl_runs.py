"""The runs of ``mpsched reproduce mptcp-rl``: the scenario copies of the paper's Figs. 3-6 and
the single 10 kB flow, each run with every scheduler of :data:`SCHEDULERS` through the
``compare`` machinery (:func:`mpsched.matrix.build_matrix`, :func:`mpsched.sweep.run_sweep`;
one dataset per figure and scheduler, ``out/runs/<figure>/<scheduler>``; resumable: a finished
run with the same scenario hash is kept).

The copies change only what the figure varies (mptcp-rl.txt, "Experimental results"); every
link range and the traffic of the shipped scenario files stay as they are:

* ``fig3`` — ``mptcp-rl-short.toml`` as shipped: 5, 10, ..., 30 concurrent Pareto short flows.
* ``fig4-media`` — ``mptcp-rl-media.toml``: 5, ..., 30 concurrent 1 MB flows.
* ``fig4-long`` — ``mptcp-rl-long.toml`` with 10, 20, 30 concurrent 15 MB flows (the shipped
  file has 30, the paper's headline case; the figure's x values are not given).
* ``fig5-wlanN`` — ``mptcp-rl-paths.toml`` (20 media flows) keeping the first N = 1, 2, 3 WLAN
  paths and the LTE path.
* ``fig6-loss``, ``fig6-cut`` — ``mptcp-rl-dynamic-loss.toml`` (path 1's loss to 8 % at 10 s)
  and ``mptcp-rl-dynamic-cut.toml`` (path 1 down at 20 s): one long flow over 2 WLAN + 1 LTE.
* ``single`` — ``mptcp-rl-short.toml`` with one flow of 10 kB ("only one short flow with the
  size of 10 kB").
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from ..matrix import build_matrix, load_scenario
from ..sweep import run_sweep
from . import _common

#: The paper's baselines (Figs. 3-6), in its order: Round-Robin, eMPTCP, DMPTCP and ReLeS (the
#: shipped policy, docs/mptcp-rl.md).
PAPER_BASELINES = ("roundrobin", "emptcp", "dmptcp", "reles")
#: Our strongest built-in schedulers, which the paper did not run (the union of the other
#: reproductions' lists, reproduce/edar_runs.py and pdaa3c_runs.py): minRTT (Linux's default,
#: with opportunistic retransmission), minRTT without it (ns-3's), BLEST, ECF, Peekaboo, STMS
#: and redundant (every segment on every subflow).
OUR_BASELINES = ("minrtt", "minrtt-norp", "blest", "ecf", "peekaboo", "stms", "redundant")
#: MPTCP-RL (the shipped policy), then the paper's baselines, then ours.
SCHEDULERS = ("mptcp-rl",) + PAPER_BASELINES + OUR_BASELINES
#: The figures (scenario copies), in the order they run.
FIGURES = (
    "single", "fig3", "fig4-media", "fig4-long", "fig5-wlan1", "fig5-wlan2", "fig5-wlan3",
    "fig6-loss", "fig6-cut",
)  # fmt: skip
#: The shipped scenario each figure copies.
SOURCE = {
    "single": "mptcp-rl-short", "fig3": "mptcp-rl-short", "fig4-media": "mptcp-rl-media",
    "fig4-long": "mptcp-rl-long", "fig5-wlan1": "mptcp-rl-paths", "fig5-wlan2": "mptcp-rl-paths",
    "fig5-wlan3": "mptcp-rl-paths", "fig6-loss": "mptcp-rl-dynamic-loss",
    "fig6-cut": "mptcp-rl-dynamic-cut",
}  # fmt: skip
#: Fig. 4(c, d): the numbers of concurrent long flows.
LONG_COUNTS = (10, 30, 3)
#: ``--quick``: seconds per run at most (a smoke test of the pipeline, not the reproduction).
QUICK_DURATION_S = 5.0
#: The size of the single short flow (bytes).
SINGLE_BYTES = 10_000
#: An edit of a figure's scenario copy (figure name, scenario), applied after the figure's own
#: changes: the sensitivity settings (:mod:`mpsched.reproduce.mptcp_rl_sensitivity`).
Modify = Callable[[str, Dict[str, Any]], None]


@dataclass(frozen=True)
class Dataset:
    """One compare dataset: a figure's scenario copy run with one scheduler.

    Attributes:
        figure: the figure (a name of :data:`FIGURES`).
        scheduler: the scheduler of every multipath flow.
        path: the dataset directory (``out/runs/<figure>/<scheduler>``).
        ran, reused: runs this call ran, and finished runs of an earlier call it kept.
    """

    figure: str
    scheduler: str
    path: Path
    ran: int = 0
    reused: int = 0


def _keep_wlans(scenario: Dict[str, Any], n: int) -> Dict[str, Any]:
    """``mptcp-rl-paths`` with the first ``n`` WLAN paths and the LTE path."""
    drop = {p["name"] for p in scenario["paths"] if p["interface"] == "wifi"}
    drop -= {f"wifi{i}" for i in range(1, n + 1)}
    scenario["paths"] = [p for p in scenario["paths"] if p["name"] not in drop]
    for w in scenario["workloads"]:
        w["paths"] = [p for p in w["paths"] if p not in drop]
    return scenario


def figure_scenario(
    figure: str, scenario_dir: Path, quick: bool, modify: Optional[Modify] = None
) -> Dict[str, Any]:
    """The scenario copy of ``figure`` (module docs), then ``modify``'s edit of it; with
    ``quick`` its duration is at most :data:`QUICK_DURATION_S`."""
    sc = copy.deepcopy(load_scenario(scenario_dir / f"{SOURCE[figure]}.toml"))
    sc["sim"]["name"] = f"mptcp-rl-{figure}"
    if figure == "single":
        (w,) = sc["workloads"]
        w["max_flows"] = 1
        w["size"] = {"dist": "fixed", "bytes": SINGLE_BYTES}
    elif figure == "fig4-long":
        lo, hi, steps = LONG_COUNTS
        sc["workloads"][0]["max_flows"] = {"range": [lo, hi], "steps": steps}
    elif figure.startswith("fig5-wlan"):
        sc = _keep_wlans(sc, int(figure[-1]))
    if modify is not None:
        modify(figure, sc)
    if quick:
        sc["sim"]["duration_s"] = min(sc["sim"]["duration_s"], QUICK_DURATION_S)
    return sc


def run_all(
    out: Path,
    seeds: Sequence[int],
    *,
    scenario_dir: Path,
    figures: Sequence[str] = FIGURES,
    schedulers: Sequence[str] = SCHEDULERS,
    jobs: int = 2,
    quick: bool = False,
    modify: Optional[Modify] = None,
    log=lambda message: None,
) -> List[Dataset]:
    """Runs every figure × scheduler × sweep point × seed not already in ``out/runs``
    (``modify``: an edit of every figure's scenario copy)."""
    datasets: List[Dataset] = []
    for fig in figures:
        sc = figure_scenario(fig, scenario_dir, quick, modify)
        path = _common.write_scenario(sc, out, fig)
        for sched in schedulers:
            dest = out / "runs" / fig / sched
            log(f"{fig} ({sched})")
            m = build_matrix(path, seeds=list(seeds), schedulers=[sched])
            res = run_sweep(m, dest, jobs=jobs)
            datasets.append(Dataset(fig, sched, dest, res.ran, res.reused))
    return datasets


def run_records(ds: Dataset) -> Iterator[Tuple[Dict[str, Any], Dict[str, Any]]]:
    """(run.json, summary.json) of every finished run of a dataset."""
    for run in sorted((ds.path / "runs").glob("*/summary.json")):
        meta = json.loads((run.parent / "run.json").read_text(encoding="utf-8"))
        yield meta, json.loads(run.read_text(encoding="utf-8"))
