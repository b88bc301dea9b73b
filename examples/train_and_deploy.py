"""Train and deploy a policy (docs/tutorials/train-and-deploy.md): a small linear policy
trained in the scheduling env by the cross-entropy method, exported as a policy file, and run
by the Rust runtime as a scheduler in `mpsched.compare` beside minRTT.

    python examples/train_and_deploy.py [OUT_DIR]     # default: out/train-and-deploy

A demonstration of the pipeline in a few seconds, not a good policy: real training runs for
hours (`mpsched train edar`, or stable-baselines3 on the same env and `export_sb3`).
"""

import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch

import mpsched
from mpsched.policies import export

HERE = Path(__file__).resolve().parent
out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("out/train-and-deploy")
out.mkdir(parents=True, exist_ok=True)

# action "mode": 0 = minRTT, 1 = redundant, decided once per transmission interval (EdAR).
env = gym.make(
    "mpsched/Scheduler-v0",
    scenario=str(HERE / "wifi-lte.toml"),
    action="mode",
    reward="goodput",
    interval="min-rtt",
    history=1,
    sender_only=True,  # only what the sender itself can measure: the policy must run there
)
obs_size = env.observation_space.shape[0]


def episode_return(weights, seed):
    """Total reward of one episode of the deterministic linear policy ``argmax(obs @ W)``."""
    obs, _ = env.reset(seed=seed)
    total, done = 0.0, False
    while not done:
        action = int(np.argmax(obs @ weights))
        obs, reward, terminated, truncated, _ = env.step(action)
        total += reward
        done = terminated or truncated
    return total


# Cross-entropy method: sample weight matrices, keep the best, refit the sampling distribution.
rng = np.random.default_rng(1)
mean, std = np.zeros((obs_size, 2)), np.ones((obs_size, 2))
for iteration in range(2):
    candidates = [mean + std * rng.standard_normal(mean.shape) for _ in range(4)]
    returns = [episode_return(w, seed=iteration) for w in candidates]
    elite = [candidates[i] for i in np.argsort(returns)[-2:]]
    mean, std = np.mean(elite, axis=0), np.std(elite, axis=0) + 0.1
    print(f"iteration {iteration}: best return {max(returns):.3f}")

# Export: the same linear map as a PyTorch layer, with the env's observation block so that
# the Rust runtime computes the same observation at the same decision points.
layer = torch.nn.Linear(obs_size, 2, bias=False)
with torch.no_grad():
    layer.weight.copy_(torch.tensor(mean.T, dtype=torch.float32))
description, _ = export(
    layer,
    out / "cem-mode",
    input_size=obs_size,
    head="argmax",
    obs=env.unwrapped.policy_obs,
    provenance={"algorithm": "cem", "command": "python examples/train_and_deploy.py"},
)

# Deploy: the policy file is a scheduler like any other (no Python on the decision path).
cmp = mpsched.compare(
    HERE / "wifi-lte.toml", schedulers=["minrtt", f"policy:{description}"], seeds=[1, 2], jobs=1
)
table = cmp.summary[cmp.summary["flow"] == "mptcp"]
print(table[["variant", "goodput_mbps", "goodput_ci_mbps"]].to_string(index=False))
