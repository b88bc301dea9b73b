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
    fig, ax = plt.subplots(figsize=(7, 3.2))
    for sched, by in costs.items():
        steps = [int(n) for n in by]
        m = [by[n][0] for n in by]
        ci = [by[n][1] or 0.0 for n in by]
        ax.errorbar(
            steps, m, yerr=ci, marker="o", capsize=2, label=f"{LABELS.get(sched, sched)} (ours)"
        )
    ax.axhspan(18.8e3, 40.7e3, color="0.85", label="letter's PDAA3C: 18.8-40.7 ms")
    ax.set_yscale("log")
    ax.set(xlabel="execution steps (decisions)", ylabel="decision cost (µs, log)",
           title="Fig. 2: decision cost (Rust runtime vs the letter's Python agent)")  # fmt: skip
    ax.legend(fontsize=7)
    fig.tight_layout()
    _save(fig, fig_dir, "fig2-decision-cost", written)
    plt.close(fig)


def _sensitivity(plt: Any, table: Dict[str, Any], fig_dir: Path, written: List[Path]) -> None:
    names = [s.name for s in runs.SETTINGS if s.name in table]
    labels = {s.name: s.label().replace(", ", "\n") for s in runs.SETTINGS}
    scheds = list(runs.SCHEDULERS)
    for metric, ylabel, stem in (
        ("bound_frac", "goodput / upper bound", "sensitivity-goodput"),
        ("jain6", "Jain's index, eq. 6", "sensitivity-fairness"),
    ):
        fig, ax = plt.subplots(figsize=(9, 3.6))
        w = 0.8 / len(scheds)
        for j, v in enumerate(scheds):
            vals = [_cell(table[n], metric, v) for n in names]
            xs = [i + (j - (len(scheds) - 1) / 2) * w for i in range(len(names))]
            ax.bar(
                xs, [a[0] for a in vals], w, yerr=[a[1] for a in vals], capsize=1, label=LABELS[v]
            )
        ax.set_xticks(range(len(names)), [labels[n] for n in names], fontsize=7)
        ax.set(ylabel=ylabel, ylim=(0.4, 1.02), title=f"Sensitivity: {ylabel} (mean, 95 % CI)")
        ax.legend(fontsize=6, ncol=5, loc="lower right")
        fig.tight_layout()
        _save(fig, fig_dir, stem, written)
        plt.close(fig)


def figures(
    table: Dict[str, Any], costs: Dict[str, Any], bounds: Dict[str, float], fig_dir: Path
) -> List[Path]:
    """Writes every figure under ``fig_dir`` and returns the paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

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
