"""MPTCP-RL (Dong et al., /work/shared/papers/mptcp-rl.txt): one server-side PPO agent that
outputs one usage probability per path for every flow of the host; each flow's path set is then
chosen by the MPTCP transmission model in probability order (the host env's ``paths`` action:
the flows run ``dmptcp``, minRTT inside the set). Single file, CleanRL style.

The framework ("The MPTCP-RL learning framework", Fig. 1) in two phases:

1. **Offline training** — "The PPO model is first trained offline on the server side by
   collecting the historical information of the traditional MPTCP scheduling algorithm". The
   host runs each traditional scheduler (:data:`~.mptcp_rl_args.BEHAVIOURS`) on its own (the
   env observes only, ``control="none"``); a transition's action is the share of the bytes the
   host sent on each path in the interval, the behaviour's path usage. A deterministic
   scheduler has no action density, so no importance ratio exists for PPO's clipped objective
   (the paper's "Through the importance sampling, offline learning is possible" needs a
   stochastic behaviour): what is learned from them is (a) a behaviour-cloning warm start of
   the actor (cross-entropy between its masked softmax and the usage shares) and (b) the
   critic's value of the behaviours (discounted Monte-Carlo returns), our reading.
2. **Online decision-making, asynchronous** — the exported policy decides in Rust
   (``_core.Policy``, the runtime of ``scheduler = "policy:PATH"``) from a snapshot of the
   weights; its transitions (s, a, r, s') go to the experience pool; every ``sync_s`` of
   scenario time the learner runs PPO on the pool collected since the last reload and the
   decision side reloads the new weights ("after offline training, the parameters of the
   neural network model for online decision-making are synchronously updated"). Reload points
   are scenario times, so a run is deterministic given the seed.

Policy (ours; the paper says "PPO ... can handle continuous action spaces" and uses an action
mask): a Gaussian over per-path logits z ~ N(μ(s), σ), the action is the masked softmax of z
(unusable paths 0: "the dot product of the output action vector ... and this action mask
vector", "Action"); PPO's ratio is taken on z. ε-greedy ("ε is for the ε-greedy algorithm"):
with probability ε, z is drawn from N(0, 2²) instead (a random masked probability vector); its
log-probability is still the policy's (PPO's ratio then slightly misweights those ε samples).
The deployed policy is deterministic: softmax(μ(s)) (export head ``softmax``; the runtime
leaves masking to dmptcp, which never uses an unusable path). Observations are the sender's
(``sender_only``: device energy reads 0, as in the runtime); the reward is ``mptcp-rl``.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from dataclasses import dataclass, field
from itertools import product
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import numpy as np
import torch
import torch.nn as nn

from .. import _core
from ..envs import HostEnv
from ..envs._spec import _load
from ..envs.scheduler import FLOW_FEATURES, SUBFLOW_FEATURES
from ..policies import export
from .mptcp_rl_args import Args

__all__ = ["train", "TrainResult", "collect_offline", "behaviour_scenario"]

#: Normalised inputs are clipped to this (ours).
OBS_CLIP = 10.0
#: Standard deviation of the ε-greedy random logits (ours).
RANDOM_LOGIT_STD = 2.0


@dataclass
class TrainResult:
    """What :func:`train` wrote and how fast it ran."""

    written: Dict[str, Path]
    wall_s: float
    offline_transitions: int
    online_steps: int
    updates: int
    mean_reward: List[float] = field(default_factory=list)
    cpu_s: float = 0.0
    """CPU time of the training process (user + system, :func:`time.process_time`)"""
    load: Tuple[float, float] = (0.0, 0.0)
    """the machine's 1-minute load average at the start and at the end"""


def _env(args: Args, scenario: Any, control: str = "multipath") -> HostEnv:
    return HostEnv(
        scenario, action="paths", control=control, interval=args.interval_ms,
        max_flows=args.max_flows, max_subflows=args.max_subflows, duration_s=args.duration_s,
        sender_only=True,
    )  # fmt: skip


def behaviour_scenario(scenario: Any, scheduler: str) -> Dict[str, Any]:
    """The scenario with every multipath flow and workload scheduled by ``scheduler``."""
    sc, _ = _load(scenario)
    for f in list(sc.get("flows") or []) + list(sc.get("workloads") or []):
        if isinstance(f, dict) and len(f.get("paths", [])) > 1:
            f["scheduler"] = scheduler
    return sc


