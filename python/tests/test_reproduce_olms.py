"""`mpsched reproduce olms` on the shared protocol (issue 20): the oracle, the per-seed metrics,
the scenario copies of each case and regime, a quick run through the CLI, and the committed
claims table (docs/reproductions/olms/) against the docs that quote it."""

import json

import pytest
from typer.testing import CliRunner

import mpsched
from mpsched.cli import app
from mpsched.reproduce import olms_claims as C
from mpsched.reproduce import olms_runs as R
from mpsched.reproduce import protocol as P
from mpsched.reproduce.olms_metrics import window_metrics
from mpsched.reproduce.olms_oracle import AppSpec, slot_costs, solve_oracle


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


def test_window_metrics_slot_weighted_first_20_s():
    """Selected-path throughput / RTT, regret and violation per slot and per-path utilization
    over the first 20 s: slot-weighted, the App I oracle's per-path costs, rows after 20 s out."""
    sc = {"paths": [{"name": "a", "rate_mbps": 30, "delay_ms": 10},
                    {"name": "b", "rate_mbps": 40, "delay_ms": 30}]}  # fmt: skip
    flow = {"paths": ["a", "b"]}
    app_ = AppSpec("max-rtt", 0.5, 2, 100.0, 100.0)
    rows = [
        {"time_s": 10.0, "subflow": 0, "slots": 3, "slot_bw_mbps": 10.0, "slot_srtt_ms": 20.0, "throughput_mbps": 15.0},
        {"time_s": 10.0, "subflow": 1, "slots": 1, "slot_bw_mbps": 2.0, "slot_srtt_ms": 60.0, "throughput_mbps": 4.0},
        {"time_s": 20.25, "subflow": 1, "slots": 100, "slot_bw_mbps": 1.0, "slot_srtt_ms": 90.0, "throughput_mbps": 40.0},
    ]  # fmt: skip
    m = window_metrics(rows, sc, flow, app_, {})
    assert m["sel_mbps"] == pytest.approx(8.0) and m["sel_rtt_ms"] == pytest.approx(30.0)
    # b = (0.3, 0.4), r = (0.2, 0.6), L = 1 (K − 1): v* = (1/6, 5/6) (path b capped at C_r / r),
    # OPT = 0.05 + 1/3; path a: regret OPT − 0.3 = 1/12, path b: violation 0.6 − 0.5 = 0.1.
    assert m["regret"] == pytest.approx(3 / 12 / 4) and m["violation"] == pytest.approx(0.1 / 4)
    assert m["util_p1"] == pytest.approx(50.0) and m["util_p2"] == pytest.approx(10.0)
    assert window_metrics([], sc, flow, app_, {})["sel_mbps"] is None


def test_paired_reduction_is_per_seed():
    m, ci, n = C.paired_reduction({1: 8.0, 2: 9.0, 3: 1.0}, {1: 10.0, 2: 10.0, 4: 5.0})
    assert (n, m) == (2, pytest.approx(15.0)) and ci == pytest.approx(12.706 * 5, rel=1e-3)


def test_variant_scenarios():
    """The first flow runs the variant (the dumbbell's second flow keeps OLMS); `olms` has no
    opportunistic retransmission; `noloss` drops every path's loss; the dynamic cases carry
    the paper's 10 s period over the whole run; App II runs in noloss only."""
    d = R._common.default_scenario_dir("olms-app1.toml")
    by = R.cases_by_name()
    sc = R.variant_scenario(by["dumbbell"], "loss", "ecf", d)
    assert [f["scheduler"] for f in sc["flows"]] == ["ecf", "olms"]
    assert all("loss" in p for p in sc["paths"])
    sc = R.variant_scenario(by["app1"], "noloss", "olms", d)
    assert sc["flows"][0]["scheduler_params"]["olms"]["opportunistic"] is False
    assert not any("loss" in p for p in sc["paths"]) and sc["sim"]["duration_s"] == 20.0
    sc = R.variant_scenario(by["app1"], "loss", "olms+rp", d)
    assert "opportunistic" not in sc["flows"][0]["scheduler_params"]["olms"]
    sc = R.variant_scenario(by["dyn-bw"], "loss", R.NOPM, d)
    assert sc["flows"][0]["scheduler_params"]["olms"]["monitor"] is False
    sched = sc["paths"][0]["schedule"]
    assert sched[:2] == [{"at_s": 0.0, "rate_mbps": 1}, {"at_s": 5.0, "rate_mbps": 30}]
    assert sched[-1]["at_s"] == R.LONG_S[200] - 5 and sc["flows"][0]["size_bytes"] == 200_000_000
    sc = R.variant_scenario(by["cycle"], "noloss", "olms-cycle5", d)
    assert [f["scheduler_params"]["olms"]["cycle"] for f in sc["flows"]] == [5, 5]
    assert by["app2"].regimes == ("noloss",)


