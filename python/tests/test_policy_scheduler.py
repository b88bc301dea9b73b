"""Acceptance of the policy runtime (issue "trained policies are schedulers"): a tiny
stable-baselines3 PPO policy, trained a few hundred steps in the scheduler env with sender-only
observations and exported with ``export_sb3(..., env=env)``, runs by name in Rust
(``--scheduler policy:PATH``) and decides exactly as the PyTorch policy does on the same
observations: the env run driven by ``model.predict`` and the ``mpsched run`` of the policy are
the same simulation, segment for segment."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("stable_baselines3")

import mpsched  # noqa: E402
from mpsched import _core  # noqa: E402
from mpsched.envs import SchedulerEnv  # noqa: E402
from mpsched.policies import export_sb3  # noqa: E402

SCENARIO = {
    "sim": {"duration_s": 3.0, "seed": 1},
    "paths": [
        {"name": "good", "rate_mbps": 10.0, "delay_ms": 10.0},
        {
            "name": "lossy",
            "rate_mbps": 8.0,
            "delay_ms": 25.0,
            "loss": {"model": "bernoulli", "p": 0.03},
        },
    ],
    "flows": [{"name": "mp", "paths": ["good", "lossy"], "cc": "cubic"}],
}


def _env(action: str) -> SchedulerEnv:
    return SchedulerEnv(
        SCENARIO,
        action=action,
        reward="goodput",
        interval=50.0,
        max_paths=2,
        history=2,
        sender_only=True,
    )


def _train(action: str):
    from stable_baselines3 import PPO

    torch.set_num_threads(1)
    model = PPO("MlpPolicy", _env(action), n_steps=64, batch_size=32, n_epochs=2, seed=1, verbose=0)
    return model.learn(256)


def _drive_env(model, action: str, seed: int):
    """The env run with PyTorch deciding: its results and every (observation, action)."""
    env = _env(action)
    obs, _ = env.reset(seed=seed)
    trace = []
    done = False
    while not done:
        a, _ = model.predict(obs, deterministic=True)
        trace.append((obs.copy(), np.asarray(a).copy()))
        obs, _, te, tr, _ = env.step(a)
        done = te or tr
    return env.results(), trace


@pytest.mark.parametrize("action", ["select", "choose", "weights"])
def test_exported_ppo_runs_as_a_scheduler_and_decides_as_pytorch(tmp_path, action):
    model = _train(action)
    stem = tmp_path / f"ppo-{action}"
    export_sb3(model, stem, env=_env(action))
    desc = json.loads(stem.with_suffix(".json").read_text())
    assert desc["obs"]["action"] == action and desc["obs"]["sender_only"] is True

    # The runtime's network gives predict's actions on the env's observations.
    env_res, trace = _drive_env(model, action, seed=1)
    net = _core.Net(str(stem) + ".json")
    obs = np.stack([o for o, _ in trace]).astype(np.float32)
    rust = net.forward(obs)
    torch_actions = np.stack([a.reshape(-1) for _, a in trace]).astype(np.float32)
    if action == "weights":  # a Gaussian mean clipped to the bounds: within float32 rounding
        np.testing.assert_allclose(rust, torch_actions, rtol=1e-5, atol=1e-5)
    else:
        np.testing.assert_array_equal(rust.reshape(torch_actions.shape), torch_actions)
    assert len({a.tobytes() for _, a in trace}) >= 1

    # Run by name, in Rust: the same simulation as the env driven by PyTorch.
    sc = {**SCENARIO, "flows": [{**SCENARIO["flows"][0], "scheduler": f"policy:{stem}.json"}]}
    run = mpsched.run(sc, seed=1)
    for table in ("timeseries", "subflows"):
        a, b = getattr(run, table).to_pandas(), getattr(env_res, table).to_pandas()
        cols = [c for c in a.columns if c != "scheduler"]
        assert a[cols].equals(b[cols]), table
    (row,) = run.summary["policies"]
    # Every env step's decision, plus one at the run's last instant (3.000 s), where the env
    # ends its episode instead (a decision there changes nothing).
    assert row["decisions"] == len(trace) + 1, row
    assert row["sha256"] == _core.policy_digest(f"policy:{stem}.json")
    assert run.decisions["mp"]["decisions"] == row["decisions"]


def test_compare_runs_a_policy_next_to_minrtt(tmp_path, cli):
    model = _train("select")
    export_sb3(model, tmp_path / "p", env=_env("select"))
    (tmp_path / "sc.json").write_text(json.dumps(SCENARIO))
    res = cli(
        "compare", "sc.json", "--scheduler", "policy:p.json,minrtt", "--seeds", "1-2", "--out", "c"
    )
    assert res.returncode == 0, res.stderr
    runs = sorted(p.parent.name for p in Path(tmp_path, "c").rglob("summary.json"))
    assert any(r.startswith("policy-p") for r in runs) and any("minrtt" in r for r in runs), runs
    summaries = [json.loads(p.read_text()) for p in Path(tmp_path, "c").rglob("summary.json")]
    rows = [r for s in summaries for r in s.get("policies", [])]
    assert len(rows) == 2 and {r["sha256"] for r in rows} == {
        _core.policy_digest("policy:" + str(tmp_path / "p.json"))
    }


def test_a_policy_that_reads_receiver_features_is_refused(tmp_path):
    """Trained on full observations, the network reads what only the receiver knows: loading
    it as a scheduler is a one-line error naming the first such input."""
    from stable_baselines3 import PPO

    env = SchedulerEnv(SCENARIO, action="select", reward="goodput", interval=50.0, max_paths=2)
    model = PPO("MlpPolicy", env, n_steps=64, batch_size=32, n_epochs=1, seed=1, verbose=0)
    export_sb3(model, tmp_path / "full", env=env)
    sc = {
        **SCENARIO,
        "flows": [{**SCENARIO["flows"][0], "scheduler": f"policy:{tmp_path}/full.json"}],
    }
    with pytest.raises(mpsched.ScenarioError) as e:
        mpsched.run(sc, seed=1)
    msg = str(e.value)
    assert "\n" not in msg and "which a sender cannot compute" in msg and "energy_j" in msg, msg
