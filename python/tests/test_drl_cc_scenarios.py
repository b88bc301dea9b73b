"""DRL-CC's Scenarios 5-8 (scenarios/drl-cc-scenario-5..8.toml): the structure the paper
describes (drl-cc.txt, §V-B), checked on the resolved scenarios and on short runs."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any, Dict

import pytest

import mpsched
from mpsched.matrix import load_scenario

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


def scenario(n: int, duration_s: float) -> Dict[str, Any]:
    s = load_scenario(SCENARIOS / f"drl-cc-scenario-{n}.toml")
    s["sim"]["duration_s"] = duration_s
    return s


def resolved(results: mpsched.Results) -> Dict[str, Any]:
    return tomllib.loads(results.resolved_toml)


def links(res: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
    return {link["name"]: link for link in res["links"]}


def assert_netem_links(res: Dict[str, Any]) -> None:
    """b1 = b2 = 8 Mbps, d1 = d2 = 100 ms (RTT: 50 ms each way), 2 % loss on the data direction."""
    ls = links(res)
    for name in ("link1", "link2"):
        fwd, rev = ls[f"{name}.fwd"], ls[f"{name}.rev"]
        assert (fwd["rate_mbps"], rev["rate_mbps"]) == (8, 8)
        assert (fwd["delay_ms"], rev["delay_ms"]) == (50, 50)
        assert fwd["loss"] == {"model": "bernoulli", "p": 0.02}
        assert rev.get("loss", {"model": "none"}) == {"model": "none"}


@pytest.mark.parametrize("n", [5, 6, 7, 8])
def test_every_flow_runs_lia_by_default(n):
    flows = mpsched.run(scenario(n, 0.5)).flows
    assert set(flows.column("cc").to_pylist()) == {"lia"}


# --- Scenario 5: Poisson arrivals, 30 s flows ---------------------------------------------


def test_scenario_5_structure():
    res = mpsched.run(scenario(5, 150.0), seed=1)
    assert_netem_links(resolved(res))
    flows = resolved(res)["flows"]
    assert flows, "no flow arrived"
    for f in flows:
        assert f["paths"] == ["link1", "link2"]  # 2 subflows each
        assert "size_bytes" not in f  # iPerf3: bulk
        assert 0 <= f["start_s"] < 150
        assert f["stop_s"] - f["start_s"] == pytest.approx(30.0, abs=1e-9)
    starts = [f["start_s"] for f in flows]
    assert starts == sorted(starts)
    # Every flow ran for its 30 s, or up to the end of the run.
    table = res.flows
    for start, delivered, goodput in zip(
        table.column("start_s").to_pylist(),
        table.column("bytes_delivered").to_pylist(),
        table.column("goodput_mbps").to_pylist(),
    ):
        active = min(30.0, 150.0 - start)
        assert goodput == pytest.approx(delivered * 8 / active / 1e6, rel=1e-9)
    # Some flows overlap (5 at a time on average) and share the links.
    assert res.summary["fairness"]["mptcp_flows"] == len(flows)


def test_scenario_5_arrival_rate_over_seeds():
    """λ = 10 per minute over 150 s: 25 flows expected per seed; over 40 seeds 1000 flows,
    Poisson sd sqrt(1000) = 31.6: the total is within 4 sd; gaps have mean 6 s."""
    counts, gaps = [], []
    for seed in range(1, 41):
        starts = mpsched.run(scenario(5, 0.001), seed=seed).flows.column("start_s").to_pylist()
        counts.append(len(starts))
        gaps += [b - a for a, b in zip([0.0] + starts, starts)]
    total = sum(counts)
    assert abs(total - 1000) <= 4 * math.sqrt(1000), counts
    mean_gap = sum(gaps) / len(gaps)
    # Exponential gaps: sd of the mean of ~1000 gaps of mean 6 s is 6 / sqrt(1000) = 0.19 s.
    assert abs(mean_gap - 6.0) < 4 * 6.0 / math.sqrt(len(gaps)), mean_gap
    assert len(set(counts)) > 1  # each seed draws its own arrivals


def test_scenario_5_flows_end_after_30_s():
    res = mpsched.run(scenario(5, 150.0), seed=2)
    ts = res.timeseries.to_pandas()
    first = res.flows.to_pandas().iloc[0]
    rows = ts[ts["flow"] == first["name"]]
    # Sampled from its start to its stop (rows at most one sample interval after it).
    assert rows["time_s"].max() <= first["start_s"] + 30.0 + 0.1 + 1e-9
    assert rows["time_s"].max() >= min(first["start_s"] + 30.0, 150.0) - 1e-9
    assert rows["flow_goodput_mbps"].sum() > 0


# --- Scenario 6: an interface down at 60 s ------------------------------------------------


def test_scenario_6_structure_and_goodput_over_time():
    res = mpsched.run(scenario(6, 75.0))
    r = resolved(res)
    assert_netem_links(r)
    assert r["events"] == [{"at_s": 60.0, "path": "link2", "state": "down"}]
    assert load_scenario(SCENARIOS / "drl-cc-scenario-6.toml")["sim"]["duration_s"] == 200
    flows = res.flows.to_pandas()
    assert list(flows["subflows"]) == [2] * 5 and flows["size_bytes"].isna().all()
    ts = res.timeseries.to_pandas()
    assert ts["time_s"].diff().dropna().loc[lambda d: d > 0].eq(1.0).all()  # 1 s samples
    # Fig. 7: total goodput over time = the flows' flow_goodput_mbps summed per sample.
    total = ts[ts["subflow"] == 0].groupby("time_s")["flow_goodput_mbps"].sum()
    assert (total.loc[61:75] > 0).all(), "the flows go on over link1"
    # The link2 subflows carry nothing once the interface is down.
    link2 = ts[(ts["subflow"] == 1) & (ts["time_s"] > 61)]
    assert len(link2) == 5 * 14 and (link2["goodput_mbps"] == 0).all()
    before = ts[(ts["subflow"] == 1) & (ts["time_s"] <= 60)]
    assert before["goodput_mbps"].sum() > 0


# --- Scenario 7: 5 MPTCP + 5 TCP flows ----------------------------------------------------


def test_scenario_7_structure():
    res = mpsched.run(scenario(7, 2.0))
    r = resolved(res)
    assert_netem_links(r)
    mptcp = [f for f in r["flows"] if "paths" in f]
    tcp = [f for f in r["flows"] if "path" in f]
    assert len(mptcp) == 5 and all(f["paths"] == ["link1", "link2"] for f in mptcp)
    assert len(tcp) == 5 and all(f["path"] == "link1" for f in tcp)
    fair = res.summary["fairness"]
    assert (fair["mptcp_flows"], fair["all_flows"]) == (5, 10)
    assert load_scenario(SCENARIOS / "drl-cc-scenario-7.toml")["sim"]["duration_s"] == 300


# --- Scenario 8: asymmetric links ----------------------------------------------------------


def test_scenario_8_structure():
    res = mpsched.run(scenario(8, 2.0))
    ls = links(resolved(res))
    # b1 = 100 Mbps, d1 = 5 ms; b2 = 10 Mbps, d2 = 2 ms (RTTs: half each way); no random loss.
    for name, rate, one_way in (("link1", 100, 2.5), ("link2", 10, 1)):
        for d in ("fwd", "rev"):
            link = ls[f"{name}.{d}"]
            assert (link["rate_mbps"], link["delay_ms"]) == (rate, one_way)
            assert link.get("loss", {"model": "none"}) == {"model": "none"}
    flows = res.flows.to_pandas()
    assert list(flows["subflows"]) == [2] * 5
    assert (flows["path"] == "link1+link2").all()
    assert flows["bytes_delivered"].min() > 0
