"""Host policies are congestion controllers (the policy-runtime issue's ``cc = "policy:PATH"``):
a DRL-CC-shaped policy file (LSTM over the host's flows, then the target flow through a tanh
actor; crates/mpsched-policy/src/drl_cc.rs) runs in Rust as the controller of every flow that
names it, and the run is the same simulation as the host env driven step by step with the same
network's actions: same observations, same target rotation, same windows, segment for segment.

The network's numbers are checked separately against a NumPy port of the description (float32
rounding apart): a continuous window change truncated to whole bytes would let one ulp of
difference between two implementations change a window by a byte, so the simulation identity
is asserted for the runtime's own actions."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("safetensors")

import mpsched  # noqa: E402
from mpsched import _core  # noqa: E402
from mpsched.agents.checkpoint import save_checkpoint  # noqa: E402
from mpsched.envs import HostEnv  # noqa: E402
from mpsched.envs.scheduler import SUBFLOW_FEATURES  # noqa: E402

#: Two bottlenecks, two MPTCP flows from the start (one stopped by its application at 2.5 s), one
#: sized MPTCP flow that starts between two boundaries and completes (their slots are freed),
#: a late MPTCP flow that takes a freed slot (3 flow slots for 5 flows), and a TCP flow the
#: policy observes only.
SCENARIO = {
    "sim": {"duration_s": 4.0, "seed": 1},
    "paths": [
        {
            "name": "l1",
            "rate_mbps": 8.0,
            "delay_ms": 40.0,
            "loss": {"model": "bernoulli", "p": 0.01},
        },
        {"name": "l2", "rate_mbps": 4.0, "delay_ms": 25.0},
    ],
    "flows": [
        {"name": "m1", "paths": ["l1", "l2"], "cc": "lia"},
        {"name": "m2", "paths": ["l1", "l2"], "cc": "lia", "stop_s": 2.5},
        {
            "name": "m3",
            "paths": ["l1", "l2"],
            "cc": "lia",
            "start_s": 1.234,
            "size_bytes": 300_000,
        },
        {"name": "tcp", "path": "l1", "cc": "cubic"},
        {"name": "m4", "paths": ["l1", "l2"], "cc": "lia", "start_s": 2.75},
    ],
}
MAX_FLOWS, MAX_SUBFLOWS, HIDDEN = 4, 2, 8
#: The paper's per-subflow state (drl-cc.txt §III-A): sending rate, goodput, RTT, RTT
#: deviation, window.
STATE = ("throughput", "goodput", "srtt", "rttvar", "cwnd")


def _env() -> HostEnv:
    return HostEnv(
        SCENARIO,
        action="cwnd",
        target="rotate",
        interval=100.0,
        max_flows=MAX_FLOWS,
        max_subflows=MAX_SUBFLOWS,
        sender_only=True,
        reward="drl-cc",
    )


def _select(env: HostEnv) -> list:
    """Offsets of :data:`STATE` per subflow slot within a flow slot."""
    o = env.layout.offsets
    return [
        o["flow_len"] + i * o["subflow_stride"] + SUBFLOW_FEATURES.index(name)
        for i in range(MAX_SUBFLOWS)
        for name in STATE
    ]


def _write_policy(stem, env: HostEnv, seed: int = 3) -> dict:
    """A DRL-CC policy file with random weights (the drl_cc description of drl_cc.rs)."""
    rng = np.random.default_rng(seed)
    n = len(_select(env))
    sizes = [HIDDEN + n, 16, 16, MAX_SUBFLOWS]
    t = {
        "obs_mean": rng.normal(0, 0.1, n),
        "obs_std": rng.uniform(0.2, 1.0, n),
        "repr.weight_ih_l0": rng.normal(0, 0.6, (4 * HIDDEN, n)),
        "repr.weight_hh_l0": rng.normal(0, 0.4, (4 * HIDDEN, HIDDEN)),
        "repr.bias_ih_l0": rng.normal(0, 0.2, 4 * HIDDEN),
        "repr.bias_hh_l0": rng.normal(0, 0.2, 4 * HIDDEN),
    }
    for k, (i, o) in enumerate(zip(sizes[:-1], sizes[1:])):
        t[f"actor.{2 * k}.weight"] = rng.normal(0, 1.0 / np.sqrt(i), (o, i))
        t[f"actor.{2 * k}.bias"] = rng.normal(0, 0.3, o)
    meta = {
        "algorithm": "drl_cc",
        "variant": "test",
        "net": {
            "select": _select(env),
            "normalize": {"mean": "obs_mean", "std": "obs_std", "clip": 5.0},
            "lstm": {
                "hidden": HIDDEN,
                "weight_ih": "repr.weight_ih_l0",
                "weight_hh": "repr.weight_hh_l0",
                "bias_ih": "repr.bias_ih_l0",
                "bias_hh": "repr.bias_hh_l0",
            },
            "actor": ["actor.0", "actor.2", "actor.4"],
        },
        "obs": env.policy_obs,
    }
    save_checkpoint(stem, t, meta)
    return {k: np.asarray(v, np.float32) for k, v in t.items()}


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _reference(t: dict, select: list, env: HostEnv, obs: np.ndarray) -> np.ndarray:
    """The description's forward pass in NumPy (float64): LSTM over the running flows of the
    newest frame in slot order, then the first target flow through the actor."""
    lay = env.layout
    flows = lay.flows(obs)[-1]  # newest frame: [max_flows, flow_len]
    frame = lay.frames(obs)[-1]  # [max_flows, flow_stride]
    running = lay.flow_mask(obs) > 0.5
    tcol = list(_flow_features()).index("target")
    x = np.clip((frame[:, select] - t["obs_mean"]) / t["obs_std"], -5.0, 5.0)
    h, c = np.zeros(HIDDEN), np.zeros(HIDDEN)
    target = None
    for j in np.flatnonzero(running):
        g = t["repr.weight_ih_l0"] @ x[j] + t["repr.bias_ih_l0"]
        g += t["repr.weight_hh_l0"] @ h + t["repr.bias_hh_l0"]
        i, f, gg, o = np.split(g, 4)
        c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(gg)
        h = _sigmoid(o) * np.tanh(c)
        if target is None and flows[j, tcol] >= 0.5:
            target = j
    if target is None:
        return np.zeros(MAX_SUBFLOWS)
    y = np.concatenate([h, x[target]])
    for k in range(3):
        y = t[f"actor.{2 * k}.weight"] @ y + t[f"actor.{2 * k}.bias"]
        y = np.maximum(y, 0.0) if k < 2 else np.tanh(y)
    return y


def _drive_env(pol) -> tuple:
    """The host env run with the runtime's network deciding each step."""
    env = _env()
    obs, _ = env.reset(seed=1)
    trace = []
    done = False
    while not done:
        a = pol.act(obs[None, :].astype(np.float32))[0]
        trace.append((obs.copy(), a.copy()))
        obs, _, te, tr, _ = env.step(a)
        done = te or tr
    return env, env.results(), trace


