"""Paper figures: sweeps with CI bands, download-time bars, CDFs, shaded and smoothed time
series, pages for many variants, one seed, PNG/PDF/SVG (each rendered, sized and its legend read)."""

from __future__ import annotations

import dataclasses
import io
from typing import List

import numpy as np
import pandas as pd
import pytest
from conftest import MINI_TOML
from PIL import Image

from mpsched import figures, plot
from mpsched.dataset import load_results
from mpsched.figures import Period
from mpsched.matrix import build_matrix
from mpsched.sweep import run_sweep

# The mini scenario with path b's delay swept over three decades (log spacing) and an outage
# of path b from 0.6 s to 1.2 s.
SWEEP_TOML = MINI_TOML.replace(
    "rate_mbps = 5.0\ndelay_ms = 30.0\n",
    "rate_mbps = 5.0\ndelay_ms = { range = [1, 1000], steps = 3, log = true }\n"
    "schedule = [{ at_s = 0.4, delay_ms = 40 }, { at_s = 0.6, outage = true },\n"
    "  { at_s = 1.2, outage = false }, { at_s = 1.4, delay_ms = 30 }]\n",
)
# Most pixels a page may have on either side (at 100 dpi).
MAX_W, MAX_H = 1100, 1500


@pytest.fixture(scope="module")
def sweep_ds(tmp_path_factory):
    root = tmp_path_factory.mktemp("sweep")
    (root / "sweep.toml").write_text(SWEEP_TOML)
    out = root / "cmp"
    run_sweep(build_matrix(root / "sweep.toml", [1, 2], ["minrtt", "redundant"]), out, jobs=1)
    return load_results(out)


def legend_labels(fig) -> List[str]:
    return [t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()]


def pixels(fig) -> tuple:
    w, h = fig.get_size_inches() * fig.dpi
    return round(w), round(h)


def draw(spec_name: str, ds, options=None):
    specs = plot.figure_specs(ds, options or plot.PlotOptions())
    (spec,) = [s for s in specs if s.name == spec_name]
    with plot.matplotlib.rc_context(plot._RC):
        pages = spec.draw(ds)
    return pages if isinstance(pages, list) else [pages]


def many_variants(ds, n: int):
    """``ds`` with its first seed's runs of the first variant copied into ``n`` variants."""
    first = ds.variants[0]

    def copies(frame: pd.DataFrame) -> pd.DataFrame:
        base = frame[frame["variant"] == first]
        parts = []
        for i in range(n):
            part = base.copy()
            part["variant"] = f"variant-{i:02d}"
            part["run_id"] = part["run_id"] + f"-{i}"
            parts.append(part)
        return pd.concat(parts, ignore_index=True)

    return dataclasses.replace(
        ds,
        flows=copies(ds.flows),
        subflows=copies(ds.subflows),
        timeseries=copies(ds.timeseries),
        fairness=copies(ds.fairness),
        variants=tuple(f"variant-{i:02d}" for i in range(n)),
    )


def test_sweep_lines_have_a_ci_band_per_variant_and_log_x(sweep_ds):
    assert figures.sweep_axes(sweep_ds) == ["b.delay_ms"]
    (fig,) = draw("sweep_goodput", sweep_ds)
    ax = fig.axes[0]
    assert legend_labels(fig) == ["minrtt", "redundant"]
    assert ax.get_xscale() == "log" and ax.get_xlabel() == "b.delay_ms"
    assert [list(line.get_xdata()) for line in ax.get_lines()] == [[1.0, 31.6228, 1000.0]] * 2
    assert len(ax.collections) == 2  # one band each
    assert "95 % CI over 2 seeds" in fig._suptitle.get_text()
    assert pixels(fig) <= (MAX_W, MAX_H)
    (fct,) = draw("sweep_fct", sweep_ds)
    assert legend_labels(fct) == ["minrtt", "redundant"]


