"""Figures for papers, and what keeps every figure readable: used by :mod:`mpsched.plot`.

- :func:`sweep_lines`: a metric against a swept parameter (``{ range = [lo, hi], steps = N }``
  in the scenario), one line per variant with its 95 % confidence band across seeds;
  logarithmic axes when the values span two decades or more;
- :func:`fct_bars`: mean download time (flow completion time of the sized flows) per variant,
  with 95 % confidence intervals across seeds;
- :func:`periods`: the outage and changed-link (handoff) periods of a run, read from its
  resolved scenario, for shading time series; :func:`smooth`: a moving average over time;
- :func:`select_variants`, :func:`paged`: a dataset cut down to some variants, and a figure
  drawn once per group of at most ``per_page`` variants (``name.png``, ``name-2.png``, ...),
  so 50 variants give several pages of readable size instead of one 7,000-pixel figure.

With one seed there is no confidence interval: titles say ``n = 1`` and no band is drawn.
"""

from __future__ import annotations

import dataclasses
import math
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .dataset import Dataset
from .stats import mean_ci

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = [
    "LINES_PER_PAGE",
    "BARS_PER_PAGE",
    "PANELS_PER_PAGE",
    "ci_note",
    "select_variants",
    "subset",
    "paged",
    "sweep_axes",
    "has_sweep",
    "sweep_lines",
    "fct_bars",
    "Period",
    "periods",
    "smooth",
]

#: Most variants drawn as lines in one figure (one colour each, a legend that fits).
LINES_PER_PAGE = 8
#: Most variants drawn as bars in one figure.
BARS_PER_PAGE = 20
#: Most per-variant panels (one run each) in one figure.
PANELS_PER_PAGE = 6

_PARAM = re.compile(r"\s*([^=,]+?)=([^,]+)")


def ci_note(n: int) -> str:
    """``95 % CI over n seeds``, or ``n = 1 (no CI)`` for a single seed."""
    return f"95 % CI over {n} seeds" if n > 1 else "n = 1 seed (no CI)"


def select_variants(ds: Dataset, names: Sequence[str]) -> Dataset:
    """``ds`` with only the variants ``names`` (in that order). Raises ValueError (one line)
    naming an unknown variant and the known ones."""
    if not names:
        raise ValueError("--variants: expected one or more variant names")
    unknown = [n for n in names if n not in ds.variants]
    if unknown:
        known = ", ".join(repr(v) for v in ds.variants)
        raise ValueError(f"--variants: no variant {unknown[0]!r} in {ds.path} (variants: {known})")
    return subset(ds, list(dict.fromkeys(names)))


def subset(ds: Dataset, variants: Sequence[str]) -> Dataset:
    """``ds`` restricted to ``variants`` (rows of other variants dropped)."""

    def keep(frame: Optional["pd.DataFrame"]) -> Optional["pd.DataFrame"]:
        return None if frame is None else frame[frame["variant"].isin(variants)]

    return dataclasses.replace(
        ds,
        flows=keep(ds.flows),
        subflows=keep(ds.subflows),
        timeseries=keep(ds.timeseries),
        fairness=keep(ds.fairness),
        variants=tuple(variants),
    )


def _chunks(items: Sequence[str], size: int) -> List[List[str]]:
    """``items`` in consecutive groups of at most ``size``, as even as possible."""
    pages = max(1, math.ceil(len(items) / size))
    per = math.ceil(len(items) / pages) if items else 0
    return [list(items[i : i + per]) for i in range(0, len(items), per)] or [[]]


def paged(
    draw: Callable[[Dataset], "Figure"], per_page: int
) -> Callable[[Dataset], List["Figure"]]:
    """``draw`` once per group of at most ``per_page`` variants of the dataset; with several
    pages each title says which page it is."""

    def pages(ds: Dataset) -> List["Figure"]:
        groups = _chunks(ds.variants, per_page)
        figures = []
        for i, group in enumerate(groups):
            fig = draw(ds if len(groups) == 1 else subset(ds, group))
            if len(groups) > 1:
                title = fig._suptitle.get_text() if fig._suptitle is not None else ""
                fig.suptitle(f"{title} — part {i + 1} of {len(groups)}".strip(" —"))
            figures.append(fig)
        return figures

    return pages


# --- sweeps ---------------------------------------------------------------------------------


def _parse_params(label: str) -> Dict[str, float]:
    """``"path2.delay_ms=40, loss=0.01"`` -> ``{"path2.delay_ms": 40.0, "loss": 0.01}``."""
    out = {}
    for key, value in _PARAM.findall(label or ""):
        try:
            out[key.strip()] = float(value)
        except ValueError:
            continue
    return out


