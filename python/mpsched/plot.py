"""Figures of a results directory (``mpsched run`` or ``mpsched compare`` output).

Figures, each written as ``<name>.png``, ``.svg`` and/or ``.pdf``:

- ``goodput_flows``: goodput over time per flow (mean over seeds, band: their min-max range);
- ``goodput_subflows``: goodput over time per subflow (one run per variant: its first seed);
- ``cwnd_rtt``: congestion window and smoothed RTT over time per subflow (likewise);
- ``hol``: out-of-order bytes waiting in the receive buffer over time (head-of-line blocking;
  mean and range over seeds);
- ``queues``: queue occupancy over time per link, bytes and packets (one run per variant:
  its first seed; links whose queue stays empty are left out);
- ``fct_cdf``: CDF of flow completion times (only when the scenario has sized flows);
- ``goodput_bars``: mean goodput per variant with 95 % confidence intervals across seeds
  (compare directories only); ``fairness_bars`` and ``energy`` likewise;
- ``fct_bars``: mean download time of the sized flows per variant, 95 % CIs (compare);
- ``sweep_goodput``, ``sweep_fct``: the metric against a swept parameter, a line and a 95 %
  confidence band per variant (sweeps only; :mod:`mpsched.figures`).

Time series can be smoothed (:class:`PlotOptions`) and show the outages and changed-link
(handoff) periods of the run drawn, read from its resolved scenario. A figure with more
variants than fit (:mod:`mpsched.figures`: 8 lines, 20 bars, 6 panels) is split into pages,
``<name>.png``, ``<name>-2.png``, ...; flows beyond 8 are summed.

Output is deterministic: matplotlib's Agg renderer, fixed rc settings, no dates or version
strings in the files, and a fixed SVG id salt, so the same results give byte-identical files
(with the same versions of matplotlib and its fonts).
"""

from __future__ import annotations

import functools
import io
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from PIL import Image  # a dependency of matplotlib

from . import figures
from ._atomic import write_file_atomic
from .dataset import Dataset
from .figures import ci_note
from .stats import jain_columns, mean_ci

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "FORMATS",
    "PlotOptions",
    "PlotSpec",
    "figure_specs",
    "render",
    "render_figures",
    "parse_formats",
    "color",
    "legend",
    "queue_occupancy",
    "has_queues",
]

FORMATS = ("png", "svg", "pdf")

