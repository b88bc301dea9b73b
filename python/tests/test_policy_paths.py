"""Host path policies (MPTCP-RL, mptcp-rl.txt "Action"): a policy exported from the host env's
``paths`` action runs in Rust as ``scheduler = "policy:PATH"``: its flows run ``dmptcp`` and one
host controller sets every flow's path preference each interval. The run is the same
simulation as the host env driven step by step with the same network's actions."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")

import mpsched  # noqa: E402
from mpsched import _core  # noqa: E402
from mpsched.envs import HostEnv  # noqa: E402
from mpsched.policies import export  # noqa: E402

#: WiFi (lossy) and LTE; two greedy MPTCP flows, a sized one that starts between two
#: boundaries, and a TCP flow the policy observes only.
SCENARIO = {
    "sim": {"duration_s": 3.0, "seed": 1},
    "paths": [
        {"name": "wifi", "interface": "wifi", "rate_mbps": 8.0, "delay_ms": 20.0,
         "loss": {"model": "bernoulli", "p": 0.01}},
        {"name": "lte", "interface": "lte", "rate_mbps": 6.0, "delay_ms": 50.0},
    ],
    "flows": [
        {"name": "m1", "paths": ["wifi", "lte"], "cc": "lia"},
        {"name": "m2", "paths": ["wifi", "lte"], "cc": "lia", "stop_s": 2.0},
        {"name": "m3", "paths": ["wifi", "lte"], "cc": "lia", "start_s": 0.834,
         "size_bytes": 400_000},
        {"name": "tcp", "path": "wifi", "cc": "cubic"},
    ],
}  # fmt: skip
MAX_FLOWS, MAX_SUBFLOWS = 4, 2


def _env() -> HostEnv:
    return HostEnv(
        SCENARIO, action="paths", max_flows=MAX_FLOWS, max_subflows=MAX_SUBFLOWS,
        interval=100.0, sender_only=True,
    )  # fmt: skip


def _write_policy(stem, env: HostEnv, seed: int = 5) -> None:
    """A linear layer over the whole observation with a softmax head: per-path probabilities
    that vary with the state."""
    torch.manual_seed(seed)
    lin = torch.nn.Linear(env.layout.size, MAX_SUBFLOWS)
    with torch.no_grad():
        lin.weight.mul_(20.0)
    export(lin, stem, input_size=env.layout.size, head="softmax", obs=env.policy_obs)


def test_a_paths_policy_is_the_scheduler_of_its_flows(tmp_path):
    env = _env()
    stem = tmp_path / "rl"
    _write_policy(stem, env)
    pol = _core.Policy(str(stem) + ".json")
    assert (pol.obs_len, pol.action_len) == (env.layout.size, MAX_SUBFLOWS)
    obs, _ = env.reset(seed=1)
    acts, done = [], False
    while not done:
        a = pol.act(obs[None, :].astype(np.float32))[0]
        acts.append(a)
        obs, _, te, tr, _ = env.step(a)
        done = te or tr
    acts = np.stack(acts)
    assert acts.min() < 0.2 and acts.max() > 0.8, "the preference moves between the paths"
    env_res = env.results()

    policy = f"policy:{stem}.json"
    flows = [dict(f, scheduler=policy) if "paths" in f else f for f in SCENARIO["flows"]]
    run = mpsched.run({**SCENARIO, "flows": flows}, seed=env_res.summary["seed"])
    for table in ("timeseries", "subflows", "flows"):
        a, b = getattr(run, table).to_pandas(), getattr(env_res, table).to_pandas()
        cols = [c for c in a.columns if c != "scheduler"]
        assert a[cols].equals(b[cols]), table
    sched = dict(
        zip(run.flows.column("name").to_pylist(), run.flows.column("scheduler").to_pylist())
    )
    assert sched["m1"] == policy and sched["tcp"] != policy, sched
    (row,) = run.summary["policies"]
    assert row["host"] == ["m1", "m2", "m3"] and row["scheduler"] == policy, row
    assert row["decisions"] == 29, "one per 100 ms boundary, none at the run's last instant"


def test_paths_policies_are_refused_as_congestion_control(tmp_path):
    """A path policy is named as a scheduler; as a cc it is a one-line error, and a window
    policy's obs block with another action is refused when loaded."""
    env = _env()
    _write_policy(tmp_path / "rl", env)
    flow = dict(SCENARIO["flows"][0], cc=f"policy:{tmp_path}/rl.json")
    with pytest.raises(mpsched.ScenarioError) as e:
        mpsched.run({**SCENARIO, "flows": [flow]}, seed=1)
    msg = str(e.value)
    assert "\n" not in msg and 'use it as scheduler = "policy:' in msg, msg
    desc = json.loads((tmp_path / "rl.json").read_text())
    desc["obs"]["action"] = "weights"
    (tmp_path / "rl.json").write_text(json.dumps(desc))
    with pytest.raises(ValueError, match='obs.action: expected "cwnd" .* or "paths"'):
        _core.Policy(str(tmp_path / "rl.json"))
