"""DRL-CC: one DDPG agent with an LSTM representation network controls the congestion windows
of every MPTCP flow of a host (Xu et al., "Experience-driven Congestion Control: When
Multi-Path TCP Meets Deep Reinforcement Learning"; /work/shared/papers/drl-cc.txt), in
CleanRL's one-file layout (github.com/vwxyzjn/cleanrl, ddpg_continuous_action.py).

What the paper specifies, and where it lives here:

- **Environment** (§III-A): ``mpsched/Host-v0`` with ``action="cwnd"``, ``target="rotate"``:
  every epoch one *target* MPTCP flow (the querying flow) gets a window change per subflow;
  TCP flows are observed only. Reward ``r_t = Σ_i log g_t^i`` over the active flows
  (:func:`mpsched.rewards.drl_cc`).
- **State** (§III-A): per subflow, b = sending rate, g = goodput, d = average RTT,
  v = RTT mean deviation, w = cwnd (:data:`STATE_FEATURES`: the env's subflow features
  ``throughput``, ``goodput``, ``srtt``, ``rttvar``, ``cwnd``, all computed by the sender),
  one vector per flow over its subflow slots; e_t = the target flow's vector.
- **Representation network R** (§III-B, Fig. 2): a single-layer LSTM reads the running
  flows' vectors one per step, in slot order; its last hidden state is h_t.
- **Actor π, critic Q** (§III-C): ``[h_t, e_t]`` → 128 → 128 (ReLU) → tanh per subflow of
  the target flow (π), or ``[h_t, e_t, a_t]`` → 128 → 128 (ReLU) → one linear unit (Q).
- **Learning** (Algorithm 1): replay buffer, mini-batches of H, y = r + γ Q'(e', h', π'(e', h'))
  with target networks R', π', Q' soft-updated by τ (line 21); Adam, lr 1e-4 (π) and 1e-3
  (Q), γ = 0.90, τ = 0.001; Ornstein-Uhlenbeck exploration (line 8, as DDPG [18]).
- **End to end** (§III-B, eq. 5, lines 15-19): R is trained by the critic's loss (through Q's
  input h) and by the policy gradient (through π's input h: ∇_a Q · ∇_h π · ∇_θR R).

What the paper leaves open is chosen and documented in :class:`Args` (drl_cc_args.py).

The trained policy is exported as a policy file (algorithm ``"drl_cc"``, the contract in
/work/notes/drl-cc-format.md, read in Rust by crates/mpsched-policy); :func:`reference_act`
is that contract's forward pass in plain numpy.
"""

from __future__ import annotations

import copy
import hashlib
import json
import shlex
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np
import torch
from torch import nn

from ..envs import (
    FLOW_FEATURES,
    SENDER_FEATURES,
    SUBFLOW_FEATURES,
    HostEnv,
    HostLayout,
    HostVectorEnv,
)
from ..results import Results
from .checkpoint import CheckpointError, get_field, load_checkpoint, save_checkpoint
from .drl_cc_args import Args, resolve_scenario

__all__ = [
    "Args",
    "STATE_FEATURES",
    "DrlCcNet",
    "DrlCcPolicy",
    "TrainResult",
    "state_select",
    "split_obs",
    "train",
    "evaluate",
    "reference_act",
    "load_policy",
]

#: The per-subflow state of §III-A: b sending rate, g goodput, d average RTT, v RTT mean
#: deviation, w congestion window (env subflow features; docs/envs.md).
STATE_FEATURES = ("throughput", "goodput", "srtt", "rttvar", "cwnd")
#: Flow feature marking the target (querying) flow of an epoch (§III-A, "target flow").
TARGET = FLOW_FEATURES.index("target")
ALGORITHM = "drl_cc"
POLICY_NAME = "drl-cc"


# --- observations (§III-A) ----------------------------------------------------------------


def state_select(layout: HostLayout) -> List[int]:
    """Offsets within one flow slot of a host frame of the agent's inputs: for every subflow
    slot i, b, g, d, v, w (the contract's ``net.select``)."""
    off = layout.offsets
    sub = [SUBFLOW_FEATURES.index(n) for n in STATE_FEATURES]
    return [
        off["flow_len"] + i * off["subflow_stride"] + k
        for i in range(layout.max_subflows)
        for k in sub
    ]