# Readable, fixed defaults (rc_context: the caller's settings are left alone).
_RC: Dict[str, Any] = {
    "svg.hashsalt": "mpsched",
    "svg.fonttype": "path",
    "pdf.fonttype": 42,  # TrueType fonts embedded in PDFs (publishers refuse Type 3)
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
_METADATA = {
    "png": {"Software": None},
    "svg": {"Date": None, "Creator": None},
    "pdf": {"Creator": None, "Producer": None, "CreationDate": None},
}
_COLORS = matplotlib.colormaps["tab10"].colors
_WIDTH_IN = 9.0
_PANEL_IN = 2.4
# More flows than this: the bar chart shows the runs' total goodput instead of one panel each.
_MAX_FLOW_PANELS = 4


@dataclass(frozen=True)
class PlotOptions:
    """How time series are drawn: ``smooth_s``, a moving average over that many seconds
    (0: the samples as they are); ``shade``, whether outage and changed-link periods are
    shaded."""

    smooth_s: float = 0.0
    shade: bool = True


@dataclass(frozen=True)
class PlotSpec:
    """One figure: file stem, a caption for reports, and how to draw it (one figure, or a
    list of pages)."""

    name: str
    caption: str
    draw: Callable[[Dataset], Union[Figure, List[Figure]]]


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


def legend(ax: Any) -> None:
    """The legend of ``ax``, right of the axes (nothing without labelled artists)."""
    _legend(ax)


def color(i: int) -> Any:
    """The ``i``-th line colour (tab10, cycling)."""
    return _COLORS[i % len(_COLORS)]


def _seeds_note(ds: Dataset) -> str:
    n = len(ds.seeds)
    return f" (mean of {n} seeds, band: min-max)" if n > 1 else ""


def _per_flow(ts: "pd.DataFrame") -> "pd.DataFrame":
    """One row per sample and flow (flow-level columns repeat on each subflow row)."""
    return ts[ts["subflow"] == 0]


def _mean_band(
    ax: Any,
    frame: "pd.DataFrame",
    value: Callable[["pd.DataFrame"], Any],
    label: str,
    color: Any,
    smooth_s: float = 0.0,
) -> None:
    """Plot the mean of ``value`` over runs at each sample time, with the min-max range as a band.

    (A per-sample 95 % CI from a few seeds is mostly width — Student's t is 12.7 for two —
    so the band shows the range the seeds actually covered.)
    """
    values = frame.assign(_v=value(frame))
    g = values.groupby("time_s")["_v"].agg(["mean", "min", "max", "count"]).sort_index()
    t = g.index.to_numpy(dtype=float)
    ax.plot(t, figures.smooth(t, g["mean"].to_numpy(), smooth_s), color=color, label=label)
    if g["count"].max() > 1:
        lo = figures.smooth(t, g["min"].to_numpy(), smooth_s)
        hi = figures.smooth(t, g["max"].to_numpy(), smooth_s)
        ax.fill_between(t, lo, hi, color=color, alpha=0.12, linewidth=0)


def _summed_flows(rows: "pd.DataFrame", value: Callable[["pd.DataFrame"], Any]) -> "pd.DataFrame":
    """One row per run and sample: ``value`` summed over the flows (as column ``_sum``)."""
    keys = ["run_id", "variant", "time_s"]
    return rows.assign(_sum=value(rows)).groupby(keys, sort=False)["_sum"].sum().reset_index()


def _flow_groups(
    ds: Dataset, rows: "pd.DataFrame", value: Callable[["pd.DataFrame"], Any]
) -> Tuple[List[Tuple[str, "pd.DataFrame"]], Callable[["pd.DataFrame"], Any]]:
    """(label, rows) per flow, or one group of the sum over flows when there are more flows
    than a figure shows (:data:`figures.LINES_PER_PAGE`, or 4 panels of variants)."""
    flows = list(dict.fromkeys(ds.flows["name"]))
    limit = figures.LINES_PER_PAGE if len(ds.variants) == 1 else 4
    if len(flows) <= limit:
        return [(flow, rows[rows["flow"] == flow]) for flow in flows], value
    return [(f"all {len(flows)} flows (sum)", _summed_flows(rows, value))], lambda f: f["_sum"]


def _shade_first_run(ax: Any, ds: Dataset, options: PlotOptions) -> str:
    """Shade the outage and changed-link periods of the first run drawn; a title note on
    which seed's periods they are when there are several seeds."""
    if not options.shade or ds.flows.empty:
        return ""
    run_id = str(ds.flows["run_id"].iloc[0])
    spans = figures.periods(ds, run_id)
    figures.shade(ax, spans)
    if spans and len(ds.seeds) > 1:
        return f"; shaded: periods of seed {int(ds.flows['seed'].iloc[0])}"
    return ""


def _flow_timeline(
    ds: Dataset,
    value: Callable[["pd.DataFrame"], Any],
    ylabel: str,
    title: str,
    options: PlotOptions = PlotOptions(),
) -> Figure:
    """A flow-level quantity over time: lines per flow (one variant) or a panel per flow
    (lines per variant); the sum over the flows when they are many."""
    groups, value = _flow_groups(ds, _per_flow(ds.timeseries), value)
    smooth = f", {options.smooth_s:g} s moving average" if options.smooth_s > 0 else ""
    if len(ds.variants) == 1:
        fig, axes = _figure(1)
        panels = [axes[0, 0]]
        for i, (label, frame) in enumerate(groups):
            _mean_band(panels[0], frame, value, label, color(i), options.smooth_s)
    else:
        fig, axes = _figure(len(groups))
        panels = list(axes[:, 0])
        for ax, (label, frame) in zip(panels, groups):
            for i, variant in enumerate(ds.variants):
                of_variant = frame[frame["variant"] == variant]
                _mean_band(ax, of_variant, value, variant, color(i), options.smooth_s)
            ax.set_title(label if label.startswith("all ") else f"flow {label}")
    notes = [_shade_first_run(ax, ds, options) for ax in panels][0]
    fig.suptitle(f"{ds.scenario}: {title}{_seeds_note(ds)}{smooth}{notes}")
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
    ax: Any,
    ds: Dataset,
    run_id: str,
    column: str,
    scale: float,
    positive: bool = False,
    smooth_s: float = 0.0,
) -> None:
    """One line per subflow of one run: ``column`` × ``scale`` over time."""
    ts = ds.timeseries[ds.timeseries["run_id"] == run_id]
    labels = _subflow_labels(ds.subflows[ds.subflows["run_id"] == run_id])
    for i, ((flow, sub), group) in enumerate(ts.groupby(["flow", "subflow"], sort=False)):
        y = group[column].to_numpy(dtype=float) * scale
        if positive:  # e.g. no RTT sample yet: a gap, not a drop to zero
            y = np.where(y > 0, y, np.nan)
        label = labels.get((flow, int(sub)), f"{flow} sf{sub}")
        t = group["time_s"].to_numpy(dtype=float)
        ax.plot(t, figures.smooth(t, y, smooth_s), color=color(i), label=label)


