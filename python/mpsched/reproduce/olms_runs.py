"""The runs of ``mpsched reproduce olms``: which scenario copies run with which schedulers.

Every figure of the OLMS paper (Cai et al., IEEE TNSE 2025, ``olms.txt`` §VI) is a *case*, built
from a shipped scenario (``scenarios/olms-app1.toml``, ``olms-app2.toml``,
``olms-dumbbell.toml``) with the overrides below, in two *regimes*:

* ``loss`` — the paper's stated random loss rates (App I: 1.00/1.19/1.50/1.56 %; Wi-Fi/LTE:
  1.56/0.8 %). Every scheduler is loss-limited here: OLIA at 1-1.5 % loss and 40-120 ms RTT
  gets a few Mbit/s per path (Mathis et al.), about 4 % of the paths' capacity.
* ``noloss`` — the same paths without random loss: drops only at the bottleneck queue. The
  paper reports OLMS using 22-98 % (App I) and 25-99 % (App II) of its paths' bandwidth, which a
  Reno-like controller cannot reach at the stated loss rates; this regime is the one whose
  utilization is comparable. Its parameters were fixed before any run: the paper's rates and
  delays, no random loss, the simulator's default bottleneck queue (one bandwidth-delay
  product; the paper does not give its tc queue: see the sensitivity sweep).

App II has no loss rates in the paper, so it runs once (``noloss``).

Each (case, regime, variant) is one scenario copy (``out/scenarios/<case>-<regime>-<variant>.json``)
in which the *first* flow runs the variant's scheduler (the dumbbell's second flow keeps OLMS,
as in Fig. 9) and one compare dataset (``out/runs/<regime>/<case>/<variant>``, resumable).
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ..matrix import build_matrix, load_scenario
from ..sweep import run_sweep
from . import _common

#: The baselines the paper names (§VI: RR, minRTT, ECF, BLEST, Peekaboo). The paper's MPQUIC
#: minRTT has no opportunistic retransmission: ``minrtt-norp``.
PAPER_BASELINES = ("minrtt-norp", "rr", "ecf", "blest", "peekaboo")
#: Our strongest schedulers, not in the paper: Linux minRTT (opportunistic retransmission and
#: penalization on) and redundant.
EXTRA_BASELINES = ("minrtt", "redundant")
BASELINES = PAPER_BASELINES + EXTRA_BASELINES

#: OLMS variants: name -> OLMS parameters set on the flow. ``olms`` is the paper's scheduler as
#: its MPQUIC prototype ran it: minRTT fallback when no sampled path has window space (§VI-B),
#: no opportunistic retransmission (MPQUIC has none), monitor on (q = 20, δ = 3, h = 3).
OLMS_VARIANTS: Dict[str, Dict[str, Any]] = {
    "olms": {"opportunistic": False},
    "olms+rp": {},
    "olms+wait": {"opportunistic": False, "on_busy": "wait"},
}
#: Fig. 7: OLMS without the Path Characteristic Measurements Monitor.
NOPM = "olms-nopm"
NOPM_PARAMS = {"opportunistic": False, "monitor": False}
#: Figs. 11-12: the decision cycle lengths (cyclic LP solving, §VI-E2).
CYCLES = (1, 2, 5)
#: Fig. 13: (Wi-Fi, LTE) bandwidths in Mbit/s (§VI-E3: 40-400 and 20-200 Mbit/s).
FIG13_BW = ((40, 20), (100, 50), (400, 200))

REGIMES = ("loss", "noloss")
#: First-20-s window of Figs. 3-4 (§VI-B: "we present the first 20-second experiment results").
WINDOW_S = 20.0
MB = 1_000_000


@dataclass(frozen=True)
class Case:
    """One figure's runs.

    Attributes:
        name: short key (``app1``, ``web-youtube`` …).
        fig: the paper's figure.
        label: a human label.
        base: the shipped scenario stem it is built from.
        variants: the variants run (names of :data:`BASELINES`, :data:`OLMS_VARIANTS`, …).
        edit: changes the scenario dict in place (size, duration, paths).
        regimes: the regimes it runs in.
    """

    name: str
    fig: str
    label: str
    base: str
    variants: Tuple[str, ...]
    edit: Callable[[Dict[str, Any]], None] = field(compare=False, default=lambda s: None)
    regimes: Tuple[str, ...] = REGIMES


def _bulk_20s(sc: Dict[str, Any]) -> None:
    """Figs. 3-4: a transfer much larger than 20 s can carry (the paper's 5 GB / 500 MB), 20 s."""
    sc["sim"]["duration_s"] = WINDOW_S
    sc["flows"][0]["size_bytes"] = 5000 * MB


def _sized(mb: float, duration_s: float) -> Callable[[Dict[str, Any]], None]:
    def edit(sc: Dict[str, Any]) -> None:
        sc["sim"]["duration_s"] = duration_s
        for f in sc["flows"]:
            f["size_bytes"] = int(mb * MB)

    return edit


def _web(mb: float) -> Callable[[Dict[str, Any]], None]:
    """Fig. 5: one page over one connection (the MPQUIC web server multiplexes the page's objects
    on one connection; we transfer the page's bytes as one download: an assumption), on the
    Wi-Fi/LTE paths of §VI-D1 (20 / 5 Mbit/s, RTT 20 / 60 ms, loss 1.56 / 0.8 %)."""

    def edit(sc: Dict[str, Any]) -> None:
        sc["flows"] = sc["flows"][:1]
        sc["paths"][0]["rate_mbps"], sc["paths"][1]["rate_mbps"] = 20, 5
        _sized(mb, 60.0)(sc)

    return edit


#: Run length of the large transfers (MB -> s). At the paper's loss rates every scheduler is
#: loss-limited (App I: about 5.4 Mbit/s for OLMS, 4 Mbit/s with Fig. 7's dynamic bandwidth,
#: redundant about half), so a run must last several times the transfer at that rate for every
#: variant to finish: a run that ends first has no FCT for that seed (the claim then has fewer
#: seeds). 300 s (before 2026-11-27) cut Fig. 7's dynamic bandwidth for every scheduler and left
#: OLMS 5 s of margin at 200 MB; 1500 MB was not run.
LONG_S = {200: 900.0, 1500: 6000.0}


def _dynamic(kind: str) -> Callable[[Dict[str, Any]], None]:
    """Fig. 7 (§VI-D3): every 10 s, paths 1-2 at 1 Mbit/s then back, paths 3-4 then at 2 Mbit/s
    (``bw``), or path 2's RTT 100 ms then 30 ms, path 4's 10 ms then 60 ms (``rtt``); 200 MB."""

    def edit(sc: Dict[str, Any]) -> None:
        _sized(200, LONG_S[200])(sc)
        dur = sc["sim"]["duration_s"]
        p = sc["paths"]
        for k in range(int(dur // 10)):
            t0 = 10.0 * k
            if kind == "bw":
                for i, base in ((0, 30), (1, 20)):
                    _at(p[i], t0, rate_mbps=1)
                    _at(p[i], t0 + 5, rate_mbps=base)
                for i, base in ((2, 60), (3, 40)):
                    _at(p[i], t0, rate_mbps=base)
                    _at(p[i], t0 + 5, rate_mbps=2)
            else:
                _at(p[1], t0, delay_ms=50.0)
                _at(p[1], t0 + 5, delay_ms=15.0)
                _at(p[3], t0, delay_ms=5.0)
                _at(p[3], t0 + 5, delay_ms=30.0)

    return edit


def _at(path: Dict[str, Any], t: float, **change: float) -> None:
    path.setdefault("schedule", []).append({"at_s": t, **change})


def _fig13(wifi: float, lte: float) -> Callable[[Dict[str, Any]], None]:
    """Fig. 13: the Fig. 8 paths at other bandwidths, one 30 MB flow (the paper gives no size;
    its Figs. 11-12 use 10-50 MB)."""

    def edit(sc: Dict[str, Any]) -> None:
        sc["flows"] = sc["flows"][:1]
        sc["paths"][0]["rate_mbps"], sc["paths"][1]["rate_mbps"] = wifi, lte
        _sized(30, 120.0)(sc)

    return edit


_ALL = ("olms", "olms+rp", "olms+wait", *BASELINES)
_APP2 = ("olms", "olms+wait", *BASELINES)
_FCT = ("olms", *BASELINES)


def cases() -> List[Case]:
    """Every case, in the order they run within a regime: the paper's headline figures first
    (Figs. 3, 4, 9), the most expensive (200 MB, Figs. 6-7) last. ``olms+rp`` and ``olms+wait``
    run where they explain the headline (App I; App II: ``olms+wait``)."""
    out = [
        Case("app1", "Fig. 3", "App I: maxRTT 50 ms, first 20 s", "olms-app1", _ALL, _bulk_20s),
        Case("app2", "Fig. 4", "App II: bandwidth 40 Mbit/s, first 20 s", "olms-app2", _APP2,
             _bulk_20s, ("noloss",)),
        Case("dumbbell", "Fig. 9", "Dumbbell, flow 1 (flow 2: OLMS), 10 MB", "olms-dumbbell",
             _FCT),
        Case("web-google", "Fig. 5", "Web: Google (1.67 MB)", "olms-dumbbell", _FCT, _web(1.67)),
        Case("web-youtube", "Fig. 5", "Web: YouTube (16.6 MB)", "olms-dumbbell", _FCT, _web(16.6)),
    ]  # fmt: skip
    for wifi, lte in FIG13_BW:
        out.append(
            Case(f"bw-{wifi}", "Fig. 13", f"Wi-Fi/LTE {wifi}/{lte} Mbit/s, 30 MB",
                 "olms-dumbbell", ("olms", "minrtt-norp"), _fig13(wifi, lte))
        )  # fmt: skip
    out += [
        Case("cycle", "Fig. 12", "Decision cycle, dumbbell, 30 MB each", "olms-dumbbell",
             tuple(f"olms-cycle{c}" for c in CYCLES), _sized(30, 120.0)),
        Case("size-5mb", "Fig. 6", "Flow size 5 MB (App I paths)", "olms-app1", _FCT,
             _sized(5, 120.0)),
        Case("size-200mb", "Fig. 6", "Flow size 200 MB (App I paths)", "olms-app1", _FCT,
             _sized(200, LONG_S[200])),
        Case("size-1500mb", "Fig. 6", "Flow size 1500 MB (App I paths)", "olms-app1", _FCT,
             _sized(1500, LONG_S[1500])),
        Case("dyn-bw", "Fig. 7", "Dynamic bandwidth, 200 MB", "olms-app1", (*_FCT, NOPM),
             _dynamic("bw")),
        Case("dyn-rtt", "Fig. 7", "Dynamic RTT, 200 MB", "olms-app1", (*_FCT, NOPM),
             _dynamic("rtt")),
    ]  # fmt: skip
    return out


def case_names() -> List[str]:
    return [c.name for c in cases()]


def scheduler_of(variant: str) -> Tuple[str, Optional[Dict[str, Any]]]:
    """(scheduler name, OLMS parameters to set or None) of a variant."""
    if variant in OLMS_VARIANTS:
        return "olms", OLMS_VARIANTS[variant]
    if variant == NOPM:
        return "olms", NOPM_PARAMS
    m = re.fullmatch(r"olms-cycle(\d+)", variant)
    if m:
        return "olms", {"opportunistic": False, "cycle": int(m.group(1))}
    return variant, None


def variant_scenario(
    case: Case, regime: str, variant: str, scenario_dir: Path, quick: bool = False
) -> Dict[str, Any]:
    """The scenario of one (case, regime, variant): the case's edits, the regime's losses, the
    variant's scheduler on the first flow (every flow for ``cycle``: both run OLMS)."""
    sc = load_scenario(scenario_dir / f"{case.base}.toml")
    case.edit(sc)
    if regime == "noloss":
        for p in sc["paths"]:
            p.pop("loss", None)
    if quick:
        sc["sim"]["duration_s"] = min(sc["sim"]["duration_s"], 4.0)
        for f in sc["flows"]:
            if f.get("size_bytes"):
                f["size_bytes"] = min(f["size_bytes"], 2 * MB)
    sched, params = scheduler_of(variant)
    flows = sc["flows"] if case.name == "cycle" else sc["flows"][:1]
    for f in flows:
        f["scheduler"] = sched
        if params is not None:
            f.setdefault("scheduler_params", {}).setdefault("olms", {}).update(
                copy.deepcopy(params)
            )
    return sc


@dataclass(frozen=True)
class Dataset:
    """One compare dataset: a (case, regime, variant) over the seeds."""

    case: str
    regime: str
    variant: str
    path: Path
    scenario: Dict[str, Any] = field(compare=False, hash=False)


def run_all(
    out: Path,
    seeds: Sequence[int],
    *,
    scenario_dir: Path,
    only: Optional[Sequence[str]] = None,
    regimes: Sequence[str] = REGIMES,
    jobs: int = 2,
    quick: bool = False,
    variants: Optional[Sequence[str]] = None,
    modify: Optional[Callable[[Dict[str, Any]], None]] = None,
    run: bool = True,
    log: Callable[[str], None] = lambda m: None,
) -> List[Dataset]:
    """Runs every (case, regime, variant) not already in ``out/runs`` and returns the datasets;
    ``modify`` edits every scenario last (the sensitivity sweeps). With ``run`` false nothing
    runs: the datasets already complete in ``out/runs`` are returned."""
    done: List[Dataset] = []
    for regime, case, variant in _order(regimes):
        if only is not None and case.name not in only:
            continue
        if variants is not None and variant not in variants:
            continue
        sc = variant_scenario(case, regime, variant, scenario_dir, quick)
        if modify is not None:
            modify(sc)
        tag = re.sub(r"[^A-Za-z0-9_.+-]", "_", variant)
        path = _common.write_scenario(sc, out, f"{case.name}-{regime}-{tag}")
        dest = out / "runs" / regime / case.name / tag
        if run:
            log(f"{regime} {case.name} {variant}")
            run_sweep(build_matrix(path, seeds=list(seeds)), dest, jobs=jobs)
        elif not (dest / "flows.parquet").exists():
            continue
        done.append(Dataset(case.name, regime, variant, dest, sc))
    return done


def _order(regimes: Sequence[str]) -> List[Tuple[str, Case, str]]:
    """(regime, case, variant) in run order: OLMS and the baselines of the cases up to Fig. 13
    in every regime, then the explanatory ``olms+rp`` / ``olms+wait``, then Figs. 12, 6, 7
    (the most expensive), so that a cut-short run has the headline figures."""
    all_cases = cases()
    last = max(i for i, c in enumerate(all_cases) if c.name.startswith("bw-"))
    items = [
        (1 if "+" in v else 0 if i <= last else 2, k, i, j, regime, c, v)
        for k, regime in enumerate(REGIMES)
        if regime in regimes
        for i, c in enumerate(all_cases)
        if regime in c.regimes
        for j, v in enumerate(c.variants)
    ]
    return [(regime, c, v) for *_, regime, c, v in sorted(items, key=lambda it: it[:4])]


def cases_by_name() -> Dict[str, Case]:
    """:func:`cases` by name."""
    return {c.name: c for c in cases()}