def test_a_host_policy_runs_as_the_congestion_controller_of_its_flows(tmp_path):
    env = _env()
    stem = tmp_path / "drl"
    tensors = _write_policy(stem, env)
    pol = _core.Policy(str(stem) + ".json")
    assert (pol.obs_len, pol.action_len) == (env.layout.size, MAX_SUBFLOWS)

    env, env_res, trace = _drive_env(pol)
    obs = np.stack([o for o, _ in trace]).astype(np.float32)
    acts = np.stack([a for _, a in trace])
    # The network: Rust = the description's forward pass, and it acts (varied, unsaturated).
    ref = np.stack([_reference(tensors, _select(env), env, o) for o in obs])
    np.testing.assert_allclose(acts, ref, rtol=1e-4, atol=1e-5)
    assert np.abs(acts).max() > 0.3 and np.abs(acts).max() < 0.999 and acts.std() > 0.05
    # The observations are the sender's: no receiver goodput, and the late flow was seen.
    lay = env.layout
    assert lay.flows(obs)[..., list(_flow_features()).index("goodput")].max() == 0.0
    assert lay.flow_mask(obs).sum(axis=-1).max() == 4

    # Named by the MPTCP flows' cc, in Rust: the same simulation as the env driven step by step.
    policy = f"policy:{stem}.json"
    flows = [dict(f, cc=policy) if "paths" in f else f for f in SCENARIO["flows"]]
    # The env draws its episode's scenario seed from the reset seed.
    run = mpsched.run({**SCENARIO, "flows": flows}, seed=env_res.summary["seed"])
    for table in ("timeseries", "subflows", "flows"):
        a, b = getattr(run, table).to_pandas(), getattr(env_res, table).to_pandas()
        cols = [c for c in a.columns if c != "cc"]
        assert a[cols].equals(b[cols]), table
    cc = dict(zip(run.flows.column("name").to_pylist(), run.flows.column("cc").to_pylist()))
    assert cc["tcp"] == "cubic" and cc["m1"].startswith("policy:"), cc
    (row,) = run.summary["policies"]
    assert row["host"] == ["m1", "m2", "m3", "m4"] and row["cc"] == f"policy:{stem}.json", row
    # The late flow took a slot a stopped or completed flow freed, and was controlled.
    assert "m4" in env.slot_flows() and "m2" not in env.slot_flows(), env.slot_flows()
    assert row["sha256"] == pol.sha256 == _core.policy_digest(policy)
    # Every env step's decision (none at the run's last instant, where the env stops too).
    assert row["decisions"] == len(trace), (row, len(trace))
    assert run.decisions[f"host {policy}"]["decisions"] == row["decisions"]


