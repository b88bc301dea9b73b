"""RLDS-proxy: a stand-in for RLDS (Luo, Su, Liu, "A reinforcement learning approach for
multipath TCP data scheduling", IEEE CCWC 2019; pdaa3c.txt ref [9]), PDAA3C's main baseline.
A DQN in CleanRL's one-file layout (``dqn.py``).

RLDS's own state, action, reward, network and hyperparameters were not retrieved; everything
here follows the stand-in of ``shared/specs/rl-baselines.md`` §4 (marked [unverified] there),
and results are labelled "RLDS-proxy":

- **Decision** (§4, from pdaa3c.txt §2.3): every 100 ms the agent chooses the one subflow that
  receives new data in the next interval: the scheduler env with ``action="choose"``
  (``Discrete(P)``), invalid (unusable) subflows masked by ``info["action_mask"]``.
- **Fallback** (§4): the chosen subflow without congestion-window space → the segment goes on
  minRTT's choice among the available subflows (the env's and the runtime's ``busy="minrtt"``).
- **State** (§4, pdaa3c.txt §2.1's features): per subflow, of the previous interval, free
  bandwidth, throughput, cwnd, packets in flight, loss rate (:data:`STATE_FEATURES`), in the
  env's units (10 Mbit/s, 100 segments, fractions) instead of §4's per-link caps.
- **Reward** (§4, pdaa3c.txt §III): ``Σ_i log throughput_i`` (:func:`mpsched.rewards.pdaa3c`).
- **Learner** (§4): DQN with the Double-DQN target (the online network picks the next action,
  the target network values it; van Hasselt et al., AAAI 2016), replay 1e4, batch 32, Adam lr
  1e-3, γ 0.9, ε-greedy 1.0 → 0.05, MLP 2 × 64 ReLU. What §4 leaves open (ε schedule length,
  learning starts, target copy period) is in :class:`~mpsched.agents.rlds_args.Args`.

The trained Q-network is written as a generic ``net`` policy (:func:`export_policy`): the state
selection is folded into the first layer, the head is ``argmax``, so the Rust runtime runs it as
``--scheduler rlds`` (the shipped file) or ``policy:PATH``. At run time an argmax on an unusable
subflow chooses no usable subflow: minRTT decides (the env does the same).
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Tuple

import numpy as np

from ..envs import SUBFLOW_FEATURES, ObsLayout
from .rlds_args import Args

#: The per-subflow state of §4 (pdaa3c.txt §2.1), env feature names.
STATE_FEATURES = ("free_bw", "throughput", "cwnd", "inflight", "loss")


def state_index(layout: ObsLayout) -> np.ndarray:
    """Indices into a flat observation of :data:`STATE_FEATURES` of every subflow slot in the
    newest frame, slot-major: the Q-network's input is ``obs[..., state_index(layout)]``."""
    feat = [list(SUBFLOW_FEATURES).index(n) for n in STATE_FEATURES]
    positions = layout.subflows(np.arange(layout.size, dtype=np.int64))  # [H, P, F]
    return np.ascontiguousarray(positions[-1][:, feat].reshape(-1))


def _torch():
    import torch

    return torch


def build_qnetwork(n_in: int, hidden: Tuple[int, int], n_actions: int):
    """The §4 Q-network: ``n_in`` → hidden[0] → hidden[1] (ReLU) → one Q-value per subflow."""
    nn = _torch().nn
    return nn.Sequential(
        nn.Linear(n_in, hidden[0]),
        nn.ReLU(),
        nn.Linear(hidden[0], hidden[1]),
        nn.ReLU(),
        nn.Linear(hidden[1], n_actions),
    )


