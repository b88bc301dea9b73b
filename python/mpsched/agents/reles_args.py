"""ReLeS's hyperparameters (:class:`Args`), apart from the agent so that the command line can
read them (``mpsched train reles`` builds its options from these fields, their defaults and
their docs) without importing torch (as :mod:`mpsched.agents.rlds_args` does for RLDS-proxy).

ReLeS: H. Zhang, W. Li, S. Gao, X. Wang, B. Ye, "ReLeS: A Neural Adaptive Multipath Scheduler
based on Deep Reinforcement Learning", IEEE INFOCOM 2019 (mptcp-rl.txt's fourth baseline). Its
full text was not retrieved (closed access); the values follow
``shared/specs/rl-baselines.md`` §3, whose evidence tag each field repeats: [reimpl] = a
third-party re-implementation's value, [unverified] = the spec's default, [ours] = chosen here.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Tuple

__all__ = ["Args", "TRAINING_SCENARIOS", "resolve_scenarios"]

#: The scenarios training episodes cycle through (MPTCP-RL's training set minus the short
#: flows, which mostly end before the first decision: docs/mptcp-rl.md, "ReLeS").
TRAINING_SCENARIOS = ("scenarios/mptcp-rl-media.toml", "scenarios/mptcp-rl-paths.toml")


@dataclass
class Args:
    """ReLeS's hyperparameters (rl-baselines.md §3)."""

    scenario: str = ",".join(TRAINING_SCENARIOS)
    """training scenarios, comma-separated, one per episode in turn: the controlled flow is
    the first flow of the first multipath workload [ours]"""
    seed: int = 1
    """seeds the network, the exploration noise and the replay sampling"""
    first_episode_seed: int = 300_000
    """episode e runs with env seed first_episode_seed + e: training seeds 300000 and up,
    disjoint from the held-out seeds 1001-1020 of the reproduction"""
    out: str = "out/reles"
    """output directory: the policy file (reles.json + .safetensors) and TensorBoard logs"""
    total_transitions: int = 20_000
    """environment steps (state intervals) to train for [ours: the time budget]"""
    duration_s: Optional[float] = 30.0
    """caps each episode's scenario duration (s) [ours]"""
    max_paths: int = 4
    """subflow slots (zero-padded to a fixed maximum; 4 = MPTCP-RL's up to four subflows) [reimpl]"""
    k: int = 8
    """past state intervals the LSTM reads [reimpl]"""
    interval_ms: float = 200.0
    """state interval SI, fixed: about 3-4 RTTs of the WLAN paths (40-60 ms) [reimpl: 3-4 RTTs]"""
    alpha: float = 1.0
    """reward: weight of the throughput-weighted mean RTT (bufferbloat term) [unverified]"""
    beta: float = 10.0
    """reward: weight of the lost segments' rate [unverified]"""
    lstm_hidden: int = 64
    """LSTM hidden units [unverified]"""
    hidden: int = 64
    """fully connected layer after the LSTM, ReLU [unverified]"""
    learning_rate: float = 1e-3
    """Adam learning rate [unverified]"""
    gamma: float = 0.99
    """discount factor γ [unverified]"""
    tau: float = 0.001
    """soft target update θ' ← τθ + (1 − τ)θ' (NAF, Gu et al. 2016, Algorithm 1) [unverified]"""
    buffer_size: int = 100_000
    """replay capacity [unverified]"""
    batch_size: int = 64
    """minibatch size [unverified]"""
    exploration_noise: float = 0.2
    """σ of the Gaussian noise added to μ(s) while training [unverified]"""
    learning_starts: int = 500
    """steps before the first update [ours]"""
    updates_per_step: int = 1
    """minibatch updates per environment step (NAF's I) [ours]"""
    weight_low: float = 0.1
    """a = −1 maps to this weight, a = +1 to 1: the re-implementation's 1..10 segments per
    round, as a continuous ratio 1:10 [reimpl]"""
    torch_threads: int = 1
    """CPU threads for torch (one fits a 1-2 core machine)"""

    def scenarios(self) -> Tuple[str, ...]:
        """The training scenarios, in turn."""
        return tuple(s.strip() for s in self.scenario.split(",") if s.strip())


def resolve_scenarios(scenario: str) -> Tuple[Path, ...]:
    """Each comma-separated scenario file: the path given, or, for a default one outside a
    checkout, the copy shipped with the package (ScenarioError if there is none)."""
    from ..scenario import shipped_scenario

    out = []
    for s in Args(scenario=scenario).scenarios():
        p = Path(s)
        out.append(p if p.is_file() or s not in TRAINING_SCENARIOS else shipped_scenario(p.name))
    return tuple(out)
