"""Figures of ``mpsched reproduce mptcp-rl`` (PDF and PNG), with 95 % CIs over the seeds:
mean FCT and total energy against the number of concurrent flows (Figs. 3, 4a-b, 4c-d), against
the number of WLAN paths (Fig. 5), bars for Fig. 6c-d's two dynamic scenarios, and the
per-path throughput over time in Fig. 6's scenario 1 (Fig. 6a-b: path 1, paths 2 + 3)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Sequence

from . import mptcp_rl_runs as runs
from .mptcp_rl_claims import LABELS
from .protocol import mean_ci

YLABEL = {"fct": "mean flow completion time (s)", "energy": "total device energy (J)"}
#: Time bins of the throughput figure (s).
BIN_S = 1.0


def _save(fig: Any, fig_dir: Path, stem: str, written: List[Path]) -> None:
    for ext in ("pdf", "png"):
        path = fig_dir / f"{stem}.{ext}"
        fig.savefig(path, dpi=130)
        written.append(path)


def _lines(ax: Any, xs: Sequence[float], cells: Sequence[Dict[str, Any]], metric: str) -> None:
    """One line per scheduler with its CI as error bars."""
    for v in runs.SCHEDULERS:
        pts = [(x, c[metric][v]) for x, c in zip(xs, cells) if v in c.get(metric, {})]
        if pts:
            ax.errorbar([p[0] for p in pts], [p[1][0] for p in pts],
                        yerr=[p[1][1] or 0 for p in pts], label=LABELS[v], capsize=3,
                        marker="o", ms=3)  # fmt: skip
    ax.set_ylabel(YLABEL[metric])


def _sweep_figure(table, stem: str, cells, xs, xlabel: str, fig_dir: Path, written) -> None:
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for ax, metric in zip(axes, ("fct", "energy")):
        _lines(ax, xs, cells, metric)
        ax.set_xlabel(xlabel)
    axes[0].legend(fontsize=7)
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
                   yerr=[c[1] or 0 for c in cells], label=LABELS[v], capsize=2)  # fmt: skip
        ax.set_xticks([i + 0.4 - w / 2 for i in range(len(figs))])
        ax.set_xticklabels(["scenario 1: loss on path 1" if f == "fig6-loss" else
                            "scenario 2: path 1 cut" for f in figs])  # fmt: skip
        ax.set_ylabel(YLABEL[metric])
    axes[0].legend(fontsize=7)
    fig.suptitle("MPTCP-RL reproduction: Fig. 6c-d (mean ± 95 % CI)", fontsize=9)
    fig.tight_layout()
    _save(fig, fig_dir, "fig6-bars", written)
    plt.close(fig)


def _throughput(datasets: Sequence[runs.Dataset], fig_dir: Path, written: List[Path]) -> None:
    """Fig. 6a-b: path 1's and paths 2 + 3's throughput over time in scenario 1 (1 s bins,
    mean ± CI over seeds of each bin's mean)."""
    import matplotlib.pyplot as plt
    import pyarrow.parquet as pq

    loss = [
        d for d in datasets if d.figure == "fig6-loss" and (d.path / "timeseries.parquet").exists()
    ]
    if not loss:
        return
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for ds in loss:
        path = ds.path / "timeseries.parquet"
        cols = ["seed", "time_s", "subflow", "throughput_mbps"]
        bins: Dict[int, Dict[int, List[float]]] = {0: {}, 1: {}}
        acc: Dict[tuple, float] = {}
        for r in pq.read_table(path, columns=cols).to_pylist():
            group = 0 if r["subflow"] == 0 else 1
            key = (group, r["seed"], int(r["time_s"] // BIN_S), r["time_s"])
            acc[key] = acc.get(key, 0.0) + (r["throughput_mbps"] or 0.0)
        per: Dict[tuple, List[float]] = {}
        for (group, seed, b, _), v in acc.items():
            per.setdefault((group, seed, b), []).append(v)
        for (group, _seed, b), vs in per.items():
            bins[group].setdefault(b, []).append(sum(vs) / len(vs))
        for group, ax in zip((0, 1), axes):
            ts = sorted(bins[group])
            stats = [mean_ci(bins[group][t]) for t in ts]
            means = [m or 0 for m, _ in stats]
            ax.plot([t * BIN_S for t in ts], means, label=LABELS[ds.scheduler], lw=1)
            ax.fill_between([t * BIN_S for t in ts], [m - (c or 0) for m, (_, c) in zip(means, stats)],
                            [m + (c or 0) for m, (_, c) in zip(means, stats)], alpha=0.15)  # fmt: skip
    for ax, title in zip(axes, ("path 1 (WLAN, 8 % loss from 10 s)", "paths 2 + 3")):
        ax.axvline(10.0, color="grey", ls=":")
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("throughput (Mbit/s)")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    _save(fig, fig_dir, "fig6-throughput", written)
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
