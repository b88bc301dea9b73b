"""`mpsched reproduce olms` on a tiny configuration (one scenario, two schedulers, 0.5 MB)."""

import json

import pytest
from typer.testing import CliRunner

from mpsched.cli import app
from mpsched.reproduce.olms import AppSpec, slot_costs, solve_oracle


def test_oracle_matches_paper_numbers():
    # Application I (paper §VI-B): v* = (1/6, 0, 1, 5/6), OPT_max = 0.98, per slot 0.98 / 2.
    a1 = AppSpec("max-rtt", 0.5, 2, 100.0, 100.0)
    v, opt = solve_oracle(a1, [0.3, 0.2, 0.6, 0.4], [0.2, 0.3, 0.5, 0.6])
    assert v == pytest.approx([1 / 6, 0, 1, 5 / 6])
    assert opt == pytest.approx((0.05 + 0.6 + 1 / 3) / 2)
    # Path 4 violates by 0.1 (r = 0.6 > 0.5); path 3 costs nothing.
    costs = slot_costs(a1, [0.3, 0.2, 0.6, 0.4], [0.2, 0.3, 0.5, 0.6])
    assert costs[2] == (0.0, 0.0) and costs[3][1] == pytest.approx(0.1)
    # Application II (§VI-C): v* = (1, 1, 0, 0), OPT_min = 0.3; infeasible below C_b = 0.4.
    a2 = AppSpec("bandwidth", 0.4, 2, 100.0, 100.0)
    v, opt = solve_oracle(a2, [0.3, 0.1, 0.4, 0.6], [0.3, 0.3, 0.4, 0.1])
    assert v == pytest.approx([1, 1, 0, 0], abs=1e-9) and opt == pytest.approx(0.3)
    assert solve_oracle(AppSpec("bandwidth", 0.39, 2, 100.0, 100.0), [0.3, 0.1, 0.4, 0.6], [0.3, 0.3, 0.4, 0.1]) is None


def test_reproduce_olms_tiny(tmp_path):
    out = tmp_path / "olms"
    res = CliRunner().invoke(
        app,
        ["reproduce", "olms", "--out", str(out), "--seeds", "1", "--scenarios", "olms-app1",
         "--baselines", "minrtt,nosuchsched", "--size-mb", "0.5", "--duration", "10", "-j", "1"],
    )
    assert res.exit_code == 0, res.output
    summary = json.loads((out / "olms-summary.json").read_text())
    scheds = summary["cases"]["olms-app1"]["schedulers"]
    assert set(scheds) == {"olms", "minrtt"}
    assert any("nosuchsched" in n for n in summary["notes"]), "unknown baselines are skipped with a note"
    for s in scheds.values():
        assert s["fct_s"] > 0 and 0 < s["utilization"] <= 1
        assert s["regret_per_slot"] >= 0 and s["violation_per_slot"] >= 0
    table = (out / "olms-table.md").read_text()
    assert "+8.42" in table and "-10.26" in table
    for fig in ("utilization.png", "fct.png", "regret.png", "violation.png"):
        assert (out / "figures" / fig).stat().st_size > 0


def test_reproduce_olms_bad_scenario_name(tmp_path):
    res = CliRunner().invoke(app, ["reproduce", "olms", "--out", str(tmp_path), "--scenarios", "nope"])
    assert res.exit_code == 2
