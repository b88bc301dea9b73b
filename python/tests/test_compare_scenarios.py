"""`mpsched compare a.toml b.toml`: several scenario files in one dataset (the `scenario`
column), resumed like one file, summarized, reported and plotted per scenario, with the
identical-seeds notice per scenario."""

from __future__ import annotations

import pandas as pd
import pytest
from conftest import FAST_TOML, MINI_TOML

from mpsched import experiment
from mpsched.matrix import MatrixError
from mpsched.sweep import SweepInterrupted, run_sweep

# FAST without its loss model: nothing random, so every seed gives the same run.
CALM_TOML = FAST_TOML.replace('name = "fast"', 'name = "calm"').replace(
    'loss = { model = "bernoulli", p = 0.01 }\n', ""
)


@pytest.fixture
def two_files(tmp_path):
    (tmp_path / "mini.toml").write_text(MINI_TOML)
    (tmp_path / "calm.toml").write_text(CALM_TOML)
    return tmp_path


def test_an_interrupted_multi_scenario_compare_resumes(two_files):
    paths = [two_files / "mini.toml", two_files / "calm.toml"]
    matrix = experiment.prepare(paths, ccs="cubic,newreno", seeds="1-2")
    assert [s.scenario_label for s in matrix.runs] == ["mini"] * 4 + ["calm"] * 4
    assert matrix.runs[4].run_id == "calm_cubic_seed1"
    out = two_files / "o"
    with pytest.raises(SweepInterrupted):
        run_sweep(matrix, out, jobs=1, _stop_after=3)
    again = experiment.execute(matrix, out, jobs=1)
    assert (again.reused, again.ran) == (3, 5)


def test_cli_prints_and_reports_per_scenario(cli, two_files):
    proc = cli(
        "compare", "mini.toml", "calm.toml", "--cc", "cubic,newreno", "--seeds", "1-2", "-j", "1"
    )
    assert proc.returncode == 0, proc.stderr
    out = two_files / "out" / "mini+calm-compare"
    assert f"Wrote {out.relative_to(two_files)}/: 8 runs" in proc.stdout
    assert "mini: 2 variant(s) × 2 seed(s)" in proc.stdout
    assert "calm: 2 variant(s) × 2 seed(s)" in proc.stdout
    words = " ".join(proc.stdout.split())  # the console wraps long lines
    assert words.count("identical results") == 1
    assert (
        "Every seed gave identical results for every variant of calm: nothing random differs "
        'between seeds (a real trace replays from the same point: set `trace_offset_s = "random"`).'
    ) in words
    queues = pd.read_parquet(out / "queues.parquet")
    assert list(queues.columns[:6]) == ["run_id", "scheduler", "cc", "params", "seed", "scenario"]
    assert set(queues["scenario"]) == {"mini", "calm"}

    proc = cli("report", str(out))
    assert proc.returncode == 0, proc.stderr
    text = (out / "report.md").read_text()
    assert text.index("### Scenario `mini`") < text.index("### Scenario `calm`")
    assert "runs of 2 scenarios (`mini`, `calm`)" in text
    assert "Every seed gave identical results for every variant of `calm`" in text
    assert "![mini: Goodput per flow over time](plots/mini/goodput_flows.png)" in text
    assert (out / "plots" / "calm" / "queues.png").is_file()
    assert not (out / "plots" / "goodput_flows.png").exists()


TRACED_TOML = """
[sim]
name = "traced"
duration_s = 2.0
[[paths]]
name = "cell"
trace = ["fast.mahimahi", "slow.mahimahi"]
rate_mbps = 10.0
delay_ms = 20.0
[[flows]]
name = "bulk"
path = "cell"
cc = "cubic"
"""


def test_a_list_of_traces_is_one_scenario_per_trace(tmp_path):
    # One 1500-byte opportunity per ms (12 Mbit/s) and one every 4 ms (3 Mbit/s), 100 ms loops.
    (tmp_path / "fast.mahimahi").write_text("".join(f"{t}\n" for t in range(1, 101)))
    (tmp_path / "slow.mahimahi").write_text("".join(f"{t}\n" for t in range(4, 101, 4)))
    (tmp_path / "traced.toml").write_text(TRACED_TOML)
    cmp = experiment.compare(tmp_path / "traced.toml", seeds=[1, 2], jobs=1, out=tmp_path / "o")
    assert cmp.dataset.scenarios == ("fast", "slow")
    assert sorted(p.name for p in (tmp_path / "o" / "runs").iterdir()) == [
        "fast_seed1", "fast_seed2", "slow_seed1", "slow_seed2",
    ]  # fmt: skip
    goodput = cmp.flows.groupby("scenario")["goodput_mbps"].mean()
    assert 8.0 < goodput["fast"] <= 12.0 and 1.5 < goodput["slow"] <= 3.0, goodput
    scenario = (tmp_path / "o" / "runs" / "slow_seed1" / "scenario.toml").read_text()
    assert "slow.mahimahi" in scenario and "fast.mahimahi" not in scenario
    (tmp_path / "bad.toml").write_text(TRACED_TOML.replace('"slow.mahimahi"', "3"))
    with pytest.raises(MatrixError, match=r"bad.toml: paths\[0\].trace: expected a list of trace"):
        experiment.compare(tmp_path / "bad.toml")