def masked_argmax(q: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Greedy actions among the valid ones (``mask`` > 0); all invalid: the plain argmax."""
    valid = mask > 0
    any_valid = valid.any(axis=-1, keepdims=True)
    return np.where(valid | ~any_valid, q, -np.inf).argmax(axis=-1)


def linear_schedule(start_e: float, end_e: float, duration: int, t: int) -> float:
    """ε at step ``t``: from ``start_e`` down to ``end_e`` over ``duration`` steps (CleanRL)."""
    slope = (end_e - start_e) / max(duration, 1)
    return max(slope * t + start_e, end_e)


class ReplayBuffer:
    """A ring buffer of transitions ``(s, a, r, s', done, mask')``: the oldest go first."""

    def __init__(self, capacity: int, n_in: int, n_actions: int) -> None:
        self.obs = np.zeros((capacity, n_in), np.float32)
        self.next_obs = np.zeros((capacity, n_in), np.float32)
        self.action = np.zeros(capacity, np.int64)
        self.reward = np.zeros(capacity, np.float32)
        self.done = np.zeros(capacity, np.float32)
        self.next_mask = np.zeros((capacity, n_actions), np.float32)
        self.capacity, self.pos, self.full = capacity, 0, False

    def __len__(self) -> int:
        return self.capacity if self.full else self.pos

    def add(self, s, a: int, r: float, s2, done: bool, mask2) -> None:
        i = self.pos
        self.obs[i], self.action[i], self.reward[i] = s, a, r
        self.next_obs[i], self.done[i], self.next_mask[i] = s2, float(done), mask2
        self.pos = (i + 1) % self.capacity
        self.full = self.full or self.pos == 0

    def sample(self, rng: np.random.Generator, n: int) -> Dict[str, np.ndarray]:
        idx = rng.integers(0, len(self), n)
        return {
            k: getattr(self, k)[idx]
            for k in ("obs", "action", "reward", "next_obs", "done", "next_mask")
        }


def make_env(args: Args) -> Any:
    """The scheduler env of §4: choose one subflow per 100 ms, reward Σ log throughput, the
    busy fallback to minRTT, only what the sender computes."""
    import gymnasium as gym

    import mpsched.envs  # noqa: F401  (registers the ids)

    return gym.make(
        "mpsched/Scheduler-v0",
        scenario=args.scenario,
        action="choose",
        reward="pdaa3c",
        interval=float(args.interval_ms),
        max_paths=args.max_paths,
        history=1,
        duration_s=args.duration_s,
        sender_only=True,
        busy="minrtt",
    )


class Learner:
    """The online and target Q-networks, Adam, and the Double-DQN update."""

    def __init__(self, args: Args, n_in: int, n_actions: int) -> None:
        torch = _torch()
        self.torch, self.args = torch, args
        self.q = build_qnetwork(n_in, args.hidden, n_actions)
        self.q_target = build_qnetwork(n_in, args.hidden, n_actions)
        self.q_target.load_state_dict(self.q.state_dict())
        self.opt = torch.optim.Adam(self.q.parameters(), lr=args.learning_rate)
        self.updates = 0

    def q_values(self, x: np.ndarray) -> np.ndarray:
        with self.torch.no_grad():
            return self.q(self.torch.from_numpy(x)).numpy()

    def update(self, b: Dict[str, np.ndarray]) -> Tuple[float, float]:
        """One minibatch; returns (TD loss, mean Q). Double DQN: ``y = r + γ (1 − done)
        Q_target(s', argmax_{a' valid} Q(s', a'))``."""
        torch = self.torch
        t = {k: torch.from_numpy(v) for k, v in b.items()}
        with torch.no_grad():
            q_next_online = self.q(t["next_obs"])
            valid = t["next_mask"] > 0
            any_valid = valid.any(dim=1, keepdim=True)
            q_next_online = q_next_online.masked_fill(~(valid | ~any_valid), -float("inf"))
            a_next = q_next_online.argmax(dim=1, keepdim=True)
            q_next = self.q_target(t["next_obs"]).gather(1, a_next)[:, 0]
            y = t["reward"] + self.args.gamma * (1.0 - t["done"]) * q_next
        q = self.q(t["obs"]).gather(1, t["action"][:, None])[:, 0]
        loss = torch.nn.functional.mse_loss(q, y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.updates += 1
        return float(loss.detach()), float(q.detach().mean())

    def sync_target(self) -> None:
        self.q_target.load_state_dict(self.q.state_dict())


@dataclass
class TrainResult:
    """What :func:`train` wrote and how long it took."""

    written: Dict[str, Path]
    wall_s: float
    transitions: int
    episodes: int
    updates: int


def _act(learner: Learner, rng: np.random.Generator, x: np.ndarray, mask: np.ndarray, eps: float):
    """ε-greedy among the valid subflows."""
    if rng.random() < eps:
        valid = np.flatnonzero(mask > 0)
        return int(rng.choice(valid)) if valid.size else int(rng.integers(0, mask.size))
    return int(masked_argmax(learner.q_values(x[None])[0], mask))


def run_training(
    args: Args, env: Any, learner: Learner, writer: Any, rng: np.random.Generator
) -> Tuple[int, int]:
    """CleanRL's DQN loop over ``args.total_transitions`` steps; returns the steps and the
    episodes that gave transitions (a last, unfinished one included): scenario seeds
    ``first_episode_seed`` to ``first_episode_seed + episodes − 1``."""
    layout = env.unwrapped.layout
    idx = state_index(layout)
    n_actions = args.max_paths
    rb = ReplayBuffer(args.buffer_size, idx.size, n_actions)
    explore = int(args.exploration_fraction * args.total_transitions)
    episodes, ret, start = 0, 0.0, time.perf_counter()
    obs, info = env.reset(seed=args.first_episode_seed)
    for step in range(args.total_transitions):
        x, mask = obs[idx].astype(np.float32), np.asarray(info["action_mask"], np.float32)
        eps = linear_schedule(args.start_e, args.end_e, explore, step)
        a = _act(learner, rng, x, mask, eps)
        obs, r, te, tr, info = env.step(a)
        ret += float(r)
        rb.add(x, a, r, obs[idx], te, np.asarray(info["action_mask"], np.float32))
        if step >= args.learning_starts and step % args.train_frequency == 0:
            loss, qm = learner.update(rb.sample(rng, args.batch_size))
            if learner.updates % 500 == 0:
                writer.add_scalar("losses/td_loss", loss, step)
                writer.add_scalar("losses/q_values", qm, step)
                writer.add_scalar("charts/SPS", step / max(time.perf_counter() - start, 1e-9), step)
        if step % args.target_network_frequency == 0:
            learner.sync_target()
        if te or tr:
            writer.add_scalar("charts/episodic_return", ret, step)
            writer.add_scalar("charts/epsilon", eps, step)
            episodes, ret = episodes + 1, 0.0
            obs, info = env.reset(seed=args.first_episode_seed + episodes)
    return args.total_transitions, episodes + (0 if te or tr else 1)


def export_policy(
    q: Any, layout: ObsLayout, path: Path, obs_block: Dict[str, Any], meta: Dict[str, Any]
):
    """Writes the Q-network as a ``net`` policy over the whole observation: the first layer's
    weights move to the state's indices (other inputs get 0), the head is ``argmax``."""
    torch = _torch()
    from ..policies import export

    idx = torch.from_numpy(state_index(layout))
    first = q[0]
    full = torch.nn.Linear(layout.size, first.out_features)
    with torch.no_grad():
        full.weight.zero_()
        full.weight[:, idx] = first.weight
        full.bias.copy_(first.bias)
    modules = [full, *list(q)[1:]]
    return export(
        modules,
        path,
        input_size=layout.size,
        head="argmax",
        obs=obs_block,
        provenance=meta,
        observation={"state": list(STATE_FEATURES), "frame": "newest", "per": "subflow slot"},
        action={
            "space": f"Discrete({layout.max_paths})",
            "meaning": "the subflow for the next interval",
        },
    )


