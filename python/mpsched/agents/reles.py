"""ReLeS: a neural adaptive multipath scheduler (Zhang, Li, Gao, Wang, Ye, IEEE INFOCOM 2019;
mptcp-rl.txt's fourth baseline: "schedules data packets based on the split ratio of each
subflow generated from the LSTM + NAF model"). CleanRL's one-file layout, top to bottom: the
state, the reward, the network, NAF's update, the training loop, the export.

The paper's full text was not retrieved; every item follows ``shared/specs/rl-baselines.md``
§3 and carries its evidence there ([reimpl] = a third-party re-implementation, [unverified]):

- **Decision** (§3): once per state interval SI (here a fixed ``interval_ms``, 200 ms: 3-4 RTTs
  of the WLAN paths) the agent sets the split ratio of every subflow of its connection: the
  scheduler env with ``action="weights"``.
- **Sending by the ratios** (§3 "weighted round-robin ... skip a subflow with no cwnd space (do
  not block)"): ``busy="skip"`` (``External``'s deficit round robin, the rule in
  ``crates/mpsched-transport/src/sched/external.rs``): each segment goes to the subflow with
  window space and positive weight that is furthest behind its share ``w_i / Σ w_j`` of the
  usable subflows; a busy subflow is skipped and makes up its deficit once it has room; no
  weighted subflow with room: wait; before the first decision: minRTT.
- **State** (§3 [reimpl]): per subflow slot and SI, ``throughput`` (segments sent),
  ``srtt``, ``cwnd``, ``inflight`` (unacked) and ``loss`` (retransmitted share), the last ``k``
  = 8 SIs oldest first, absent subflows zero: :data:`STATE_FEATURES`, env units.
- **Action** (§3 [reimpl]): ``a ∈ [−1, 1]^N`` (tanh of μ), weight ``w_i = low + (1 − low)(a_i +
  1)/2`` with ``low`` = 0.1: the re-implementation's 1..10 segments per round as a continuous
  ratio (:func:`weights_of`).
- **Reward** (§3 [reimpl]): ``r = G − α Σ_i RTT_i G_i / G − β Σ_i loss_i G_i`` with ``G_i`` the
  throughput of subflow i in the SI (10 Mbit/s), ``RTT_i`` its srtt (100 ms), from the
  sender's own counters at the end of the SI (:func:`reward`).
- **Learner** (Gu, Lillicrap, Sutskever, Levine, "Continuous Deep Q-Learning with Model-based
  Acceleration", ICML 2016, §4 and Algorithm 1): ``Q(s, a) = V(s) + A(s, a)``, ``A = −½ (a −
  μ)ᵀ P (a − μ)``, ``P = L Lᵀ``, ``L`` lower triangular with an exponentiated diagonal; target
  ``y = r + γ V'(s')``; soft target update τ; replay; Gaussian exploration on μ.
- **Network** (§3): LSTM over the k SIs → fully connected (ReLU) → three heads V, μ, L.

The deployed policy is μ(s) only, exported as a generic ``net`` policy (:func:`export_policy`):
a selection layer (0/1 weights: the state's inputs of the observation in LSTM step order), the
LSTM, the hidden layer and μ, head ``tanh`` onto [``low``, 1]: ``--scheduler reles`` (the
shipped file) or ``policy:PATH`` runs it in Rust.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import numpy as np

from ..envs import SUBFLOW_FEATURES, ObsLayout
from .reles_args import Args, resolve_scenarios

#: The per-subflow state of §3 (the re-implementation's five statistics), env feature names.
STATE_FEATURES = ("throughput", "srtt", "cwnd", "inflight", "loss")


# --- State and reward (rl-baselines.md §3) ------------------------------------------------


def state_index(layout: ObsLayout) -> np.ndarray:
    """Indices into a flat observation of :data:`STATE_FEATURES` of every subflow slot of
    every frame, frame-major (oldest first), then slot, then feature: ``obs[state_index]``
    reshaped to ``[history, max_paths · 5]`` is the LSTM's input sequence."""
    feat = [list(SUBFLOW_FEATURES).index(n) for n in STATE_FEATURES]
    positions = layout.subflows(np.arange(layout.size, dtype=np.int64))  # [H, P, F]
    return np.ascontiguousarray(positions[:, :, feat].reshape(-1))


