"""Figures of ``mpsched reproduce mptcp-rl`` (PDF and PNG), with 95 % CIs over the seeds:
mean FCT and total energy against the number of concurrent flows (Figs. 3, 4a-b, 4c-d), against
the number of WLAN paths (Fig. 5), bars for Fig. 6c-d's two dynamic scenarios; and the per-path
throughput over time in each of Fig. 6's scenarios (Fig. 6a-b: path 1, paths 2 + 3;
``fig6-throughput-loss``, ``fig6-throughput-cut``), one panel per scheduler, the median over
the seeds with their 25-75 % band (a throughput is never negative: a percentile band of the
seeds stays within their values, a t-interval of few seeds does not), the loss / cut period
shaded. Solid lines: MPTCP-RL and the paper's baselines; dashed: our schedulers."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple

from . import mptcp_rl_runs as runs
from .mptcp_rl_claims import LABELS

YLABEL = {"fct": "mean flow completion time (s)", "energy": "total device energy (J)"}
#: Time bins of the throughput figure (s).
BIN_S = 1.0


def _save(fig: Any, fig_dir: Path, stem: str, written: List[Path]) -> None:
    for ext in ("pdf", "png"):
        path = fig_dir / f"{stem}.{ext}"
        fig.savefig(path, dpi=130)
        written.append(path)


def _style(v: str) -> Dict[str, Any]:
    """One colour per scheduler (the order of :data:`runs.SCHEDULERS`); MPTCP-RL and the
    paper's baselines solid, ours dashed."""
    import matplotlib

    color = matplotlib.colormaps["tab20"](runs.SCHEDULERS.index(v) % 20)
    return {"color": "black" if v == "mptcp-rl" else color,
            "ls": "--" if v in runs.OUR_BASELINES else "-"}  # fmt: skip


def _lines(ax: Any, xs: Sequence[float], cells: Sequence[Dict[str, Any]], metric: str) -> None:
    """One line per scheduler with its CI as error bars."""
    for v in runs.SCHEDULERS:
        pts = [(x, c[metric][v]) for x, c in zip(xs, cells) if v in c.get(metric, {})]
        if pts:
            ax.errorbar([p[0] for p in pts], [p[1][0] for p in pts],
                        yerr=[p[1][1] or 0 for p in pts], label=LABELS[v], capsize=3,
                        marker="o", ms=3, **_style(v))  # fmt: skip
    ax.set_ylabel(YLABEL[metric])


def _sweep_figure(table, stem: str, cells, xs, xlabel: str, fig_dir: Path, written) -> None:
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for ax, metric in zip(axes, ("fct", "energy")):
        _lines(ax, xs, cells, metric)
        ax.set_xlabel(xlabel)
    axes[0].legend(fontsize=6, ncol=2)
    fig.suptitle(f"MPTCP-RL reproduction: {stem} (mean ± 95 % CI)", fontsize=9)
    fig.tight_layout()
    _save(fig, fig_dir, stem, written)
    plt.close(fig)


def _bars(table: Dict[str, Any], fig_dir: Path, written: List[Path]) -> None:
    import matplotlib.pyplot as plt

    figs = [f for f in ("fig6-loss", "fig6-cut") if f in table]
    if not figs:
        return
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    w = 0.8 / len(runs.SCHEDULERS)
    for ax, metric in zip(axes, ("fct", "energy")):
        for j, v in enumerate(runs.SCHEDULERS):
            cells = [table[f][""].get(metric, {}).get(v, [0, 0]) for f in figs]
            ax.bar([i + j * w for i in range(len(figs))], [c[0] or 0 for c in cells], w,
                   yerr=[c[1] or 0 for c in cells], label=LABELS[v], capsize=2,
                   color=_style(v)["color"], hatch="//" if v in runs.OUR_BASELINES else None)  # fmt: skip
        ax.set_xticks([i + 0.4 - w / 2 for i in range(len(figs))])
        ax.set_xticklabels(["scenario 1: loss on path 1" if f == "fig6-loss" else
                            "scenario 2: path 1 cut" for f in figs])  # fmt: skip
        ax.set_ylabel(YLABEL[metric])
    axes[0].legend(fontsize=6, ncol=2)
    fig.suptitle("MPTCP-RL reproduction: Fig. 6c-d (mean ± 95 % CI)", fontsize=9)
    fig.tight_layout()
    _save(fig, fig_dir, "fig6-bars", written)
    plt.close(fig)


