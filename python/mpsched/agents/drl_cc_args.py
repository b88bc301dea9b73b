"""DRL-CC's hyperparameters (:class:`Args`), apart from the agent so that the command line can
read them (``mpsched train drl-cc`` builds its options from these fields, their defaults and
their docs) without importing torch (as :mod:`mpsched.agents.edar_args` does for EdAR).

Every field says where its value comes from: a section of the paper (Xu et al.,
"Experience-driven Congestion Control: When Multi-Path TCP Meets Deep Reinforcement
Learning", /work/shared/papers/drl-cc.txt), DDPG (Lillicrap et al., ICLR'16, the paper's [18],
which §III-C follows), or "not stated; chosen" with the reason.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Tuple

__all__ = ["Args", "PAPER_VALUES", "DDPG_VALUES", "resolve_scenario"]


@dataclass
class Args:
    """DRL-CC's hyperparameters; names and defaults from the paper where it gives them."""

    scenario: str = "scenarios/drl-cc-random.toml"
    """training scenario: DRL-CC's host randomised over the paper's ranges (§IV-A: delay
    50-400 ms, loss 0.5-4 %, bandwidth 2-16 Mbit/s; 5 MPTCP flows × 2 subflows), drawn anew
    every episode: the offline training distribution (§III-D)"""
    seed: int = 1
    """seeds the networks, the exploration noise, the replay sampling and the episodes"""
    out: str = "out/drl-cc"
    """output directory: the policy file (drl-cc.json + .safetensors) and TensorBoard logs
    (runs/)"""
    total_transitions: int = 50_000
    """transitions to train on (§III-D: offline training "for over 50,000 epochs (i.e., 50,000
    transition samples)")"""
    num_envs: int = 4
    """hosts simulated side by side (not stated; chosen: four draws of the scenario at a time,
    one update per transition either way)"""
    duration_s: Optional[float] = None
    """overrides the scenario's duration (episode length; default: the scenario's 300 s)"""
    interval_ms: float = 100.0
    """decision epoch length in ms (not stated; chosen: about one RTT of the paper's
    50-400 ms paths)"""
    max_flows: int = 8
    """flow slots of the observation (not stated; chosen: room for the scenario's 5 flows and
    a few more; the LSTM takes any number)"""
    max_subflows: int = 2
    """subflow slots per flow (§IV-A: "each MPTCP flow includes two subflows")"""
    cwnd_step: float = 10.0
    """window change of an action of 1, in segments: cwnd_i += a_i · cwnd_step · MSS
    (not stated; chosen)"""
    lstm_hidden: int = 64
    """hidden units of the representation network R, a single-layer LSTM (§III-C: "a
    single-layer LSTM unit"; its size is not stated; chosen)"""
    hidden_units: Tuple[int, int] = (128, 128)
    """hidden layers of the actor π and the critic Q, ReLU (§III-C: "2 hidden layers, which
    includes 128 neurons in both layers"); π's output is tanh, Q's one linear unit"""
    actor_lr: float = 1e-4
    """Adam learning rate of the actor π (§III-C: 0.0001); R is also trained at this rate by
    the policy gradient (Algorithm 1, lines 18-19)"""
    critic_lr: float = 1e-3
    """Adam learning rate of the critic Q (§III-C: 0.001); R is also trained at this rate by
    the critic's loss (end-to-end training, §III-B)"""
    gamma: float = 0.90
    """discount factor γ (§III-C: γ = 0.90)"""
    tau: float = 0.001
    """soft target update rate τ of R', π', Q' (§III-C: τ = 0.001; Algorithm 1, line 21)"""
    buffer_size: int = 100_000
    """replay buffer B capacity, oldest transitions dropped first (Algorithm 1, line 3; size
    not stated; chosen: holds a whole 50,000-transition training)"""
    batch_size: int = 64
    """mini-batch size H (Algorithm 1, line 12; value not stated; chosen: DDPG's 64 [18])"""
    learning_starts: int = 1_000
    """warm-up transitions with uniformly random actions before learning starts; the
    observation mean/std are estimated on them and then frozen (not stated; chosen)"""
    updates_per_transition: int = 1
    """mini-batch updates per stored transition (Algorithm 1: one per epoch, lines 5-22)"""
    ou_theta: float = 0.15
    """θ of the Ornstein-Uhlenbeck exploration noise (Algorithm 1, line 4; §III-C follows
    DDPG [18], whose θ = 0.15 is used: the paper states no value)"""
    ou_sigma: float = 0.2
    """σ of the Ornstein-Uhlenbeck exploration noise (DDPG [18]: σ = 0.2; not stated in the
    paper)"""
    obs_clip: float = 10.0
    """normalised inputs are clipped to ±obs_clip (not stated; chosen)"""
    torch_threads: int = 1
    """CPU threads for torch (small networks: one thread is fastest and deterministic)"""
    log_every: int = 1_000
    """TensorBoard scalars every this many transitions"""


#: The values the paper states (§III-C, §III-D, §IV-A), by field: tests check the defaults
#: against them so that a change is noticed.
PAPER_VALUES = {
    "total_transitions": 50_000,
    "max_subflows": 2,
    "hidden_units": (128, 128),
    "actor_lr": 1e-4,
    "critic_lr": 1e-3,
    "gamma": 0.90,
    "tau": 0.001,
}

#: DDPG's values (Lillicrap et al. [18], §7) that the paper inherits without stating them.
DDPG_VALUES = {"ou_theta": 0.15, "ou_sigma": 0.2}


def resolve_scenario(scenario: str, default: Optional[str] = None) -> Path:
    """The scenario file: the path given, or, for the default (``default``, else DRL-CC's)
    outside a checkout, the copy shipped with the package (ScenarioError if there is none)."""
    from ..scenario import resolve_default_scenario

    return resolve_default_scenario(scenario, Args().scenario if default is None else default)
