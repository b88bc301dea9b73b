"""PDAA3C's hyperparameters (:class:`Args`), apart from the agent so that the command line can
read them (``mpsched train pdaa3c`` builds its options from these fields, their defaults and
their docs) without importing torch (as :mod:`mpsched.agents.edar_args` does for EdAR).
Every field says where its value comes from: the letter (Liang et al., "PDAA3C: An A3C-Based
Multi-Path Data Scheduling Algorithm", IEICE Trans. Inf. & Syst. 2022;
/work/shared/papers/pdaa3c.txt), A3C (Mnih et al., ICML 2016, the letter's [12]), or "not
stated; chosen" with the reason.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Tuple

__all__ = ["Args", "PAPER_VALUES", "A3C_VALUES", "resolve_scenario", "env_seed_base"]


@dataclass
class Args:
    """PDAA3C's hyperparameters; names and defaults from the letter where it gives them."""

    scenario: str = "scenarios/pdaa3c.toml"
    """training scenario: the letter's two subflows, 30 ms and 60 ms (§2.4, §3; rates and loss
    are the scenario file's assumptions)"""
    seed: int = 1
    """seeds the shared network, each worker's sampling (seed + worker) and the training
    episodes (env_seed_base: never the held-out seeds 1001-1020)"""
    out: str = "out/pdaa3c"
    """output directory: the policy file (pdaa3c.json + .safetensors) and TensorBoard logs
    (runs/)"""
    workers: int = 2
    """asynchronous actor-learner processes (the letter's "multi-core asynchronous updating",
    §2.1; Algorithm 1 runs once per worker); 2 = this machine's cores"""
    updates: int = 2000
    """total asynchronous updates of the shared parameters, over all workers (Algorithm 1's
    T_max, counted in updates rather than steps; not stated; chosen)"""
    max_minutes: Optional[float] = None
    """stop earlier, after this wall time (the policy so far is written)"""
    envs_per_worker: int = 2
    """simulations each worker steps side by side (not stated; chosen: one batch of t_max
    steps from each per update)"""
    duration_s: Optional[float] = 10.0
    """episode length in s, overriding the scenario's 70 s (not stated; chosen: 100 decisions
    per episode, so that terminal states come often in a short training)"""
    interval_ms: float = 100.0
    """decision epoch: one subflow selection every 100 ms (§2.4: "capturing the throughput
    every 100ms, i.e., 1 sub-flow selection ... in every 100ms")"""
    busy: str = "next"
    """what the chosen subflow does without window room: ``next`` = the packet goes to the
    next subflow by quality Q (§2.3 i, iii: the server "concurrently distributes data packets
    to established sub-flows", the chosen one first; docs/pdaa3c.md), ``wait`` = the strict
    reading (all new data of the epoch on the chosen subflow)"""
    max_paths: int = 2
    """subflow slots N of the state and the action (§3: two subflows)"""
    t_max: int = 5
    """n-step horizon t_max of Algorithm 1, line 13 (value not stated; chosen: A3C's 5 [12])"""
    gamma: float = 0.7
    """discount γ of the returns (Algorithm 1, lines 3 and 16: γ = 0.7, the same γ as eq. 4's)"""
    quality_gamma: float = 0.7
    """γ of the subflow quality Q, eq. 4 (§2.2: γ = 0.7)"""
    quality_eta: float = 0.3
    """η of the subflow quality Q, eq. 4 (§2.2: η = 0.3)"""
    quality_alpha: float = 1000.0
    """α of the subflow quality Q, the packet size in bytes (Algorithm 1, line 3: α = 1000)"""
    learning_rate: float = 1e-3
    """shared Adam learning rate (not stated; chosen; A3C [12] samples it log-uniformly
    around 1e-3)"""
    entropy_beta: float = 0.01
    """weight β of the policy's entropy bonus (not stated; A3C [12]: 0.01)"""
    value_coef: float = 0.5
    """weight of the critic's loss J (eq. 3) in the summed loss (not stated; chosen)"""
    max_grad_norm: float = 40.0
    """gradient norm clip of each worker's update (not stated; chosen, as common A3C ports)"""
    reward_scale: float = 0.1
    """rewards Σ log TT (Mbit/s) are multiplied by this before learning (not stated; chosen:
    keeps returns near 1)"""
    hidden_units: Tuple[int, int] = (64, 64)
    """hidden layers of the actor and of the critic, tanh (not stated; chosen)"""
    log_every: int = 50
    """TensorBoard scalars every this many updates (worker 0)"""


#: The values the letter states, by field: tests check the defaults against them.
PAPER_VALUES = {
    "interval_ms": 100.0,
    "max_paths": 2,
    "gamma": 0.7,
    "quality_gamma": 0.7,
    "quality_eta": 0.3,
    "quality_alpha": 1000.0,
}

#: A3C's values (Mnih et al. [12]) the letter inherits without stating them.
A3C_VALUES = {"t_max": 5, "entropy_beta": 0.01}


def env_seed_base(seed: int, worker: int) -> int:
    """First-episode scenario seed of worker ``worker``'s sub-env 0 (sub-env i: + i; later
    episodes derive 64-bit seeds from it by hashing): 1 000 000 + 10 000·seed + 100·worker,
    far from the held-out seeds 1001-1020."""
    return 1_000_000 + 10_000 * seed + 100 * worker


def resolve_scenario(scenario: str) -> Path:
    """The scenario file: the path given, or, for the default outside a checkout, the copy
    shipped with the package (ScenarioError if there is none)."""
    from ..scenario import resolve_default_scenario

    return resolve_default_scenario(scenario, Args().scenario)
