"""The runs of ``mpsched reproduce pdaa3c``: the letter's two-subflow set-up and the
sensitivity settings, each scheduler of :data:`SCHEDULERS` on every seed, through the
``compare`` machinery (:func:`mpsched.matrix.build_matrix`, :func:`mpsched.sweep.run_sweep`;
resumable: a finished run with the same scenario hash is kept).

**Settings** (chosen before any reproduction result was looked at; the letter gives only the
30 ms / 60 ms delays, 70 s and MPTCP-BBR): :data:`BASE` is ``scenarios/pdaa3c.toml`` as it
was written before this reproduction (path1 10 Mbit/s / 30 ms, path2 5 Mbit/s / 60 ms, 0.1 %
Bernoulli loss on both); :data:`SETTINGS` varies one thing at a time around it: the rate ratio
(path2 at 10 and 2.5 Mbit/s: 1:1 and 4:1) and the loss (0 and 1 % on both paths).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..matrix import build_matrix, load_scenario
from ..sweep import run_sweep
from . import _common

#: The letter's scheduler and baselines (Fig. 3: PDAA3C, RLDS, Round-Robin, Fastest-RTT =
#: minRTT), then our strongest built-in schedulers (`mpsched algorithms`): minRTT without
#: opportunistic retransmission, BLEST, ECF, STMS, redundant.
SCHEDULERS = ("pdaa3c", "rlds", "roundrobin", "minrtt", "minrtt-norp", "blest", "ecf", "stms",
              "redundant")  # fmt: skip
#: The letter's four (Figs. 3-4).
PAPER_SCHEDULERS = SCHEDULERS[:4]


@dataclass(frozen=True)
class Setting:
    """One network setting: path2's rate (path1 stays 10 Mbit/s) and the loss on both paths;
    the sensitivity sweep (:mod:`mpsched.reproduce.pdaa3c_sensitivity`) also sets, where not
    None, every path's queue (packets), both one-way delays, and the flow's receive buffer and
    MSS (None: the scenario file's)."""

    name: str
    path2_mbps: float
    loss: float
    queue_packets: Optional[int] = None
    delays_ms: Optional[Tuple[float, float]] = None
    rcv_buf_bytes: Optional[int] = None
    mss: Optional[int] = None

    def label(self) -> str:
        """``10:5 Mbit/s, 0.1 % loss`` and what else the setting changes."""
        extra = [
            f"{self.queue_packets}-packet queues" if self.queue_packets else "",
            "one-way {:g} / {:g} ms".format(*self.delays_ms) if self.delays_ms else "",
            f"rcv buffer {self.rcv_buf_bytes} B" if self.rcv_buf_bytes else "",
            f"MSS {self.mss} B" if self.mss else "",
        ]
        head = f"10:{self.path2_mbps:g} Mbit/s, {100 * self.loss:g} % loss"
        return ", ".join([head, *(e for e in extra if e)])


#: The claims' setting: the scenario file's.
BASE = Setting("base", 5.0, 0.001)
#: Every setting: the base, then one change at a time (rate ratio 1:1, 4:1; loss 0, 1 %).
SETTINGS = (
    BASE,
    Setting("ratio-1to1", 10.0, 0.001),
    Setting("ratio-4to1", 2.5, 0.001),
    Setting("loss-0", 5.0, 0.0),
    Setting("loss-1pct", 5.0, 0.01),
)
#: ``--quick``: seconds per run (a smoke test of the pipeline, not the reproduction).
QUICK_DURATION_S = 5.0


@dataclass(frozen=True)
class Dataset:
    """One compare dataset: a setting's runs (``out/runs/<setting>``), and how many this call
    ran and reused."""

    setting: Setting
    path: Path
    duration_s: float
    ran: int = 0
    reused: int = 0


def scenario_copy(base: Dict[str, Any], s: Setting, quick: bool) -> Dict[str, Any]:
    """The scenario with setting ``s`` (path2's rate, both paths' loss, and the optional fields
    of :class:`Setting`); with ``quick`` its duration is :data:`QUICK_DURATION_S`."""
    out = copy.deepcopy(base)
    out["sim"]["name"] = f"pdaa3c-{s.name}"
    for i, p in enumerate(out["paths"]):
        p["loss"] = {"model": "bernoulli", "p": s.loss}
        if p["name"] == "path2":
            p["rate_mbps"] = s.path2_mbps
        if s.queue_packets is not None:
            p.pop("queue_bytes", None)
            p["queue_packets"] = s.queue_packets
        if s.delays_ms is not None:
            p["delay_ms"] = s.delays_ms[i]
    for f in out["flows"]:
        if s.rcv_buf_bytes is not None:
            f["rcv_buf_bytes"] = s.rcv_buf_bytes
        if s.mss is not None:
            f["mss"] = s.mss
    if quick:
        out["sim"]["duration_s"] = QUICK_DURATION_S
    return out


def capacities_mbps(scenario: Dict[str, Any]) -> List[float]:
    """Each path's rate in Mbit/s, in path (= subflow) order."""
    return [float(p["rate_mbps"]) for p in scenario["paths"]]


def run_all(
    out: Path,
    seeds: Sequence[int],
    *,
    scenario_dir: Path,
    settings: Sequence[Setting] = SETTINGS,
    schedulers: Sequence[str] = SCHEDULERS,
    jobs: int = 2,
    quick: bool = False,
    log=lambda message: None,
) -> List[Dataset]:
    """Runs every setting × scheduler × seed not already in ``out/runs``; the datasets in the
    order of ``settings``."""
    base = load_scenario(scenario_dir / "pdaa3c.toml")
    datasets = []
    for s in settings:
        scenario = scenario_copy(base, s, quick)
        path = _common.write_scenario(scenario, out, f"pdaa3c-{s.name}")
        dest = out / "runs" / s.name
        log(f"{s.name} ({s.label()})")
        m = build_matrix(path, seeds=list(seeds), schedulers=list(schedulers))
        res = run_sweep(m, dest, jobs=jobs)
        datasets.append(Dataset(s, dest, scenario["sim"]["duration_s"], res.ran, res.reused))
    return datasets
