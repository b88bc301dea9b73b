"""Statistics across seeds: means with Student-t 95 % confidence intervals, per-variant summaries.

A *variant* is one point of a compare matrix without the seed (a scheduler, a congestion
control, or both); its runs differ only in the seed, so the spread across them is the
run-to-run noise that the confidence interval describes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional, Sequence, Tuple

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "t_quantile_975",
    "mean_ci",
    "SummaryRow",
    "summarize",
    "jain_columns",
    "seed_identical_variants",
]

# Two-sided 95 % quantiles of Student's t distribution (the 0.975 quantile) for 1..30 degrees
# of freedom; beyond 30 a Cornish-Fisher expansion around the normal quantile is used.
_T975 = (
    12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
    2.2010, 2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
    2.0796, 2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423,
)  # fmt: skip
_Z975 = 1.959963984540054


def t_quantile_975(df: int) -> float:
    """The 0.975 quantile of Student's t with ``df`` >= 1 degrees of freedom."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {df}")
    if df <= len(_T975):
        return _T975[df - 1]
    z = _Z975
    return (
        z
        + (z**3 + z) / (4 * df)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3)
    )


def mean_ci(values: Iterable[float]) -> Tuple[Optional[float], Optional[float]]:
    """Mean and half-width of its 95 % confidence interval (Student's t).

    Missing values (None, NaN) are ignored. Returns ``(None, None)`` without values and
    ``(mean, None)`` with a single one (no spread to estimate).
    """
    xs = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    if not xs:
        return None, None
    n = len(xs)
    mean = math.fsum(xs) / n
    if n < 2:
        return mean, None
    var = math.fsum((x - mean) ** 2 for x in xs) / (n - 1)
    return mean, t_quantile_975(n - 1) * math.sqrt(var / n)


def _mean(values: Iterable[float]) -> Optional[float]:
    return mean_ci(values)[0]


@dataclass(frozen=True)
class SummaryRow:
    """One variant's figures for one flow, averaged over its runs (seeds).

    ``scheduler`` is the variant's scheduler for a multipath flow and "—" for a single-path
    one; ``cc`` is the flow's congestion control.
    """

    variant: str
    scheduler: str
    cc: str
    flow: str
    runs: int
    goodput_mbps: Optional[float]
    goodput_ci_mbps: Optional[float]
    sized: bool  # the flow has a size (so it can complete)
    completed: int  # runs in which the flow completed
    fct_s: Optional[float]  # mean over completed runs
    retransmits: Optional[float]
    rto_count: Optional[float]
    reinjected_bytes: Optional[float]
    mean_ooo_bytes: Optional[float]
    rwnd_full_s: Optional[float]
    params: str = ""  # the swept parameters' values of the variant (empty without sweeps)
    # Jain's fairness index of the run's flows' goodputs (a per-run figure: the same for every
    # flow row of the variant), mean and 95 % CI half-width over the runs where it is defined,
    # over the MPTCP flows and over all flows; the most flows it covered in one run.
    jain_mptcp: Optional[float] = None
    jain_mptcp_ci: Optional[float] = None
    mptcp_flows: int = 0
    jain_all: Optional[float] = None
    jain_all_ci: Optional[float] = None
    all_flows: int = 0
    engine: str = ""  # ``sim`` or ``kernel`` in a dataset of both engines, else empty


def jain_columns(fairness: Optional["pd.DataFrame"]) -> List[str]:
    """The Jain columns of a per-run fairness table (:attr:`mpsched.dataset.Dataset.fairness`)
    that say something: ``jain_mptcp`` if some run had two MPTCP flows or more (over one flow
    the index is 1 whatever happens), ``jain_all`` if some run had two flows or more and not
    only MPTCP ones (else it repeats ``jain_mptcp``). Each needs a defined value somewhere."""
    if fairness is None or fairness.empty:
        return []
    out = []
    mptcp = fairness["mptcp_flows"] > 1
    if (mptcp & fairness["jain_mptcp"].notna()).any():
        out.append("jain_mptcp")
    mixed = (fairness["all_flows"] > 1) & (fairness["all_flows"] != fairness["mptcp_flows"])
    if (mixed & fairness["jain_all"].notna()).any():
        out.append("jain_all")
    return out