def _run_title(ds: Dataset, variant: str, run_id: str) -> str:
    seed = int(ds.flows.loc[ds.flows["run_id"] == run_id, "seed"].iloc[0])
    return f"{variant}, seed {seed}" if ds.kind == "compare" else f"{ds.scenario}, seed {seed}"


# --- figures --------------------------------------------------------------------------------


def goodput_flows(ds: Dataset, options: PlotOptions = PlotOptions()) -> Figure:
    """Application goodput over time per flow."""
    return _flow_timeline(
        ds, lambda f: f["flow_goodput_mbps"], "goodput (Mbit/s)", "goodput per flow", options
    )


def goodput_subflows(ds: Dataset, options: PlotOptions = PlotOptions()) -> Figure:
    """Goodput (newly acknowledged bytes) over time per subflow, one panel per variant (its
    first seed's run, with that run's outage and changed-link periods shaded)."""
    runs = ds.first_seed_runs()
    fig, axes = _figure(len(runs))
    for ax, (variant, run_id) in zip(axes[:, 0], runs.items()):
        _subflow_lines(ax, ds, run_id, "goodput_mbps", 1.0, smooth_s=options.smooth_s)
        if options.shade:
            figures.shade(ax, figures.periods(ds, run_id))
        ax.set_title(_run_title(ds, variant, run_id))
        ax.set_ylabel("goodput (Mbit/s)")
        ax.set_ylim(bottom=0)
        _legend(ax)
    axes[-1, 0].set_xlabel("time (s)")
    smooth = f" ({options.smooth_s:g} s moving average)" if options.smooth_s > 0 else ""
    fig.suptitle(f"{ds.scenario}: goodput per subflow{smooth}")
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


def hol(ds: Dataset, options: PlotOptions = PlotOptions()) -> Figure:
    """Out-of-order bytes waiting in the receive buffer over time (head-of-line blocking)."""
    return _flow_timeline(
        ds,
        lambda f: f["ooo_bytes"] / 1e3,
        "out-of-order data (kB)",
        "head-of-line blocking",
        options,
    )


def _queues(ds: Dataset, run_id: str) -> Optional["pd.DataFrame"]:
    """The queues table of one run (``queues.parquet`` of its directory), None without one
    (results written before it existed, or a dataset whose directories are gone)."""
    import pyarrow.parquet as pq

    path = figures.run_dir_of(ds, run_id) / "queues.parquet"
    try:
        return pq.read_table(path).to_pandas()
    except (OSError, ValueError):
        return None


def _run_queues(ds: Dataset) -> Dict[str, Tuple[str, "pd.DataFrame"]]:
    """Variant -> (run_id, queues table) of each variant's first-seed run that has queue
    samples (the kernel engine's runs have none: their queues are the emulator's)."""
    out = {}
    for variant, run_id in ds.first_seed_runs().items():
        q = _queues(ds, run_id)
        if q is not None and not q.empty:
            out[variant] = (run_id, q)
    return out


