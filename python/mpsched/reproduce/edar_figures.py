"""Figures of ``mpsched reproduce edar`` (PDF and PNG), each named after the paper's figure:

* ``fig2-3-motivation`` — goodput and out-of-order bytes over time of minRTT, redundant (the
  paper's ReMP) and the single-path TCP 1 / TCP 2 on two 5 Mbit/s paths, handoffs shaded;
* ``fig8-handoff-goodput`` — goodput over time in the handoff scenario, band: 95 % CI over
  seeds, handoffs shaded;
* ``fig9a-handoff-periods`` — stable / handoff goodput, bars with 95 % CIs;
* ``fig9b-ooo-cdf`` — the distribution (CDF, log axis) of the receiver's out-of-order bytes,
  every 0.5 s sample of every seed;
* ``fig10-fct-delay``, ``fig11-fct-loss`` — the spread over seeds (box: quartiles, whiskers
  5-95 %) of the 50 downloads' mean FCT per sweep value, log axis;
* ``fig12-settings`` — goodput, FCT and out-of-order bytes per setting, bars with 95 % CIs,
  log axes (the settings span decades).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple

from .edar_claims import LABELS
from .edar_runs import VARIANTS

#: Line styles: EdAR thick, the paper's baselines solid, ours dashed.
_OURS = ("minrtt", "ecf", "redundant", "roundrobin")


def _save(fig: Any, fig_dir: Path, stem: str, written: List[Path]) -> None:
    fig.tight_layout()
    for ext in ("pdf", "png"):
        path = fig_dir / f"{stem}.{ext}"
        fig.savefig(path, dpi=130)
        written.append(path)


def _shade(ax: Any, handoff: Sequence[Tuple[float, float]]) -> None:
    for i, (a, b) in enumerate(handoff):
        ax.axvspan(a, b, color="0.88", lw=0, label="handoff" if i == 0 else None)


def _style(v: str) -> Dict[str, Any]:
    if v.startswith("edar"):
        return {"lw": 1.8}
    return {"lw": 0.9, "ls": "--" if v in _OURS else "-"}


def _timelines(ax: Any, lines: Dict[str, Any], order: Sequence[str], key: str, band: bool) -> None:
    for v in order:
        if v not in lines:
            continue
        s = lines[v]
        line = ax.plot(s["t"], s[key], label=LABELS.get(v, v), **_style(v))[0]
        if band:
            lo = [m - c for m, c in zip(s[key], s[key + "_ci"])]
            hi = [m + c for m, c in zip(s[key], s[key + "_ci"])]
            ax.fill_between(s["t"], lo, hi, color=line.get_color(), alpha=0.15, lw=0)


def _bars(
    ax: Any, groups: Sequence[str], cells: Sequence[Dict[str, Any]], variants: Sequence[str]
) -> None:
    """Grouped bars with 95 % CIs: one group per entry of ``groups``, one bar per variant."""
    w = 0.84 / max(1, len(variants))
    for j, v in enumerate(variants):
        means = [(c.get(v) or [float("nan")])[0] for c in cells]
        errs = [(c.get(v) or [0, 0])[1] or 0 for c in cells]
        xs = [i + (j - (len(variants) - 1) / 2) * w for i in range(len(groups))]
        ax.bar(
            xs,
            means,
            w,
            yerr=errs,
            capsize=1.5,
            label=LABELS.get(v, v),
            hatch="//" if v in _OURS else None,
        )
    ax.set_xticks(range(len(groups)), list(groups))  # fmt: skip


def figures(table: Dict[str, Any], extras: Dict[str, Any], fig_dir: Path, *, handoff) -> List[Path]:
    """Writes every figure the results allow under ``fig_dir`` and returns the paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig_dir.mkdir(parents=True, exist_ok=True)
    written: List[Path] = []
    lines = extras.get("timeline", {})
    if "edar-motivation" in lines:
        fig, (a1, a2) = plt.subplots(2, 1, figsize=(7.5, 5.2), sharex=True)
        order = ("minrtt-norp", "minrtt", "redundant", "tcp1", "tcp2")
        for ax in (a1, a2):
            _shade(ax, handoff)
        _timelines(a1, lines["edar-motivation"], order, "goodput", True)
        mptcp = {k: v for k, v in lines["edar-motivation"].items() if not k.startswith("tcp")}
        _timelines(a2, mptcp, order, "ooo", False)
        a1.set(
            ylabel="goodput (Mbit/s)",
            title="Motivation (Figs. 2-3): two 5 Mbit/s paths, path 2 handoffs",
        )
        a2.set(xlabel="time (s)", ylabel="out-of-order (KB, mean)")
        a1.legend(fontsize=7, ncol=3)
        _save(fig, fig_dir, "fig2-3-motivation", written)
        plt.close(fig)
    if "edar-handoff" in lines:
        fig, ax = plt.subplots(figsize=(8, 3.6))
        _shade(ax, handoff)
        _timelines(ax, lines["edar-handoff"], VARIANTS, "goodput", True)
        ax.set(
            xlabel="time (s)",
            ylabel="goodput (Mbit/s)",
            title="Handoff scenario (Fig. 8; band: 95 % CI over seeds)",
        )
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=7, ncol=5)
        _save(fig, fig_dir, "fig8-handoff-goodput", written)
        plt.close(fig)
    h = table.get("edar-handoff", {}).get("", {})
    if h:
        fig, ax = plt.subplots(figsize=(7.5, 3.4))
        variants = [v for v in VARIANTS if v in h.get("handoff_goodput", {})]
        cells = [
            {v: h["stable_goodput"].get(v) for v in variants},
            {v: h["handoff_goodput"].get(v) for v in variants},
        ]
        _bars(ax, ["stable (0-20, 40-60, 80-100 s)", "handoff (20-40, 60-80 s)"], cells, variants)
        ax.set(ylabel="goodput (Mbit/s)", title="Handoff scenario (Fig. 9a; mean, 95 % CI)")
        ax.legend(fontsize=7, ncol=5)
        _save(fig, fig_dir, "fig9a-handoff-periods", written)
        plt.close(fig)
    if extras.get("ooo_samples"):
        _ooo_cdf(plt, extras["ooo_samples"], fig_dir, written)
    for case, stem, xlabel in (
        ("edar-fct-delay", "fig10-fct-delay", "path 2 one-way delay (ms)"),
        ("edar-fct-loss", "fig11-fct-loss", "path 2 loss rate (%)"),
    ):
        if case in extras.get("fct_seeds", {}):
            _fct_box(plt, extras["fct_seeds"][case], fig_dir, stem, xlabel, written)
    _settings(plt, table, fig_dir, written)  # fmt: skip
    return written


