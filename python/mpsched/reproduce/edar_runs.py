"""The runs of ``mpsched reproduce edar``: which scenario copies run with which schedulers,
through the ``compare`` machinery (:func:`mpsched.matrix.build_matrix`,
:func:`mpsched.sweep.run_sweep`; resumable: a finished run with the same scenario hash is
kept), and EdAR-o's online adaptation in every evaluation network.

**Cases.** The handoff scenario (Table III, Figs. 8-9), settings i-v (Table II, Fig. 12), the
FCT sweeps over path 2's delay and loss (Figs. 10-11; the captions' numbering: Fig. 10 delay,
Fig. 11 loss) and the motivation (Figs. 2-3, §III): :func:`motivation_copies` derives two
5 Mbit/s, 25 ms, 0.1 % loss paths from ``edar-handoff.toml`` (same handoff times and ramp,
path 2's handoff delays scaled by 25/50 ms) and runs the MPTCP flow with minRTT and redundant
scheduling (the paper's ReMP), and a copy with two single-path TCP flows, one on each path
("TCP 1" and "TCP 2": they share no link, so each runs as if alone).

**EdAR-o** (§V-C: "each MPTCP server creates its own agent and retrains a customized model
online"): in every case EdAR-o is EdAR-p (the shipped offline-trained checkpoint) after
:data:`ADAPT_STEPS` steps of online learning (Algorithm 2) in that case's network
(:func:`adapt`; its episodes draw the network from the scenario's ranges, and a sweep becomes
the random range it spans, log-uniform for a log-spaced one (:func:`adaptation_copy`), so
EdAR-o adapts once per sweep over the whole swept range). The training
episodes reset the environment with seeds ``100_003 + episode`` (``Args.seed`` = 1) and draw
their scenario seeds (63-bit) from them: disjoint from the held-out seeds (a test checks it).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

from ..matrix import build_matrix, load_scenario
from ..sweep import run_sweep
from . import _common

CHECKPOINT_DIR = Path(__file__).resolve().parents[1] / "agents" / "checkpoints"
#: The shipped EdAR-p (offline learning on settings i-iii) and EdAR-o (then online, i-iii).
DEFAULT_P = CHECKPOINT_DIR / "edar-p.json"
DEFAULT_O = CHECKPOINT_DIR / "edar-default.json"

#: The paper's baselines (§VI: "minRTT [37], BLEST [50] ... Peekaboo [36]"; minRTT as ns-3
#: ran it, without opportunistic retransmission and penalization).
PAPER_BASELINES = ("minrtt-norp", "blest", "peekaboo")
#: Our strongest schedulers, not in the paper's evaluation (issue 20): Linux's minRTT with
#: opportunistic retransmission and penalization, ECF, redundant (every segment on every
#: subflow) and round-robin.
OUR_BASELINES = ("minrtt", "ecf", "redundant", "roundrobin")
BASELINES = PAPER_BASELINES + OUR_BASELINES
#: Every variant, in table order.
VARIANTS = ("edar-o", "edar-p") + BASELINES
#: Online steps (transmission intervals) of EdAR-o in each evaluation network.
ADAPT_STEPS = 4000
#: The motivation's schedulers (Figs. 2-3: minRTT and ReMP; Linux minRTT for reference).
MOTIVATION_SCHEDULERS = ("minrtt-norp", "minrtt", "redundant")


@dataclass(frozen=True)
class Case:
    """One evaluation network: ``name`` is the scenario stem, ``kind`` one of handoff /
    setting / sweep / motivation."""

    name: str
    kind: str
    label: str


CASES = (
    Case("edar-handoff", "handoff", "handoff (Table III)"),
    *(
        Case(f"edar-setting-{i}", "setting", f"setting {r}")
        for i, r in zip(range(1, 6), ("i", "ii", "iii", "iv", "v"))
    ),
    Case("edar-fct-delay", "sweep", "FCT vs path-2 delay (Fig. 10)"),
    Case("edar-fct-loss", "sweep", "FCT vs path-2 loss (Fig. 11)"),
    Case("edar-motivation", "motivation", "motivation (Figs. 2-3)"),
)
GROUPS = {
    "handoff": ["edar-handoff"],
    "settings": [c.name for c in CASES if c.kind == "setting"],
    "fct": ["edar-fct-delay", "edar-fct-loss"],
    "motivation": ["edar-motivation"],
}


@dataclass
class Dataset:
    """One compare dataset: its case, directory, the names of the scheduler column to rename
    (``edar:PATH`` → ``edar-p`` / ``edar-o``), and the runs this call ran / reused."""

    case: Case
    path: Path
    names: Dict[str, str] = field(default_factory=dict)
    part: str = ""
    ran: int = 0
    reused: int = 0


def motivation_copies(handoff: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
    """The motivation's two copies of the handoff scenario (module docstring): ``mptcp`` and
    ``tcp`` (two single-path flows)."""
    base = copy.deepcopy(handoff)
    base["sim"]["name"] = "edar-motivation"
    scale = 25.0 / float(base["paths"][1]["delay_ms"])
    for p in base["paths"]:
        p["rate_mbps"] = 5
        p["delay_ms"] = 25
        for ev in p.get("schedule", []):
            if "delay_ms" in ev:
                ev["delay_ms"] = round(ev["delay_ms"] * scale, 3)
    mptcp = copy.deepcopy(base)
    tcp = copy.deepcopy(base)
    flow = base["flows"][0]
    tcp["flows"] = [
        {k: v for k, v in flow.items() if k not in ("paths", "scheduler")}
        | {"name": f"tcp{i}", "path": p["name"]}
        for i, p in enumerate(base["paths"], start=1)
    ]
    return {"mptcp": mptcp, "tcp": tcp}


def adaptation_copy(x: Any) -> Any:
    """The network EdAR-o adapts in: the scenario with each sweep turned into the random range
    it spans (an env draws a value per episode), a log-spaced sweep into a log-uniform one."""
    if isinstance(x, dict):
        out = {k: adaptation_copy(v) for k, v in x.items()}
        if "range" in out and "steps" in out:
            del out["steps"]
            if out.pop("log", False):
                out["dist"] = "loguniform"
        return out
    if isinstance(x, list):
        return [adaptation_copy(v) for v in x]
    return x


def adapt(
    name: str,
    scenario: Path,
    checkpoint_p: Path,
    steps: int,
    out: Path,
    log: Callable,
    overrides: Optional[Mapping[str, Any]] = None,
) -> Path:
    """EdAR-o for one network: ``steps`` online steps from EdAR-p in ``scenario``, cached as
    ``out/adapted/<name>/edar-o.json`` (kept when it started from the same checkpoint with
    the same number of steps and the same ``overrides``). ``overrides``: other fields of
    :class:`~mpsched.agents.edar_args.Args` (``epsilon``, ``online_iterations``; the
    sensitivity sweeps), default the Args defaults."""
    from ..agents.edar import Args, train

    extra = dict(overrides or {})
    dest = out / "adapted" / name
    ck = dest / "edar-o.json"
    if ck.is_file():
        meta = json.loads(ck.read_text(encoding="utf-8")).get("train", {})
        same = all(meta.get(k) == v for k, v in extra.items())
        if meta.get("init") == str(checkpoint_p) and meta.get("online_steps") == steps and same:
            return ck
        import shutil

        shutil.rmtree(dest)
    log(
        f"EdAR-o learning online in {name} ({steps} steps{''.join(f', {k} {v}' for k, v in extra.items())})"
    )
    train(
        Args(
            scenario=[str(scenario)], out=str(dest), init=str(checkpoint_p), steps=steps, seed=1,
            **extra,
        ),
        log=lambda m: None,
    )  # fmt: skip
    return ck


def run_all(
    out: Path,
    seeds: Sequence[int],
    *,
    cases: Sequence[Case],
    checkpoint_p: Path,
    checkpoint_o: Path,
    adapt_steps: int,
    baselines: Sequence[str] = BASELINES,
    scenario_dir: Path,
    downloads: Optional[int] = None,
    jobs: int = 2,
    log: Callable = lambda message: None,
    modify: Optional[Callable[[str, Dict[str, Any]], None]] = None,
    adapt_args: Optional[Mapping[str, Any]] = None,
    edar_p: bool = True,
) -> List[Dataset]:
    """Runs every case × variant × sweep point × seed not already in ``out/runs`` (EdAR-o
    adapted first where ``adapt_steps`` > 0, else ``checkpoint_o``) and returns the datasets.
    For the sensitivity sweeps: ``modify(stem, scenario)`` edits each loaded scenario in place
    (the motivation's: the handoff scenario it is derived from), ``adapt_args`` go to
    :func:`adapt`, ``edar_p=False`` leaves EdAR-p out."""
    datasets: List[Dataset] = []
    for case in cases:
        stem = case.name.replace("motivation", "handoff")
        scenario = load_scenario(scenario_dir / f"{stem}.toml")
        if modify is not None:
            modify(stem, scenario)
        if case.kind == "motivation":
            for part, sc in motivation_copies(scenario).items():
                path = _common.write_scenario(sc, out, f"{case.name}-{part}")
                scheds = list(MOTIVATION_SCHEDULERS) if part == "mptcp" else None
                datasets.append(
                    _run(case, path, out / "runs" / case.name / part, scheds, seeds, {}, jobs, part)
                )
            continue
        if downloads is not None and case.kind == "sweep":
            for f in scenario.get("flows", []):
                if "repeat" in f:
                    f["repeat"] = downloads
        path = _common.write_scenario(scenario, out, case.name)
        ck_o = checkpoint_o
        if adapt_steps > 0:
            net = _common.write_scenario(adaptation_copy(scenario), out, f"{case.name}-adapt")
            ck_o = adapt(case.name, net, checkpoint_p, adapt_steps, out, log, adapt_args).resolve()
        p, o = f"edar:{checkpoint_p}", f"edar:{ck_o}"
        log(case.name)
        ds = _run(
            case,
            path,
            out / "runs" / case.name,
            [*baselines, *([p] if edar_p else []), o],
            seeds,
            {p: "edar-p", o: "edar-o"},
            jobs,
        )
        datasets.append(ds)
    return datasets  # fmt: skip


def _run(
    case: Case,
    path: Path,
    dest: Path,
    schedulers: Optional[Sequence[str]],
    seeds: Sequence[int],
    names: Dict[str, str],
    jobs: int,
    part: str = "",
) -> Dataset:
    matrix = build_matrix(
        path, seeds=list(seeds), schedulers=None if schedulers is None else list(schedulers)
    )
    res = run_sweep(matrix, dest, jobs=jobs)
    return Dataset(case, dest, names, part, res.ran, res.reused)


def training_scenario_seeds(first: int, count: int) -> List[int]:
    """The scenario seeds of EdAR's training episodes ``first .. first + count - 1`` (the
    environment draws each from its reset seed ``100_003 + episode``, ``Args.seed`` = 1)."""
    import numpy as np

    return [
        int(np.random.Generator(np.random.PCG64(100_003 + ep)).integers(0, 2**63 - 1))
        for ep in range(first, first + count)
    ]