def split_obs(
    obs: np.ndarray, layout: HostLayout, select: Sequence[int]
) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Host observations ``[B, D]`` → per-flow states ``[B, max_flows, len(select)]`` of the
    newest frame (every slot; the mask says which ones the LSTM reads), the flow mask
    ``[B, max_flows]`` (1 = running) and the target slot ``[B]`` (the first slot with
    ``target`` = 1, -1 when there is none)."""
    frame = layout.frames(obs)[..., -1, :, :]  # [B, max_flows, flow_stride]
    mask = layout.flow_mask(obs) > 0.5
    seq = np.ascontiguousarray(frame[..., list(select)], dtype=np.float32)
    is_target = frame[..., TARGET] > 0.5
    target = np.where(is_target.any(-1), is_target.argmax(-1), -1).astype(np.int64)
    return seq, mask, target


# --- networks (§III-B, §III-C) ------------------------------------------------------------


def mlp(
    n_in: int, hidden: Sequence[int], n_out: int, activation: Callable[[], nn.Module] = nn.ReLU
) -> nn.Sequential:
    """Linear layers with ``activation`` (ReLU) between them (indices 0, 2, 4: the contract's
    layer names)."""
    layers: List[nn.Module] = []
    for h in hidden:
        layers += [nn.Linear(n_in, h), activation()]
        n_in = h
    layers.append(nn.Linear(n_in, n_out))
    return nn.Sequential(*layers)


class DrlCcNet(nn.Module):
    """Representation network R (``repr``), actor π (``actor``) and critic Q (``critic``)
    with the frozen observation normalisation (``obs_mean``, ``obs_std``).

    Parameter names are the policy file's tensor names (``repr.weight_ih_l0``,
    ``actor.0.weight``, ...).
    """

    def __init__(
        self, n_in: int, n_actions: int, lstm_hidden: int, hidden: Sequence[int], clip: float
    ) -> None:
        super().__init__()
        self.clip = clip
        self.register_buffer("obs_mean", torch.zeros(n_in))
        self.register_buffer("obs_std", torch.ones(n_in))
        # §III-C: "the representation network is a single-layer LSTM unit".
        self.repr = nn.LSTM(n_in, lstm_hidden, batch_first=True)
        # §III-C: 2 hidden layers × 128, ReLU; tanh output (π), one linear output (Q).
        self.actor = mlp(lstm_hidden + n_in, hidden, n_actions)
        # The action enters Q at its input layer (not stated; chosen).
        self.critic = mlp(lstm_hidden + n_in + n_actions, hidden, 1)

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        """``clip((x − mean) / std, −clip, clip)`` (the contract's ``net.normalize``)."""
        return torch.clamp((x - self.obs_mean) / self.obs_std, -self.clip, self.clip)

    def state(self, seq: torch.Tensor, mask: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """``[h_t, e_t]`` (§III-C): R's last hidden state over the running flows, in slot
        order, and the target flow's normalised state (zeros without a target)."""
        x = self.normalize(seq)
        b, n = mask.shape
        rows = torch.arange(b)
        # Running slots first, in slot order (a stable sort); the LSTM's output after the
        # last running flow is h_t: padding after it changes nothing (§III-B, Fig. 2).
        order = torch.argsort((~mask).to(torch.int8), dim=1, stable=True)
        xs = torch.gather(x, 1, order[..., None].expand(-1, -1, x.shape[-1]))
        lengths = mask.sum(1)
        out, _ = self.repr(xs)
        h = out[rows, (lengths - 1).clamp(min=0)] * (lengths > 0)[:, None]
        e = x[rows, target.clamp(min=0)] * (target >= 0)[:, None]
        return torch.cat([h, e], dim=-1)

    def act(self, z: torch.Tensor) -> torch.Tensor:
        """π(e, h) ∈ [-1, 1] per subflow of the target flow."""
        return torch.tanh(self.actor(z))

    def q(self, z: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        """Q(e, h, a)."""
        return self.critic(torch.cat([z, a], dim=-1))[:, 0]


def make_net(args: Args, n_in: int) -> DrlCcNet:
    """R, π and Q with the sizes of ``args`` for ``n_in`` inputs per flow."""
    return DrlCcNet(n_in, args.max_subflows, args.lstm_hidden, args.hidden_units, args.obs_clip)


def policy_tensors(net: DrlCcNet) -> Dict[str, np.ndarray]:
    """The tensors of the policy file: normalisation, R and π (the critic stays behind)."""
    return {
        k: v.detach().cpu().numpy().copy()
        for k, v in net.state_dict().items()
        if not k.startswith("critic.")
    }


# --- replay buffer (Algorithm 1, lines 3, 10, 12) -----------------------------------------


class ReplayBuffer:
    """Transitions ``(s_t, e_t, a_t, r_t, s_{t+1}, e_{t+1})`` as fixed-shape arrays: the running
    flows' raw states padded to ``max_flows`` with their mask, the target slot, the action,
    the reward and whether the episode terminated. A full buffer overwrites its oldest."""

    def __init__(self, capacity: int, n_flows: int, n_in: int, n_actions: int) -> None:
        self.capacity, self.size, self.pos = capacity, 0, 0
        self.seq = np.zeros((2, capacity, n_flows, n_in), np.float32)  # [s_t, s_{t+1}]
        self.mask = np.zeros((2, capacity, n_flows), bool)
        self.target = np.zeros((2, capacity), np.int64)
        self.action = np.zeros((capacity, n_actions), np.float32)
        self.reward = np.zeros(capacity, np.float32)
        self.terminated = np.zeros(capacity, np.float32)

    def add(self, now: Tuple, action: np.ndarray, reward: np.ndarray, nxt: Tuple, term) -> None:
        """Stores a batch of transitions (``now``/``nxt``: :func:`split_obs` outputs)."""
        for i in range(len(reward)):
            p = self.pos
            for k, (seq, mask, target) in enumerate((now, nxt)):
                self.seq[k, p], self.mask[k, p], self.target[k, p] = seq[i], mask[i], target[i]
            self.action[p], self.reward[p], self.terminated[p] = action[i], reward[i], term[i]
            self.pos = (p + 1) % self.capacity
            self.size = min(self.size + 1, self.capacity)

    def sample(self, rng: np.random.Generator, n: int) -> Dict[str, torch.Tensor]:
        """A mini-batch of ``n`` transitions drawn uniformly with replacement (line 12)."""
        idx = rng.integers(0, self.size, n)
        t = torch.from_numpy
        return {
            "seq": t(self.seq[0, idx]),
            "mask": t(self.mask[0, idx]),
            "target": t(self.target[0, idx]),
            "action": t(self.action[idx]),
            "reward": t(self.reward[idx]),
            "next_seq": t(self.seq[1, idx]),
            "next_mask": t(self.mask[1, idx]),
            "next_target": t(self.target[1, idx]),
            "terminated": t(self.terminated[idx]),
        }

    def stats(self) -> Tuple[np.ndarray, np.ndarray]:
        """Mean and std of the stored states of running flows (the warm-up's, §"observation
        normalisation" in docs/drl-cc.md); a constant feature gets std 1."""
        x = self.seq[0, : self.size][self.mask[0, : self.size]]
        if len(x) == 0:
            return np.zeros(self.seq.shape[-1], np.float32), np.ones(self.seq.shape[-1], np.float32)
        std = x.std(0)
        return x.mean(0).astype(np.float32), np.where(std > 1e-6, std, 1.0).astype(np.float32)


# --- exploration (Algorithm 1, lines 4 and 8) ---------------------------------------------


class OUNoise:
    """Ornstein-Uhlenbeck process per env, ``dx = θ(0 − x) + σ·N(0, 1)`` per epoch (dt = 1),
    as DDPG [18] (§7: θ = 0.15, σ = 0.2), restarted at 0 every episode."""

    def __init__(self, shape: Tuple[int, int], theta: float, sigma: float, rng) -> None:
        self.theta, self.sigma, self.rng = theta, sigma, rng
        self.x = np.zeros(shape, np.float32)

    def sample(self) -> np.ndarray:
        """The next noise value of every env, ``[num_envs, n_actions]``."""
        dx = -self.theta * self.x + self.sigma * self.rng.standard_normal(self.x.shape)
        self.x = (self.x + dx).astype(np.float32)
        return self.x

    def reset(self, rows: np.ndarray) -> None:
        """Restarts the process of the envs in ``rows`` (a new episode)."""
        self.x[rows] = 0.0


# --- learning (Algorithm 1, lines 12-21) --------------------------------------------------


class Learner:
    """θ^R, θ^π, θ^Q and their targets, the two Adam optimizers, and one update."""

    def __init__(self, args: Args, n_in: int) -> None:
        self.args = args
        self.net = make_net(args, n_in)  # l. 1
        self.target = copy.deepcopy(self.net)  # l. 2: θ' := θ
        for p in self.target.parameters():
            p.requires_grad_(False)
        r = list(self.net.repr.parameters())
        # §III-C: Adam at 1e-3 (critic) and 1e-4 (actor); R is trained by both (end to end).
        self.critic_params = list(self.net.critic.parameters()) + r
        self.actor_params = list(self.net.actor.parameters()) + r
        # (fused: one kernel per step, 3× faster than the default on these small tensors)
        self.critic_opt = torch.optim.Adam(self.critic_params, lr=args.critic_lr, fused=True)
        self.actor_opt = torch.optim.Adam(self.actor_params, lr=args.actor_lr, fused=True)
        self._pairs = (list(self.target.parameters()), list(self.net.parameters()))
        self.updates = 0

    def set_normalization(self, mean: np.ndarray, std: np.ndarray) -> None:
        """Freezes the observation normalisation (in the networks and their targets)."""
        for net in (self.net, self.target):
            net.obs_mean.copy_(torch.from_numpy(mean))
            net.obs_std.copy_(torch.from_numpy(std))

    def update(self, b: Dict[str, torch.Tensor]) -> Tuple[float, float, float]:
        """One mini-batch (lines 13-21); returns (critic loss, actor loss, mean Q)."""
        a = self.args
        with torch.no_grad():  # l. 13-14: y = r + γ Q'(e', h', π'(e', h')), h' = R'(s')
            z2 = self.target.state(b["next_seq"], b["next_mask"], b["next_target"])
            q2 = self.target.q(z2, self.target.act(z2))
            y = b["reward"] + a.gamma * (1.0 - b["terminated"]) * q2
        z = self.net.state(b["seq"], b["mask"], b["target"])
        q = self.net.q(z, b["action"])
        critic_loss = torch.mean((y - q) ** 2)  # l. 15
        self.critic_opt.zero_grad()
        critic_loss.backward(inputs=self.critic_params)
        self.critic_opt.step()
        # l. 16-19: the policy gradient ∇_a Q · ∇_θπ π and, through π's input h, ∇_θR R.
        z = self.net.state(b["seq"], b["mask"], b["target"])
        actor_loss = -self.net.q(z.detach(), self.net.act(z)).mean()
        self.actor_opt.zero_grad()
        actor_loss.backward(inputs=self.actor_params)
        self.actor_opt.step()
        with torch.no_grad():  # l. 21: θ' := τθ + (1 − τ)θ'
            torch._foreach_lerp_(*self._pairs, a.tau)
        self.updates += 1
        return float(critic_loss.detach()), float(actor_loss.detach()), float(q.detach().mean())


# --- policy file (/work/notes/drl-cc-format.md) -------------------------------------------


def _sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def policy_meta(args: Args, layout: HostLayout, train_info: Mapping[str, Any]) -> Dict[str, Any]:
    """The policy file's description: ``net`` (the forward pass), ``obs`` (what the runtime
    observes and how it acts) and ``train`` (provenance)."""
    return {
        "algorithm": ALGORITHM,
        "variant": POLICY_NAME,
        "paper": "drl-cc.txt (Xu et al., IEEE JSAC 2019)",
        "net": {
            "select": state_select(layout),
            "normalize": {"mean": "obs_mean", "std": "obs_std", "clip": float(args.obs_clip)},
            "lstm": {
                "hidden": args.lstm_hidden,
                "weight_ih": "repr.weight_ih_l0",
                "weight_hh": "repr.weight_hh_l0",
                "bias_ih": "repr.bias_ih_l0",
                "bias_hh": "repr.bias_hh_l0",
            },
            "actor": [f"actor.{2 * i}" for i in range(len(args.hidden_units) + 1)],
        },
        "obs": {
            "env": "host",
            "action": "cwnd",
            "target": "rotate",
            "interval": float(args.interval_ms),
            "max_flows": layout.max_flows,
            "max_subflows": layout.max_subflows,
            "history": layout.history,
            "cwnd_step": float(args.cwnd_step),
            "sender_only": True,
            "features": {"flow": list(FLOW_FEATURES), "subflow": list(SUBFLOW_FEATURES)},
        },
        "train": dict(train_info),
    }


def expected_shapes(desc: Dict[str, Any], where: Path) -> Dict[str, List[int]]:
    """Every tensor's shape for the network a description declares; checks the contract's
    fields (features of this build, sender-side inputs, the actor's layer chain)."""
    obs = get_field(desc, "obs", dict, where)
    for key, want in (("env", "host"), ("action", "cwnd"), ("target", "rotate")):
        if obs.get(key) != want:
            raise CheckpointError(
                f"{where}: field 'obs.{key}': expected {want!r}, got {obs.get(key)!r}"
            )
    feats = get_field(desc, "obs.features", dict, where)
    if feats.get("flow") != list(FLOW_FEATURES) or feats.get("subflow") != list(SUBFLOW_FEATURES):
        raise CheckpointError(f"{where}: field 'obs.features': differs from this build's features")
    mf = get_field(desc, "obs.max_flows", int, where)
    ms = get_field(desc, "obs.max_subflows", int, where)
    if not (1 <= mf <= 64 and 1 <= ms <= 8):
        raise CheckpointError(f"{where}: field 'obs.max_flows'/'obs.max_subflows': out of range")
    layout = HostLayout(mf, ms, 1)
    select = get_field(desc, "net.select", list, where)
    names = _flow_slot_names(layout)
    for k in select:
        if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k < len(names):
            raise CheckpointError(f"{where}: field 'net.select': bad offset {k!r}")
        group, name = names[k]
        if name not in SENDER_FEATURES[group]:
            raise CheckpointError(
                f"{where}: field 'net.select': {name!r} is not seen by the sender"
            )
    n, hid = len(select), get_field(desc, "net.lstm.hidden", int, where)
    if n == 0 or hid <= 0:
        raise CheckpointError(f"{where}: field 'net.select'/'net.lstm.hidden': empty network")
    norm = get_field(desc, "net.normalize", dict, where)
    clip = norm.get("clip")
    if isinstance(clip, bool) or not isinstance(clip, (int, float)) or not clip > 0:
        raise CheckpointError(f"{where}: field 'net.normalize.clip': expected a number > 0")
    shapes = {str(norm.get("mean")): [n], str(norm.get("std")): [n]}
    lstm = get_field(desc, "net.lstm", dict, where)
    for key, shape in (("weight_ih", [4 * hid, n]), ("weight_hh", [4 * hid, hid])):
        shapes[str(lstm.get(key))] = shape
    for key in ("bias_ih", "bias_hh"):
        shapes[str(lstm.get(key))] = [4 * hid]
    declared = get_field(desc, "tensors", dict, where)
    n_in = hid + n
    layers = get_field(desc, "net.actor", list, where)
    if not layers:
        raise CheckpointError(f"{where}: field 'net.actor': expected at least one layer")
    for i, name in enumerate(layers):
        w = declared.get(f"{name}.weight")
        n_out = ms if i == len(layers) - 1 else (w[0] if isinstance(w, list) and w else 0)
        if not isinstance(n_out, int) or n_out <= 0:
            raise CheckpointError(f"{where}: field 'tensors.{name}.weight': missing or empty")
        shapes[f"{name}.weight"], shapes[f"{name}.bias"] = [n_out, n_in], [n_out]
        n_in = n_out
    return shapes


def _flow_slot_names(layout: HostLayout) -> List[Tuple[str, str]]:
    """(group, feature) of every offset of a flow slot."""
    out = [("flow", n) for n in FLOW_FEATURES]
    for _ in range(layout.max_subflows):
        out += [("subflow", n) for n in SUBFLOW_FEATURES]
    return out


def load_policy(path: Any) -> Tuple[Dict[str, Any], Dict[str, np.ndarray]]:
    """Reads and checks a DRL-CC policy file; returns (description, tensors)."""
    desc, tensors, _, st = load_checkpoint(path, ALGORITHM, expected_shapes)
    std = desc["net"]["normalize"]["std"]
    if not np.all(tensors[std] > 0):
        raise CheckpointError(f"{st}: tensor {std!r}: expected every std > 0")
    return desc, tensors


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def reference_act(
    desc: Mapping[str, Any], tensors: Mapping[str, np.ndarray], obs: np.ndarray, layout: HostLayout
) -> Optional[np.ndarray]:
    """The contract's forward pass for one host observation, in plain numpy (float64): the
    action of the target flow's subflows, or ``None`` without a target. The Rust runtime is
    tested against this."""
    net = desc["net"]
    sel = np.asarray(net["select"])
    norm, lstm = net["normalize"], net["lstm"]
    mean, std = tensors[norm["mean"]].astype(np.float64), tensors[norm["std"]].astype(np.float64)
    w_ih, w_hh = (tensors[lstm[k]].astype(np.float64) for k in ("weight_ih", "weight_hh"))
    bias = tensors[lstm["bias_ih"]].astype(np.float64) + tensors[lstm["bias_hh"]]
    frame = layout.frames(obs)[-1]  # the newest frame: [max_flows, flow_stride]
    running = layout.flow_mask(obs) == 1.0
    x = np.clip((frame[:, sel] - mean) / std, -norm["clip"], norm["clip"])
    hid = int(lstm["hidden"])
    h, c = np.zeros(hid), np.zeros(hid)
    for j in range(layout.max_flows):  # step 1: running slots in increasing order
        if not running[j]:
            continue
        g = w_ih @ x[j] + w_hh @ h + bias
        i, f, gg, o = np.split(g, 4)  # PyTorch's gate order
        c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(gg)
        h = _sigmoid(o) * np.tanh(c)
    targets = np.flatnonzero(frame[:, TARGET] == 1.0)  # step 2
    if len(targets) == 0:
        return None
    z = np.concatenate([h, x[targets[0]]])  # step 3
    layers = net["actor"]
    for k, name in enumerate(layers):
        z = tensors[f"{name}.weight"].astype(np.float64) @ z + tensors[f"{name}.bias"]
        z = np.maximum(z, 0.0) if k < len(layers) - 1 else np.tanh(z)
    return z


# --- inference and evaluation -------------------------------------------------------------


class DrlCcPolicy:
    """A trained actor (R and π) for batched deterministic inference, no exploration noise."""

    def __init__(self, net: DrlCcNet, desc: Dict[str, Any]) -> None:
        self.net = net.eval()
        self.desc = desc
        o = desc["obs"]
        self.layout = HostLayout(o["max_flows"], o["max_subflows"], o["history"])
        self.select = list(desc["net"]["select"])

    @classmethod
    def load(cls, path: Any) -> "DrlCcPolicy":
        """Loads and validates a policy file (CheckpointError with a one-line message)."""
        desc, tensors = load_policy(path)
        n = len(desc["net"]["select"])
        hidden = [int(desc["tensors"][f"{name}.weight"][0]) for name in desc["net"]["actor"][:-1]]
        net = DrlCcNet(
            n, desc["obs"]["max_subflows"], desc["net"]["lstm"]["hidden"], hidden,
            float(desc["net"]["normalize"]["clip"]),
        )  # fmt: skip
        state = {k: torch.from_numpy(v.copy()) for k, v in tensors.items()}
        state.update({k: v for k, v in net.state_dict().items() if k.startswith("critic.")})
        net.load_state_dict(state)
        return cls(net, desc)

    def act(self, obs: np.ndarray) -> np.ndarray:
        """Actions ``[B, max_subflows]`` for observations ``[B, D]`` (or one ``[D]``); rows
        without a target flow get zeros (the env ignores them)."""
        single = obs.ndim == 1
        seq, mask, target = split_obs(obs[None] if single else obs, self.layout, self.select)
        with torch.no_grad():
            z = self.net.state(
                torch.from_numpy(seq), torch.from_numpy(mask), torch.from_numpy(target)
            )
            a = self.net.act(z).numpy() * (target >= 0)[:, None]
        return a[0] if single else a


def evaluate(
    policy: DrlCcPolicy,
    scenario: Any = None,
    seed: int = 1,
    duration_s: Optional[float] = None,
    label: str = POLICY_NAME,
) -> Tuple[Results, float]:
    """Runs one episode of the host env with the actor (no noise) and returns the run's
    Results (the controlled flows labelled ``label``) and the episode's return."""
    o = policy.desc["obs"]
    env = HostEnv(
        scenario, action="cwnd", target="rotate", interval=o["interval"],
        max_flows=o["max_flows"], max_subflows=o["max_subflows"], history=o["history"],
        cwnd_step=o["cwnd_step"], duration_s=duration_s,
    )  # fmt: skip
    obs, _ = env.reset(seed=seed)
    ret, done = 0.0, False
    while not done:
        obs, r, te, tr, _ = env.step(policy.act(obs))
        ret, done = ret + r, te or tr
    return env.results(label=label), ret


# --- training (Algorithm 1) ---------------------------------------------------------------


@dataclass
class TrainResult:
    """What :func:`train` did: the policy file, counts, speed and the last losses."""

    policy: Path
    transitions: int
    updates: int
    episodes: int
    wall_s: float
    transitions_per_s: float
    updates_per_s: float
    critic_loss: float
    actor_loss: float
    episodic_returns: List[float] = field(default_factory=list)
    written: Dict[str, Path] = field(default_factory=dict)


def command_line(args: Args) -> str:
    """The command that repeats this training."""
    a = [
        "mpsched", "train", "drl-cc", "--scenario", args.scenario, "--transitions",
        str(args.total_transitions), "--seed", str(args.seed), "--num-envs", str(args.num_envs),
        "--out", args.out,
    ]  # fmt: skip
    if args.duration_s is not None:
        a += ["--duration", str(args.duration_s)]
    default = Args()
    for name, option in (("interval_ms", "--interval-ms"), ("cwnd_step", "--cwnd-step"),
                         ("max_flows", "--max-flows")):  # fmt: skip
        if getattr(args, name) != getattr(default, name):
            a += [option, str(getattr(args, name))]
    return shlex.join(a)


def make_envs(args: Args, scenario: Path) -> HostVectorEnv:
    """``args.num_envs`` hosts of DRL-CC's env: windows of one target flow per epoch (§III-A),
    reward Σ log goodput (``drl-cc``); one worker thread (results do not depend on it)."""
    return HostVectorEnv(
        scenario, num_envs=args.num_envs, action="cwnd", target="rotate", reward="drl-cc",
        interval=args.interval_ms, max_flows=args.max_flows, max_subflows=args.max_subflows,
        cwnd_step=args.cwnd_step, duration_s=args.duration_s, threads=1,
    )  # fmt: skip


def check_args(args: Args) -> None:
    """One-line ValueError for values training cannot use."""
    for name in ("total_transitions", "num_envs", "buffer_size", "batch_size", "lstm_hidden"):
        if getattr(args, name) < 1:
            raise ValueError(f"{name}: expected a positive integer, got {getattr(args, name)}")
    if args.learning_starts < args.batch_size:
        raise ValueError(
            f"learning_starts: expected at least batch_size = {args.batch_size}, got {args.learning_starts}"
        )


def train(args: Args, log: Callable[[str], Any] = print) -> TrainResult:
    """Algorithm 1 for ``args.total_transitions`` transitions; writes the policy file
    ``drl-cc.{json,safetensors}`` and TensorBoard logs (``runs/``) into ``args.out``, all at
    once (a failed run leaves no output directory)."""
    from torch.utils.tensorboard import SummaryWriter

    from .._atomic import atomic_directory

    check_args(args)
    torch.manual_seed(args.seed)
    torch.set_num_threads(max(1, args.torch_threads))
    rng = np.random.default_rng(args.seed)
    scenario = resolve_scenario(args.scenario)
    envs = make_envs(args, scenario)
    layout = envs.layout
    select = state_select(layout)
    learner = Learner(args, len(select))
    replay = ReplayBuffer(args.buffer_size, layout.max_flows, len(select), args.max_subflows)
    noise = OUNoise((args.num_envs, args.max_subflows), args.ou_theta, args.ou_sigma, rng)
    out = Path(args.out)
    with atomic_directory(out) as tmp:
        writer = SummaryWriter(str(tmp / "runs"))
        writer.add_text("args", json.dumps(asdict(args), default=str))
        stats = _loop(args, envs, learner, replay, noise, rng, writer, log)
        info = {
            "algorithm": "ddpg",
            "scenario": str(args.scenario),
            "scenario_sha256": _sha256_file(scenario),
            "command": command_line(args),
            "seed": args.seed,
            "transitions": stats["transitions"],
            "updates": learner.updates,
            "episodes": stats["episodes"],
            "wall_s": round(stats["wall_s"], 2),
            "args": {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(args).items()},
        }
        save_checkpoint(
            tmp / POLICY_NAME, policy_tensors(learner.net), policy_meta(args, layout, info)
        )
        writer.close()
    w = stats["wall_s"]
    return TrainResult(
        policy=out / f"{POLICY_NAME}.json",
        transitions=stats["transitions"],
        updates=learner.updates,
        episodes=stats["episodes"],
        wall_s=w,
        transitions_per_s=stats["transitions"] / max(w, 1e-9),
        updates_per_s=learner.updates / max(stats["learn_s"], 1e-9),
        critic_loss=stats["critic_loss"],
        actor_loss=stats["actor_loss"],
        episodic_returns=stats["returns"],
        written={"policy": out / f"{POLICY_NAME}.json", "runs": out / "runs"},
    )


def _loop(args, envs, learner, replay, noise, rng, writer, log) -> Dict[str, Any]:
    """Lines 5-22 until ``total_transitions`` transitions are stored."""
    start = time.perf_counter()
    learn_s, n, last_log = 0.0, 0, 0
    losses = (float("nan"),) * 3
    returns: List[float] = []
    ep_ret = np.zeros(args.num_envs)
    layout, select = envs.layout, state_select(envs.layout)
    obs, _ = envs.reset(seed=args.seed)
    while n < args.total_transitions:
        now = split_obs(obs, layout, select)
        if n < args.learning_starts:  # warm-up: uniform random actions
            action = rng.uniform(-1.0, 1.0, (args.num_envs, args.max_subflows)).astype(np.float32)
        else:  # l. 6-8: a_t = π(e_t, R(s_t)) + O_t
            with torch.no_grad():
                z = learner.net.state(*(torch.from_numpy(v) for v in now))
                action = learner.net.act(z).numpy()
            action = np.clip(action + noise.sample(), -1.0, 1.0)
        nxt_obs, reward, term, trunc, _ = envs.step(action)  # l. 9
        nxt = split_obs(nxt_obs, layout, select)
        keep = np.flatnonzero(now[2] >= 0)[: args.total_transitions - n]  # epochs with a target
        rows = lambda t, k=keep: tuple(v[k] for v in t)  # noqa: E731
        replay.add(rows(now), action[keep], reward[keep], rows(nxt), term[keep])  # l. 10
        n_before, n = n, n + len(keep)
        if n_before < args.learning_starts <= n:  # warm-up over: freeze the normalisation
            learner.set_normalization(*replay.stats())
            log(f"warm-up: {n} transitions, observation mean/std frozen")
        if n >= args.learning_starts:
            t0 = time.perf_counter()
            new = n - max(n_before, args.learning_starts)  # transitions past the warm-up
            for _ in range(new * args.updates_per_transition):  # l. 11-21
                losses = learner.update(replay.sample(rng, args.batch_size))
            learn_s += time.perf_counter() - t0
        ep_ret += reward
        ended = np.flatnonzero(term | trunc)
        for i in ended:
            returns.append(float(ep_ret[i]))
            writer.add_scalar("charts/episodic_return", ep_ret[i], n)
        ep_ret[ended] = 0.0
        noise.reset(ended)
        obs = envs.reset_ended() if len(ended) else nxt_obs
        if n - last_log >= args.log_every or n >= args.total_transitions:
            last_log = n
            _log_scalars(writer, n, losses, reward, time.perf_counter() - start, learner)
    log(
        f"trained on {n} transitions, {learner.updates} updates ({time.perf_counter() - start:.1f} s)"
    )
    return {
        "transitions": n,
        "episodes": len(returns),
        "returns": returns,
        "wall_s": time.perf_counter() - start,
        "learn_s": learn_s,
        "critic_loss": losses[0],
        "actor_loss": losses[1],
    }


def _log_scalars(writer, n, losses, reward, elapsed, learner) -> None:
    writer.add_scalar("losses/critic", losses[0], n)
    writer.add_scalar("losses/actor", losses[1], n)
    writer.add_scalar("losses/q_values", losses[2], n)
    writer.add_scalar("charts/reward", float(np.mean(reward)), n)
    writer.add_scalar("charts/SPS", n / max(elapsed, 1e-9), n)
    writer.add_scalar("charts/updates", learner.updates, n)