def _ooo_cdf(plt: Any, samples: Dict[str, List[float]], fig_dir: Path, written: List[Path]) -> None:
    fig, ax = plt.subplots(figsize=(6.5, 3.6))
    for v in VARIANTS:
        xs = sorted(samples.get(v, []))
        if not xs:
            continue
        n = len(xs)
        ax.step(
            [max(x, 0.1) for x in xs],
            [(i + 1) / n for i in range(n)],
            where="post",
            label=LABELS[v],
            **_style(v),
        )
    ax.set_xscale("log")
    ax.set(xlabel="out-of-order bytes at the receiver (KB; 0 drawn at 0.1)", ylabel="CDF of 0.5 s samples",
           title="Handoff scenario: out-of-order data (Fig. 9b)")  # fmt: skip
    ax.legend(fontsize=7, ncol=2, loc="lower right")
    _save(fig, fig_dir, "fig9b-ooo-cdf", written)
    plt.close(fig)


def _fct_box(plt: Any, per_point: Dict[str, Dict[str, List[float]]], fig_dir: Path, stem: str,
             xlabel: str, written: List[Path]) -> None:  # fmt: skip
    """Box per (sweep value, variant) of the per-seed mean FCTs."""
    points = sorted(per_point, key=float)
    variants = [v for v in VARIANTS if any(v in per_point[p] for p in points)]
    fig, ax = plt.subplots(figsize=(9, 3.8))
    w = 0.84 / max(1, len(variants))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for j, v in enumerate(variants):
        data = [per_point[p].get(v, []) for p in points]
        pos = [i + (j - (len(variants) - 1) / 2) * w for i in range(len(points))]
        bp = ax.boxplot(
            data, positions=pos, widths=w * 0.9, whis=(5, 95), showfliers=False, patch_artist=True
        )
        for box in bp["boxes"]:
            box.set(facecolor=colors[j % len(colors)], alpha=0.7)
        ax.plot([], [], color=colors[j % len(colors)], lw=6, alpha=0.7, label=LABELS[v])
    scale = 100.0 if "loss" in stem else 1.0
    ax.set_xticks(range(len(points)), [f"{float(p) * scale:.3g}" for p in points])
    ax.set_yscale("log")
    ax.set(
        xlabel=xlabel,
        ylabel="mean FCT of 50 × 10 MB (s)",
        title=f"{stem.split('-', 1)[0].replace('fig', 'Fig. ')}: spread over seeds (box: quartiles, whiskers 5-95 %)",
    )
    ax.legend(fontsize=7, ncol=5)
    _save(fig, fig_dir, stem, written)  # fmt: skip
    plt.close(fig)


def _settings(plt: Any, table: Dict[str, Any], fig_dir: Path, written: List[Path]) -> None:
    cases = [f"edar-setting-{i}" for i in range(1, 6) if f"edar-setting-{i}" in table]
    if not cases:
        return
    cells = {c: table[c][""] for c in cases}
    variants = [v for v in VARIANTS if any(v in cells[c].get("goodput", {}) for c in cases)]
    fig, axes = plt.subplots(3, 1, figsize=(9, 8.4), sharex=True)
    names = [("i", "ii", "iii", "iv", "v")[int(c[-1]) - 1] for c in cases]
    for ax, metric, ylabel in zip(
        axes,
        ("goodput", "fct", "ooo"),
        ("goodput (Mbit/s)", "FCT (s)", "out-of-order (KB, time avg.)"),
    ):
        _bars(
            ax, [f"setting {n}" for n in names], [cells[c].get(metric, {}) for c in cases], variants
        )
        ax.set_yscale("log")
        ax.set_ylabel(ylabel)
    axes[0].set_title("Settings i-v (Fig. 12; mean, 95 % CI, log axes)")
    axes[0].legend(fontsize=7, ncol=5)
    _save(fig, fig_dir, "fig12-settings", written)  # fmt: skip
    plt.close(fig)