def _fairness(fairness: Optional["pd.DataFrame"], variant: str) -> Dict[str, Any]:
    """The Jain fields of :class:`SummaryRow` for one variant (defaults without fairness data)."""
    if fairness is None or fairness.empty:
        return {}
    sel = fairness[fairness["variant"] == variant]
    if sel.empty:
        return {}
    out: Dict[str, Any] = {}
    for which, count in (("jain_mptcp", "mptcp_flows"), ("jain_all", "all_flows")):
        out[which], out[f"{which}_ci"] = mean_ci(sel[which])
        most = sel[count].max()
        out[count] = 0 if math.isnan(most) else int(most)
    return out


def summarize(
    flows: "pd.DataFrame", variants: Sequence[str], fairness: Optional["pd.DataFrame"] = None
) -> List[SummaryRow]:
    """Per-variant, per-flow means over runs of a flows table with ``variant`` and run columns.

    ``flows`` is the flows table of a :class:`~mpsched.dataset.Dataset` (one row per run and
    flow); rows come out in ``variants`` order, then in flow order. ``fairness``, the dataset's
    per-run fairness table, adds each variant's mean Jain indices with their 95 % CIs.
    """
    rows: List[SummaryRow] = []
    flow_names = list(dict.fromkeys(flows["name"]))
    for variant in variants:
        of_variant = flows[flows["variant"] == variant]
        fair = _fairness(fairness, variant)
        for flow in flow_names:
            sel = of_variant[of_variant["name"] == flow]
            if sel.empty:
                continue
            goodput, ci = mean_ci(sel["goodput_mbps"])
            done = sel[sel["completed"].astype(bool)]
            first = sel.iloc[0]
            multipath = int(first["subflows"]) > 1 or "+" in str(first["path"])
            rows.append(
                SummaryRow(
                    variant=variant,
                    scheduler=str(first["scheduler"]) if multipath else "—",
                    cc=str(first["flow_cc"]),
                    flow=flow,
                    runs=len(sel),
                    goodput_mbps=goodput,
                    goodput_ci_mbps=ci,
                    sized=bool(sel["size_bytes"].notna().any()),
                    completed=len(done),
                    fct_s=_mean(done["fct_s"]),
                    retransmits=_mean(sel["retransmits"]),
                    rto_count=_mean(sel["rto_count"]),
                    reinjected_bytes=_mean(sel["reinjected_bytes"]),
                    mean_ooo_bytes=_mean(sel["mean_ooo_bytes"]),
                    rwnd_full_s=_mean(sel["rwnd_full_s"]),
                    params=str(first["params"]) if "params" in sel.columns else "",
                    engine=str(first["engine"]) if "engine" in sel.columns else "",
                    **fair,
                )
            )
    return rows


#: Columns of a flows table that name the run rather than measure it.
_RUN_COLUMNS = frozenset(("run_id", "seed"))


def seed_identical_variants(flows: "pd.DataFrame", variants: Sequence[str]) -> List[str]:
    """The variants (in ``variants`` order) run with several seeds whose flow rows are all
    identical: nothing random differed between their seeds (a real trace replayed from the
    same point, no loss model, no random ranges), so their "± 0.00" is no confidence."""
    measured = [c for c in flows.columns if c not in _RUN_COLUMNS]
    out = []
    for variant in variants:
        sel = flows[flows["variant"] == variant]
        if sel["seed"].nunique() < 2:
            continue
        per_seed = [g[measured].reset_index(drop=True) for _, g in sel.groupby("seed", sort=True)]
        if all(p.equals(per_seed[0]) for p in per_seed[1:]):
            out.append(variant)
    return out
