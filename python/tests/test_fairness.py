"""Jain's fairness index: in a run's summary (``fairness``), and per variant with a 95 % CI in
``mpsched compare``'s dataset, summary table and report."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import List

import pytest

import mpsched
from mpsched.dataset import load_results
from mpsched.matrix import build_matrix
from mpsched.report import summary_table
from mpsched.results import write_results
from mpsched.stats import mean_ci, summarize
from mpsched.sweep import run_sweep

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

# Two MPTCP flows (one starting later, so they differ) and a TCP flow on lossy paths.
FAIR_TOML = """\
[sim]
name = "fair"
duration_s = 3.0

[[paths]]
name = "a"
rate_mbps = 10.0
delay_ms = 10.0
loss = { model = "bernoulli", p = 0.01 }

[[paths]]
name = "b"
rate_mbps = 5.0
delay_ms = 30.0
loss = { model = "bernoulli", p = 0.01 }

[[flows]]
name = "mp1"
paths = ["a", "b"]
cc = "lia"

[[flows]]
name = "mp2"
paths = ["a", "b"]
cc = "lia"
start_s = 0.5

[[flows]]
name = "tcp"
path = "a"
cc = "lia"
"""


def jain(xs: List[float]) -> float:
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs))


@pytest.fixture
def fair_toml(tmp_path: Path) -> Path:
    path = tmp_path / "fair.toml"
    path.write_text(FAIR_TOML)
    return path


def test_run_summary_has_jain_over_mptcp_and_all_flows(fair_toml):
    res = mpsched.run(fair_toml)
    flows = res.flows.to_pandas()
    fair = res.summary["fairness"]
    assert fair["metric"] == "goodput_mbps"
    mp = flows.loc[flows["subflows"] > 1, "goodput_mbps"].tolist()
    assert (fair["mptcp_flows"], fair["all_flows"]) == (2, 3)
    assert fair["jain_mptcp"] == pytest.approx(jain(mp), abs=1e-12)
    assert fair["jain_all"] == pytest.approx(jain(flows["goodput_mbps"].tolist()), abs=1e-12)
    assert 0.5 <= fair["jain_mptcp"] < 1.0
    # summary.json as written (keys sorted) holds it too.
    assert '"jain_mptcp"' in res.summary_json()


def test_no_mptcp_flow_gives_a_null_index_not_zero(fair_toml):
    text = FAIR_TOML.split("[[flows]]")[0] + '[[flows]]\nname = "t"\npath = "a"\n'
    res = mpsched.run(tomllib.loads(text))
    fair = res.summary["fairness"]
    assert fair["mptcp_flows"] == 0 and fair["jain_mptcp"] is None
    assert fair["jain_all"] == 1.0


def test_compare_aggregates_jain_per_variant_with_a_ci(fair_toml, tmp_path):
    m = build_matrix(fair_toml, [1, 2, 3], None, ["lia", "olia"])
    out = tmp_path / "cmp"
    run_sweep(m, out, jobs=1)
    ds = load_results(out)
    assert ds.fairness is not None and len(ds.fairness) == 6
    assert list(ds.fairness["run_id"]) == [r.run_id for r in m.runs]
    # Each run's values are its summary's.
    direct = mpsched.run(m.runs[4].scenario, seed=m.runs[4].seed).summary["fairness"]
    assert ds.fairness["jain_mptcp"].iloc[4] == direct["jain_mptcp"]
    rows = summarize(ds.flows, ds.variants, ds.fairness)
    assert [r.variant for r in rows] == ["lia"] * 3 + ["olia"] * 3
    for variant in ("lia", "olia"):
        sel = ds.fairness[ds.fairness["variant"] == variant]
        mean, ci = mean_ci(sel["jain_mptcp"])
        mean_all, ci_all = mean_ci(sel["jain_all"])
        for r in (r for r in rows if r.variant == variant):  # the same on each flow row
            assert (r.jain_mptcp, r.jain_mptcp_ci, r.mptcp_flows) == (mean, ci, 2)
            assert (r.jain_all, r.jain_all_ci, r.all_flows) == (mean_all, ci_all, 3)
            assert ci is not None and ci > 0  # seeds differ: lossy paths
    headers, cells = summary_table(rows)
    i, j = headers.index("Jain (MPTCP)"), headers.index("Jain (all)")
    assert cells[0][i] == f"{rows[0].jain_mptcp:.3f} ± {rows[0].jain_mptcp_ci:.3f}"
    assert cells[0][j] == f"{rows[0].jain_all:.3f} ± {rows[0].jain_all_ci:.3f}"


def test_jain_columns_are_left_out_when_they_say_nothing(mini_toml, tmp_path):
    # mini: one MPTCP flow (its index is 1 whatever happens) and a TCP flow.
    m = build_matrix(mini_toml, [1, 2])
    run_sweep(m, tmp_path / "cmp", jobs=1)
    ds = load_results(tmp_path / "cmp")
    rows = summarize(ds.flows, ds.variants, ds.fairness)
    assert all(r.jain_mptcp == 1.0 and r.mptcp_flows == 1 for r in rows)
    headers, _ = summary_table(rows)
    assert "Jain (MPTCP)" not in headers and "Jain (all)" in headers
    # Without fairness data (results written before it existed): no column, nothing breaks.
    headers, _ = summary_table(summarize(ds.flows, ds.variants))
    assert not any(h.startswith("Jain") for h in headers)


def test_single_run_results_load_their_fairness(fair_toml, tmp_path):
    out = tmp_path / "run"
    write_results(mpsched.run(fair_toml), out)
    ds = load_results(out)
    assert len(ds.fairness) == 1
    assert ds.fairness["mptcp_flows"].iloc[0] == 2
    assert not math.isnan(ds.fairness["jain_mptcp"].iloc[0])


def test_cli_compare_prints_the_jain_columns(cli, fair_toml):
    proc = cli("compare", str(fair_toml), "--cc", "lia,olia", "--seeds", "1-2", "--out", "cmp")
    assert proc.returncode == 0, proc.stderr
    assert "Jain (MPTCP)" in proc.stdout and "Jain (all)" in proc.stdout


def test_fairness_figure_has_a_panel_per_informative_index(fair_toml, mini_toml, tmp_path):
    from mpsched.plot import fairness_bars, figure_specs
    from mpsched.stats import jain_columns

    run_sweep(build_matrix(fair_toml, [1, 2], None, ["lia", "olia"]), tmp_path / "a", jobs=1)
    ds = load_results(tmp_path / "a")
    assert jain_columns(ds.fairness) == ["jain_mptcp", "jain_all"]
    assert "fairness_bars" in [s.name for s in figure_specs(ds)]
    fig = fairness_bars(ds)
    assert [ax.get_title() for ax in fig.axes] == ["over the MPTCP flows", "over all flows"]
    # One run (no variants to compare) or no fairness data: no figure.
    single = tmp_path / "run"
    write_results(mpsched.run(fair_toml), single)
    assert "fairness_bars" not in [s.name for s in figure_specs(load_results(single))]
    assert jain_columns(None) == []