def reward(obs: np.ndarray, layout: ObsLayout, alpha: float, beta: float) -> float:
    """§3's reward of the SI that just ended, from the newest frame of ``obs``: ``G − α Σ RTT_i
    G_i / G − β Σ loss_i G_i`` (G_i = throughput, RTT_i = srtt, both in env units; the RTT
    term is 0 when nothing was sent)."""
    sub = layout.subflows(obs)[-1]
    names = list(SUBFLOW_FEATURES)
    g = sub[:, names.index("throughput")].astype(np.float64)
    rtt = sub[:, names.index("srtt")].astype(np.float64)
    loss = sub[:, names.index("loss")].astype(np.float64)
    total = float(g.sum())
    delay = float((rtt * g).sum()) / total if total > 0 else 0.0
    return total - alpha * delay - beta * float((loss * g).sum())


def weights_of(a: np.ndarray, low: float) -> np.ndarray:
    """The env's weights for an action ``a ∈ [−1, 1]``: ``low + (1 − low)(a + 1)/2`` (what the
    runtime's ``tanh`` head on [low, 1] computes from the pre-tanh μ)."""
    return (low + (1.0 - low) * (np.clip(a, -1.0, 1.0) + 1.0) / 2.0).astype(np.float32)


def make_env(args: Args, scenario: Any) -> Any:
    """The scheduler env of §3: split ratios every SI, sent by weighted round robin skipping
    busy subflows, only what the sender computes, k frames."""
    import gymnasium as gym

    import mpsched.envs  # noqa: F401  (registers the ids)

    return gym.make(
        "mpsched/Scheduler-v0",
        scenario=scenario,
        action="weights",
        reward="goodput",  # not used: the agent computes §3's reward from the observation
        interval=float(args.interval_ms),
        max_paths=args.max_paths,
        history=args.k,
        duration_s=args.duration_s,
        sender_only=True,
        busy="skip",
    )


# --- Network: LSTM → hidden → NAF heads (Gu et al. 2016, §4) -------------------------------


def _torch():
    import torch

    return torch


