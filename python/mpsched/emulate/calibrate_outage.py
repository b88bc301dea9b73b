"""Goodput over time for the calibration's outage rows (``mpsched calibrate``): the connection's
goodput before, during and after the outage on both engines, as a table in ``calibration.md``
and as a figure per row (``outage-<case>.png`` / ``.pdf``).

Both come from the runs the suite wrote (``runs/<case>/<engine>-seed<N>/timeseries.parquet``),
so a report merged from two invocations (``--engines sim`` over an earlier kernel pass) shows
both engines. The series is the flow's goodput per sample interval (``flow_goodput_mbps``);
across seeds, the median at each sample time.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import pyarrow.parquet as pq

from ..figures import smooth

#: The windows of the table, relative to the outage's start (``down``) and end (``up``):
#: (label, anchor, from, to), anchor "down" or "up", seconds relative to it; "end" runs to the
#: end of the run.
WINDOWS: Tuple[Tuple[str, str, float, Optional[float]], ...] = (
    ("5 s before", "down", -5.0, 0.0),
    ("outage", "down", 0.0, None),
    ("0-5 s after", "up", 0.0, 5.0),
    ("5-10 s after", "up", 5.0, 10.0),
    ("10 s after to end", "up", 10.0, None),
)

ENGINES = ("sim", "kernel")

#: The figure's moving average (s): a 0.1 s sample of a connection held by head-of-line
#: blocking swings between 0 and twice the rate.
SMOOTH_S = 1.0


def series(run: Path) -> Optional[Tuple[np.ndarray, np.ndarray]]:
    """(sample times, the flow's goodput in Mbit/s) of one run, ``None`` if it has no
    timeseries. One value per sample time (the timeseries repeats it on each subflow's row)."""
    path = run / "timeseries.parquet"
    if not path.is_file():
        return None
    table = pq.read_table(path, columns=["time_s", "flow_goodput_mbps"]).to_pydict()
    seen: Dict[float, float] = {}
    for t, g in zip(table["time_s"], table["flow_goodput_mbps"]):
        seen.setdefault(round(float(t), 6), float(g or 0.0))
    times = np.array(sorted(seen))
    return times, np.array([seen[t] for t in times])


def runs_of(
    out: Path, case: str, engine: str, seeds: Sequence[int]
) -> List[Tuple[np.ndarray, np.ndarray]]:
    """The series of ``engine``'s runs of ``case`` for ``seeds`` that exist under ``out``."""
    found = (series(out / "runs" / case / f"{engine}-seed{s}") for s in seeds)
    return [x for x in found if x is not None]


def _bounds(
    anchor: str, lo: float, hi: Optional[float], down: float, up: float, end: float
) -> Tuple[float, float]:
    base = down if anchor == "down" else up
    stop = (up if anchor == "down" else end) if hi is None else base + hi
    return base + lo, stop


def window_means(
    s: Tuple[np.ndarray, np.ndarray], down: float, up: float
) -> Dict[str, Optional[float]]:
    """Mean goodput of one run in each window of :data:`WINDOWS` (samples whose interval ends
    inside the window); ``None`` for a window the run does not reach."""
    t, g = s
    end = float(t[-1]) if len(t) else 0.0
    out: Dict[str, Optional[float]] = {}
    for label, anchor, lo, hi in WINDOWS:
        a, b = _bounds(anchor, lo, hi, down, up, end)
        m = (t > a + 1e-9) & (t <= b + 1e-9)
        out[label] = float(g[m].mean()) if m.any() else None
    return out


def median_windows(
    runs: Sequence[Tuple[np.ndarray, np.ndarray]], down: float, up: float
) -> Dict[str, Optional[float]]:
    """Per window, the median over runs of their mean goodput."""
    per = [window_means(r, down, up) for r in runs]
    out: Dict[str, Optional[float]] = {}
    for label, *_ in WINDOWS:
        vals = [p[label] for p in per if p[label] is not None]
        out[label] = statistics.median(vals) if vals else None
    return out


def table(out: Path, outages: Dict[str, Tuple[float, float]], seeds: Sequence[int]) -> List[str]:
    """Markdown lines: per outage row and engine, the median goodput in each window; empty
    when no outage row has runs."""
    rows = []
    for case, (down, up) in outages.items():
        for engine in ENGINES:
            runs = runs_of(out, case, engine, seeds)
            if not runs:
                continue
            w = median_windows(runs, down, up)
            cells = ["—" if w[label] is None else f"{w[label]:.2f}" for label, *_ in WINDOWS]
            rows.append(f"| {case} | {engine} | {len(runs)} | " + " | ".join(cells) + " |")
    if not rows:
        return []
    head = " | ".join(label for label, *_ in WINDOWS)
    return [
        "",
        "Goodput over time in the outage rows (Mbit/s, the flow's; median over the runs of each "
        "window's mean; figures `outage-<case>.png`):",
        "",
        f"| case | engine | runs | {head} |",
        "|---|---|---|" + "---|" * len(WINDOWS),
        *rows,
    ]


def figure(out: Path, case: str, down: float, up: float, seeds: Sequence[int]) -> Optional[Path]:
    """``outage-<case>.png`` and ``.pdf`` in ``out``: each engine's median goodput over time
    (its runs thin), smoothed over :data:`SMOOTH_S`, the outage shaded; ``None`` without
    matplotlib or runs."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, ax = plt.subplots(figsize=(7.0, 3.2))
    drawn = False
    for engine, colour in zip(ENGINES, ("tab:blue", "tab:red")):
        runs = runs_of(out, case, engine, seeds)
        if not runs:
            continue
        n = min(len(r[0]) for r in runs)
        t = runs[0][0][:n]
        for r in runs:
            ax.plot(t, smooth(t, r[1][:n], SMOOTH_S), color=colour, alpha=0.3, linewidth=0.6)
        med = np.median(np.stack([r[1][:n] for r in runs]), axis=0)
        label = f"{engine} (median of {len(runs)})"
        ax.plot(t, smooth(t, med, SMOOTH_S), color=colour, linewidth=1.4, label=label)
        drawn = True
    if not drawn:
        plt.close(fig)
        return None
    ax.axvspan(down, up, color="0.3", alpha=0.22, linewidth=0, label="outage")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("goodput (Mbit/s)")
    ax.set_title(f"{case}: goodput over time ({SMOOTH_S:g} s moving average), simulator and kernel")
    ax.legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    path = out / f"outage-{case}.png"
    fig.savefig(path, dpi=150)
    fig.savefig(path.with_suffix(".pdf"))
    plt.close(fig)
    return path