def _flow_features():
    from mpsched.envs.scheduler import FLOW_FEATURES

    return FLOW_FEATURES


def test_policies_are_refused_in_the_wrong_role(tmp_path):
    """A host policy is not a scheduler, a scheduler policy not a congestion controller; a
    DRL-CC network reading a receiver feature is refused unless trained sender-only."""
    env = _env()
    _write_policy(tmp_path / "drl", env)
    flow = dict(SCENARIO["flows"][0], scheduler=f"policy:{tmp_path}/drl.json")
    with pytest.raises(mpsched.ScenarioError) as e:
        mpsched.run({**SCENARIO, "flows": [flow]}, seed=1)
    msg = str(e.value)
    assert "\n" not in msg and 'use it as cc = "policy:' in msg, msg

    desc = json.loads((tmp_path / "drl.json").read_text())
    desc["obs"]["sender_only"] = False
    desc["net"]["select"][0] = list(_flow_features()).index("goodput")  # the receiver's
    (tmp_path / "drl.json").write_text(json.dumps(desc))
    flow = dict(SCENARIO["flows"][0], cc=f"policy:{tmp_path}/drl.json")
    with pytest.raises(mpsched.ScenarioError) as e:
        mpsched.run({**SCENARIO, "flows": [flow]}, seed=1)
    msg = str(e.value)
    assert "\n" not in msg and "which a sender cannot compute" in msg and "goodput" in msg, msg


@pytest.mark.parametrize(
    "path, value, expect",
    [
        (("obs", "env"), "bogus", 'obs.env: expected "scheduler" or "host", got "bogus"'),
        (("obs", "action"), "select", 'obs.action: expected "cwnd"'),
        (("obs", "target"), "some", 'obs.target: expected "rotate" or "all", got "some"'),
        (("obs", "cwnd_step"), 0, "obs.cwnd_step: expected a number of segments > 0, got 0"),
        (("obs", "max_flows"), 65, "obs.max_flows: expected an integer in 1..=64, got 65"),
        (("obs", "max_subflows"), 3, 'the network outputs 2 values, a "rotate" cwnd action'),
        (("obs", "target"), "all", 'the network outputs 2 values, a "all" cwnd action'),
        (("net", "select", 0), 999, "net.select: offset 999 is outside a flow slot of 2 subflows"),
        (("net", "lstm", "hidden"), 4, "net.lstm.weight_ih: expected shape [16, 10]"),
        (("net", "actor"), [], "net.actor: expected a non-empty list of linear layer names"),
    ],
)
def test_bad_host_policy_files_are_one_line_errors(tmp_path, path, value, expect):
    _write_policy(tmp_path / "drl", _env())
    desc = json.loads((tmp_path / "drl.json").read_text())
    node = desc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    (tmp_path / "drl.json").write_text(json.dumps(desc))
    with pytest.raises(mpsched.ScenarioError) as e:
        _core.Policy(str(tmp_path / "drl.json"))
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith(str(tmp_path / "drl.json")) and expect in msg, msg


def test_compare_runs_a_host_policy_next_to_lia(tmp_path, cli):
    _write_policy(tmp_path / "drl", _env())
    sc = {**SCENARIO, "sim": {"duration_s": 1.0, "seed": 1}}
    (tmp_path / "sc.json").write_text(json.dumps(sc))
    res = cli("compare", "sc.json", "--cc", "policy:drl.json,lia", "--seeds", "1-2", "--out", "c")
    assert res.returncode == 0, res.stderr
    summaries = {
        p.parent.name: json.loads(p.read_text()) for p in (tmp_path / "c").rglob("summary.json")
    }
    assert len(summaries) == 4 and sum(n.startswith("policy-drl") for n in summaries) == 2
    rows = [r for s in summaries.values() for r in s.get("policies", [])]
    digest = _core.policy_digest("policy:" + str(tmp_path / "drl.json"))
    assert len(rows) == 2 and {r["sha256"] for r in rows} == {digest}
    # --cc applies to every flow: the TCP flow is controlled too (a one-subflow flow).
    assert all(r["host"] == ["m1", "m2", "m3", "tcp", "m4"] for r in rows), rows