#: Fig. 6's scenarios: (figure, title, the event's start in s, what the shading marks). The
#: event lasts to the end of the run (8 % loss from 10 s on; path 1 down from 20 s on).
EVENTS = (
    ("fig6-loss", "scenario 1", 10.0, "path 1: 8 % loss from 10 s"),
    ("fig6-cut", "scenario 2", 20.0, "path 1 cut at 20 s"),
)
#: The band of the throughput figures: percentiles over the seeds (the median is the line).
BAND = (25.0, 75.0)


def throughput_bins(rows: Sequence[Dict[str, Any]], path1: Dict[int, set]) -> Dict[int, Dict[int, List[float]]]:  # fmt: skip
    """Per seed and :data:`BIN_S` bin, the mean throughput (Mbit/s) of path 1 (the subflows
    ``path1[seed]``) and of the other paths: {seed: {bin: [path 1, others]}}. The mean is over
    the bin's sample times of the run (a subflow with no row at a sample time sent nothing)."""
    times: Dict[tuple, set] = {}
    sums: Dict[tuple, List[float]] = {}
    for r in rows:
        key = (r["seed"], int(r["time_s"] // BIN_S))
        times.setdefault(key, set()).add(r["time_s"])
        acc = sums.setdefault(key, [0.0, 0.0])
        acc[0 if r["subflow"] in path1.get(r["seed"], ()) else 1] += r["throughput_mbps"] or 0.0
    out: Dict[int, Dict[int, List[float]]] = {}
    for (seed, b), (p1, rest) in sums.items():
        n = len(times[(seed, b)])
        out.setdefault(seed, {})[b] = [p1 / n, rest / n]
    return out


def percentile_band(
    per_seed: Dict[int, Dict[int, List[float]]], group: int, n_bins: int
) -> Tuple[List[float], List[float], List[float]]:
    """Median and :data:`BAND` percentiles over the seeds of each bin ``0 .. n_bins − 1``; a
    seed without samples in a bin (its flow has completed) counts 0 there. Never below 0."""
    import numpy as np

    grid = np.array(
        [[per_seed[s].get(b, [0.0, 0.0])[group] for b in range(n_bins)] for s in sorted(per_seed)]
    )
    lo, med, hi = np.percentile(grid, [BAND[0], 50.0, BAND[1]], axis=0)
    return [float(x) for x in med], [float(x) for x in lo], [float(x) for x in hi]


def _dataset_bins(ds: runs.Dataset) -> Dict[int, Dict[int, List[float]]]:
    """:func:`throughput_bins` of a Fig. 6 dataset; path 1 is path ``wifi1``'s subflows."""
    import pyarrow.parquet as pq

    path1: Dict[int, set] = {}
    for r in pq.read_table(ds.path / "subflows.parquet", columns=["seed", "subflow", "path"]).to_pylist():  # fmt: skip
        if r["path"] == "wifi1":
            path1.setdefault(r["seed"], set()).add(r["subflow"])
    cols = ["seed", "time_s", "subflow", "throughput_mbps"]
    return throughput_bins(pq.read_table(ds.path / "timeseries.parquet", columns=cols).to_pylist(), path1)  # fmt: skip


def _throughput(datasets: Sequence[runs.Dataset], fig_dir: Path, written: List[Path]) -> None:
    """Fig. 6a-b for each scenario: path 1's and paths 2 + 3's throughput over time, one panel
    per scheduler, median and :data:`BAND` band over the seeds, the event's period shaded."""
    import matplotlib.pyplot as plt

    for figure, title, at, what in EVENTS:
        found = [d for d in datasets if d.figure == figure and (d.path / "timeseries.parquet").exists()]  # fmt: skip
        if not found:
            continue
        bins = {d.scheduler: _dataset_bins(d) for d in found}
        n_bins = 1 + max((b for per in bins.values() for s in per.values() for b in s), default=0)
        xs = [(b + 0.5) * BIN_S for b in range(n_bins)]
        cols = 4
        rows = -(-len(found) // cols)
        fig, axes = plt.subplots(rows, cols, figsize=(12, 2.3 * rows + 0.8), sharex=True, sharey=True, squeeze=False)  # fmt: skip
        for ax, d in zip(axes.flat, found):
            ax.axvspan(at, n_bins * BIN_S, color="0.92", lw=0, label=what)
            for group, name, color in ((0, "path 1 (WLAN)", "C3"), (1, "paths 2 + 3", "C0")):
                med, lo, hi = percentile_band(bins[d.scheduler], group, n_bins)
                ax.fill_between(xs, lo, hi, color=color, alpha=0.25, lw=0)
                ax.plot(xs, med, color=color, lw=1, label=name)
            ax.set_title(LABELS[d.scheduler], fontsize=8)
            ax.set_xlim(0, n_bins * BIN_S)
            ax.set_ylim(bottom=0)
        for ax in axes.flat[len(found) :]:
            ax.set_visible(False)
        for ax in axes[:, 0]:
            ax.set_ylabel("throughput (Mbit/s)", fontsize=8)
        for ax in axes[-1, :]:
            ax.set_xlabel("time (s)", fontsize=8)
        handles, labels = axes.flat[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="lower center", fontsize=8, ncol=3, frameon=False)
        seeds = len(next(iter(bins.values())))
        fig.suptitle(
            f"MPTCP-RL reproduction: Fig. 6a-b, {title} ({what}, shaded to the end of the run)\n"
            f"throughput per {BIN_S:g} s bin: median (line) and {BAND[0]:g}-{BAND[1]:g} % band "
            f"of the {seeds} seeds; a seed whose flow has completed counts 0",
            fontsize=9,
        )  # fmt: skip
        fig.tight_layout(rect=(0, 0.04, 1, 1))
        _save(fig, fig_dir, f"fig6-throughput-{figure[5:]}", written)
        plt.close(fig)


def figures(table: Dict[str, Any], datasets: Sequence[runs.Dataset], fig_dir: Path) -> List[Path]:
    """Writes every figure the table (and the datasets) allow; returns the files."""
    import matplotlib

    matplotlib.use("Agg")
    fig_dir.mkdir(parents=True, exist_ok=True)
    written: List[Path] = []
    for fig, xlabel in (("fig3", "concurrent short flows"), ("fig4-media", "concurrent 1 MB flows"),
                        ("fig4-long", "concurrent 15 MB flows")):  # fmt: skip
        if fig in table:
            pts = sorted(table[fig], key=lambda p: float(p) if p else 0.0)
            xs = [float(p) if p else 0.0 for p in pts]
            _sweep_figure(table, fig, [table[fig][p] for p in pts], xs, xlabel, fig_dir, written)
    wl = [f"fig5-wlan{n}" for n in (1, 2, 3) if f"fig5-wlan{n}" in table]
    if wl:
        xs = [float(f[-1]) for f in wl]
        _sweep_figure(table, "fig5", [table[f][""] for f in wl], xs, "WLAN paths (+ 1 LTE)",
                      fig_dir, written)  # fmt: skip
    _bars(table, fig_dir, written)
    _throughput(datasets, fig_dir, written)
    return written