def test_fct_bars_and_cdf(sweep_ds):
    (bars,) = draw("fct_bars", sweep_ds)
    labels = [t.get_text() for t in bars.axes[0].get_yticklabels()]
    assert labels == list(sweep_ds.variants) and len(labels) == 6
    assert len(bars.axes[0].patches) == 6 and pixels(bars) <= (MAX_W, MAX_H)
    (cdf,) = draw("fct_cdf", sweep_ds)
    assert [label.split(" (")[0] for label in legend_labels(cdf)] == list(sweep_ds.variants)


def test_time_series_shade_outages_and_changes_and_smooth(sweep_ds):
    run_id = sweep_ds.first_seed_runs()[sweep_ds.variants[0]]
    assert figures.periods(sweep_ds, run_id) == [
        Period("changed", "b", 0.4, 2.0),  # 30 ms at 1.4 s is not the swept 1 ms: to the end
        Period("outage", "b", 0.6, 1.2),
    ]
    small = figures.subset(sweep_ds, sweep_ds.variants[:2])
    (fig,) = draw("goodput_flows", small, plot.PlotOptions(smooth_s=0.5))
    for ax in fig.axes:
        labels = ax.get_legend_handles_labels()[1]
        assert labels == [*small.variants, "changed: b", "outage: b"]
    title = fig._suptitle.get_text()
    assert "0.5 s moving average" in title and "shaded: periods of seed 1" in title
    (plain,) = draw("goodput_flows", small, plot.PlotOptions(shade=False))
    assert "outage: b" not in legend_labels(plain)


def test_queue_occupancy_per_link_with_outages_shaded(sweep_ds):
    small = figures.subset(sweep_ds, sweep_ds.variants[:2])
    (fig,) = draw("queues", small)
    assert pixels(fig) <= (MAX_W, MAX_H) and len(fig.axes) == 4  # bytes and packets per variant
    legends = [
        [t.get_text() for t in ax.get_legend().get_texts()] for ax in fig.axes if ax.get_legend()
    ]
    assert len(legends) == 2  # one per row, right of the packets panel
    for labels, run_id in zip(legends, small.first_seed_runs().values()):
        queues = pd.read_parquet(sweep_ds.path / "runs" / run_id / "queues.parquet")
        busy = list(dict.fromkeys(queues.loc[queues["queue_packets"] > 0, "link"]))
        assert busy and set(busy) < set(queues["link"])  # idle (ACK) links are left out
        assert labels == [*busy, "changed: b", "outage: b"]
    lines = fig.axes[0].get_lines()
    assert max(max(line.get_ydata()) for line in lines) > 0
    assert "queue occupancy per link" in fig._suptitle.get_text()
    png = plot.figure_bytes(plot._frozen(fig), "png")
    assert Image.open(io.BytesIO(png)).size == pixels(fig)


def test_smooth_is_a_trailing_moving_average():
    t = np.array([0.0, 0.5, 1.0, 1.5, 2.0])
    y = np.array([0.0, 2.0, 4.0, 6.0, 8.0])
    assert list(figures.smooth(t, y, 1.0)) == [0.0, 1.0, 3.0, 5.0, 7.0]
    assert list(figures.smooth(t, y, 0.0)) == list(y)


def test_fifty_variants_are_split_into_readable_pages(sweep_ds):
    ds = many_variants(sweep_ds, 50)
    pages = draw("goodput_flows", ds)
    assert len(pages) == 7  # 50 lines: pages of 8, 7, 7, 7, 7, 7 and 7
    seen = []
    for i, fig in enumerate(pages, start=1):
        labels = [
            label for label in legend_labels(fig) if not label.startswith(("outage", "changed"))
        ]
        half = len(labels) // 2  # two flow panels, the same lines in each
        assert half <= figures.LINES_PER_PAGE and labels[:half] == labels[half:]
        seen += labels[:half]
        assert f"part {i} of 7" in fig._suptitle.get_text()
        assert pixels(fig) <= (MAX_W, MAX_H)
    assert seen == list(ds.variants)
    bars = [plot._frozen(fig) for fig in draw("goodput_bars", ds)]  # laid out: tick texts set
    assert [len(fig.axes[0].patches) for fig in bars] == [17, 17, 16]
    ticks = [t.get_text() for fig in bars for t in fig.axes[-1].get_xticklabels()]  # shared x
    assert ticks == list(ds.variants) and bars[0].axes[-1].get_xticklabels()[0].get_rotation() == 30
    panels = draw("goodput_subflows", figures.subset(ds, ds.variants[:10]))
    assert [len(fig.axes) for fig in panels] == [5, 5]
    assert max(pixels(fig) for fig in bars + panels) <= (MAX_W, MAX_H)
    png = plot.figure_bytes(plot._frozen(panels[0]), "png")
    with Image.open(io.BytesIO(png)) as image:
        assert image.size == pixels(panels[0])


