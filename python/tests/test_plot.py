"""`mpsched plot` and `mpsched report`: the figures, byte-identical output, the summary table, errors."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import pytest
from conftest import MINI_TOML

import mpsched
from mpsched.dataset import ResultsError, load_results
from mpsched.matrix import build_matrix
from mpsched.plot import parse_formats, render
from mpsched.report import write_report
from mpsched.stats import mean_ci, t_quantile_975
from mpsched.sweep import MANIFEST, run_sweep

COMPARE_FIGURES = [
    "cwnd_rtt",
    "fairness_bars",  # Jain's index over all flows (the MPTCP flow and the TCP flow)
    "goodput_bars",
    "goodput_flows",
    "goodput_subflows",
    "hol",
    "fct_cdf",
    "fct_bars",  # the sized TCP flow's download time
    "queues",
]
RUN_FIGURES = ["cwnd_rtt", "goodput_flows", "goodput_subflows", "hol", "queues", "fct_cdf"]


@pytest.fixture(scope="module")
def compare_dir(tmp_path_factory) -> Path:
    """A finished sweep of the mini scenario: 2 schedulers × 2 seeds (shared, read-only)."""
    root = tmp_path_factory.mktemp("compare")
    scenario = root / "mini.toml"
    scenario.write_text(MINI_TOML)
    out = root / "cmp"
    run_sweep(build_matrix(scenario, [1, 2], ["minrtt", "redundant"]), out, jobs=1)
    return out


@pytest.fixture
def run_dir(mini_toml, tmp_path) -> Path:
    """The output of one `mpsched run` of the mini scenario."""
    return mpsched.write_results(mpsched.run(mini_toml, seed=3), tmp_path / "run")


def assert_one_error_line(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 2, proc
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    return lines[0]


def test_plot_writes_every_figure_and_identical_bytes_twice(cli, compare_dir, tmp_path):
    p1, p2 = tmp_path / "p1", tmp_path / "p2"
    for out in (p1, p2):
        proc = cli("plot", str(compare_dir), "--format", "png,svg", "--out", str(out))
        assert proc.returncode == 0, proc.stderr
    expected = sorted(f"{name}.{ext}" for name in COMPARE_FIGURES for ext in ("png", "svg"))
    assert sorted(p.name for p in p1.iterdir()) == expected
    for name in expected:
        assert (p1 / name).read_bytes() == (p2 / name).read_bytes(), name
    svg = (p1 / "goodput_flows.svg").read_text()
    assert "<dc:date>" not in svg and "Matplotlib v" not in svg
    assert (p1 / "goodput_flows.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_a_run_directory(run_dir, mini_toml):
    ds = load_results(run_dir)
    assert (ds.kind, ds.variants, ds.seeds) == ("run", ("minrtt",), (3,))
    written = render(ds, run_dir / "plots", ["svg"])
    assert sorted(p.name for p in written) == sorted(f"{n}.svg" for n in RUN_FIGURES)
    # Re-running the scenario into the directory replaces the figures along with the results.
    mpsched.write_results(mpsched.run(mini_toml, seed=3), run_dir)
    assert not (run_dir / "plots").exists()


def test_plot_default_format_and_directory(cli, run_dir):
    proc = cli("plot", str(run_dir))
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in (run_dir / "plots").iterdir()) == sorted(
        f"{n}.png" for n in RUN_FIGURES
    )


def test_report_has_the_summary_table_and_the_figures(cli, compare_dir):
    proc = cli("report", str(compare_dir))
    assert proc.returncode == 0, proc.stderr
    text = (compare_dir / "report.md").read_text()
    # One MPTCP flow and a TCP flow: Jain's index over all flows only (over one flow it is 1).
    header = (
        "| scheduler | cc | flow | runs | goodput (Mbit/s) | Jain (all) | FCT (s) | completed "
        "| retransmits |"
    )
    assert header in text
    rows = [
        line
        for line in text.splitlines()
        if line.startswith("| minrtt") or line.startswith("| redundant")
    ]
    assert len(rows) == 2  # the multipath flow of each variant
    assert any(line.startswith("| — | cubic | tcp | 2 |") for line in text.splitlines())
    assert " ± " in rows[0]
    for name in COMPARE_FIGURES:
        assert f"](plots/{name}.png)" in text
        assert (compare_dir / "plots" / f"{name}.png").is_file()
    assert "goodput" in proc.stdout and "report.md" in proc.stdout


def test_html_report_is_self_contained_and_deterministic(compare_dir):
    ds = load_results(compare_dir)
    first = write_report(ds, as_html=True).read_bytes()
    second = write_report(ds, as_html=True).read_bytes()
    assert first == second
    text = first.decode()
    assert text.startswith("<!DOCTYPE html>") and "<table>" in text
    assert text.count('src="data:image/png;base64,') == len(COMPARE_FIGURES)


def test_summary_values_match_the_runs(compare_dir):
    flows = json.loads((compare_dir / "runs" / "minrtt_seed1" / "summary.json").read_text())[
        "flows"
    ]
    flows2 = json.loads((compare_dir / "runs" / "minrtt_seed2" / "summary.json").read_text())[
        "flows"
    ]
    ds = load_results(compare_dir)
    sel = ds.flows[(ds.flows["variant"] == "minrtt") & (ds.flows["name"] == "mp")]
    assert sorted(sel["goodput_mbps"]) == sorted(
        [flows[0]["goodput_mbps"], flows2[0]["goodput_mbps"]]
    )


@pytest.mark.parametrize("command", ["plot", "report"])
def test_missing_or_foreign_results_dir_exits_2(cli, tmp_path, command):
    line = assert_one_error_line(cli(command, "nowhere"))
    assert "nowhere: no such directory" in line
    (tmp_path / "junk").mkdir()
    line = assert_one_error_line(cli(command, "junk"))
    assert "not a results directory" in line
    assert list((tmp_path / "junk").iterdir()) == []


def test_incomplete_sweep_and_bad_format_exit_2(cli, mini_toml, tmp_path, compare_dir):
    partial = tmp_path / "partial"
    partial.mkdir()
    (partial / MANIFEST).write_text(json.dumps({"runs": [], "complete": False}))
    line = assert_one_error_line(cli("plot", str(partial)))
    assert "incomplete" in line
    line = assert_one_error_line(cli("plot", str(compare_dir), "--format", "png,gif"))
    assert "--format" in line and "gif" in line
    assert not (partial / "plots").exists()


def test_parse_formats():
    assert parse_formats("svg, png,svg") == ["svg", "png"]
    with pytest.raises(ValueError):
        parse_formats("jpeg")


def test_load_results_errors(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(ResultsError, match="not a directory"):
        load_results(tmp_path / "file")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "summary.json").write_text("{}")
    (bad / "flows.parquet").write_text("not parquet")
    with pytest.raises(ResultsError, match="flows.parquet"):
        load_results(bad)


def test_t_quantiles_and_confidence_intervals():
    assert t_quantile_975(1) == pytest.approx(12.706, abs=1e-3)
    assert t_quantile_975(30) == pytest.approx(2.0423, abs=1e-4)
    assert t_quantile_975(31) == pytest.approx(2.0395, abs=1e-3)
    assert t_quantile_975(120) == pytest.approx(1.9799, abs=1e-3)
    mean, ci = mean_ci([1.0, 2.0, 3.0])
    assert mean == 2.0 and ci == pytest.approx(4.3027 / math.sqrt(3), rel=1e-4)
    assert mean_ci([5.0]) == (5.0, None)
    assert mean_ci([]) == (None, None)
    # NaN is ignored: two values, 1 and 3, sample standard deviation sqrt(2).
    assert mean_ci([1.0, float("nan"), 3.0]) == (2.0, pytest.approx(12.7062))


def test_energy_figure_when_the_scenario_accounts_energy(tmp_path):
    """Paths with an `interface` get MPTCP-RL's power model: the energy figure appears, and its
    per-run energy equals the sum of the flows' energy_j."""
    scenario = tmp_path / "energy.toml"
    scenario.write_text(
        MINI_TOML.replace('name = "a"\n', 'name = "a"\ninterface = "wifi"\n').replace(
            'name = "b"\n', 'name = "b"\ninterface = "lte"\n'
        )
    )
    out = tmp_path / "cmp"
    run_sweep(build_matrix(scenario, [1, 2], ["minrtt", "redundant"]), out, jobs=1)
    ds = load_results(out)
    from mpsched.plot import energy_bars, has_energy

    assert has_energy(ds)
    written = render(ds, tmp_path / "plots", ["svg"])
    assert "energy.svg" in [p.name for p in written]
    fig = energy_bars(ds)
    heights = [b.get_height() for b in fig.axes[0].patches]
    per_run = ds.flows.groupby(["variant", "run_id"], sort=False)["energy_j"].sum()
    expect = [per_run[v].mean() for v in ds.variants]
    assert heights == pytest.approx(expect)
    # Redundant sends every byte on both interfaces: more energy per delivered megabyte.
    j_per_mb = [b.get_height() for b in fig.axes[1].patches]
    assert j_per_mb[1] > j_per_mb[0]
    # The mini scenario without interfaces has no energy figure (see the figure list above).