def test_shipped_drl_cc_beats_lia_in_scenario_1_on_held_out_seeds():
    """``cc = "drl-cc"`` (the shipped policy, trained on drl-cc-random) against LIA in DRL-CC's
    scenario 1 with 8 MB documents, 60 s, seeds 1001-1005 (never used in training). Measured
    with the policy retrained on 2026-11-28 (per-subflow windows, minRTT in training): total
    goodput 1.32x LIA's on average, 1.26x at the least (the reproduction's 300 s runs on seeds
    1001-1020: 1.28 vs 0.984 Mbit/s per flow, +30.1 %; the policy before it: 1.96x). The bound
    leaves room for float differences between machines, not for a different policy."""
    import tomllib

    from mpsched.scenario import SCENARIO_DIR

    sc = tomllib.loads((SCENARIO_DIR / "drl-cc-scenario-1.toml").read_text())
    sc["sim"]["duration_s"] = 60.0
    total, runs = {}, {}
    for cc in ("drl-cc", "lia"):
        for f in sc["flows"]:
            f["size_bytes"], f["cc"] = 8_388_608, cc
        runs[cc] = [mpsched.run(sc, seed=s) for s in range(1001, 1006)]
        total[cc] = np.array([r.flows.column("goodput_mbps").to_numpy().sum() for r in runs[cc]])
    ratio = total["drl-cc"] / total["lia"]
    assert ratio.min() > 1.2 and ratio.mean() > 1.28, ratio
    (row,) = runs["drl-cc"][0].summary["policies"]
    assert row["cc"] == "drl-cc" and row["sha256"] == _core.policy_digest("drl-cc"), row
    assert "policies" not in runs["lia"][0].summary


def test_run_cli_takes_cc_and_prints_the_host_policy_latency(tmp_path, cli):
    sc = {**SCENARIO, "sim": {"duration_s": 1.0, "seed": 1}}
    (tmp_path / "sc.json").write_text(json.dumps(sc))
    res = cli("run", "sc.json", "--cc", "drl-cc", "--out", "o")
    assert res.returncode == 0, res.stderr
    assert "policy on the host (drl-cc): 9 decisions in Rust" in res.stdout, res.stdout
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert [r["host"] for r in summary["policies"]] == [["m1", "m2", "m3", "tcp", "m4"]]
    res = cli("run", "sc.json", "--cc", "policy:nope.json", "--out", "o2")
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert "nope.json" in res.stderr and not (tmp_path / "o2").exists()


def test_a_host_env_takes_its_flows_from_a_host_policy():
    """Flows the host env controls run its windows, not a host policy their scenario names:
    the env over flows named ``cc = "drl-cc"`` is the env over the same flows named LIA."""

    def drive(cc: str):
        flows = [dict(f, cc=cc) if "paths" in f else f for f in SCENARIO["flows"]]
        flows = [f for f in flows if f.get("start_s", 0.0) < 1.5]  # every one the env takes
        env = HostEnv(
            {**SCENARIO, "sim": {"duration_s": 1.5, "seed": 1}, "flows": flows},
            action="cwnd",
            interval=100.0,
            max_flows=MAX_FLOWS,
            max_subflows=MAX_SUBFLOWS,
        )
        env.reset(seed=1)
        done, k = False, 0
        while not done:
            k += 1
            _, _, te, tr, _ = env.step(np.array([0.4, -0.2] if k % 2 else [-0.3, 0.5]))
            done = te or tr
        return env.results()

    a, b = drive("drl-cc"), drive("lia")
    assert a.timeseries.to_pandas().equals(b.timeseries.to_pandas())
    assert a.summary.get("policies") in (None, [])


def test_a_policy_path_that_is_no_regular_file_is_refused(tmp_path):
    """A FIFO or /dev/zero as a policy file would block or never end: a one-line error."""
    import os

    os.mkfifo(tmp_path / "fifo.json")
    (tmp_path / "zero.json").symlink_to("/dev/zero")
    for name in ("fifo.json", "zero.json"):
        flow = dict(SCENARIO["flows"][0], cc=f"policy:{tmp_path / name}")
        with pytest.raises(mpsched.ScenarioError) as e:
            mpsched.run({**SCENARIO, "flows": [flow]}, seed=1)
        msg = str(e.value)
        assert "\n" not in msg and "not a regular file" in msg and name in msg, msg
