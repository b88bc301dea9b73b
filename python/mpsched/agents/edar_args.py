"""EdAR's hyperparameters (:class:`Args`), apart from the agent so that the command line can
read them (``mpsched train edar`` builds its options from these fields, their defaults and
their docs) without importing torch, numpy or gymnasium."""

from dataclasses import dataclass, field
from typing import List, Optional, Tuple

__all__ = ["Args"]


@dataclass
class Args:
    """EdAR's hyperparameters; names and defaults from the paper where it gives them."""

    scenario: List[str] = field(default_factory=lambda: ["scenarios/edar-handoff.toml"])
    """training scenarios (the paper: settings i-iii of Table II); episodes cycle through them"""
    seed: int = 1
    """seeds the network, the exploration and the episodes"""
    out: str = "out/edar"
    """output directory: checkpoints, offline data, TensorBoard logs (runs/)"""
    offline_data: List[str] = field(default_factory=list)
    """transitions files (Parquet) for offline learning; none: collect them (Algorithm 1)"""
    offline_episodes: int = 8
    """trajectories to collect, each with μ = normal or redundant drawn at random (Alg. 1, l. 3);
    the paper collects 100 per setting"""
    offline_iterations: int = 2000
    """M of Algorithm 1 (not given in the paper)"""
    steps: int = 0
    """online learning: environment steps (TIs) of Algorithm 2; 0 trains EdAR-p only"""
    online_iterations: int = 200
    """M of Algorithm 2: learner updates after each flow (not given in the paper)"""
    duration_s: Optional[float] = None
    """overrides the scenarios' duration (episode length)"""
    k: int = 5
    """history length: E_t^i holds intervals t-k..t (§VI: k = 5)"""
    max_paths: int = 4
    """subflow slots of the observation (the network itself takes any number of subflows)"""
    alpha: float = 1.0
    """α, weight of the bandwidth waste V_w in the reward (§VI)"""
    beta: float = 0.5
    """β, weight of out-of-order / HoL blocking V_o in the reward (§VI)"""
    learning_rate: float = 1e-4
    """Adam learning rate (§VI)"""
    tau: float = 0.01
    """target-network update rate τ (§V-A, §VI)"""
    gamma: float = 0.6
    """discount factor γ (§VI)"""
    lstm1_units: int = 10
    """units of each LSTM1, one per subflow series (§IV-C)"""
    lstm2_units: int = 60
    """units of LSTM2, across subflows (§IV-C)"""
    core_units: Tuple[int, int] = (128, 32)
    """hidden layers of the core network, ReLU (§IV-C)"""
    batch_size: int = 64
    """minibatch H (not given in the paper)"""
    epsilon: float = 0.1
    """ε of the ε-greedy actor in online learning (§V-C; value not given)"""
    buffer_size: int = 50_000
    """replay capacity of online learning; the oldest transitions go first (§V-C)"""
    torch_threads: int = 1
    """CPU threads for torch (tiny networks: one thread is fastest, and fits 2 cores)"""
    init: Optional[str] = None
    """start from this checkpoint (an EdAR-p) and learn online only: EdAR-o adapting to the
    network it runs in (§VI-B: "after online training, EdAR-o further improves")"""
