"""Figures of a results directory (``mpsched run`` or ``mpsched compare`` output).

Figures, each written as ``<name>.png`` and/or ``<name>.svg``:

- ``goodput_flows``: goodput over time per flow (mean over seeds, band: their min-max range);
- ``goodput_subflows``: goodput over time per subflow (one run per variant: its first seed);
- ``cwnd_rtt``: congestion window and smoothed RTT over time per subflow (likewise);
- ``hol``: out-of-order bytes waiting in the receive buffer over time (head-of-line blocking;
  mean and range over seeds);
- ``fct_cdf``: CDF of flow completion times (only when the scenario has sized flows);
- ``goodput_bars``: mean goodput per variant with 95 % confidence intervals across seeds
  (compare directories only).

Output is deterministic: matplotlib's Agg renderer, fixed rc settings, no dates or version
strings in the files, and a fixed SVG id salt, so the same results give byte-identical files
(with the same versions of matplotlib and its fonts).
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Tuple

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from PIL import Image  # a dependency of matplotlib

from ._atomic import write_file_atomic
from .dataset import Dataset
from .stats import jain_columns, mean_ci

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FORMATS", "PlotSpec", "figure_specs", "render", "parse_formats"]

FORMATS = ("png", "svg")

# Readable, fixed defaults (rc_context: the caller's settings are left alone).
_RC: Dict[str, Any] = {
    "svg.hashsalt": "mpsched",
    "svg.fonttype": "path",
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "legend.fontsize": 8,
    "legend.frameon": False,
    "lines.linewidth": 1.2,
    "figure.dpi": 100,
    "savefig.dpi": 100,
}
# No software version or creation date in the files.
_METADATA = {"png": {"Software": None}, "svg": {"Date": None, "Creator": None}}
_COLORS = matplotlib.colormaps["tab10"].colors
_WIDTH_IN = 9.0
_PANEL_IN = 2.4
# More flows than this: the bar chart shows the runs' total goodput instead of one panel each.
_MAX_FLOW_PANELS = 8


@dataclass(frozen=True)
class PlotSpec:
    """One figure: file stem, a caption for reports, and how to draw it."""

    name: str
    caption: str
    draw: Callable[[Dataset], Figure]


def parse_formats(text: str) -> List[str]:
    """Parse ``--format``: a comma-separated subset of :data:`FORMATS`."""
    formats = list(dict.fromkeys(f.strip().lower() for f in text.split(",")))
    bad = [f for f in formats if f not in FORMATS]
    if bad or not formats:
        raise ValueError(
            f"--format: expected a comma-separated list of {', '.join(FORMATS)}, got {text!r}"
        )
    return formats


# --- helpers --------------------------------------------------------------------------------


def _figure(rows: int, cols: int = 1, height: float = _PANEL_IN) -> Tuple[Figure, np.ndarray]:
    fig = Figure(figsize=(_WIDTH_IN, 0.6 + height * rows), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, cols, squeeze=False, sharex=True)
    return fig, axes


def _legend(ax: Any) -> None:
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5))


def _seeds_note(ds: Dataset) -> str:
    n = len(ds.seeds)
    return f" (mean of {n} seeds, band: min-max)" if n > 1 else ""


def _per_flow(ts: "pd.DataFrame") -> "pd.DataFrame":
    """One row per sample and flow (flow-level columns repeat on each subflow row)."""
    return ts[ts["subflow"] == 0]


def _mean_band(
    ax: Any, frame: "pd.DataFrame", value: Callable[["pd.DataFrame"], Any], label: str, color: Any
) -> None:
    """Plot the mean of ``value`` over runs at each sample time, with the min-max range as a band.

    (A per-sample 95 % CI from a few seeds is mostly width — Student's t is 12.7 for two —
    so the band shows the range the seeds actually covered.)
    """
    values = frame.assign(_v=value(frame))
    g = values.groupby("time_s")["_v"].agg(["mean", "min", "max", "count"]).sort_index()
    t = g.index.to_numpy(dtype=float)
    ax.plot(t, g["mean"].to_numpy(), color=color, label=label)
    if g["count"].max() > 1:
        ax.fill_between(
            t, g["min"].to_numpy(), g["max"].to_numpy(), color=color, alpha=0.12, linewidth=0
        )


def _flow_timeline(
    ds: Dataset, value: Callable[["pd.DataFrame"], Any], ylabel: str, title: str
) -> Figure:
    """A flow-level quantity over time: lines per flow (one variant) or a panel per flow."""
    rows = _per_flow(ds.timeseries)
    flows = list(dict.fromkeys(ds.flows["name"]))
    if len(ds.variants) == 1:
        fig, axes = _figure(1)
        ax = axes[0, 0]
        for i, flow in enumerate(flows):
            _mean_band(ax, rows[rows["flow"] == flow], value, flow, _COLORS[i % len(_COLORS)])
        ax.set_title(f"{ds.scenario}: {title}{_seeds_note(ds)}")
        panels = [ax]
    else:
        fig, axes = _figure(len(flows))
        panels = list(axes[:, 0])
        for ax, flow in zip(panels, flows):
            of_flow = rows[rows["flow"] == flow]
            for i, variant in enumerate(ds.variants):
                _mean_band(
                    ax,
                    of_flow[of_flow["variant"] == variant],
                    value,
                    variant,
                    _COLORS[i % len(_COLORS)],
                )
            ax.set_title(f"flow {flow}")
        fig.suptitle(f"{ds.scenario}: {title}{_seeds_note(ds)}")
    for ax in panels:
        ax.set_ylabel(ylabel)
        ax.set_ylim(bottom=0)
        _legend(ax)
    panels[-1].set_xlabel("time (s)")
    return fig


def _subflow_labels(subflows: "pd.DataFrame") -> Dict[Tuple[str, int], str]:
    """``flow sfN (path)`` for subflows of multipath flows, ``flow (path)`` otherwise."""
    counts = subflows.groupby("flow")["subflow"].count()
    labels = {}
    for flow, sub, path in zip(subflows["flow"], subflows["subflow"], subflows["path"]):
        labels[(flow, int(sub))] = (
            f"{flow} sf{sub} ({path})" if counts[flow] > 1 else f"{flow} ({path})"
        )
    return labels


def _subflow_lines(
    ax: Any, ds: Dataset, run_id: str, column: str, scale: float, positive: bool = False
) -> None:
    """One line per subflow of one run: ``column`` × ``scale`` over time."""
    ts = ds.timeseries[ds.timeseries["run_id"] == run_id]
    labels = _subflow_labels(ds.subflows[ds.subflows["run_id"] == run_id])
    for i, ((flow, sub), group) in enumerate(ts.groupby(["flow", "subflow"], sort=False)):
        y = group[column].to_numpy(dtype=float) * scale
        if positive:  # e.g. no RTT sample yet: a gap, not a drop to zero
            y = np.where(y > 0, y, np.nan)
        label = labels.get((flow, int(sub)), f"{flow} sf{sub}")
        ax.plot(
            group["time_s"].to_numpy(dtype=float), y, color=_COLORS[i % len(_COLORS)], label=label
        )


def _run_title(ds: Dataset, variant: str, run_id: str) -> str:
    seed = int(ds.flows.loc[ds.flows["run_id"] == run_id, "seed"].iloc[0])
    return f"{variant}, seed {seed}" if ds.kind == "compare" else f"{ds.scenario}, seed {seed}"


# --- figures --------------------------------------------------------------------------------


def goodput_flows(ds: Dataset) -> Figure:
    """Application goodput over time per flow."""
    return _flow_timeline(
        ds, lambda f: f["flow_goodput_mbps"], "goodput (Mbit/s)", "goodput per flow"
    )


def goodput_subflows(ds: Dataset) -> Figure:
    """Goodput (newly acknowledged bytes) over time per subflow, one panel per variant."""
    runs = ds.first_seed_runs()
    fig, axes = _figure(len(runs))
    for ax, (variant, run_id) in zip(axes[:, 0], runs.items()):
        _subflow_lines(ax, ds, run_id, "goodput_mbps", 1.0)
        ax.set_title(_run_title(ds, variant, run_id))
        ax.set_ylabel("goodput (Mbit/s)")
        ax.set_ylim(bottom=0)
        _legend(ax)
    axes[-1, 0].set_xlabel("time (s)")
    fig.suptitle(f"{ds.scenario}: goodput per subflow")
    return fig


def cwnd_rtt(ds: Dataset) -> Figure:
    """Congestion window and smoothed RTT over time per subflow, one row per variant."""
    runs = ds.first_seed_runs()
    fig, axes = _figure(len(runs), 2)
    for row, (variant, run_id) in zip(axes, runs.items()):
        _subflow_lines(row[0], ds, run_id, "cwnd_bytes", 1e-3)
        _subflow_lines(row[1], ds, run_id, "srtt_ms", 1.0, positive=True)
        row[0].set_ylabel("cwnd (kB)")
        row[1].set_ylabel("smoothed RTT (ms)")
        for ax in row:
            ax.set_title(_run_title(ds, variant, run_id))
            ax.set_ylim(bottom=0)
        _legend(row[1])
    for ax in axes[-1]:
        ax.set_xlabel("time (s)")
    fig.suptitle(f"{ds.scenario}: congestion window and RTT per subflow")
    return fig


def hol(ds: Dataset) -> Figure:
    """Out-of-order bytes waiting in the receive buffer over time (head-of-line blocking)."""
    return _flow_timeline(
        ds, lambda f: f["ooo_bytes"] / 1e3, "out-of-order data (kB)", "head-of-line blocking"
    )


def fct_cdf(ds: Dataset) -> Figure:
    """Empirical CDF of the completion times of sized flows (unfinished flows keep it below 1)."""
    sized = ds.flows[ds.flows["size_bytes"].notna()]
    fig, axes = _figure(1, height=3.2)
    ax = axes[0, 0]
    if len(ds.variants) > 1:
        groups = [(v, sized[sized["variant"] == v]) for v in ds.variants]
    else:
        groups = [(f, sized[sized["name"] == f]) for f in dict.fromkeys(sized["name"])]
    for i, (label, group) in enumerate(groups):
        fct = np.sort(group.loc[group["completed"].astype(bool), "fct_s"].to_numpy(dtype=float))
        if len(group) == 0:
            continue
        y = np.arange(1, len(fct) + 1) / len(group)
        unfinished = len(group) - len(fct)
        note = f" ({unfinished} of {len(group)} unfinished)" if unfinished else ""
        x = np.concatenate([[0.0], fct])
        ax.step(
            x,
            np.concatenate([[0.0], y]),
            where="post",
            color=_COLORS[i % len(_COLORS)],
            label=label + note,
        )
    ax.set_xlabel("flow completion time (s)")
    ax.set_ylabel("fraction of flows")
    ax.set_ylim(0, 1.02)
    ax.set_xlim(left=0)
    ax.set_title(f"{ds.scenario}: flow completion times (CDF over flows and seeds)")
    _legend(ax)
    return fig


def _variant_bars(
    ax: Any, ds: Dataset, frame: Any, column: str, ylabel: str, fmt: str = "{:.2f}"
) -> None:
    """Mean of ``column`` per variant with its 95 % CI across the runs in ``frame``."""
    means, errs = [], []
    for variant in ds.variants:
        mean, ci = mean_ci(frame.loc[frame["variant"] == variant, column])
        means.append(mean if mean is not None else np.nan)
        errs.append(ci if ci is not None else 0.0)
    x = np.arange(len(ds.variants))
    colors = [_COLORS[i % len(_COLORS)] for i in range(len(ds.variants))]
    bars = ax.bar(x, means, yerr=errs, capsize=4, color=colors, width=0.6)
    ax.bar_label(bars, labels=[fmt.format(m) for m in means], padding=2, fontsize=8)
    ax.set_xticks(x, list(ds.variants))
    ax.set_ylabel(ylabel)
    ax.grid(axis="x", visible=False)
    ax.margins(y=0.15)


def goodput_bars(ds: Dataset) -> Figure:
    """Mean goodput per variant with 95 % confidence intervals across seeds, a panel per flow."""
    flows = list(dict.fromkeys(ds.flows["name"]))
    if len(flows) > _MAX_FLOW_PANELS:
        totals = (
            ds.flows.groupby(["variant", "run_id"], sort=False)["goodput_mbps"].sum().reset_index()
        )
        panels = [("all flows (sum)", totals)]
    else:
        panels = [(f"flow {f}", ds.flows[ds.flows["name"] == f]) for f in flows]
    fig, axes = _figure(len(panels), height=2.8)
    for ax, (title, frame) in zip(axes[:, 0], panels):
        _variant_bars(ax, ds, frame, "goodput_mbps", "goodput (Mbit/s)")
        ax.set_title(title)
    fig.suptitle(f"{ds.scenario}: mean goodput, 95 % CI over {len(ds.seeds)} seeds")
    return fig


_JAIN_TITLES = {"jain_mptcp": "over the MPTCP flows", "jain_all": "over all flows"}


def fairness_bars(ds: Dataset) -> Figure:
    """Mean Jain's fairness index of the flows' goodputs per variant, with 95 % confidence
    intervals across seeds (DRL-CC's Fig. 3b): over the MPTCP flows and over all flows."""
    columns = jain_columns(ds.fairness)
    fig, axes = _figure(len(columns), height=2.8)
    for ax, column in zip(axes[:, 0], columns):
        _variant_bars(ax, ds, ds.fairness, column, "Jain's index", fmt="{:.3f}")
        ax.set_ylim(0, 1.15)
        ax.set_title(_JAIN_TITLES[column])
    fig.suptitle(
        f"{ds.scenario}: Jain's fairness index of the flows' goodputs, "
        f"95 % CI over {len(ds.seeds)} seeds"
    )
    return fig


def has_energy(ds: Dataset) -> bool:
    """Whether the scenario accounts device energy (paths with an `interface` or `energy`)."""
    return "energy_j" in ds.flows and bool((ds.flows["energy_j"].fillna(0) > 0).any())


def energy_bars(ds: Dataset) -> Figure:
    """Device energy per run (all flows) and energy per delivered megabyte, per variant, with
    95 % confidence intervals across seeds (MPTCP-RL's power model)."""
    per_run = (
        ds.flows.groupby(["variant", "run_id"], sort=False)[["energy_j", "bytes_delivered"]]
        .sum()
        .reset_index()
    )
    per_run["j_per_mb"] = np.where(
        per_run["bytes_delivered"] > 0,
        per_run["energy_j"] / (per_run["bytes_delivered"] / 1e6),
        np.nan,
    )
    fig, axes = _figure(2, height=2.8)
    _variant_bars(axes[0, 0], ds, per_run, "energy_j", "energy (J)", "{:.1f}")
    axes[0, 0].set_title("device energy per run, all flows")
    _variant_bars(axes[1, 0], ds, per_run, "j_per_mb", "energy per MB (J/MB)", "{:.3f}")
    axes[1, 0].set_title("energy per delivered megabyte")
    fig.suptitle(f"{ds.scenario}: energy, 95 % CI over {len(ds.seeds)} seeds")
    return fig


def figure_specs(ds: Dataset) -> List[PlotSpec]:
    """The figures that apply to ``ds``, in report order."""
    specs = [
        PlotSpec("goodput_flows", "Goodput per flow over time", goodput_flows),
    ]
    if ds.kind == "compare":
        specs.append(
            PlotSpec(
                "goodput_bars", "Mean goodput per variant (95 % CI across seeds)", goodput_bars
            )
        )
        if jain_columns(ds.fairness):
            specs.append(
                PlotSpec(
                    "fairness_bars",
                    "Jain's fairness index per variant (95 % CI across seeds)",
                    fairness_bars,
                )
            )
    specs += [
        PlotSpec("goodput_subflows", "Goodput per subflow over time", goodput_subflows),
        PlotSpec("cwnd_rtt", "Congestion window and smoothed RTT per subflow", cwnd_rtt),
        PlotSpec("hol", "Head-of-line blocking: out-of-order bytes in the receive buffer", hol),
    ]
    if ds.flows["size_bytes"].notna().any():
        specs.append(PlotSpec("fct_cdf", "Flow completion times (CDF)", fct_cdf))
    if has_energy(ds):
        specs.append(
            PlotSpec("energy", "Device energy per run and per delivered megabyte", energy_bars)
        )
    return specs


def _frozen(fig: Figure) -> Figure:
    """Lay ``fig`` out once with the Agg renderer, then keep that layout for every format.

    The constrained layout otherwise runs again at each save, and its result depends on the
    renderer of the first save: SVG after PNG would differ from SVG alone.
    """
    fig.draw_without_rendering()
    fig.set_layout_engine(None)  # (rc figure.autolayout / constrained_layout.use are off)
    return fig


def figure_bytes(fig: Figure, fmt: str) -> bytes:
    """``fig`` encoded as ``fmt`` (png or svg), without dates or version strings.

    PNGs are reduced to a 256-colour palette (no dithering): line plots look the same and
    the files are about 2.5 times smaller.
    """
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, metadata=_METADATA[fmt])
    if fmt != "png":
        return buf.getvalue()
    buf.seek(0)
    with Image.open(buf) as image:
        palette = image.convert("RGB").quantize(
            256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE
        )
    out = io.BytesIO()
    palette.save(out, format="PNG", optimize=True)
    return out.getvalue()


def render(
    ds: Dataset,
    out_dir: Path,
    formats: Sequence[str] = FORMATS,
    on_file: Optional[Callable[[Path], None]] = None,
) -> List[Path]:
    """Draw every figure of ``ds`` into ``out_dir`` in each format; return the files written.

    Each file is written atomically; files of other figures or formats in ``out_dir`` are left
    alone.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    written: List[Path] = []
    with matplotlib.rc_context(_RC):
        for spec in figure_specs(ds):
            fig = _frozen(spec.draw(ds))
            for fmt in formats:
                path = out_dir / f"{spec.name}.{fmt}"
                write_file_atomic(path, figure_bytes(fig, fmt))
                written.append(path)
                if on_file is not None:
                    on_file(path)
    return written