def checkpoint_meta(args: Args, extra: Dict[str, Any]) -> Dict[str, Any]:
    """The provenance block of the policy file."""
    train_args = {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(args).items()}
    return {
        "algorithm": "rlds-proxy",
        "paper": "RLDS (Luo, Su, Liu, IEEE CCWC 2019) as cited by pdaa3c.txt [9]; stand-in of "
        "shared/specs/rl-baselines.md §4 (state, action, reward not retrieved)",
        "train": dict(train_args, **extra),
    }


def train(args: Args, log: Callable[[str], Any] = print) -> TrainResult:
    """Trains RLDS-proxy and writes ``rlds.{json,safetensors}`` and TensorBoard logs under
    ``runs/`` into ``args.out``, all at once: a failed run leaves no output directory."""
    torch = _torch()
    from torch.utils.tensorboard import SummaryWriter

    from .._atomic import atomic_directory

    check_args(args)
    torch.manual_seed(args.seed)
    torch.set_num_threads(max(1, args.torch_threads))
    rng = np.random.default_rng(args.seed)
    env = make_env(args)
    layout = env.unwrapped.layout
    learner = Learner(args, state_index(layout).size, args.max_paths)
    out = Path(args.out)
    started = time.perf_counter()
    with atomic_directory(out) as tmp:
        writer = SummaryWriter(str(tmp / "runs"))
        writer.add_text("args", json.dumps(asdict(args), default=str))
        steps, episodes = run_training(args, env, learner, writer, rng)
        wall = time.perf_counter() - started
        log(f"{steps} transitions in {episodes} episodes, {learner.updates} updates ({wall:.1f} s)")
        extra = {
            "transitions": steps,
            "episodes": episodes,
            "updates": learner.updates,
            "train_s": round(wall, 2),
            "episode_seeds": f"{args.first_episode_seed}-{args.first_episode_seed + episodes - 1}",
        }
        obs_block = dict(env.unwrapped.policy_obs)
        export_policy(learner.q, layout, tmp / "rlds", obs_block, checkpoint_meta(args, extra))
        writer.close()
    env.close()
    return TrainResult({"rlds": out / "rlds.json"}, wall, steps, episodes, learner.updates)


def check_args(args: Args) -> None:
    """Bounds the command line cannot express (ValueError naming the option)."""
    if not 0.0 <= args.end_e <= args.start_e <= 1.0:
        raise ValueError(
            f"--end-e/--start-e: expected 0 <= end_e <= start_e <= 1, got {args.end_e} and {args.start_e}"
        )
    if args.batch_size > args.buffer_size:
        raise ValueError(
            f"--batch-size: {args.batch_size} is larger than --buffer-size {args.buffer_size}"
        )