def sweep_axes(ds: Dataset) -> List[str]:
    """The swept parameters of ``ds`` with more than one value, in label order."""
    labels = list(dict.fromkeys(ds.flows["params"])) if "params" in ds.flows else []
    axes: Dict[str, set] = {}
    for label in labels:
        for key, value in _parse_params(label).items():
            axes.setdefault(key, set()).add(value)
    return [k for k, values in axes.items() if len(values) > 1]


def has_sweep(ds: Dataset) -> bool:
    """Whether ``ds`` is a parameter sweep (a swept field with several values)."""
    return ds.kind == "compare" and bool(sweep_axes(ds))


def _line_key(row: "pd.Series", axis: str) -> str:
    """The line a run belongs to: its scheduler and cc when they vary, and the other swept
    parameters' values."""
    others = [f"{k}={v:g}" for k, v in _parse_params(row["params"]).items() if k != axis]
    return " / ".join([*row["_axes"], *others]) or "all runs"


def _per_run_metric(ds: Dataset, metric: str) -> "pd.DataFrame":
    """One row per run: its run keys and ``value``: the total goodput of its flows
    (``goodput``) or the mean completion time of its completed sized flows (``fct``)."""
    flows = ds.flows
    keys = ["run_id", "scheduler", "cc", "params", "seed"]
    if metric == "goodput":
        frame = flows.groupby(keys, sort=False)["goodput_mbps"].sum()
    else:
        done = flows[flows["size_bytes"].notna() & flows["completed"].astype(bool)]
        frame = done.groupby(keys, sort=False)["fct_s"].mean()
    return frame.rename("value").reset_index()


_METRICS = {"goodput": "total goodput (Mbit/s)", "fct": "mean download time (s)"}


def _spans_decades(values: Sequence[float]) -> bool:
    positive = [v for v in values if v > 0 and math.isfinite(v)]
    return len(positive) == len(values) and bool(positive) and max(positive) >= 100 * min(positive)


def sweep_lines(ds: Dataset, metric: str = "goodput") -> List["Figure"]:
    """``metric`` (``goodput`` or ``fct``) against the first swept parameter, one line per
    variant (scheduler, cc and the other swept parameters) with its 95 % confidence band across
    seeds; at most :data:`LINES_PER_PAGE` lines per figure."""
    from . import plot

    axis = sweep_axes(ds)[0]
    runs = _per_run_metric(ds, metric)
    varying = [c for c in ("scheduler", "cc") if ds.flows[c].nunique() > 1]
    runs["_axes"] = runs[varying].astype(str).values.tolist() if varying else [[]] * len(runs)
    runs["x"] = [_parse_params(p).get(axis, math.nan) for p in runs["params"]]
    runs["line"] = [_line_key(row, axis) for _, row in runs.iterrows()]
    lines = list(dict.fromkeys(runs["line"]))
    n = len(ds.seeds)
    figures = []
    groups = _chunks(lines, LINES_PER_PAGE)
    for page, group in enumerate(groups):
        fig, axes = plot._figure(1, height=3.4)
        ax = axes[0, 0]
        for i, line in enumerate(group):
            of_line = runs[runs["line"] == line]
            xs, means, cis = [], [], []
            for x, at in of_line.groupby("x", sort=True):
                mean, ci = mean_ci(at["value"])
                if mean is not None:
                    xs.append(x), means.append(mean), cis.append(ci if ci is not None else 0.0)
            color = plot.color(i)
            ax.plot(xs, means, marker="o", markersize=3, color=color, label=line)
            if n > 1:
                lo, hi = np.subtract(means, cis), np.add(means, cis)
                ax.fill_between(xs, lo, hi, color=color, alpha=0.15, linewidth=0)
        if _spans_decades(list(runs["x"].dropna())):
            ax.set_xscale("log")
        if _spans_decades(list(runs["value"].dropna())):
            ax.set_yscale("log")
        ax.set_xlabel(axis)
        ax.set_ylabel(_METRICS[metric])
        band = "band: " + ci_note(n) if n > 1 else ci_note(n)
        part = f" — part {page + 1} of {len(groups)}" if len(groups) > 1 else ""
        fig.suptitle(f"{ds.scenario}: {_METRICS[metric]} vs {axis} (mean, {band}){part}")
        plot.legend(ax)
        figures.append(fig)
    return figures


# --- download times -------------------------------------------------------------------------


