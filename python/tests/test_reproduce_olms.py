"""`mpsched reproduce olms` on a tiny configuration (one scenario, two schedulers, 0.5 MB), and the
per-slot selected-path metrics it reports (the paper's cwnd / srtt of the scheduled path)."""

import json

import pytest
from typer.testing import CliRunner

import mpsched
from mpsched.cli import app
from mpsched.reproduce.olms import AppSpec, selected_path, slot_costs, solve_oracle


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
    assert (
        solve_oracle(
            AppSpec("bandwidth", 0.39, 2, 100.0, 100.0), [0.3, 0.1, 0.4, 0.6], [0.3, 0.3, 0.4, 0.1]
        )
        is None
    )


def test_reproduce_olms_tiny(tmp_path):
    out = tmp_path / "olms"
    res = CliRunner().invoke(
        app,
        [
            "reproduce",
            "olms",
            "--out",
            str(out),
            "--seeds",
            "1",
            "--scenarios",
            "olms-app1",
            "--baselines",
            "minrtt,nosuchsched",
            "--size-mb",
            "0.5",
            "--duration",
            "10",
            "-j",
            "1",
        ],
    )
    assert res.exit_code == 0, res.output
    summary = json.loads((out / "olms-summary.json").read_text())
    scheds = summary["cases"]["olms-app1"]["schedulers"]
    assert set(scheds) == {"olms", "olms+wait", "minrtt"}
    assert any("nosuchsched" in n for n in summary["notes"]), (
        "unknown baselines are skipped with a note"
    )
    for s in scheds.values():
        assert s["fct_s"] > 0 and 0 < s["utilization"] <= 1
        assert s["regret_per_slot"] >= 0 and s["violation_per_slot"] >= 0
        assert (
            s["sel_mbps"] > 0
            and s["sel_srtt_ms"] >= 20.0
            and sum(s["path_shares"]) == pytest.approx(1.0)
        )
    # OLMS with the paper's minRTT fallback sends like minRTT here (window-limited subflows).
    g = summary["cases"]["olms-app1"]["gains"]
    assert set(g) == {"olms", "olms+wait"} and set(g["olms"]) == {"minrtt"}
    assert g["olms"]["minrtt"]["sel_gain_pct"] == pytest.approx(
        scheds["olms"]["sel_mbps"] / scheds["minrtt"]["sel_mbps"] * 100 - 100
    )
    table = (out / "olms-table.md").read_text()
    assert "+8.42" in table and "-10.26" in table and "cwnd / srtt" in table
    for fig in ("selected_path.png", "utilization.png", "fct.png", "regret.png", "violation.png"):
        assert (out / "figures" / fig).stat().st_size > 0


def test_reproduce_olms_bad_scenario_name(tmp_path):
    res = CliRunner().invoke(
        app, ["reproduce", "olms", "--out", str(tmp_path), "--scenarios", "nope"]
    )
    assert res.exit_code == 2


def test_selected_path_is_slot_weighted_first_20_s():
    rows = [
        {"time_s": 10.0, "subflow": 0, "slots": 3, "slot_bw_mbps": 10.0, "slot_srtt_ms": 20.0},
        {"time_s": 10.0, "subflow": 1, "slots": 1, "slot_bw_mbps": 2.0, "slot_srtt_ms": 60.0},
        {"time_s": 20.0, "subflow": 1, "slots": 0, "slot_bw_mbps": 0.0, "slot_srtt_ms": 0.0},
        {"time_s": 20.25, "subflow": 1, "slots": 100, "slot_bw_mbps": 1.0, "slot_srtt_ms": 90.0},
    ]
    m = selected_path(rows)
    assert (
        m["slots"] == 4
        and m["sel_mbps"] == pytest.approx(8.0)
        and m["sel_srtt_ms"] == pytest.approx(30.0)
    )
    assert m["path_shares"] == [0.75, 0.25]
    assert selected_path([])["sel_mbps"] is None


def _two_paths(scheduler, size=600_000, seed=1):
    return {
        "sim": {"name": "two", "duration_s": 10, "seed": seed, "sample_interval_ms": 100},
        "paths": [
            {"name": "fast", "rate_mbps": 20, "delay_ms": 5},
            {"name": "slow", "rate_mbps": 20, "delay_ms": 40},
        ],
        "flows": [
            {"name": "mp", "paths": ["fast", "slow"], "scheduler": scheduler, "size_bytes": size}
        ],
    }


def test_selected_path_metrics_per_scheduler_and_deterministic():
    """Single path: the flow's selected-path values are its one subflow's. Two idle paths with
    minRTT: the lower-srtt path carries most segments and the flow's mean srtt is the
    slot-weighted mean of the subflows'. Same seed, same numbers."""
    one = mpsched.run(
        {
            "sim": {"duration_s": 5},
            "paths": [{"name": "p", "rate_mbps": 10, "delay_ms": 10}],
            "flows": [{"name": "f", "path": "p", "size_bytes": 300_000}],
        }
    )
    f, sf = one.tables["flows"].to_pylist()[0], one.tables["subflows"].to_pylist()[0]
    assert f["slots"] == -(-300_000 // 1448) == sf["slots"]
    assert (
        f["slot_bw_mbps"] == sf["slot_bw_mbps"] and f["slot_srtt_ms"] == sf["slot_srtt_ms"] >= 20.0
    )
    for sched in ("minrtt", "olms"):
        r = mpsched.run(_two_paths(sched))
        f = r.tables["flows"].to_pylist()[0]
        subs = r.tables["subflows"].to_pylist()
        n = sum(s["slots"] for s in subs)
        assert n == f["slots"] >= 600_000 / 1448
        assert f["slot_srtt_ms"] == pytest.approx(
            sum(s["slots"] * s["slot_srtt_ms"] for s in subs) / n
        )
        if sched == "minrtt":
            assert (
                subs[0]["slots"] > subs[1]["slots"]
                and 10.0 <= subs[0]["slot_srtt_ms"] < subs[1]["slot_srtt_ms"]
            )
        again = mpsched.run(_two_paths(sched))
        assert (
            again.tables["timeseries"].equals(r.tables["timeseries"]) and again.summary == r.summary
        )


def test_reproduce_olms_dumbbell_varies_first_flow(tmp_path):
    out = tmp_path / "olms"
    res = CliRunner().invoke(
        app,
        [
            "reproduce",
            "olms",
            "--out",
            str(out),
            "--seeds",
            "1",
            "--scenarios",
            "olms-dumbbell",
            "--baselines",
            "minrtt",
            "--size-mb",
            "0.3",
            "--duration",
            "10",
            "-j",
            "1",
        ],
    )
    assert res.exit_code == 0, res.output
    case = json.loads((out / "olms-summary.json").read_text())["cases"]["olms-dumbbell"]
    assert set(case["schedulers"]) == {"olms", "olms+wait", "minrtt"}
    sc = json.loads((out / "scenarios" / "olms-dumbbell-minrtt.json").read_text())
    assert [f["scheduler"] for f in sc["flows"]] == ["minrtt", "olms"]
    sc = json.loads((out / "scenarios" / "olms-dumbbell-olms+wait.json").read_text())
    params = [f["scheduler_params"]["olms"] for f in sc["flows"][:2]]
    assert params[0]["on_busy"] == "wait" and "on_busy" not in params[1]
    assert "-10.26" in (out / "olms-table.md").read_text()