def test_one_seed_draws_no_band_and_says_n_1(sweep_ds):
    one = dataclasses.replace(
        figures.subset(sweep_ds, sweep_ds.variants),
        flows=sweep_ds.flows[sweep_ds.flows["seed"] == 1],
        fairness=sweep_ds.fairness[sweep_ds.fairness["seed"] == 1],
        timeseries=sweep_ds.timeseries[sweep_ds.timeseries["seed"] == 1],
        seeds=(1,),
    )
    (fig,) = draw("sweep_goodput", one)
    assert len(fig.axes[0].collections) == 0 and "n = 1 seed (no CI)" in fig._suptitle.get_text()
    for name in ("goodput_bars", "fct_bars", "fairness_bars"):
        (bars,) = draw(name, one)
        title = bars._suptitle.get_text()
        assert "n = 1 seed (no CI)" in title and "over 1 seeds" not in title, name
        assert not any(ax.containers and len(ax.lines) for ax in bars.axes), name  # no error bars


def test_png_pdf_svg_are_deterministic(sweep_ds):
    def encoded(fmt: str) -> bytes:
        (fig,) = draw("sweep_goodput", sweep_ds)
        with plot.matplotlib.rc_context(plot._RC):
            return plot.figure_bytes(plot._frozen(fig), fmt)

    pdf = encoded("pdf")
    assert pdf.startswith(b"%PDF") and b"CreationDate" not in pdf and b"Matplotlib" not in pdf
    assert b"/FontFile2" in pdf and b"/Type3" not in pdf  # TrueType embedded, no Type 3 fonts
    assert encoded("pdf") == pdf
    svg = encoded("svg")
    assert svg.startswith(b"<?xml") and encoded("svg") == svg
    with Image.open(io.BytesIO(encoded("png"))) as image:
        assert image.size == (900, 400)
    assert plot.parse_formats("png,pdf,svg") == ["png", "pdf", "svg"]


def test_plot_variants_option(cli, sweep_ds, tmp_path):
    chosen = "redundant / b.delay_ms=1,minrtt / b.delay_ms=1"
    proc = cli("plot", str(sweep_ds.path), "--variants", chosen, "--out", str(tmp_path / "p"))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "p" / "goodput_flows.png").is_file()
    assert not (tmp_path / "p" / "sweep_goodput.png").exists()  # one sweep value left
    bad = cli("plot", str(sweep_ds.path), "--variants", "nope", "--out", str(tmp_path / "q"))
    assert bad.returncode == 2 and bad.stderr.startswith("error: --variants: no variant 'nope'")
    assert len(bad.stderr.splitlines()) == 1


def test_periods_of_a_run_directory_end_when_the_link_is_restored(tmp_path):
    import mpsched

    text = SWEEP_TOML.replace("{ range = [1, 1000], steps = 3, log = true }", "30.0")
    (tmp_path / "one.toml").write_text(text)
    out = mpsched.write_results(mpsched.run(tmp_path / "one.toml"), tmp_path / "run")
    ds = load_results(out)
    assert figures.periods(ds, str(ds.flows["run_id"].iloc[0])) == [
        Period("changed", "b", 0.4, 1.4),  # back to its own 30 ms at 1.4 s
        Period("outage", "b", 0.6, 1.2),
    ]
    (fig,) = draw("goodput_subflows", ds)
    assert legend_labels(fig)[-2:] == ["changed: b", "outage: b"]
