"""EdAR: experience-driven adaptive redundant scheduling (Han et al., IEEE TWC 2023;
/work/shared/papers/edar.txt), a DQN agent in CleanRL's one-file layout.

What the paper specifies, and where it lives here:

- **Decision** (§IV-B): every transmission interval TI = minimum subflow RTT the agent picks
  ``normal`` (0: each packet once, minRTT first) or ``redundant`` (1: packets in flight are
  copied on the other subflows). Redundant at the very beginning of a connection: the env
  starts each connection in redundant mode (``initial_mode="redundant"``) until the first
  decision, and while no subflow has an RTT sample the policy answers redundant
  (:func:`no_rtt_yet`).
- **State** (§IV-B.1): ``M_t = (a_{t-1}, b_t, I_t)`` (previous action, receive window, inflight)
  and per subflow ``E_t^i``: k + 1 = 6 intervals of RTT d, RTO o, throughput x, cwnd w, loss
  l, inflight f (:data:`SUBFLOW_INPUTS`, :data:`CONN_INPUTS`), read from the env's
  :class:`~mpsched.envs.ObsLayout`.
- **Reward** (§IV-B.3): ``r = G − α·V_w − β·V_o``, α = 1, β = 0.5 (:func:`mpsched.rewards.edar`).
- **Q-network** (§IV-C, Figs. 5-6): :class:`QNetwork`.
- **Learning** (§V-A, Algorithms 1-2): target network with soft updates ``θ' ← τθ + (1−τ)θ'``,
  loss ``(r + γ max Q(s', ·; θ') − Q(s, a; θ))²`` (y = r when the flow ended), Adam with
  lr 1e-4, τ = 0.01, γ = 0.6 (§VI). Offline learning from trajectories of the fixed policies
  always-normal / always-redundant (:func:`collect`, :func:`offline_learning`), then online
  learning (:func:`online_learning`, Algorithm 2).

Choices the paper leaves open (documented in :class:`Args`): minibatch H = 64, iterations M,
ε = 0.1, replay capacity, the number of trajectories. Online learning is Algorithm 2 in one
process: the actor (the *scheduler's* copy of the Q-network) runs one flow ε-greedily, its
transitions go to the replay buffer, the learner then runs M minibatch updates and the new
weights are pushed to the actor ("synchronize θ to the scheduler"). The paper's actor and
learner run concurrently; because the actor only ever sees weights synchronized at flow
boundaries, running them in turn gives the same sequence of decisions, deterministically.

Two variants: EdAR-p (offline learning only) and EdAR-o (EdAR-p, then online learning).
"""

from __future__ import annotations

import copy
import hashlib
import json
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..envs import CONN_FEATURES, SUBFLOW_FEATURES, ObsLayout, feature_names
from .checkpoint import CheckpointError, get_field, load_checkpoint, save_checkpoint
from .edar_args import Args
from .edar_data import (  # noqa: F401 (re-exported: callers import them from here)
    TRANSITIONS_FORMAT,
    DataError,
    Replay,
    read_transitions,
    write_transitions,
)

#: Subflow series of E_t^i (§IV-B.1, Table I): d RTT, o RTO, x throughput, w cwnd, l loss, f inflight.
SUBFLOW_INPUTS = ("srtt", "rto", "throughput", "cwnd", "loss", "inflight")
#: Connection state M_t (§IV-B.1): a_{t-1}, b_t receive window, I_t inflight.
CONN_INPUTS = ("prev_mode", "rcv_window", "inflight")
#: Actions (§IV-B.2).
NORMAL, REDUNDANT = 0, 1


# --- observations -------------------------------------------------------------------------


def _indices(names: Sequence[str], known: Sequence[str], what: str) -> List[int]:
    missing = [n for n in names if n not in known]
    if missing:
        raise CheckpointError(
            f"{what}: feature {missing[0]!r} is not in this build's observation ({', '.join(known)})"
        )
    return [list(known).index(n) for n in names]


SUB_IDX = _indices(SUBFLOW_INPUTS, SUBFLOW_FEATURES, "EdAR subflow inputs")
CONN_IDX = _indices(CONN_INPUTS, CONN_FEATURES, "EdAR connection inputs")