def has_queues(ds: Dataset) -> bool:
    """Whether some variant's first-seed run of ``ds`` has queue samples."""
    return not ds.flows.empty and bool(_run_queues(ds))


def queue_occupancy(ds: Dataset, options: PlotOptions = PlotOptions()) -> Figure:
    """Queue occupancy over time per link, bytes (left) and packets (right), one row per
    variant (its first seed's run, outage and changed-link periods shaded): only the links
    whose queue ever holds a packet (all of them if none does). Variants without queue
    samples (kernel runs) are named in the title, not drawn."""
    runs = _run_queues(ds)
    fig, axes = _figure(max(1, len(runs)), 2)
    for row, (variant, (run_id, q)) in zip(axes, runs.items()):
        busy = set(q.loc[q["queue_packets"] > 0, "link"])
        for i, (link, group) in enumerate(q.groupby("link", sort=False)):
            if busy and link not in busy:
                continue
            t = group["time_s"].to_numpy(dtype=float)
            for ax, column, scale in ((row[0], "queue_bytes", 1e-3), (row[1], "queue_packets", 1)):
                y = group[column].to_numpy(dtype=float) * scale
                ax.plot(t, figures.smooth(t, y, options.smooth_s), color=color(i), label=link)
        row[0].set_ylabel("queued (kB)")
        row[1].set_ylabel("queued (packets)")
        for ax in row:
            if options.shade:
                figures.shade(ax, figures.periods(ds, run_id))
            ax.set_title(_run_title(ds, variant, run_id))
            ax.set_ylim(bottom=0)
        _legend(row[1])
    for ax in axes[-1]:
        ax.set_xlabel("time (s)")
    smooth = f" ({options.smooth_s:g} s moving average)" if options.smooth_s > 0 else ""
    missing = [v for v in ds.variants if v not in runs]
    note = f"; no queue samples: {', '.join(missing)}" if missing else ""
    fig.suptitle(f"{ds.scenario}: queue occupancy per link{smooth}{note}")
    return fig


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
    colors = [color(i) for i in range(len(ds.variants))]
    bars = ax.bar(x, means, yerr=errs if any(errs) else None, capsize=4, color=colors, width=0.6)
    ax.bar_label(bars, labels=[fmt.format(m) for m in means], padding=2, fontsize=8)
    crowded = len(ds.variants) > 6 or sum(len(v) for v in ds.variants) > 80
    ax.set_xticks(
        x, list(ds.variants), rotation=30 if crowded else 0, ha="right" if crowded else "center"
    )
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
    fig.suptitle(f"{ds.scenario}: mean goodput, {ci_note(len(ds.seeds))}")
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
        f"{ds.scenario}: Jain's fairness index of the flows' goodputs, {ci_note(len(ds.seeds))}"
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
    fig.suptitle(f"{ds.scenario}: energy, {ci_note(len(ds.seeds))}")
    return fig


def figure_specs(ds: Dataset, options: PlotOptions = PlotOptions()) -> List[PlotSpec]:
    """The figures that apply to ``ds``, in report order; each draws a list of pages."""
    lines, bars, panels = figures.LINES_PER_PAGE, figures.BARS_PER_PAGE, figures.PANELS_PER_PAGE
    paged = figures.paged
    specs = [
        PlotSpec(
            "goodput_flows",
            "Goodput per flow over time",
            paged(functools.partial(goodput_flows, options=options), lines),
        ),
    ]
    if ds.kind == "compare":
        specs.append(
            PlotSpec(
                "goodput_bars",
                "Mean goodput per variant (95 % CI across seeds)",
                paged(goodput_bars, bars),
            )
        )
        if jain_columns(ds.fairness):
            specs.append(
                PlotSpec(
                    "fairness_bars",
                    "Jain's fairness index per variant (95 % CI across seeds)",
                    paged(fairness_bars, bars),
                )
            )
        specs += _compare_specs(ds)
    specs += [
        PlotSpec(
            "goodput_subflows",
            "Goodput per subflow over time",
            paged(functools.partial(goodput_subflows, options=options), panels),
        ),
        PlotSpec(
            "cwnd_rtt",
            "Congestion window and smoothed RTT per subflow",
            paged(cwnd_rtt, panels - 2),
        ),
        PlotSpec(
            "hol",
            "Head-of-line blocking: out-of-order bytes in the receive buffer",
            paged(functools.partial(hol, options=options), lines),
        ),
    ]
    if has_queues(ds):
        specs.append(
            PlotSpec(
                "queues",
                "Queue occupancy per link (bytes and packets waiting)",
                paged(functools.partial(queue_occupancy, options=options), panels),
            )
        )
    if ds.flows["size_bytes"].notna().any():
        specs.append(PlotSpec("fct_cdf", "Flow completion times (CDF)", paged(fct_cdf, lines)))
    if has_energy(ds):
        specs.append(
            PlotSpec(
                "energy",
                "Device energy per run and per delivered megabyte",
                paged(energy_bars, bars),
            )
        )
    return specs


