"""RLDS-proxy's hyperparameters (:class:`Args`), apart from the agent so that the command line
can read them (``mpsched train rlds`` builds its options from these fields, their defaults and
their docs) without importing torch (as :mod:`mpsched.agents.edar_args` does for EdAR).

RLDS (Luo, Su, Liu, IEEE CCWC 2019; pdaa3c.txt ref [9]) is PDAA3C's main baseline, but its
state, action, reward, network and hyperparameters were not retrieved: this is the stand-in of
``shared/specs/rl-baselines.md`` §4, labelled "RLDS-proxy" everywhere. Every value below is
§4's [unverified] choice unless it says otherwise.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Tuple

__all__ = ["Args", "resolve_scenario"]


@dataclass
class Args:
    """RLDS-proxy's hyperparameters (rl-baselines.md §4)."""

    scenario: str = "scenarios/pdaa3c.toml"
    """training scenario: PDAA3C's two subflows, 30 ms / 60 ms, 70 s (pdaa3c.txt §3)"""
    seed: int = 1
    """seeds the network, the exploration and the replay sampling"""
    first_episode_seed: int = 10_000
    """episode e runs the scenario with seed first_episode_seed + e: training seeds 10000 and up,
    disjoint from the held-out seeds 1001-1020 of the reproduction"""
    out: str = "out/rlds"
    """output directory: the policy file (rlds.json + .safetensors) and TensorBoard logs (runs/)"""
    total_transitions: int = 35_000
    """environment steps (100 ms decisions) to train for: 35 000 = 50 episodes of 70 s"""
    duration_s: Optional[float] = None
    """overrides the scenario's duration (episode length)"""
    max_paths: int = 2
    """subflow slots of the observation and actions (Discrete(max_paths))"""
    interval_ms: float = 100.0
    """decision interval: PDAA3C's 100 ms capture interval (pdaa3c.txt §2.3), which §4 keeps"""
    learning_rate: float = 1e-3
    """Adam learning rate (§4)"""
    gamma: float = 0.9
    """discount factor γ (§4)"""
    buffer_size: int = 10_000
    """replay capacity (§4: 1e4); the oldest transitions go first"""
    batch_size: int = 32
    """minibatch size (§4)"""
    hidden: Tuple[int, int] = (64, 64)
    """hidden layers of the Q-network MLP, ReLU (§4: 2 × 64)"""
    start_e: float = 1.0
    """ε at the start of the ε-greedy schedule (§4)"""
    end_e: float = 0.05
    """ε at the end of the schedule (§4)"""
    exploration_fraction: float = 0.5
    """share of total_transitions over which ε falls linearly (not in §4; CleanRL's DQN form)"""
    learning_starts: int = 1_000
    """steps of pure exploration before the first update (not in §4; chosen: 1.4 episodes)"""
    train_frequency: int = 1
    """steps between minibatch updates (not in §4; chosen)"""
    target_network_frequency: int = 500
    """steps between hard copies of the Q-network into the target network (not in §4;
    chosen, CleanRL's DQN form)"""
    torch_threads: int = 1
    """CPU threads for torch (a tiny network: one thread is fastest, and fits 2 cores)"""


def resolve_scenario(scenario: str) -> Path:
    """The scenario file: the path given, or, for the default outside a checkout, the copy
    shipped with the package."""
    from .drl_cc_args import resolve_scenario as resolve

    return resolve(scenario, Args().scenario)
