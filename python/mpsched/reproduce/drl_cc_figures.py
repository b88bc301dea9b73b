"""Figures of ``mpsched reproduce drl-cc`` (PDF and PNG): per-scenario bars with 95 % CIs
(Figs. 3a, 4a-c, 5, 6, 9), Jain's index (Fig. 3b), TCP and MPTCP per-flow goodput in
scenario 7 (Fig. 8) and scenario 6's total goodput over time with the outage shaded (Fig. 7)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Sequence

from . import drl_cc_runs as runs
from .drl_cc_claims import LABELS

#: The metric each scenario's bars show (as the paper's figure of that scenario).
BAR_METRIC = {
    "1": "doc_goodput", "2": "doc_goodput", "3": "doc_goodput", "4": "doc_goodput",
    "5": "total_goodput", "6": "total_goodput", "8": "flow_goodput",
}  # fmt: skip
AXIS = {
    "1": "document size (MB)",
    "2": "bandwidth b1 = b2 (Mbit/s)",
    "3": "RTT d1 = d2 (ms)",
    "4": "loss p1 = p2 (%)",
}
YLABEL = {
    "doc_goodput": "per-flow goodput (Mbit/s)",
    "total_goodput": "total goodput (Mbit/s)",
    "flow_goodput": "per-flow goodput (Mbit/s)",
    "tcp_goodput": "per-flow goodput (Mbit/s)",
    "jain": "Jain's index (MPTCP flows)",
}


def _tick(scenario: str, point: str) -> str:
    """The paper's unit for a sweep value (the scenario files sweep bytes, one-way ms, p)."""
    if not point:
        return ""
    v = float(point)
    return {
        "1": f"{v / 2**20:g}",
        "2": f"{v:g}",
        "3": f"{2 * v:g}",
        "4": f"{100 * v:g}",
    }.get(scenario, point)


def _save(fig: Any, fig_dir: Path, stem: str, written: List[Path]) -> None:
    for ext in ("pdf", "png"):
        path = fig_dir / f"{stem}.{ext}"
        fig.savefig(path, dpi=130)
        written.append(path)


def _bars(
    ax: Any, groups: Sequence[str], cells: Sequence[Dict[str, Any]], variants: Sequence[str]
) -> None:
    """Grouped bars: one group per entry of ``groups``, one bar per variant with its CI."""
    w = 0.8 / max(1, len(variants))
    for j, v in enumerate(variants):
        means = [(c.get(v) or [0, 0])[0] or 0 for c in cells]
        errs = [(c.get(v) or [0, 0])[1] or 0 for c in cells]
        xs = [i + (j - (len(variants) - 1) / 2) * w for i in range(len(groups))]
        ax.bar(xs, means, w, yerr=errs, capsize=2, label=LABELS.get(v, v))
    ax.set_xticks(range(len(groups)), list(groups))


def figures(
    table: Dict[str, Any], timeline: Dict[str, Any], fig_dir: Path, *, outage_s: float
) -> List[Path]:
    """Writes every figure under ``fig_dir`` and returns the paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig_dir.mkdir(parents=True, exist_ok=True)
    written: List[Path] = []
    variants = list(runs.CCS)
    for scenario, metric in BAR_METRIC.items():
        if table.get(scenario):
            _scenario_bars(plt, table[scenario], scenario, metric, variants)
            _finish(plt, fig_dir, f"scenario-{scenario}", written)
    if "1" in table:
        _jain_bars(plt, table["1"], variants)
        _finish(plt, fig_dir, "scenario-1-jain", written, legend_loc="lower right")
    if "7" in table:
        _friendliness_bars(plt, table["7"][""], variants)
        _finish(plt, fig_dir, "scenario-7", written)
    if timeline:
        _timeline(plt, timeline, variants, outage_s)
        _finish(plt, fig_dir, "scenario-6-time", written)
    return written


def _finish(
    plt: Any, fig_dir: Path, stem: str, written: List[Path], legend_loc: str = "best"
) -> None:
    """Legend, layout, PNG + PDF of the current figure; closes it."""
    fig = plt.gcf()
    fig.axes[0].legend(fontsize=7, ncol=4, loc=legend_loc)
    fig.tight_layout()
    _save(fig, fig_dir, stem, written)
    plt.close(fig)


def _scenario_bars(
    plt: Any, points: Dict[str, Any], scenario: str, metric: str, variants: List[str]
) -> None:
    _, ax = plt.subplots(figsize=(7.5, 3.4))
    keys = list(points)
    _bars(
        ax, [_tick(scenario, p) for p in keys], [points[p].get(metric, {}) for p in keys], variants
    )
    ax.set(ylabel=YLABEL[metric], xlabel=AXIS.get(scenario, ""),
           title=f"Scenario {scenario} (mean, 95 % CI)")  # fmt: skip


def _jain_bars(plt: Any, points: Dict[str, Any], variants: List[str]) -> None:
    _, ax = plt.subplots(figsize=(7.5, 3.2))
    keys = list(points)
    _bars(ax, [_tick("1", p) for p in keys], [points[p].get("jain", {}) for p in keys], variants)
    ax.set(ylabel=YLABEL["jain"], xlabel=AXIS["1"], title="Scenario 1: fairness (Fig. 3b)",
           ylim=(0.8, 1.01))  # fmt: skip


def _friendliness_bars(plt: Any, cell: Dict[str, Any], variants: List[str]) -> None:
    _, ax = plt.subplots(figsize=(7.5, 3.2))
    _bars(ax, ["TCP flows (Reno)", "MPTCP flows"],
          [cell.get("tcp_goodput", {}), cell.get("flow_goodput", {})], variants)  # fmt: skip
    ax.set(ylabel="per-flow goodput (Mbit/s)",
           title="Scenario 7: TCP-friendliness (Fig. 8; legend: MPTCP flows' cc)")  # fmt: skip


def _timeline(plt: Any, timeline: Dict[str, Any], variants: List[str], outage_s: float) -> None:
    _, ax = plt.subplots(figsize=(7.5, 3.4))
    end = max(t for s in timeline.values() for t, _, _ in s)
    if end > outage_s:  # the outage lies within the run
        ax.axvspan(outage_s, end, color="0.9", lw=0, label="link2 down")
    for v in (v for v in variants if v in timeline):
        t, m, ci = zip(*timeline[v])
        line = ax.plot(t, m, lw=1.6 if v == "drl-cc" else 0.9, label=LABELS.get(v, v))[0]
        ax.fill_between(t, [a - b for a, b in zip(m, ci)], [a + b for a, b in zip(m, ci)],
                        color=line.get_color(), alpha=0.15, lw=0)  # fmt: skip
    ax.set_ylim(bottom=0)
    ax.set(xlabel="time (s)", ylabel="total goodput (Mbit/s)",
           title="Scenario 6: goodput over time (Fig. 7; band: 95 % CI)")  # fmt: skip