def split_obs(obs: np.ndarray, layout: ObsLayout) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Flat observations ``[B, D]`` → subflow series ``[B, P, 6, k+1]`` (oldest first),
    connection state ``[B, 3]`` (newest interval) and slot mask ``[B, P]``.

    A slot counts when the env marks its subflow usable or the subflow has any history: a
    subflow whose path just went down stays in the state (its RTO and loss show the handoff).
    """
    sub = layout.subflows(obs)[..., SUB_IDX]  # [B, H, P, F]
    sub = np.ascontiguousarray(np.moveaxis(sub, -3, -1))  # [B, P, F, H]
    conn = np.ascontiguousarray(layout.connection(obs)[..., -1, CONN_IDX])
    present = np.abs(sub).sum(axis=(-1, -2)) > 0
    mask = ((layout.path_mask(obs) > 0.5) | present).astype(np.float32)
    return sub.astype(np.float32), conn.astype(np.float32), mask


def no_rtt_yet(sub: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """True where no subflow has an RTT sample in the newest interval (connection start)."""
    srtt = sub[..., SUBFLOW_INPUTS.index("srtt"), -1]
    return ~np.any((srtt > 0) & (mask > 0.5), axis=-1)


# --- Q-network (§IV-C, Figs. 5-6) ---------------------------------------------------------


def _torch():
    import torch

    return torch


def build_qnetwork(
    lstm1_units: int = 10,
    lstm2_units: int = 60,
    core_units: Sequence[int] = (128, 32),
    n_actions: int = 2,
):
    """The Q-network of Figs. 5-6 (a torch ``nn.Module``)."""
    torch = _torch()
    nn = torch.nn

    class QNetwork(nn.Module):
        """Representation network + core network.

        - LSTM1 (``lstm1_units``): one per subflow series (d, o, x, w, l, f), shared by the
          subflows; each reads a series oldest first and hands on its last two hidden states
          (``h_{t-1}``, ``h_t``: "the average state and the trend").
        - LSTM2 (``lstm2_units``) runs across the subflows, one step per present subflow slot
          (absent slots are skipped: h, c carried over), so the subflow count may vary. The
          paper says LSTM2 outputs "the last 24 hidden states"; we take its final hidden state.
        - Core: ``[M_t, h]`` → 128 → 32 (ReLU) → 2 Q-values (linear).
        """

        def __init__(self) -> None:
            super().__init__()
            n_feat = len(SUBFLOW_INPUTS)
            # The LSTM1s, stacked on a leading feature axis (one weight set per series), in
            # torch.nn.LSTM's gate order i, f, g, o and initialisation U(-1/√U, 1/√U).
            k1 = 1.0 / lstm1_units**0.5
            u = lambda *shape, k: nn.Parameter(torch.empty(*shape).uniform_(-k, k))  # noqa: E731
            self.lstm1_weight_ih = u(n_feat, 4 * lstm1_units, k=k1)
            self.lstm1_weight_hh = u(n_feat, 4 * lstm1_units, lstm1_units, k=k1)
            self.lstm1_bias = u(n_feat, 4 * lstm1_units, k=k1)
            self.lstm2 = nn.LSTMCell(n_feat * 2 * lstm1_units, lstm2_units)
            c1, c2 = core_units
            self.core = nn.Sequential(
                nn.Linear(len(CONN_INPUTS) + lstm2_units, c1),
                nn.ReLU(),
                nn.Linear(c1, c2),
                nn.ReLU(),
                nn.Linear(c2, n_actions),
            )

        def forward(self, sub, conn, mask):
            b, p, f, h = sub.shape
            x = sub.reshape(b * p, f, h).permute(1, 0, 2)  # [F, N, H]
            n, u1 = b * p, self.lstm1_weight_hh.shape[-1]
            hs = sub.new_zeros(f, n, u1)
            cs = sub.new_zeros(f, n, u1)
            w_hh_t = self.lstm1_weight_hh.transpose(1, 2)  # [F, U, 4U]
            outs = []
            for t in range(h):
                g = (
                    x[:, :, t, None] * self.lstm1_weight_ih[:, None, :]
                    + self.lstm1_bias[:, None, :]
                    + torch.bmm(hs, w_hh_t)
                )
                i, fg, gg, o = g.chunk(4, dim=-1)
                cs = torch.sigmoid(fg) * cs + torch.sigmoid(i) * torch.tanh(gg)
                hs = torch.sigmoid(o) * torch.tanh(cs)
                outs.append(hs)
            # The last two hidden states of every series: [N, F, 2, U] -> [B, P, F*2*U].
            z = torch.stack(outs[-2:], dim=2).permute(1, 0, 2, 3).reshape(b, p, -1)
            hx = sub.new_zeros(b, self.lstm2.hidden_size)
            cx = sub.new_zeros(b, self.lstm2.hidden_size)
            for i in range(p):
                h2, c2 = self.lstm2(z[:, i], (hx, cx))
                m = mask[:, i : i + 1]
                hx = m * h2 + (1 - m) * hx
                cx = m * c2 + (1 - m) * cx
            return self.core(torch.cat([conn, hx], dim=-1))

    return QNetwork()


def expected_shapes(desc: Dict[str, Any], where: Path) -> Dict[str, List[int]]:
    """Tensor shapes of the network a checkpoint description declares."""
    u1 = get_field(desc, "net.lstm1_units", int, where)
    u2 = get_field(desc, "net.lstm2_units", int, where)
    core = get_field(desc, "net.core_units", list, where)
    na = get_field(desc, "net.n_actions", int, where)
    subs = get_field(desc, "net.subflow_inputs", list, where)
    conns = get_field(desc, "net.conn_inputs", list, where)
    hist = get_field(desc, "net.history", int, where)
    if list(subs) != list(SUBFLOW_INPUTS):
        raise CheckpointError(
            f"{where}: field 'net.subflow_inputs': expected {list(SUBFLOW_INPUTS)}, got {subs}"
        )
    if list(conns) != list(CONN_INPUTS):
        raise CheckpointError(
            f"{where}: field 'net.conn_inputs': expected {list(CONN_INPUTS)}, got {conns}"
        )
    if len(core) != 2 or not all(
        isinstance(c, int) and not isinstance(c, bool) and c > 0 for c in core
    ):
        raise CheckpointError(
            f"{where}: field 'net.core_units': expected two positive integers, got {core}"
        )
    for name, v in (("net.lstm1_units", u1), ("net.lstm2_units", u2), ("net.n_actions", na)):
        if v <= 0:
            raise CheckpointError(f"{where}: field {name!r}: expected a positive integer, got {v}")
    if na != 2:
        raise CheckpointError(
            f"{where}: field 'net.n_actions': expected 2 (normal, redundant), got {na}"
        )
    if hist < 2:
        raise CheckpointError(
            f"{where}: field 'net.history': expected at least 2 intervals, got {hist}"
        )
    nf = len(SUBFLOW_INPUTS)
    shapes: Dict[str, List[int]] = {
        "lstm1_weight_ih": [nf, 4 * u1],
        "lstm1_weight_hh": [nf, 4 * u1, u1],
        "lstm1_bias": [nf, 4 * u1],
    }
    n_in = len(SUBFLOW_INPUTS) * 2 * u1
    shapes["lstm2.weight_ih"] = [4 * u2, n_in]
    shapes["lstm2.weight_hh"] = [4 * u2, u2]
    shapes["lstm2.bias_ih"] = [4 * u2]
    shapes["lstm2.bias_hh"] = [4 * u2]
    dims = [len(CONN_INPUTS) + u2, core[0], core[1], na]
    for layer, (a, b) in zip((0, 2, 4), zip(dims[:-1], dims[1:])):
        shapes[f"core.{layer}.weight"] = [b, a]
        shapes[f"core.{layer}.bias"] = [b]
    return shapes


class EdarPolicy:
    """A trained EdAR Q-network for inference (greedy policy ``argmax_a Q(s, a)``)."""

    def __init__(self, qnet: Any, desc: Dict[str, Any]) -> None:
        self.qnet = qnet.eval()
        self.desc = desc
        self.history = int(desc["net"]["history"])

    @classmethod
    def load(cls, path: Any) -> "EdarPolicy":
        """Loads and validates a checkpoint (CheckpointError with a one-line message)."""
        desc, tensors, _, _ = load_checkpoint(path, "edar", expected_shapes)
        torch = _torch()
        net = desc["net"]
        q = build_qnetwork(
            net["lstm1_units"], net["lstm2_units"], net["core_units"], net["n_actions"]
        )
        q.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in tensors.items()})
        return cls(q, desc)

    def check_layout(self, layout: ObsLayout) -> None:
        if layout.history != self.history:
            raise CheckpointError(
                f"checkpoint expects history = {self.history} intervals, the env has {layout.history}"
            )

    def q_values(self, obs: np.ndarray, layout: ObsLayout) -> np.ndarray:
        """Q-values ``[B, 2]`` (or ``[2]`` for one observation)."""
        torch = _torch()
        single = obs.ndim == 1
        o = obs[None] if single else obs
        sub, conn, mask = split_obs(o, layout)
        with torch.no_grad():
            q = self.qnet(
                torch.from_numpy(sub), torch.from_numpy(conn), torch.from_numpy(mask)
            ).numpy()
        return q[0] if single else q

    def act(self, obs: np.ndarray, layout: ObsLayout) -> np.ndarray:
        """Greedy actions (redundant while no subflow has an RTT sample)."""
        o = obs[None] if obs.ndim == 1 else obs
        a = self.q_values(o, layout).argmax(-1)
        sub, _, mask = split_obs(o, layout)
        a = np.where(no_rtt_yet(sub, mask), REDUNDANT, a)
        return a[0] if obs.ndim == 1 else a


# --- transitions (offline data): python/mpsched/agents/edar_data.py ----------------------
# Replay, read_transitions, write_transitions, DataError (re-exported here).


# --- environment --------------------------------------------------------------------------


def make_env(scenario: Any, args: Args):
    import gymnasium as gym

    import mpsched.envs  # noqa: F401  (registers the ids)

    return gym.make(
        "mpsched/Scheduler-v0",
        scenario=scenario,
        action="mode",
        reward="edar",
        reward_kwargs={"alpha": args.alpha, "beta": args.beta},
        interval="min-rtt",
        history=args.k + 1,
        max_paths=args.max_paths,
        duration_s=args.duration_s,
        initial_mode="redundant",
    )


def run_episode(
    env: Any, seed: int, choose: Any, episode: int, max_steps: Optional[int] = None
) -> Tuple[Replay, float]:
    """One flow: ``choose(obs) -> action`` each TI. Returns its transitions and its return."""
    obs, info = env.reset(seed=seed)
    rows: Dict[str, list] = {
        k: [] for k in ("obs", "action", "reward", "next_obs", "terminated", "truncated", "terms")
    }
    names: List[str] = []
    ret = 0.0
    while True:
        a = int(choose(obs))
        nxt, r, te, tr, info = env.step(a)
        if max_steps is not None and len(rows["obs"]) + 1 >= max_steps:
            tr = True
        for k, v in (
            ("obs", obs),
            ("action", a),
            ("reward", r),
            ("next_obs", nxt),
            ("terminated", te),
            ("truncated", tr),
            ("terms", info["terms"]._data.copy()),
        ):
            rows[k].append(v)
        names = info["terms"].names()
        ret += r
        obs = nxt
        if te or tr:
            break
    n = len(rows["obs"])
    rep = Replay(
        np.stack(rows["obs"]).astype(np.float32),
        np.asarray(rows["action"], np.int64),
        np.asarray(rows["reward"], np.float64),
        np.stack(rows["next_obs"]).astype(np.float32),
        np.asarray(rows["terminated"], bool),
        np.asarray(rows["truncated"], bool),
        np.full(n, episode, np.int32),
        np.stack(rows["terms"]).astype(np.float64),
        list(names),
    )
    return rep, ret


# --- learning (§V-A) ----------------------------------------------------------------------


class Learner:
    """Main and target Q-networks, Adam, and the TD update of Algorithms 1-2 (lines 14-20)."""

    def __init__(self, args: Args, layout: ObsLayout) -> None:
        torch = _torch()
        self.torch = torch
        self.args = args
        self.layout = layout
        self.q = build_qnetwork(args.lstm1_units, args.lstm2_units, args.core_units)
        self.q_target = copy.deepcopy(self.q)  # θ' ← θ
        for p in self.q_target.parameters():
            p.requires_grad_(False)
        self.opt = torch.optim.Adam(self.q.parameters(), lr=args.learning_rate)
        self.updates = 0

    def _inputs(self, obs: np.ndarray):
        sub, conn, mask = split_obs(obs, self.layout)
        t = self.torch.from_numpy
        return t(sub), t(conn), t(mask)

    def update(self, replay: Replay, rng: np.random.Generator) -> Tuple[float, float]:
        """One minibatch of H transitions; returns (loss, mean Q)."""
        torch = self.torch
        idx = rng.integers(0, len(replay), self.args.batch_size)
        r = torch.from_numpy(replay.reward[idx].astype(np.float32))
        ended = torch.from_numpy(replay.terminated[idx].astype(np.float32))
        a = torch.from_numpy(replay.action[idx]).long()
        with torch.no_grad():
            q_next = self.q_target(*self._inputs(replay.next_obs[idx])).max(dim=1).values
            y = r + self.args.gamma * (1.0 - ended) * q_next  # y = r when the flow ended
        q = self.q(*self._inputs(replay.obs[idx])).gather(1, a[:, None])[:, 0]
        loss = torch.mean((y - q) ** 2)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        with torch.no_grad():  # θ' ← τθ + (1 − τ)θ'
            for p, pt in zip(self.q.parameters(), self.q_target.parameters()):
                pt.mul_(1.0 - self.args.tau).add_(p, alpha=self.args.tau)
        self.updates += 1
        return float(loss.detach()), float(q.detach().mean())

    def tensors(self) -> Dict[str, np.ndarray]:
        return {k: v.detach().cpu().numpy() for k, v in self.q.state_dict().items()}

    def load(self, state: Dict[str, Any]) -> None:
        """Main and target networks from trained weights (θ' ← θ)."""
        self.q.load_state_dict(state)
        self.q_target.load_state_dict(state)


def checkpoint_meta(args: Args, variant: str, extra: Dict[str, Any]) -> Dict[str, Any]:
    return {
        "algorithm": "edar",
        "variant": variant,
        "paper": "edar.txt (Han et al., IEEE TWC 2023)",
        "net": {
            "lstm1_units": args.lstm1_units,
            "lstm2_units": args.lstm2_units,
            "core_units": list(args.core_units),
            "n_actions": 2,
            "history": args.k + 1,
            "subflow_inputs": list(SUBFLOW_INPUTS),
            "conn_inputs": list(CONN_INPUTS),
        },
        "obs": {
            "interval": "min-rtt",
            "max_paths": args.max_paths,
            "subflow_features": list(SUBFLOW_FEATURES),
            "conn_features": list(CONN_FEATURES),
        },
        "train": dict(
            {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(args).items()},
            **extra,
            **provenance(args.scenario),
        ),
    }


def provenance(scenarios: Sequence[str]) -> Dict[str, Any]:
    """What a retraining must match to give the same weights besides the arguments: the
    scenario files' bytes and the package's version (a later model change alters the
    transitions: docs/edar.md, "Why retraining does not reproduce the shipped EdAR-p")."""
    from .. import __version__

    hashes = [
        hashlib.sha256(Path(p).read_bytes()).hexdigest() if Path(p).is_file() else None
        for p in scenarios
    ]
    return {"scenario_sha256": hashes, "mpsched_version": __version__}


def collect(args: Args, envs: List[Any], writer: Any, rng: np.random.Generator) -> Replay:
    """Algorithm 1, data collection: each flow runs μ(s) = normal or μ(s) = redundant."""
    parts = []
    for ep in range(args.offline_episodes):
        mu = int(rng.integers(0, 2))
        env = envs[ep % len(envs)]
        rep, ret = run_episode(env, args.seed * 100_003 + ep, lambda o, m=mu: m, ep)
        parts.append(rep)
        writer.add_scalar("charts/episodic_return", ret, ep)
        writer.add_scalar("charts/offline_policy", mu, ep)
    return Replay.concat(parts)


def offline_learning(
    learner: Learner, replay: Replay, args: Args, writer: Any, rng: np.random.Generator
) -> None:
    """Algorithm 1, lines 10-21: M minibatch updates on the collected transitions."""
    start = time.perf_counter()
    for it in range(args.offline_iterations):
        loss, qm = learner.update(replay, rng)
        if it % 50 == 0 or it == args.offline_iterations - 1:
            writer.add_scalar("losses/td_loss", loss, learner.updates)
            writer.add_scalar("losses/q_values", qm, learner.updates)
            writer.add_scalar(
                "charts/SPS", (it + 1) / max(time.perf_counter() - start, 1e-9), learner.updates
            )


def online_learning(
    learner: Learner,
    envs: List[Any],
    args: Args,
    writer: Any,
    rng: np.random.Generator,
    first_episode: int,
) -> Tuple[int, int]:
    """Algorithm 2: per flow, an ε-greedy actor with the scheduler's weights, then M learner
    updates on the replay buffer, then the weights are synchronized to the scheduler.
    Returns (environment steps, flows)."""
    torch = learner.torch
    actor = EdarPolicy(copy.deepcopy(learner.q), {"net": {"history": args.k + 1}})
    replay: Optional[Replay] = None  # l. 1: an empty replay buffer
    steps, flows = 0, 0
    start = time.perf_counter()
    layout = learner.layout
    while steps < args.steps:
        env = envs[flows % len(envs)]

        def choose(obs: np.ndarray) -> int:
            if rng.random() < args.epsilon:  # l. 6-7
                return int(rng.integers(0, 2))
            return int(actor.act(obs, layout))  # l. 9

        ep = first_episode + flows
        rep, ret = run_episode(
            env, args.seed * 100_003 + ep, choose, ep, max_steps=args.steps - steps
        )
        steps += len(rep)
        flows += 1
        replay = (
            rep if replay is None else Replay.concat([replay, rep]).tail(args.buffer_size)
        )  # l. 12
        writer.add_scalar("charts/episodic_return", ret, ep)
        writer.add_scalar("charts/episodic_length", len(rep), ep)
        writer.add_scalar("charts/redundant_share", float(rep.action.mean()), ep)
        for _ in range(args.online_iterations):  # l. 13-20
            loss, qm = learner.update(replay, rng)
        writer.add_scalar("losses/td_loss", loss, learner.updates)
        writer.add_scalar("losses/q_values", qm, learner.updates)
        writer.add_scalar("charts/SPS", steps / max(time.perf_counter() - start, 1e-9), steps)
        actor.qnet.load_state_dict(learner.q.state_dict())  # l. 21: synchronize θ to the scheduler
    del torch
    return steps, flows


def _online(
    learner: Learner,
    envs: List[Any],
    args: Args,
    writer: Any,
    rng: np.random.Generator,
    first_episode: int,
    extra: Dict[str, Any],
    tmp: Path,
    out: Path,
    written: Dict[str, Path],
    log: Any,
) -> None:
    """Online learning, then the EdAR-o checkpoint."""
    t0 = time.perf_counter()
    steps, flows = online_learning(learner, envs, args, writer, rng, first_episode)
    online_s = time.perf_counter() - t0
    log(
        f"online learning: {steps} steps in {flows} flows, {learner.updates} updates in all ({online_s:.1f} s)"
    )
    save_checkpoint(
        tmp / "edar-o",
        learner.tensors(),
        checkpoint_meta(
            args,
            "edar-o",
            {
                **extra,
                "online_steps": steps,
                "online_flows": flows,
                "updates": learner.updates,
                "online_s": round(online_s, 2),
            },
        ),
    )
    written["edar-o"] = out / "edar-o.json"


def _load_init(args: Args, layout: ObsLayout) -> Optional[EdarPolicy]:
    """``--init``'s checkpoint (online learning only), checked against ``layout`` and the other
    options, or None without ``--init``."""
    if args.init is None:
        return None
    init = EdarPolicy.load(args.init)
    init.check_layout(layout)
    if args.steps <= 0:
        raise DataError("--init: online learning needs --steps > 0")
    if args.offline_data:
        raise DataError(
            "--init: starts from a trained checkpoint and learns online only; --offline-data does not apply"
        )
    return init


def _offline_replay(
    args: Args,
    layout: ObsLayout,
    data: List[Replay],
    envs: List[Any],
    writer: Any,
    rng: np.random.Generator,
    tmp: Path,
    written: Dict[str, Path],
    log: Any,
) -> Replay:
    """The offline data (§VI-A): the ``--offline-data`` files, or trajectories of the fixed
    policies collected now and written as ``offline.parquet``; rewards recomputed with EdAR's."""
    out = Path(args.out)
    if data:
        replay = Replay.concat(data)
        log(f"offline data: {len(replay)} transitions from {len(data)} file(s)")
    else:
        t0 = time.perf_counter()
        replay = collect(args, envs, writer, rng)
        write_transitions(
            replay,
            tmp / "offline.parquet",
            {
                "scenario": ",".join(args.scenario),
                "policy": "always-normal|always-redundant",
                "episodes": args.offline_episodes,
                "seed": args.seed,
                "action": "mode",
                "reward": "edar",
                "interval": "min-rtt",
                "history": layout.history,
                "max_paths": layout.max_paths,
                "duration_s": args.duration_s,
                "features": feature_names(layout),
            },
        )
        written["offline"] = out / "offline.parquet"
        log(
            f"collected {len(replay)} transitions in {args.offline_episodes} flows ({time.perf_counter() - t0:.1f} s)"
        )
    if replay.term_names:
        replay = replay.relabel(args.alpha, args.beta)
    if len(replay) == 0:
        raise DataError("offline data: no transitions")
    return replay


def _edar_p(
    args: Args,
    layout: ObsLayout,
    replay: Replay,
    writer: Any,
    rng: np.random.Generator,
    tmp: Path,
    written: Dict[str, Path],
    log: Any,
) -> Learner:
    """Offline learning (Algorithm 1) from ``replay``: writes EdAR-p; returns its learner (EdAR-o
    learns on from it)."""
    out = Path(args.out)
    learner = Learner(args, layout)
    t0 = time.perf_counter()
    offline_learning(learner, replay, args, writer, rng)
    offline_s = time.perf_counter() - t0
    log(f"offline learning: {args.offline_iterations} updates ({offline_s:.1f} s)")
    save_checkpoint(
        tmp / "edar-p",
        learner.tensors(),
        checkpoint_meta(
            args,
            "edar-p",
            {
                "offline_transitions": len(replay),
                "updates": learner.updates,
                "offline_s": round(offline_s, 2),
            },
        ),
    )
    written["edar-p"] = out / "edar-p.json"
    return learner


def train(args: Args, log: Any = print) -> Dict[str, Path]:
    """Offline learning (EdAR-p), then online learning (EdAR-o) if ``args.steps`` > 0.

    Writes ``edar-p.{json,safetensors}``, ``edar-o.*``, ``offline.parquet`` (when collected) and
    TensorBoard logs under ``runs/`` into ``args.out``, all at once: a failed run leaves no
    output directory behind. Returns the written checkpoint paths.
    """
    torch = _torch()
    from torch.utils.tensorboard import SummaryWriter

    from .._atomic import atomic_directory

    torch.manual_seed(args.seed)
    torch.set_num_threads(max(1, args.torch_threads))
    rng = np.random.default_rng(args.seed)
    layout = ObsLayout(args.max_paths, args.k + 1)
    # Data first: bad offline data fails before anything is written.
    data = [read_transitions(Path(p), layout) for p in args.offline_data]
    init = _load_init(args, layout)
    envs = [make_env(s, args) for s in args.scenario]
    written: Dict[str, Path] = {}
    out = Path(args.out)
    started = time.perf_counter()
    with atomic_directory(out) as tmp:
        writer = SummaryWriter(str(tmp / "runs"))
        writer.add_text("args", json.dumps(asdict(args), default=str))
        if init is not None:
            learner = Learner(args, layout)
            learner.load(init.qnet.state_dict())
            log(f"starting from {args.init}: online learning only")
            _online(
                learner,
                envs,
                args,
                writer,
                rng,
                0,
                {"init": str(args.init)},
                tmp,
                out,
                written,
                log,
            )
            writer.add_scalar("charts/train_s", time.perf_counter() - started, learner.updates)
            writer.close()
            return written
        replay = _offline_replay(args, layout, data, envs, writer, rng, tmp, written, log)
        learner = _edar_p(args, layout, replay, writer, rng, tmp, written, log)
        if args.steps > 0:
            _online(
                learner,
                envs,
                args,
                writer,
                rng,
                args.offline_episodes,
                {"offline_transitions": len(replay)},
                tmp,
                out,
                written,
                log,
            )
        writer.add_scalar("charts/train_s", time.perf_counter() - started, learner.updates)
        writer.close()
    return written