def fct_bars(ds: Dataset) -> "Figure":
    """Mean download time (completion time of the completed sized flows, averaged per run)
    per variant, with its 95 % CI across seeds: horizontal bars, one per variant."""
    from . import plot

    runs = _per_run_metric(ds, "fct")
    variant_of_run = dict(zip(ds.flows["run_id"], ds.flows["variant"]))
    runs["variant"] = runs["run_id"].map(variant_of_run)
    fig, axes = plot._figure(1, height=0.3 * len(ds.variants) + 0.8)
    ax = axes[0, 0]
    means, errs = [], []
    for variant in ds.variants:
        mean, ci = mean_ci(runs.loc[runs["variant"] == variant, "value"])
        means.append(mean if mean is not None else np.nan)
        errs.append(ci if ci is not None else 0.0)
    y = np.arange(len(ds.variants))
    colors = [plot.color(i) for i in range(len(ds.variants))]
    bars = ax.barh(y, means, xerr=errs if any(errs) else None, capsize=3, color=colors, height=0.6)
    ax.bar_label(bars, labels=[f"{m:.2f}" for m in means], padding=3, fontsize=8)
    ax.set_yticks(y, list(ds.variants))
    ax.invert_yaxis()
    ax.set_xlabel("download time (s)")
    ax.grid(axis="y", visible=False)
    ax.margins(x=0.15)
    fig.suptitle(f"{ds.scenario}: mean download time of the sized flows, {ci_note(len(ds.seeds))}")
    return fig


def has_fct(ds: Dataset) -> bool:
    """Whether some sized flow completed (there is a download time to show)."""
    flows = ds.flows
    return bool((flows["size_bytes"].notna() & flows["completed"].astype(bool)).any())


# --- time series ----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Period:
    """A span of a run in which a link was out (``outage``) or changed by its schedule
    (``changed``: a handoff, a rate or delay change); ``where``: the path or link."""

    kind: str
    where: str
    start_s: float
    end_s: float


def _link_periods(link: Dict[str, Any], end_s: float) -> List[Period]:
    name = str(link.get("name", "link"))
    where = name.rsplit(".", 1)[0] if name.endswith((".fwd", ".rev")) else name
    base = {k: link.get(k) for k in ("rate_mbps", "delay_ms", "loss")}
    state, out = dict(base), []
    changed_at: Optional[float] = None
    outage_at: Optional[float] = None
    for entry in link.get("schedule") or []:
        at = float(entry.get("at_s", 0.0))
        if entry.get("outage") is True and outage_at is None:
            outage_at = at
        elif entry.get("outage") is False and outage_at is not None:
            out.append(Period("outage", where, outage_at, at))
            outage_at = None
        state.update({k: entry[k] for k in base if k in entry})
        if state != base and changed_at is None:
            changed_at = at
        elif state == base and changed_at is not None:
            out.append(Period("changed", where, changed_at, at))
            changed_at = None
    if outage_at is not None:
        out.append(Period("outage", where, outage_at, end_s))
    if changed_at is not None:
        out.append(Period("changed", where, changed_at, end_s))
    return out


def periods(ds: Dataset, run_id: str) -> List[Period]:
    """The outage and changed-link periods of run ``run_id``, from its resolved scenario
    (``scenario.toml`` of the run directory); empty when that file is not there. Forward and
    reverse links of a path count once."""
    try:
        scenario = tomllib.loads(
            (run_dir_of(ds, run_id) / "scenario.toml").read_text(encoding="utf-8")
        )
    except (OSError, ValueError):
        return []
    end_s = float(scenario.get("sim", {}).get("duration_s", 0.0))
    found: Dict[Tuple[str, str, float, float], Period] = {}
    for link in scenario.get("links", []):
        for p in _link_periods(link, end_s):
            found.setdefault((p.kind, p.where, p.start_s, p.end_s), p)
    return sorted(found.values(), key=lambda p: (p.start_s, p.kind, p.where))


def shade(ax: Any, spans: Sequence[Period]) -> None:
    """Shade ``spans`` on ``ax``: outages darker than changed periods, one legend entry each."""
    labelled = set()
    for p in spans:
        label = f"{'outage' if p.kind == 'outage' else 'changed'}: {p.where}"
        alpha = 0.22 if p.kind == "outage" else 0.08
        ax.axvspan(
            p.start_s, p.end_s, color="0.3", alpha=alpha, linewidth=0,
            label=None if label in labelled else label,
        )  # fmt: skip
        labelled.add(label)


def smooth(t: np.ndarray, y: np.ndarray, window_s: float) -> np.ndarray:
    """Moving average of ``y`` over the samples within ``window_s`` seconds before each one
    (``t`` ascending); ``window_s <= 0`` returns ``y``."""
    if window_s <= 0 or len(y) == 0:
        return y
    csum = np.concatenate([[0.0], np.cumsum(np.nan_to_num(y, nan=0.0))])
    start = np.searchsorted(t, t - window_s, side="right")
    count = np.arange(1, len(y) + 1) - start
    return (csum[1:] - csum[start]) / np.maximum(count, 1)


def run_dir_of(ds: Dataset, run_id: str) -> Path:
    """The directory of one run of ``ds``."""
    return ds.path if ds.kind == "run" else ds.path / "runs" / run_id