def _path_share(env: HostEnv, obs: np.ndarray) -> np.ndarray:
    """Share of the bytes the host's flows sent on each path slot in the newest frame."""
    thr = env.layout.subflows(obs)[-1, :, :, SUBFLOW_FEATURES.index("throughput")].sum(axis=0)
    total = thr.sum()
    return thr / total if total > 0 else np.zeros_like(thr)


def _as_controlled(env: HostEnv, obs: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """An observation of the observe-only env as the ``paths`` env shows it (flow feature
    ``target`` = 1 on the running flows, which all are the agent's in MPTCP-RL's all-MPTCP
    scenarios), and its path mask (usable by some running flow)."""
    lay = env.layout
    o = lay.offsets
    obs = obs.copy()
    running = lay.flow_mask(obs)
    base = (lay.history - 1) * o["frame_len"] + FLOW_FEATURES.index("target")
    obs[base + np.arange(lay.max_flows) * o["flow_stride"]] = running
    mask = (lay.subflow_mask(obs) * running[:, None]).max(axis=0)
    return obs, mask


def with_prev_share(env: HostEnv, obs: np.ndarray, share: np.ndarray) -> np.ndarray:
    """``obs`` with subflow feature ``prev_share`` of every running flow set to ``share``
    (one value per path slot) in the newest frame: what the ``paths`` env shows after the
    action ``share`` (it writes the shared action into each controlled flow's path slots)."""
    lay = env.layout
    o = lay.offsets
    obs = obs.copy()
    running = lay.flow_mask(obs)
    k = SUBFLOW_FEATURES.index("prev_share")
    base = (lay.history - 1) * o["frame_len"] + o["flow_len"] + k
    for j in np.flatnonzero(running > 0):
        at = base + j * o["flow_stride"] + np.arange(lay.max_subflows) * o["subflow_stride"]
        obs[at] = share
    return obs


def scenarios(args: Args) -> List[Any]:
    """The training scenarios: ``args.scenario``, then ``args.mix`` (resolved as the command
    line resolves ``--scenario``)."""
    from ..scenario import resolve_default_scenario

    return [args.scenario] + [resolve_default_scenario(s, s) for s in args.mix]


def offline_seed(args: Args, scenario: int, behaviour: int, episode: int) -> int:
    """The env seed of an offline episode: 200 000 + seed + 10 000 · scenario + 1000 ·
    behaviour + episode, far from the reproduction's held-out seeds 1001-1020 (the episode's
    scenario seed is drawn from it, 63 bits)."""
    return 200_000 + args.seed + 10_000 * scenario + 1000 * behaviour + episode


def collect_offline(args: Args) -> Dict[str, np.ndarray]:
    """Transitions of the traditional schedulers (module docs, phase 1): observations (as the
    ``paths`` env shows them, :func:`_as_controlled`, with ``prev_share`` the behaviour's
    path-usage share of the previous interval, :func:`with_prev_share`, as online it is the
    previous action), the path-usage shares of the next interval, masks, rewards and episode
    ends."""
    obs_l, share_l, mask_l, rew_l, done_l = [], [], [], [], []
    for (k, sc), (b, name) in product(enumerate(scenarios(args)), enumerate(args.behaviours)):
        env = _env(args, behaviour_scenario(sc, name), control="none")
        for e in range(args.offline_episodes):
            obs, _ = env.reset(seed=offline_seed(args, k, b, e))
            prev = np.zeros(args.max_subflows, np.float32)
            done = False
            while not done:
                nxt, r, te, tr, _ = env.step(np.zeros(args.max_subflows, np.float32))
                done = te or tr
                o, mask = _as_controlled(env, with_prev_share(env, obs, prev))
                prev = _path_share(env, nxt) * mask
                prev = prev / prev.sum() if prev.sum() > 0 else prev
                obs_l.append(o)
                share_l.append(_path_share(env, nxt))
                mask_l.append(mask)
                rew_l.append(r)
                done_l.append(done)
                obs = nxt
    return {
        "obs": np.asarray(obs_l, np.float32),
        "share": np.asarray(share_l, np.float32),
        "mask": np.asarray(mask_l, np.float32),
        "reward": np.asarray(rew_l, np.float32),
        "done": np.asarray(done_l, bool),
    }


def _mlp(n_in: int, hidden: Tuple[int, int], n_out: int, std: float) -> nn.Sequential:
    """Tanh MLP with orthogonal init (CleanRL's ``layer_init``)."""
    layers: List[nn.Module] = []
    sizes = [n_in, *hidden]
    for a, b in zip(sizes, sizes[1:]):
        lin = nn.Linear(a, b)
        nn.init.orthogonal_(lin.weight, np.sqrt(2))
        nn.init.zeros_(lin.bias)
        layers += [lin, nn.Tanh()]
    out = nn.Linear(sizes[-1], n_out)
    nn.init.orthogonal_(out.weight, std)
    nn.init.zeros_(out.bias)
    return nn.Sequential(*layers, out)


class Agent(nn.Module):
    """Actor (path logits μ and a state-independent log σ) and critic over normalised
    observations."""

    def __init__(self, n_obs: int, n_paths: int, args: Args, mean: np.ndarray, std: np.ndarray):
        super().__init__()
        self.register_buffer("mean", torch.as_tensor(mean, dtype=torch.float32))
        self.register_buffer("std", torch.as_tensor(std, dtype=torch.float32))
        self.actor = _mlp(n_obs, args.hidden_units, n_paths, 0.01)
        self.critic = _mlp(n_obs, args.hidden_units, 1, 1.0)
        self.log_std = nn.Parameter(torch.full((n_paths,), float(args.init_log_std)))

    def norm(self, obs: torch.Tensor) -> torch.Tensor:
        return ((obs - self.mean) / self.std).clamp(-OBS_CLIP, OBS_CLIP)

    def dist(self, obs: torch.Tensor) -> torch.distributions.Normal:
        return torch.distributions.Normal(self.actor(self.norm(obs)), self.log_std.exp())

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        return self.critic(self.norm(obs)).squeeze(-1)


def masked_softmax(z: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The env action of logits ``z``: softmax over the usable paths, 0 elsewhere (all 0 when
    none is usable)."""
    if mask.sum() == 0:
        return np.zeros_like(z, dtype=np.float32)
    e = np.where(mask > 0, np.exp(z - z[mask > 0].max()), 0.0)
    return (e / e.sum()).astype(np.float32)


def _discounted(rew: np.ndarray, done: np.ndarray, gamma: float) -> np.ndarray:
    """Monte-Carlo returns within episodes."""
    ret, g = np.zeros_like(rew), 0.0
    for t in reversed(range(len(rew))):
        g = rew[t] + gamma * g * (0.0 if done[t] else 1.0)
        ret[t] = g
    return ret


def pretrain(agent: Agent, data: Dict[str, np.ndarray], args: Args, rng: np.random.Generator):
    """Phase 1: behaviour cloning of the actor's masked softmax to the usage shares, and the
    critic fitted to the behaviours' discounted returns. Returns the final losses."""
    obs = torch.as_tensor(data["obs"])
    mask = torch.as_tensor(data["mask"])
    # A path that came up during the interval may carry bytes while masked at its start: the
    # label is the share over the paths usable at the decision.
    share = torch.as_tensor(data["share"]) * mask
    labelled = share.sum(-1) > 0
    share = share / share.sum(-1, keepdim=True).clamp(min=1e-9)
    ret = torch.as_tensor(_discounted(data["reward"], data["done"], args.gamma))
    a_opt = torch.optim.Adam(agent.actor.parameters(), lr=args.actor_lr)
    c_opt = torch.optim.Adam(agent.critic.parameters(), lr=args.critic_lr)
    bc = vf = torch.tensor(0.0)
    n = len(obs)
    for _ in range(args.offline_epochs):
        for idx in np.array_split(rng.permutation(n), max(1, n // args.minibatch_size)):
            i = torch.as_tensor(idx)
            logits = agent.actor(agent.norm(obs[i])).masked_fill(mask[i] <= 0, -1e9)
            ce = -(share[i] * torch.log_softmax(logits, -1)).sum(-1)
            w = labelled[i].float()
            bc = (ce * w).sum() / w.sum().clamp(min=1.0)
            a_opt.zero_grad()
            bc.backward()
            a_opt.step()
            vf = ((agent.value(obs[i]) - ret[i]) ** 2).mean()
            c_opt.zero_grad()
            vf.backward()
            c_opt.step()
    return float(bc.detach()), float(vf.detach())


def _snapshot(agent: Agent, path: Path, env: HostEnv, head: str, prov: Dict[str, Any]) -> None:
    """Exports the actor (normalisation, MLP, ``head``) as a runtime policy file."""
    mean, std = agent.mean.numpy(), agent.std.numpy()
    export(
        agent.actor, path, input_size=env.layout.size, head=head,
        normalize=(mean, std, OBS_CLIP), obs=env.policy_obs, provenance=prov,
    )  # fmt: skip


def ppo_update(agent: Agent, opts, pool: Dict[str, torch.Tensor], args: Args, rng) -> None:
    """One PPO update (clipped surrogate, ratio on the logits z; CleanRL's continuous PPO)
    on the experience pool collected since the last reload."""
    obs, z, logp_old = pool["obs"], pool["z"], pool["logp"]
    with torch.no_grad():
        values = agent.value(obs)
        next_v = agent.value(pool["last_obs"][None])[0]
    adv = torch.zeros_like(values)
    gae = 0.0
    for t in reversed(range(len(values))):
        nonterm = 1.0 - float(pool["done"][t])
        nv = next_v if t == len(values) - 1 else values[t + 1]
        delta = pool["reward"][t] + args.gamma * nv * nonterm - values[t]
        gae = delta + args.gamma * args.gae_lambda * nonterm * gae
        adv[t] = gae
    ret = adv + values
    n = len(obs)
    for _ in range(args.update_epochs):
        for idx in np.array_split(rng.permutation(n), max(1, n // args.minibatch_size)):
            i = torch.as_tensor(idx)
            a = adv[i]
            a = (a - a.mean()) / (a.std() + 1e-8) if len(i) > 1 else a
            ratio = (agent.dist(obs[i]).log_prob(z[i]).sum(-1) - logp_old[i]).exp()
            pg = torch.max(-a * ratio, -a * ratio.clamp(1 - args.clip, 1 + args.clip)).mean()
            vf = 0.5 * ((agent.value(obs[i]) - ret[i]) ** 2).mean()
            for o in opts:
                o.zero_grad()
            (pg + vf).backward()
            for o in opts:
                o.step()


def _decide(pol, agent: Agent, obs: np.ndarray, mask: np.ndarray, args: Args, rng):
    """The decision side: logits from the Rust runtime, Gaussian exploration, ε-greedy."""
    mu = pol.act(obs[None, :].astype(np.float32))[0]
    sigma = agent.log_std.detach().exp().numpy()
    if rng.random() < args.epsilon:
        z = rng.normal(0.0, RANDOM_LOGIT_STD, mu.shape)
    else:
        z = mu + sigma * rng.normal(size=mu.shape)
    z = z.astype(np.float32)
    logp = float(
        torch.distributions.Normal(torch.as_tensor(mu), torch.as_tensor(sigma))
        .log_prob(torch.as_tensor(z))
        .sum()
    )
    return z, logp, masked_softmax(z, mask)


def online(
    agent: Agent, envs: List[HostEnv], args: Args, tmp: Path, rng, log
) -> Tuple[int, List[float]]:
    """Phase 2 (module docs): decisions by the exported snapshot, PPO on the pool at every
    reload point; episodes cycle through the training scenarios ``envs``. Returns the number
    of updates and the mean reward per pool."""
    a_params = list(agent.actor.parameters()) + [agent.log_std]
    opts = [
        torch.optim.Adam(a_params, lr=args.actor_lr),
        torch.optim.Adam(agent.critic.parameters(), lr=args.critic_lr),
    ]
    per_sync = max(1, round(args.sync_s * 1000.0 / args.interval_ms))
    cur, used = 0, set()

    def next_episode():
        """The next training scenario's env, reset (seeded at its first use: seed + index)."""
        seed = None if cur in used else args.seed + cur
        used.add(cur)
        return envs[cur].reset(seed=seed)

    env = envs[0]
    obs, info = next_episode()
    updates, rewards, step = 0, [], 0
    while step < args.online_steps:
        _snapshot(agent, tmp / f"snap{updates}", env, "identity", {})
        pol = _core.Policy(str(tmp / f"snap{updates}.json"))
        pool: Dict[str, list] = {k: [] for k in ("obs", "z", "logp", "reward", "done")}
        for _ in range(min(per_sync, args.online_steps - step)):
            z, logp, action = _decide(pol, agent, obs, info["action_mask"], args, rng)
            nxt, r, te, tr, nxt_info = env.step(action)
            for k, v in zip(pool, (obs, z, logp, r, te or tr)):
                pool[k].append(v)
            # An episode end (truncation too) closes the advantage there; the next scenario's
            # episode starts.
            if te or tr:
                cur = (cur + 1) % len(envs)
                env = envs[cur]
                obs, info = next_episode()
            else:
                obs, info = nxt, nxt_info
            step += 1
        batch = {k: torch.as_tensor(np.asarray(v, np.float32)) for k, v in pool.items()}
        batch["last_obs"] = torch.as_tensor(obs)
        ppo_update(agent, opts, batch, args, rng)
        updates += 1
        rewards.append(float(np.mean(pool["reward"])))
        log(f"update {updates}: {step} decisions, mean reward {rewards[-1]:.4f}")
    return updates, rewards


def train(args: Args, log: Callable[[str], None] = lambda m: None) -> TrainResult:
    """Offline training on the traditional schedulers' transitions, then asynchronous online
    training; writes ``mptcp-rl.{json,safetensors}`` to ``args.out``."""
    t0, c0, load0 = time.perf_counter(), time.process_time(), os.getloadavg()[0]
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.torch_threads)
    rng = np.random.default_rng(args.seed)
    data = collect_offline(args)
    log(f"offline: {len(data['obs'])} transitions of {', '.join(args.behaviours)}")
    envs = [_env(args, sc) for sc in scenarios(args)]
    env = envs[0]
    mean = data["obs"].mean(axis=0)
    std = np.maximum(data["obs"].std(axis=0), 1e-2)
    agent = Agent(env.layout.size, args.max_subflows, args, mean, std)
    bc, vf = pretrain(agent, data, args, rng)
    log(f"offline: behaviour-cloning loss {bc:.4f}, value loss {vf:.4f}")
    with tempfile.TemporaryDirectory() as d:
        updates, rewards = online(agent, envs, args, Path(d), rng, log)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    prov = {
        "algorithm": "mptcp-rl", "seed": args.seed, "scenario": str(args.scenario),
        "train": _train_record(args),
    }  # fmt: skip
    _snapshot(agent, out / "mptcp-rl", env, "softmax", prov)
    res = TrainResult(
        {"policy": out / "mptcp-rl.json", "weights": out / "mptcp-rl.safetensors"},
        time.perf_counter() - t0, len(data["obs"]), args.online_steps, updates, rewards,
        time.process_time() - c0, (load0, os.getloadavg()[0]),
    )  # fmt: skip
    res.written["log"] = _write_log(out, args, res)
    return res


def _train_record(args: Args) -> Dict[str, Any]:
    """What the policy file records of its training (deterministic fields only, so that a
    retraining with the same arguments writes the same file)."""
    keep = ("mix", "offline_episodes", "offline_epochs", "online_steps", "sync_s", "behaviours")
    return {k: getattr(args, k) for k in keep}


def _write_log(out: Path, args: Args, res: TrainResult) -> Path:
    """``train.json``: the arguments, wall and CPU time, the load, the mean reward per pool."""
    path = out / "train.json"
    rec = {
        "args": {k: v for k, v in vars(args).items()},
        "wall_s": res.wall_s, "cpu_s": res.cpu_s, "load_start": res.load[0],
        "load_end": res.load[1], "offline_transitions": res.offline_transitions,
        "online_steps": res.online_steps, "updates": res.updates, "mean_reward": res.mean_reward,
    }  # fmt: skip
    path.write_text(json.dumps(rec, indent=1, default=str))
    return path