def _compare_specs(ds: Dataset) -> List[PlotSpec]:
    """Download-time bars and the sweep figures of a compare dataset, where they apply."""
    specs = []
    fct = figures.has_fct(ds)
    if fct:
        specs.append(
            PlotSpec(
                "fct_bars",
                "Mean download time of the sized flows per variant (95 % CI across seeds)",
                figures.paged(figures.fct_bars, figures.BARS_PER_PAGE),
            )
        )
    if figures.has_sweep(ds):
        axis = figures.sweep_axes(ds)[0]
        specs.append(
            PlotSpec(
                "sweep_goodput",
                f"Total goodput against {axis} (95 % confidence bands across seeds)",
                functools.partial(figures.sweep_lines, metric="goodput"),
            )
        )
        if fct:
            specs.append(
                PlotSpec(
                    "sweep_fct",
                    f"Mean download time against {axis} (95 % confidence bands across seeds)",
                    functools.partial(figures.sweep_lines, metric="fct"),
                )
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
    """``fig`` encoded as ``fmt`` (png, svg or pdf), without dates or version strings.

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


def page_name(name: str, page: int, fmt: str) -> str:
    """``name.fmt`` for the first page, ``name-<page>.fmt`` for the others (1-based)."""
    return f"{name}.{fmt}" if page == 1 else f"{name}-{page}.{fmt}"


def render_figures(
    ds: Dataset,
    out_dir: Path,
    formats: Sequence[str] = FORMATS,
    options: PlotOptions = PlotOptions(),
    on_file: Optional[Callable[[Path], None]] = None,
) -> List[Tuple[PlotSpec, List[Path]]]:
    """Draw every figure of ``ds`` into ``out_dir`` in each format: each spec with the files
    written for it (its pages, in order, each in every format).

    Each file is written atomically; files of other figures or formats in ``out_dir`` are left
    alone, pages of these figures beyond their new page count are removed.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    out: List[Tuple[PlotSpec, List[Path]]] = []
    with matplotlib.rc_context(_RC):
        for spec in figure_specs(ds, options):
            drawn = spec.draw(ds)
            pages = drawn if isinstance(drawn, list) else [drawn]
            written: List[Path] = []
            for page, fig in enumerate(pages, start=1):
                fig = _frozen(fig)
                for fmt in formats:
                    path = out_dir / page_name(spec.name, page, fmt)
                    write_file_atomic(path, figure_bytes(fig, fmt))
                    written.append(path)
                    if on_file is not None:
                        on_file(path)
            for fmt in formats:
                stale = len(pages) + 1
                while (out_dir / page_name(spec.name, stale, fmt)).is_file():
                    (out_dir / page_name(spec.name, stale, fmt)).unlink()
                    stale += 1
            out.append((spec, written))
    return out


def render(
    ds: Dataset,
    out_dir: Path,
    formats: Sequence[str] = FORMATS,
    on_file: Optional[Callable[[Path], None]] = None,
    options: PlotOptions = PlotOptions(),
) -> List[Path]:
    """Draw every figure of ``ds`` into ``out_dir`` in each format; return the files written
    (:func:`render_figures`). A dataset of several scenarios gets one set of figures per
    scenario, in ``out_dir/<label>/``."""
    return [
        p
        for label, part in ds.parts()
        for _, paths in render_figures(
            part, out_dir / label if label else out_dir, formats, options, on_file
        )
        for p in paths
    ]
