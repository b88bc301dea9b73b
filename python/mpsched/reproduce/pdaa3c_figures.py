"""Figures of ``mpsched reproduce pdaa3c`` (PDF and PNG, 95 % CIs over the seeds): Fig. 3
(each subflow's throughput, stacked, with the upper bound), Fig. 4 (eq. 6 fairness), Fig. 2
(decision cost vs steps, the letter's range beside ours) and the sensitivity of goodput and
fairness over the settings."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List

from . import pdaa3c_runs as runs

LABELS = {"pdaa3c": "PDAA3C", "rlds": "RLDS-proxy", "roundrobin": "RR", "minrtt": "minRTT",
          "minrtt-norp": "minRTT-norp", "blest": "BLEST", "ecf": "ECF", "stms": "STMS",
          "redundant": "redundant"}  # fmt: skip


def _save(fig: Any, fig_dir: Path, stem: str, written: List[Path]) -> None:
    for ext in ("pdf", "png"):
        path = fig_dir / f"{stem}.{ext}"
        fig.savefig(path, dpi=130)
        written.append(path)


def _cell(cells: Dict[str, Any], metric: str, v: str) -> List[float]:
    m, ci, _ = (cells.get(metric) or {}).get(v) or (0.0, 0.0, 0)
    return [m or 0.0, ci or 0.0]


def _fig3(plt: Any, base: Dict[str, Any], bound: float, fig_dir: Path, written: List[Path]) -> None:
    scheds = [v for v in runs.SCHEDULERS if v in (base.get("goodput") or {})]
    fig, ax = plt.subplots(figsize=(8, 3.6))
    s0 = [_cell(base, "sub0", v) for v in scheds]
    s1 = [_cell(base, "sub1", v) for v in scheds]
    x = range(len(scheds))
    ax.bar(
        x, [a[0] for a in s0], 0.6, yerr=[a[1] for a in s0], capsize=2, label="subflow 1 (30 ms)"
    )
    ax.bar(x, [a[0] for a in s1], 0.6, bottom=[a[0] for a in s0], capsize=2,
           yerr=[a[1] for a in s1], label="subflow 2 (60 ms)")  # fmt: skip
    ax.axhline(bound, color="k", ls="--", lw=1, label=f"upper bound {bound:.2f} Mbit/s")
    ax.set_xticks(list(x), [LABELS[v] for v in scheds], fontsize=8)
    ax.set(ylabel="throughput (Mbit/s)", title="Fig. 3: subflow throughput (base; mean, 95 % CI)")
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    _save(fig, fig_dir, "fig3-subflow-throughput", written)
    plt.close(fig)


def _fig4(plt: Any, base: Dict[str, Any], fig_dir: Path, written: List[Path]) -> None:
    scheds = [v for v in runs.SCHEDULERS if v in (base.get("jain6") or {})]
    fig, ax = plt.subplots(figsize=(8, 3.2))
    vals = [_cell(base, "jain6", v) for v in scheds]
    ax.bar(range(len(scheds)), [a[0] for a in vals], 0.6, yerr=[a[1] for a in vals], capsize=2)
    ax.set_xticks(range(len(scheds)), [LABELS[v] for v in scheds], fontsize=8)
    ax.set(ylabel="Jain's index, eq. 6", ylim=(0.5, 1.01),
           title="Fig. 4: subflow fairness (eq. 6, capacity-weighted; base; mean, 95 % CI)")  # fmt: skip
    fig.tight_layout()
    _save(fig, fig_dir, "fig4-fairness", written)
    plt.close(fig)


def _fig2(plt: Any, costs: Dict[str, Any], fig_dir: Path, written: List[Path]) -> None:
    """Both axes log (steps 100-2000, costs µs against the letter's ms); a CI whose low end is
    ≤ 0 cannot be drawn on a log axis: its lower bar stops at 1/10 of the mean (said in the
    legend)."""
    fig, ax = plt.subplots(figsize=(7, 3.2))
    clipped = False
    for sched, by in costs.items():
        steps = [int(n) for n in by]
        m = [by[n][0] for n in by]
        ci = [by[n][1] or 0.0 for n in by]
        low = [min(c, 0.9 * v) for c, v in zip(ci, m)]
        clipped = clipped or any(lo < c for lo, c in zip(low, ci))
        ax.errorbar(steps, m, yerr=[low, ci], marker="o", capsize=2,
                    label=f"{LABELS.get(sched, sched)} (ours; mean, 95 % CI)")  # fmt: skip
    ax.axhspan(18.8e3, 40.7e3, color="0.85", label="letter's PDAA3C: 18.8-40.7 ms")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ticks = sorted({int(n) for by in costs.values() for n in by})
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.minorticks_off()
    if clipped:
        ax.plot([], [], " ", label="CI low end ≤ 0: bar stops at mean/10")
    ax.set(xlabel="execution steps (decisions, log)", ylabel="decision cost (µs, log)",
           title="Fig. 2: decision cost (Rust runtime vs the letter's Python agent)")  # fmt: skip
    ax.legend(fontsize=7)
    fig.tight_layout()
    _save(fig, fig_dir, "fig2-decision-cost", written)
    plt.close(fig)


def _sensitivity(plt: Any, table: Dict[str, Any], fig_dir: Path, written: List[Path]) -> None:
    names = [s.name for s in runs.SETTINGS if s.name in table]
    labels = {s.name: s.label().replace(", ", "\n") for s in runs.SETTINGS}
    sensitivity_bars(plt, table, names, labels, fig_dir, "sensitivity", written)


def sensitivity_bars(
    plt: Any, table: Dict[str, Any], names: List[str], labels: Dict[str, str], fig_dir: Path,
    prefix: str, written: List[Path],
) -> None:  # fmt: skip
    """Goodput / bound and eq. 6 fairness of every scheduler per setting (``table``: {setting:
    {metric: {scheduler: [mean, ci, n]}}}), as ``<prefix>-goodput`` and ``<prefix>-fairness``."""
    scheds = list(runs.SCHEDULERS)
    for metric, ylabel, stem in (
        ("bound_frac", "goodput / upper bound", f"{prefix}-goodput"),
        ("jain6", "Jain's index, eq. 6", f"{prefix}-fairness"),
    ):
        fig, ax = plt.subplots(figsize=(max(9, 1.5 * len(names)), 3.6))
        w = 0.8 / len(scheds)
        for j, v in enumerate(scheds):
            vals = [_cell(table[n], metric, v) for n in names]
            xs = [i + (j - (len(scheds) - 1) / 2) * w for i in range(len(names))]
            ax.bar(
                xs, [a[0] for a in vals], w, yerr=[a[1] for a in vals], capsize=1, label=LABELS[v]
            )
        ax.set_xticks(range(len(names)), [labels[n] for n in names], fontsize=7)
        low = min([0.4] + [_cell(table[n], metric, v)[0] - 0.05 for n in names for v in scheds])
        ax.set(
            ylabel=ylabel,
            ylim=(max(0.0, low), 1.02),
            title=f"Sensitivity: {ylabel} (mean, 95 % CI)",
        )
        ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))  # beside the bars
        fig.tight_layout()
        _save(fig, fig_dir, stem, written)
        plt.close(fig)


def plt_agg() -> Any:
    """matplotlib's pyplot on the Agg backend (no display)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def figures(
    table: Dict[str, Any], costs: Dict[str, Any], bounds: Dict[str, float], fig_dir: Path
) -> List[Path]:
    """Writes every figure under ``fig_dir`` and returns the paths."""
    plt = plt_agg()
    fig_dir.mkdir(parents=True, exist_ok=True)
    written: List[Path] = []
    base = table.get(runs.BASE.name, {})
    if base:
        _fig3(plt, base, bounds[runs.BASE.name], fig_dir, written)
        _fig4(plt, base, fig_dir, written)
    if costs:
        _fig2(plt, costs, fig_dir, written)
    if len(table) > 1:
        _sensitivity(plt, table, fig_dir, written)
    return written
