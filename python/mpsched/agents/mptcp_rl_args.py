"""MPTCP-RL's hyperparameters (:class:`Args`), apart from the agent so that the command line can
read them without importing torch (as :mod:`mpsched.agents.drl_cc_args` does for DRL-CC).

Every field says where its value comes from: the paper (Dong et al., "Multipath TCP Meets
Reinforcement Learning: A Novel Energy-Efficient Scheduling Approach in Heterogeneous Wireless
Networks", /work/shared/papers/mptcp-rl.txt; it states l1, l2, τ, γ and ε only, "Experimental
settings"), PPO (Schulman et al. 2017) and CleanRL's continuous PPO where the paper is silent,
or "ours" with the reason.
"""

from dataclasses import dataclass
from typing import Optional, Tuple

__all__ = ["Args", "PAPER_VALUES", "BEHAVIOURS"]

#: The traditional schedulers whose transitions the offline phase learns from ("The PPO model is
#: first trained offline on the server side by collecting the historical information of the
#: traditional MPTCP scheduling algorithm", "The MPTCP-RL learning framework"): the ns-3
#: default (Round-Robin), Linux's (minRTT) and DMPTCP (the transmission model alone).
BEHAVIOURS = ("roundrobin", "minrtt", "dmptcp")


@dataclass
class Args:
    """MPTCP-RL's hyperparameters; the paper's five where it gives them."""

    scenario: str = "scenarios/mptcp-rl-short.toml"
    """training scenario: one WLAN and one LTE path, concurrent Pareto short flows (Fig. 3's
    set-up), link ranges drawn anew every episode ("we run MPTCP-RL on a variety of network
    parameter settings", "Experimental settings")"""
    mix: Tuple[str, ...] = ("scenarios/mptcp-rl-media.toml", "scenarios/mptcp-rl-paths.toml")
    """further training scenarios; episodes cycle through ``scenario`` and these, offline and
    online (ours: Fig. 4's 1 MB media flows, and Fig. 5's one LTE + three WLAN paths so that
    the path slots 3-4 are trained). Relative paths resolve as ``scenario`` does"""
    seed: int = 1
    """seeds the networks, the exploration and the episodes"""
    out: str = "out/mptcp-rl"
    """output directory: the policy file (mptcp-rl.json + .safetensors)"""
    actor_lr: float = 3e-4
    """l1, Adam learning rate of the actor (paper: l1 = 0.0003)"""
    critic_lr: float = 1e-3
    """l2, Adam learning rate of the critic (paper: l2 = 0.001)"""
    clip: float = 0.2
    """τ, PPO's clip range (paper: "PPO chip number" τ = 0.2)"""
    gamma: float = 0.99
    """γ, discount factor (paper: γ = 0.99)"""
    epsilon: float = 0.05
    """ε of the ε-greedy exploration (paper: ε = 0.05): with probability ε the decision side
    takes a uniformly random masked action instead of the policy's"""
    behaviours: Tuple[str, ...] = BEHAVIOURS
    """offline phase: the traditional schedulers whose transitions are collected"""
    offline_episodes: int = 4
    """offline phase: episodes per behaviour scheduler and training scenario (ours: the paper
    gives no amount)"""
    offline_epochs: int = 30
    """offline phase: passes over the collected transitions for the actor's behaviour
    cloning and the critic's value fit (ours)"""
    online_steps: int = 100_000
    """online phase: decisions taken by the exported policy (ours)"""
    sync_s: float = 5.0
    """online phase: scenario time between two weight reloads of the decision side; the
    learner updates on the experience pool collected since the last reload (ours: the paper
    says the parameters are "synchronously updated" after offline training, not how often)"""
    update_epochs: int = 4
    """PPO epochs per update (CleanRL's default; not stated)"""
    minibatch_size: int = 64
    """PPO minibatch size (ours)"""
    gae_lambda: float = 0.95
    """λ of generalised advantage estimation (CleanRL's default; not stated)"""
    init_log_std: float = -0.5
    """initial log standard deviation of the Gaussian over path logits (ours)"""
    hidden_units: Tuple[int, int] = (64, 64)
    """hidden layers of the actor and the critic, tanh (CleanRL's default; not stated)"""
    interval_ms: float = 100.0
    """decision period in ms (ours: about one LTE RTT of the paper's 100-200 ms)"""
    max_flows: int = 32
    """flow slots of the observation (ours: the scenario's up to 30 concurrent flows)"""
    max_subflows: int = 4
    """path slots (Fig. 3/4: one WLAN and one LTE path; Fig. 5: up to three WLAN and one LTE;
    Fig. 6: two WLAN and one LTE)"""
    duration_s: Optional[float] = None
    """overrides the scenario's duration (episode length)"""
    torch_threads: int = 1
    """CPU threads for torch (small networks: one thread is fastest and deterministic)"""


#: The values the paper states ("Experimental settings"), by field: tests check the defaults.
PAPER_VALUES = {"actor_lr": 3e-4, "critic_lr": 1e-3, "clip": 0.2, "gamma": 0.99, "epsilon": 0.05}
