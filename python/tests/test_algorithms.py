"""Schedulers and congestion controllers with parameters, from Python and the CLI
(docs/algorithms.md): one registry in the core, the same syntax everywhere."""

import pytest

import mpsched
from mpsched import _core
from mpsched.matrix import MatrixError, build_matrix, parse_names


def test_names_with_parameters_split_and_checked():
    assert parse_names("olms:app=bandwidth,l=2,minrtt", "--scheduler") == [
        "olms:app=bandwidth,l=2",
        "minrtt",
    ]
    assert parse_names("cubic, cubic:beta=0.8 ,c=0.5", "--cc") == ["cubic", "cubic:beta=0.8,c=0.5"]
    with pytest.raises(MatrixError) as e:
        parse_names("reno,cubic:beta=2", "--cc")
    assert str(e.value) == "--cc: 'cubic:beta=2': beta: expected (0, 1), got 2"
    with pytest.raises(MatrixError, match="l: expected 1..=7, got 9"):
        parse_names("olms:l=9", "--scheduler")
    with pytest.raises(MatrixError, match="is given twice"):
        parse_names("cubic:beta=0.8,cubic:beta=0.8", "--cc")


def test_registry_is_listed_with_defaults():
    scheds = {a["name"]: a for a in _core.algorithms("scheduler")}
    assert {"minrtt", "roundrobin", "redundant", "blest", "ecf", "olms"} <= set(scheds)
    assert ("minrtt-norp", "opportunistic=false") in [tuple(a) for a in scheds["minrtt"]["aliases"]]
    (p,) = scheds["minrtt"]["params"]
    assert (p["name"], p["default"], p["type"]) == ("opportunistic", True, "true or false")
    ccs = {a["name"]: a for a in _core.algorithms("cc")}
    beta = next(p for p in ccs["cubic"]["params"] if p["name"] == "beta")
    assert (beta["default"], beta["range"]) == (0.7, "(0, 1)")
    # The worked examples of docs/extending.md are test-only Rust code, not in the package.
    assert "prefer" not in scheds and "aimd" not in ccs
    assert (
        _core.algorithm_label("cc", "CUBIC:fast_convergence=false")
        == "cubic:fast_convergence=false"
    )
    with pytest.raises(_core.ScenarioError, match='kind: expected "scheduler" or "cc"'):
        _core.algorithms("qdisc")


def test_parameters_reach_the_run(fast_dict):
    """A controller's parameters change its behaviour, and results record the label."""
    base = mpsched.run(fast_dict)
    fast_dict["flows"][1]["cc"] = "cubic:beta=0.5"
    fast_dict["flows"][0]["cc"] = "newreno"
    changed = mpsched.run(fast_dict)
    flows = changed.flows.to_pandas().set_index("name")
    assert flows.loc["sized", "cc"] == "cubic:beta=0.5"
    assert not base.flows.equals(changed.flows)
    fast_dict["flows"][1]["cc"] = "cubic"
    fast_dict["flows"][1]["cc_params"] = {"cubic": {"beta": 0.5}}
    tabled = mpsched.run(fast_dict)
    assert tabled.flows.equals(changed.flows), "a table gives the same run as inline parameters"
    fast_dict["flows"][1]["cc_params"] = {"cubic": {"beta": "high"}}
    with pytest.raises(
        mpsched.ScenarioError,
        match=r'flows\[1\]\.cc_params\.cubic\.beta: expected a finite number, got "high"',
    ):
        mpsched.run(fast_dict)


def test_bbr_runs_single_path_and_per_subflow(fast_dict):
    """`cc = "bbr"` (BBR v1, docs/algorithms.md) drives single-path TCP and every MPTCP subflow;
    a run is reproducible (its random ProbeBW phase is seeded from the scenario seed)."""
    for flow in fast_dict["flows"]:
        flow["cc"] = "bbr"
    first = mpsched.run(fast_dict)
    flows = first.flows.to_pandas().set_index("name")
    assert set(flows["cc"]) == {"bbr"}
    assert (flows["bytes_delivered"] > 0).all()
    assert mpsched.run(fast_dict).flows.equals(first.flows)
    bbr = next(a for a in _core.algorithms("cc") if a["name"] == "bbr")
    assert [p["name"] for p in bbr["params"]] == ["cwnd_gain", "bw_rounds", "min_rtt_window_s"]


def test_compare_runs_each_parameter_set(mini_toml):
    m = build_matrix(mini_toml, [1], parse_names("minrtt,blest:lambda=1.0", "--scheduler"), None)
    ids = [r.run_id for r in m.runs]
    assert ids == ["minrtt_seed1", "blest-lambda=1.0_seed1"]
    assert [r.scheduler for r in m.runs] == ["minrtt", "blest:lambda=1.0"]
    assert len({r.scenario_hash for r in m.runs}) == 2
    m = build_matrix(mini_toml, [1], None, parse_names("lia,cubic:beta=0.5,c=0.3", "--cc"))
    assert [r.run_id for r in m.runs] == ["lia_seed1", "cubic-beta=0.5-c=0.3_seed1"]


def test_cli_lists_algorithms(cli):
    out = cli("algorithms", "cc", "--json")
    assert out.returncode == 0, out.stderr
    import json

    ccs = {a["name"]: a for a in json.loads(out.stdout)["cc"]}
    assert [p["name"] for p in ccs["cubic"]["params"]] == [
        "beta",
        "c",
        "fast_convergence",
        "variant",
        "hystart",
    ]
    table = cli("algorithms")
    assert (
        table.returncode == 0
        and "minrtt" in table.stdout
        and "Congestion controllers" in table.stdout
    )
    bad = cli("algorithms", "qdisc")
    assert bad.returncode == 2 and 'kind: expected "scheduler" or "cc"' in bad.stderr
