"""Figures of ``mpsched reproduce olms``: bars of mean ± 95 % CI over the held-out seeds per
variant, one panel per case, a log axis where a panel's values span more than a decade; PNG and
PDF. OLMS variants are red, the paper's baselines blue, our extra baselines grey."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple

from .olms_runs import EXTRA_BASELINES

#: (file stem, title, cases, metric, y label)
FIGURES: Tuple[Tuple[str, str, Tuple[str, ...], str, str], ...] = (
    ("fig3-4-selected-throughput", "Figs. 3(a), 4(a): selected-path throughput",
     ("app1", "app2"), "sel_mbps", "cwnd/srtt of the selected path (Mbit/s)"),
    ("fig3-4-selected-rtt", "Figs. 3(b), 4(b): selected-path RTT", ("app1", "app2"),
     "sel_rtt_ms", "srtt of the selected path (ms)"),
    ("fig3-4-regret", "Figs. 3(c), 4(c): regret per slot", ("app1", "app2"), "regret",
     "regret per slot (first 20 s)"),
    ("fig3-4-violation", "Figs. 3(d), 4(d): violation per slot", ("app1", "app2"), "violation",
     "violation per slot (first 20 s)"),
    ("fig5-web", "Fig. 5: page load time", ("web-google", "web-youtube"), "fct_s", "PLT (s)"),
    ("fig6-flow-size", "Fig. 6: flow completion time by size", ("size-5mb", "size-200mb", "size-1500mb"),
     "fct_s", "FCT (s)"),
    ("fig7-dynamic", "Fig. 7: dynamic networks (olms-nopm: without the monitor)",
     ("dyn-bw", "dyn-rtt"), "fct_s", "FCT (s)"),
    ("fig9-dumbbell", "Fig. 9: dumbbell, flow 1 (flow 2 runs OLMS)", ("dumbbell",), "fct_s",
     "FCT of flow 1 (s)"),
    ("fig10-11-exec", "Figs. 10-11: CPU per path selection",
     ("cycle-time",), "cpu_us_per_slot", "CPU µs per path selection"),
    ("fig12-cycle", "Fig. 12: decision cycle length", ("cycle",), "fct_s", "FCT (s)"),
    ("fig13-bandwidth", "Fig. 13: OLMS vs minRTT by bandwidth (Wi-Fi Mbit/s)",
     ("bw-40", "bw-100", "bw-400"), "fct_s", "FCT (s)"),
)  # fmt: skip


def _color(variant: str) -> str:
    if variant.startswith("olms"):
        return "C3"
    return "0.6" if variant in EXTRA_BASELINES else "C0"


def write_figures(results: Dict[str, Any], fig_dir: Path, regimes: Sequence[str]) -> List[Path]:
    """Every figure of :data:`FIGURES` per regime that has data; returns the PNG paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for regime in regimes:
        for stem, title, cases, metric, ylabel in FIGURES:
            panels = [
                (c, results.get(regime, {}).get(c, {}).get(metric))
                for c in cases
                if results.get(regime, {}).get(c, {}).get(metric)
            ]
            if not panels:
                continue
            fig, axes = plt.subplots(
                1, len(panels), figsize=(3.6 * len(panels), 3.4), squeeze=False
            )
            for ax, (case, cell) in zip(axes[0], panels):
                _panel(ax, case, cell, ylabel)
            fig.suptitle(f"{title} [{regime}]", fontsize=9)
            fig.tight_layout()
            for ext in ("png", "pdf"):
                fig.savefig(fig_dir / f"{stem}-{regime}.{ext}", dpi=150)
            plt.close(fig)
            written.append(fig_dir / f"{stem}-{regime}.png")
    return written


def _panel(ax: Any, case: str, cell: Dict[str, List[Any]], ylabel: str) -> None:
    names = [n for n, v in cell.items() if v[0] is not None]
    means = [cell[n][0] for n in names]
    cis = [cell[n][1] or 0.0 for n in names]
    ax.bar(range(len(names)), means, yerr=cis, capsize=3, color=[_color(n) for n in names])
    ax.set_xticks(range(len(names)), names, rotation=60, ha="right", fontsize=7)
    ax.set_title(case, fontsize=8)
    ax.set_ylabel(ylabel, fontsize=7)
    pos = [m for m in means if m > 0]
    if pos and max(pos) / min(pos) > 10:
        ax.set_yscale("log")
