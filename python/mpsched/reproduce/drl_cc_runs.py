"""The runs of ``mpsched reproduce drl-cc``: which scenario copies run with which congestion
controllers, through the ``compare`` machinery (:func:`mpsched.matrix.build_matrix`,
:func:`mpsched.sweep.run_sweep`; resumable: a finished run with the same scenario hash is
kept).

Scenarios 1-6 and 8 run as ``mpsched compare SC --cc drl-cc,lia,olia,balia,wvegas,cubic,reno``
would: every flow gets the variant's controller (they hold only MPTCP flows).

Scenario 7 (TCP-friendliness, Fig. 8) holds 5 MPTCP and 5 single-path TCP flows; ``compare
--cc`` would set the TCP flows' controller too, so a "DRL-CC" run would have DRL-CC on the TCP
flows and the claim would compare nothing. Here each variant is its own scenario copy
(``out/scenarios/drl-cc-scenario-7-<cc>.json``, written with
:func:`mpsched.reproduce._common.write_scenario`) in which only the multipath flows get the
variant's controller and the 5 TCP flows keep :data:`TCP_CC` (NewReno, the controller that
RFC 6356's TCP-friendliness goal is stated against and that MPTCP v0.92's coupled controllers
fall back to on a single-path socket); each copy runs as its own compare dataset
(``runs/drl-cc-scenario-7/<cc>``) with the scenario's own controllers.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence

from ..matrix import build_matrix, load_scenario
from ..sweep import run_sweep
from . import _common

#: DRL-CC and the paper's baselines (§IV-A: LIA, BALIA, OLIA, wVegas of MPTCP v0.92), then
#: uncoupled CUBIC and Reno on every subflow for reference (not in the paper).
CCS = ("drl-cc", "lia", "olia", "balia", "wvegas", "cubic", "reno")
#: The controller of scenario 7's single-path TCP flows in every variant.
TCP_CC = "reno"
#: The scenario files (``scenarios/drl-cc-scenario-N.toml``), in the order they run.
SCENARIOS = tuple(f"drl-cc-scenario-{i}" for i in range(1, 9))
#: The TCP-friendliness scenario (per-variant copies, see the module docstring).
TCP_SCENARIO = "drl-cc-scenario-7"
#: ``--quick``: seconds per run (a smoke test of the pipeline, not the reproduction).
QUICK_DURATION_S = 20.0


@dataclass(frozen=True)
class Dataset:
    """One compare dataset of the reproduction.

    Attributes:
        scenario: the scenario stem (``drl-cc-scenario-N``).
        path: the dataset directory (``out/runs/<scenario>`` or ``.../<scenario>/<cc>``).
        variant: the controller of the dataset when it holds one variant (scenario 7), else None.
        ran, reused: runs this call ran, and finished runs of an earlier call it kept.
    """

    scenario: str
    path: Path
    variant: str | None = None
    ran: int = 0
    reused: int = 0


def scenario_copy(name: str, scenario_dir: Path, quick: bool) -> Dict[str, Any]:
    """The scenario ``name`` as a dict; with ``quick`` its duration is :data:`QUICK_DURATION_S`."""
    scenario = load_scenario(scenario_dir / f"{name}.toml")
    if quick:
        scenario["sim"]["duration_s"] = QUICK_DURATION_S
    return scenario


def variant_label(cc: str) -> str:
    """The variant a controller counts as: `drl-cc:PATH` (another DRL-CC policy) is `drl-cc`."""
    return cc.split(":", 1)[0]


def tcp_friendliness_copy(
    scenario: Dict[str, Any], cc: str, tcp_cc: str = TCP_CC
) -> Dict[str, Any]:
    """Scenario 7 with ``cc`` on the multipath flows only and ``tcp_cc`` on the others."""
    out = copy.deepcopy(scenario)
    for flow in out.get("flows", []):
        flow["cc"] = cc if "paths" in flow else tcp_cc
    return out


def run_all(
    out: Path,
    seeds: Sequence[int],
    *,
    scenario_dir: Path,
    scenarios: Sequence[str] = SCENARIOS,
    ccs: Sequence[str] = CCS,
    jobs: int = 2,
    quick: bool = False,
    modify: Optional[Callable[[str, Dict[str, Any]], None]] = None,
    tcp_cc: str = TCP_CC,
    log=lambda message: None,
) -> List[Dataset]:
    """Runs every scenario of ``scenarios`` × ``ccs`` × sweep point × ``seeds`` not already in
    ``out/runs`` and returns the datasets, in the order of ``scenarios``.

    ``modify(name, scenario)`` edits each scenario copy in place before it runs, and ``tcp_cc``
    is scenario 7's TCP flows' controller (the sensitivity sweeps,
    :mod:`mpsched.reproduce.drl_cc_sensitivity`)."""
    datasets: List[Dataset] = []
    for name in scenarios:
        scenario = scenario_copy(name, scenario_dir, quick)
        if modify is not None:
            modify(name, scenario)
        if name == TCP_SCENARIO:
            for cc in ccs:
                label = variant_label(cc)
                path = _common.write_scenario(
                    tcp_friendliness_copy(scenario, cc, tcp_cc), out, f"{name}-{label}"
                )
                dest = out / "runs" / name / label
                log(f"{name} ({cc} on the MPTCP flows, {tcp_cc} on the TCP flows)")
                res = run_sweep(build_matrix(path, seeds=list(seeds)), dest, jobs=jobs)
                datasets.append(Dataset(name, dest, label, res.ran, res.reused))
            continue
        path = _common.write_scenario(scenario, out, name)
        dest = out / "runs" / name
        log(name)
        res = run_sweep(build_matrix(path, seeds=list(seeds), ccs=list(ccs)), dest, jobs=jobs)
        datasets.append(Dataset(name, dest, None, res.ran, res.reused))
    return datasets