def test_claim_ids_unique_and_seeds_held_out():
    ids = [s.id for s in C.specs()]
    assert len(ids) == len(set(ids))
    assert R.PAPER_BASELINES == ("minrtt-norp", "rr", "ecf", "blest", "peekaboo")
    assert P.HELD_OUT == tuple(range(1001, 1021))


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


def test_reproduce_olms_quick_cli(tmp_path):
    """`--quick --only bw-40 --regimes noloss` writes claims.md / claims.json / figures; claims
    of the cases not run are 'not measured'; md and JSON agree."""
    out = tmp_path / "olms"
    args = ["reproduce", "olms", "--out", str(out), "--quick", "--only", "bw-40",
            "--regimes", "noloss", "-j", "1"]  # fmt: skip
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    doc = json.loads((out / "claims.json").read_text(encoding="utf-8"))
    assert [c["id"] for c in doc["claims"]] == [s.id for s in C.specs()]
    measured = {c["id"] for c in doc["claims"] if c["verdict"] != P.NOT_MEASURED}
    assert measured == {"noloss-bw-40-fct"}
    rows = P.read_md_rows(out / "claims.md")
    for d in doc["claims"]:
        assert rows[d["id"]] == P.claim_row(P.claim_from_dict(d))
    assert (out / "figures" / "fig13-bandwidth-noloss.pdf").exists()
    assert "QUICK RUN" in (out / "claims.md").read_text(encoding="utf-8")


def test_reproduce_olms_bad_case_name(tmp_path):
    res = CliRunner().invoke(app, ["reproduce", "olms", "--out", str(tmp_path), "--only", "nope"])
    assert res.exit_code == 2
    (line,) = res.output.strip().splitlines()  # one line, whatever the terminal's width
    assert line.startswith("error: --only/--regimes: unknown 'nope', expected some of ")


def test_exec_time_is_measured_per_seed_and_reused(tmp_path, monkeypatch):
    """Figs. 10-11: CPU time per path selection per seed and variant, exec_us = variant −
    minRTT on the same seed, kept in exec/<regime>.json; a second call (collect-only) reuses
    them without running anything."""
    from mpsched.reproduce import _common, olms_exec

    d = _common.default_scenario_dir("olms-app1.toml")
    v = olms_exec.measure(tmp_path, [1001], ["noloss"], scenario_dir=d, quick=True)
    cpu = v[("noloss", "cycle-time", "cpu_us_per_slot")]
    ex = v[("noloss", "cycle-time", "exec_us")]
    assert set(cpu) == set(olms_exec.VARIANTS) and set(ex) == set(olms_exec.VARIANTS[1:])
    assert all(cpu[k][1001] > 0 for k in cpu)
    for k in ex:
        assert ex[k][1001] == cpu[k][1001] - cpu["minrtt-norp"][1001]
    stored = json.loads((tmp_path / "exec" / "noloss.json").read_text())
    assert stored["1001"] == {k: cpu[k][1001] for k in olms_exec.VARIANTS}

    def no_run(*a, **k):
        raise AssertionError("collect-only must not run")

    monkeypatch.setattr(olms_exec, "_cpu_per_slot", no_run)
    again = olms_exec.measure(tmp_path, [1001, 1002], ["noloss"], scenario_dir=d, run=False)
    assert again[("noloss", "cycle-time", "cpu_us_per_slot")] == cpu  # 1002 not measured: absent


def test_exec_reference_runs_minrtt_on_both_flows():
    from mpsched.reproduce import _common, olms_exec

    d = _common.default_scenario_dir("olms-app1.toml")
    ref = olms_exec._scenario("loss", "minrtt-norp", d, False)
    assert [f["scheduler"] for f in ref["flows"]] == ["minrtt-norp"] * 2
    assert all("scheduler_params" not in f for f in ref["flows"])
    cyc = olms_exec._scenario("loss", "olms-cycle5", d, False)
    assert [f["scheduler_params"]["olms"]["cycle"] for f in cyc["flows"]] == [5, 5]
    assert [f["size_bytes"] for f in ref["flows"]] == [f["size_bytes"] for f in cyc["flows"]]
