"""Step-by-step simulation: pausing changes nothing, and decisions take effect."""

from __future__ import annotations

import pytest

import mpsched
from mpsched.simulation import Simulation


def scenario(scheduler: str, **flow: object) -> dict:
    return {
        "sim": {"duration_s": 5.0},
        "paths": [
            {"name": "wifi", "rate_mbps": 10.0, "delay_ms": 10.0},
            {"name": "lte", "rate_mbps": 5.0, "delay_ms": 40.0},
        ],
        "flows": [{"name": "mp", "paths": ["wifi", "lte"], "scheduler": scheduler, **flow}],
    }


def test_default_answers_reproduce_the_builtin_run():
    """external-packet answered "default" at every pause equals minrtt-norp run inline."""
    sim = Simulation(scenario("external-packet"), seed=3)
    decisions = 0
    for kind, flow in sim:
        assert kind == "decision"
        decisions += 1
        sim.decide_path(flow, None)
    assert decisions > 1000
    paused = sim.results()
    inline = mpsched.run(scenario("minrtt-norp"), seed=3)
    assert paused.timeseries.equals(inline.timeseries)
    assert (
        paused.summary["flows"][0]["bytes_delivered"]
        == inline.summary["flows"][0]["bytes_delivered"]
    )


def test_interval_decisions_and_state():
    sim = Simulation(scenario("external-weights", decision_interval_ms=250.0), seed=1)
    assert sim.flow_names == ["mp"]
    seen = 0
    for kind, flow in sim:
        assert kind == "interval"
        state = sim.state(flow)
        assert len(state["subflows"]) == 2
        assert state["conn"]["bytes_delivered"] >= 0
        sim.decide_weights(flow, [0.0, 1.0])  # everything on LTE
        seen += 1
    assert seen == 20
    sub = sim.results().subflows.to_pylist()
    # Only the first 250 ms (before the first decision) used WiFi.
    assert sub[1]["bytes_sent"] > 5 * sub[0]["bytes_sent"]


def test_deadline_and_errors():
    sim = Simulation(scenario("minrtt"))
    assert sim.advance(1.5) == ("deadline", None)
    assert sim.now_s == pytest.approx(1.5)
    assert sim.advance() == ("finished", None)
    with pytest.raises(ValueError):
        sim.state(7)
    with pytest.raises(mpsched.ScenarioError):
        Simulation({"sim": {"duration_s": -1}})