def build_naf(args: Args, n_step: int) -> Any:
    """The NAF network over state sequences ``[B, k, n_step]``: V, μ (tanh) and L."""
    torch = _torch()
    nn = torch.nn
    n = args.max_paths

    class Naf(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lstm = nn.LSTM(n_step, args.lstm_hidden, batch_first=True)
            self.fc = nn.Linear(args.lstm_hidden, args.hidden)
            self.mu = nn.Linear(args.hidden, n)
            self.v = nn.Linear(args.hidden, 1)
            self.l = nn.Linear(args.hidden, n * (n + 1) // 2)
            self.tril = torch.tril_indices(n, n)

        def features(self, seq):
            out, _ = self.lstm(seq)
            return torch.relu(self.fc(out[:, -1]))

        def forward(self, seq, action=None):
            """(μ, V, Q(s, action) or None)."""
            h = self.features(seq)
            mu, v = torch.tanh(self.mu(h)), self.v(h)[:, 0]
            if action is None:
                return mu, v, None
            lower = torch.zeros(h.shape[0], n, n)
            lower[:, self.tril[0], self.tril[1]] = self.l(h)
            diag = torch.diagonal(lower, dim1=1, dim2=2)
            lower = lower - torch.diag_embed(diag) + torch.diag_embed(diag.exp())
            p = lower @ lower.transpose(1, 2)
            d = (action - mu)[:, :, None]
            adv = -0.5 * (d.transpose(1, 2) @ p @ d)[:, 0, 0]
            return mu, v, v + adv

    return Naf()


# --- Replay and NAF's update (Algorithm 1) --------------------------------------------------


class ReplayBuffer:
    """A ring buffer of ``(s, a, r, s', done)`` state sequences: the oldest go first."""

    def __init__(self, capacity: int, n_state: int, n_actions: int) -> None:
        self.obs = np.zeros((capacity, n_state), np.float32)
        self.next_obs = np.zeros((capacity, n_state), np.float32)
        self.action = np.zeros((capacity, n_actions), np.float32)
        self.reward = np.zeros(capacity, np.float32)
        self.done = np.zeros(capacity, np.float32)
        self.capacity, self.pos, self.full = capacity, 0, False

    def __len__(self) -> int:
        return self.capacity if self.full else self.pos

    def add(self, s, a, r: float, s2, done: bool) -> None:
        i = self.pos
        self.obs[i], self.action[i], self.reward[i], self.next_obs[i] = s, a, r, s2
        self.done[i] = float(done)
        self.pos = (i + 1) % self.capacity
        self.full = self.full or self.pos == 0

    def sample(self, rng: np.random.Generator, n: int) -> Dict[str, np.ndarray]:
        idx = rng.integers(0, len(self), n)
        return {k: getattr(self, k)[idx] for k in ("obs", "action", "reward", "next_obs", "done")}


class Learner:
    """The NAF network, its target copy and Adam."""

    def __init__(self, args: Args, k: int, n_step: int) -> None:
        torch = _torch()
        self.torch, self.args, self.k, self.n_step = torch, args, k, n_step
        self.q = build_naf(args, n_step)
        self.q_target = build_naf(args, n_step)
        self.q_target.load_state_dict(self.q.state_dict())
        self.opt = torch.optim.Adam(self.q.parameters(), lr=args.learning_rate)
        self.updates = 0

    def seq(self, x: np.ndarray) -> Any:
        return self.torch.from_numpy(x).reshape(x.shape[0], self.k, self.n_step)

    def mu(self, x: np.ndarray) -> np.ndarray:
        """μ(s) ∈ [−1, 1]^N for states ``[B, k · n_step]``."""
        with self.torch.no_grad():
            return self.q(self.seq(x))[0].numpy()

    def update(self, b: Dict[str, np.ndarray]) -> Tuple[float, float]:
        """One minibatch: ``y = r + γ (1 − done) V'(s')``, loss ``(y − Q(s, a))²``, then the
        soft target update; returns (loss, mean Q)."""
        torch, a = self.torch, self.args
        with torch.no_grad():
            v_next = self.q_target(self.seq(b["next_obs"]))[1]
            y = torch.from_numpy(b["reward"]) + a.gamma * (1 - torch.from_numpy(b["done"])) * v_next
        _, _, q = self.q(self.seq(b["obs"]), torch.from_numpy(b["action"]))
        loss = torch.nn.functional.mse_loss(q, y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        with torch.no_grad():
            for p, pt in zip(self.q.parameters(), self.q_target.parameters()):
                pt.mul_(1 - a.tau).add_(a.tau * p)
        self.updates += 1
        return float(loss.detach()), float(q.detach().mean())


# --- Training loop ---------------------------------------------------------------------------


@dataclass
class TrainResult:
    """What :func:`train` wrote and how long it took."""

    written: Dict[str, Path]
    wall_s: float
    cpu_s: float
    transitions: int
    episodes: int
    updates: int
    load: Tuple[float, float]


def run_training(
    args: Args, envs: List[Any], learner: Learner, writer: Any, rng: np.random.Generator
) -> Tuple[int, int]:
    """Algorithm 1 over ``args.total_transitions`` steps, episodes cycling through ``envs``
    (episode e: ``envs[e % len]``, env seed ``first_episode_seed + e``); returns the steps and
    the episodes that gave transitions (a last, unfinished one included)."""
    layout = envs[0].unwrapped.layout
    idx = state_index(layout)
    rb = ReplayBuffer(args.buffer_size, idx.size, args.max_paths)
    episodes, ret, start = 0, 0.0, time.perf_counter()
    env = envs[0]
    obs, _ = env.reset(seed=args.first_episode_seed)
    te = tr = False
    for step in range(args.total_transitions):
        s = obs[idx].astype(np.float32)
        noise = rng.normal(0.0, args.exploration_noise, args.max_paths)
        a = np.clip(learner.mu(s[None])[0] + noise, -1.0, 1.0).astype(np.float32)
        obs, _, te, tr, _ = env.step(weights_of(a, args.weight_low))
        r = reward(obs, layout, args.alpha, args.beta)
        ret += r
        rb.add(s, a, r, obs[idx], te)
        if step >= args.learning_starts:
            for _ in range(args.updates_per_step):
                loss, qm = learner.update(rb.sample(rng, args.batch_size))
            if learner.updates % 500 == 0:
                writer.add_scalar("losses/td_loss", loss, step)
                writer.add_scalar("losses/q_values", qm, step)
                writer.add_scalar("charts/SPS", step / max(time.perf_counter() - start, 1e-9), step)
        if te or tr:
            writer.add_scalar("charts/episodic_return", ret, step)
            episodes, ret = episodes + 1, 0.0
            env = envs[episodes % len(envs)]
            obs, _ = env.reset(seed=args.first_episode_seed + episodes)
    return args.total_transitions, episodes + (0 if te or tr else 1)


# --- Export: μ(s) as a generic net policy --------------------------------------------------


def actor_modules(learner: Learner, layout: ObsLayout) -> List[Any]:
    """μ's path as runtime layers: the 0/1 selection of the state (no bias), the LSTM, the
    hidden layer, ReLU and μ's linear layer (the head applies tanh)."""
    torch = _torch()
    idx = state_index(layout)
    select = torch.nn.Linear(layout.size, idx.size, bias=False)
    with torch.no_grad():
        select.weight.zero_()
        select.weight[torch.arange(idx.size), torch.from_numpy(idx)] = 1.0
    q = learner.q
    return [select, q.lstm, q.fc, torch.nn.ReLU(), q.mu]


def export_policy(
    learner: Learner,
    layout: ObsLayout,
    path: Path,
    obs_block: Dict[str, Any],
    meta: Dict[str, Any],
    low: float,
):
    """Writes μ as a ``net`` policy over the whole observation, head ``tanh`` onto [low, 1]."""
    from ..policies import export

    n = layout.max_paths
    return export(
        actor_modules(learner, layout),
        path,
        input_size=layout.size,
        head="tanh",
        low=[low] * n,
        high=[1.0] * n,
        obs=obs_block,
        provenance=meta,
        observation={
            "state": list(STATE_FEATURES),
            "frames": layout.history,
            "per": "subflow slot",
        },
        action={
            "space": f"Box({low}, 1, ({n},))",
            "meaning": "each subflow's split weight (share = w_i / sum of usable w_j)",
        },
    )


def checkpoint_meta(args: Args, extra: Dict[str, Any]) -> Dict[str, Any]:
    """The provenance block of the policy file."""
    return {
        "algorithm": "reles",
        "paper": "ReLeS (Zhang, Li, Gao, Wang, Ye, IEEE INFOCOM 2019) as cited by mptcp-rl.txt; "
        "shared/specs/rl-baselines.md §3 (full text not retrieved)",
        "train": dict(asdict(args), **extra),
    }


def train(args: Args, log: Callable[[str], Any] = print) -> TrainResult:
    """Trains ReLeS and writes ``reles.{json,safetensors}`` and TensorBoard logs under
    ``runs/`` into ``args.out``, all at once: a failed run leaves no output directory."""
    import os

    torch = _torch()
    from torch.utils.tensorboard import SummaryWriter

    from .._atomic import atomic_directory

    check_args(args)
    torch.manual_seed(args.seed)
    torch.set_num_threads(max(1, args.torch_threads))
    rng = np.random.default_rng(args.seed)
    envs = [make_env(args, str(p)) for p in resolve_scenarios(args.scenario)]
    layout = envs[0].unwrapped.layout
    learner = Learner(args, args.k, args.max_paths * len(STATE_FEATURES))
    out = Path(args.out)
    load0, started, cpu0 = os.getloadavg()[0], time.perf_counter(), time.process_time()
    with atomic_directory(out) as tmp:
        writer = SummaryWriter(str(tmp / "runs"))
        writer.add_text("args", json.dumps(asdict(args), default=str))
        steps, episodes = run_training(args, envs, learner, writer, rng)
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu0
        log(f"{steps} transitions in {episodes} episodes, {learner.updates} updates ({wall:.1f} s)")
        extra = {
            "transitions": steps,
            "episodes": episodes,
            "updates": learner.updates,
            "episode_seeds": f"{args.first_episode_seed}-{args.first_episode_seed + episodes - 1}",
        }
        obs_block = dict(envs[0].unwrapped.policy_obs)
        meta = checkpoint_meta(args, extra)
        export_policy(learner, layout, tmp / "reles", obs_block, meta, args.weight_low)
        (tmp / "train.json").write_text(
            json.dumps(
                {"args": asdict(args), **extra, "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
                 "load": [load0, os.getloadavg()[0]]},
                indent=1,
            )
            + "\n"
        )  # fmt: skip
        writer.close()
    for env in envs:
        env.close()
    return TrainResult(
        {"reles": out / "reles.json"}, wall, cpu, steps, episodes, learner.updates,
        (load0, os.getloadavg()[0]),
    )  # fmt: skip


def check_args(args: Args) -> None:
    """Bounds the command line cannot express (ValueError naming the option)."""
    if not args.scenarios():
        raise ValueError("--scenario: expected one or more scenario files, comma-separated")
    if args.batch_size > args.buffer_size:
        raise ValueError(
            f"--batch-size: {args.batch_size} is larger than --buffer-size {args.buffer_size}"
        )
    if not 0.0 < args.weight_low < 1.0:
        raise ValueError(f"--weight-low: expected a value in (0, 1), got {args.weight_low}")
