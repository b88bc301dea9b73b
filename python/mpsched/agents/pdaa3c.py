"""PDAA3C: an A3C subflow scheduler with the letter's subflow quality evaluation (Liang et al.,
"PDAA3C: An A3C-Based Multi-Path Data Scheduling Algorithm", IEICE 2022;
/work/shared/papers/pdaa3c.txt), in CleanRL's one-file layout, with real asynchronous
actor-learners (Mnih et al., "Asynchronous Methods for Deep Reinforcement Learning", ICML 2016,
the letter's [12]; Hogwild-style shared parameters as in their Algorithm S3).

What the letter specifies, and where it lives here:

- **Environment** (§2.1, §2.4): ``mpsched/Scheduler-v0`` with ``action="choose"``: every
  100 ms epoch the scheduler names the one subflow that carries the next epoch's data
  (``Discrete(N)`` with the usable subflows' mask). Reward ``r_t = Σ_i log TT_t^i``
  (:func:`mpsched.rewards.pdaa3c`).
- **State** (§2.1): per subflow, measured over the past epoch: free bandwidth ST, throughput
  TT, congestion window C, packets on the link TP, loss rate PLR (``STATE``: the env's
  sender-side features ``free_bw``, ``throughput``, ``cwnd``, ``inflight``, ``loss``).
- **Subflow quality evaluation** (§2.2, eqs. 4-5, γ = 0.7, η = 0.3, α = 1000): computed in
  Rust (``mpsched_policy::pdaa3c``, ``_core.pdaa3c_inputs``; units in docs/pdaa3c.md). As
  §2.3 ii-iii and Algorithm 1 lines 6-10 describe, the subflows are ranked by Q ("subflow
  quality ranking") and the actor π(a|s; θ') chooses among the ranks: action 0 = the Q-best
  ("optimal") subflow. The actor reads each rank's state, its Q and a presence flag.
- **Actor-critic** (§2.1, eqs. 1-3; Algorithm 1): an actor with parameters θ (logits per
  rank) and a critic with θ_v (V(s)); per worker, t_max steps (line 13), n-step returns
  ``R ← r_i + γR`` bootstrapped from V(s_t) (lines 14-16), policy gradient
  ``∇ log π(a_i|s_i) (R − V(s_i))`` (eq. 1, line 17) plus A3C's entropy bonus β·H(π), and the
  critic's squared error (eq. 3, line 18), then an asynchronous update of the shared θ, θ_v
  (line 20) and a fresh copy θ' = θ (line 5).
- **Asynchronous workers** (§2.1 "multi-core asynchronous updating"): ``--workers`` processes
  (torch.multiprocessing, spawn), each with its own simulator envs, pushing its gradients into
  the parameters in shared memory and stepping a shared Adam (its moments in shared memory too)
  without locks, Hogwild style.

Determinism: with one worker, training is a function of the seed (the worker's sampling,
the network's initialisation and the env seeds are seeded; torch runs one thread). With more
workers the env seeds and each worker's sampling are seeded too, but which worker updates the
shared parameters when depends on the OS scheduler, so the weights differ from run to run;
the checkpoint records the seed, the worker count and this note.

The trained actor is exported as a policy file (``"algorithm": "pdaa3c"``, read in Rust by
``crates/mpsched-policy/src/pdaa3c.rs``); it runs as ``--scheduler policy:PATH``.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import numpy as np
import torch
import torch.multiprocessing as mp
from torch import nn

from .. import _core
from ..envs import SUBFLOW_FEATURES, SchedulerVectorEnv
from .checkpoint import save_checkpoint
from .drl_cc import mlp
from .pdaa3c_args import Args, env_seed_base, resolve_scenario

__all__ = ["Args", "ActorCritic", "SharedAdam", "TrainResult", "train", "ranked", "STATE"]

ALGORITHM = "pdaa3c"
POLICY_NAME = "pdaa3c"
#: The §2.1 state per subflow (ST, TT, C, TP, PLR), in the Rust actor's order.
STATE = ("free_bw", "throughput", "cwnd", "inflight", "loss")
#: Actor inputs per quality rank: the state, Q (10 Mbit/s), present.
RANK_INPUTS = len(STATE) + 2
if not set(STATE) <= set(SUBFLOW_FEATURES):  # the env's feature table changed
    raise ImportError(f"pdaa3c: state features {STATE} are not all in {SUBFLOW_FEATURES}")
DETERMINISM = (
    "workers=1: reproducible from the seed; workers>1: env seeds and sampling are seeded, "
    "but the order of the asynchronous updates is not, so the weights differ between runs"
)


# --- network (§2.1, eqs. 1-3) ---------------------------------------------------------------


class ActorCritic(nn.Module):
    """Tanh MLPs: the actor π(a|s; θ) (one logit per quality rank) and the critic V(s; θ_v), separate
    parameter sets as the letter writes them (eqs. 1-3)."""

    def __init__(self, max_paths: int, hidden: Tuple[int, ...]) -> None:
        super().__init__()
        n_in = max_paths * RANK_INPUTS
        self.actor = mlp(n_in, hidden, max_paths, nn.Tanh)
        self.critic = mlp(n_in, hidden, 1, nn.Tanh)

    def forward(self, x: torch.Tensor, n_valid: torch.Tensor) -> Tuple[Any, torch.Tensor]:
        """The masked categorical policy over ranks (ranks past the usable subflows have
        probability 0) and V(s)."""
        logits = self.actor(x)
        ranks = torch.arange(logits.shape[-1])
        logits = logits.masked_fill(ranks[None, :] >= n_valid.clamp(min=1)[:, None], -1e9)
        return torch.distributions.Categorical(logits=logits), self.critic(x).squeeze(-1)


def ranked(obs: np.ndarray, args: Args) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Actor inputs, rank → slot and usable counts of observations, by the Rust ranking."""
    x, order, n, _q = _core.pdaa3c_inputs(
        np.ascontiguousarray(obs, dtype=np.float32), args.max_paths, 1,
        args.quality_gamma, args.quality_eta, args.quality_alpha,
    )  # fmt: skip
    return x, order, n


# --- shared optimiser (Hogwild) -------------------------------------------------------------


class SharedAdam(torch.optim.Adam):
    """Adam whose moments live in shared memory, stepped by every worker without a lock (the
    "shared RMSProp" of A3C [12] §4, with Adam's moments)."""

    def __init__(self, params: Any, lr: float) -> None:
        super().__init__(params, lr=lr)
        for group in self.param_groups:
            for p in group["params"]:
                st = self.state[p]
                st["step"] = torch.zeros(1).share_memory_()
                st["exp_avg"] = torch.zeros_like(p.data).share_memory_()
                st["exp_avg_sq"] = torch.zeros_like(p.data).share_memory_()

    @torch.no_grad()
    def step(self, closure: Any = None) -> None:  # noqa: ARG002
        for group in self.param_groups:
            b1, b2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                st = self.state[p]
                st["step"] += 1
                t = float(st["step"].item())
                st["exp_avg"].mul_(b1).add_(p.grad, alpha=1 - b1)
                st["exp_avg_sq"].mul_(b2).addcmul_(p.grad, p.grad, value=1 - b2)
                denom = (st["exp_avg_sq"] / (1 - b2**t)).sqrt_().add_(group["eps"])
                p.addcdiv_(st["exp_avg"], denom, value=-group["lr"] / (1 - b1**t))


# --- one worker: Algorithm 1 ----------------------------------------------------------------


def make_envs(args: Args, worker: int) -> SchedulerVectorEnv:
    """A worker's own simulations: ``choose`` every 100 ms, reward Σ log TT, sender-side
    features only (what the runtime sees), one thread (the workers are the parallelism)."""
    return SchedulerVectorEnv(
        str(resolve_scenario(args.scenario)), num_envs=args.envs_per_worker, action="choose",
        reward="pdaa3c", interval=args.interval_ms, max_paths=args.max_paths, history=1,
        duration_s=args.duration_s, threads=1, sender_only=True, busy=args.busy,
    )  # fmt: skip


@dataclass
class Shared:
    """What the workers share: parameters and optimiser (in the model/optimiser), counters."""

    updates: Any
    steps: Any
    stop_at: float
    #: per worker: loop start, loop end (time.time(), process start-up excluded), env steps
    timing: Any
    #: the workers start their loops together, once every one has its envs
    ready: Any


def n_step_returns(
    rewards: np.ndarray, dones: np.ndarray, bootstrap: np.ndarray, gamma: float
) -> np.ndarray:
    """Algorithm 1 lines 14-16 for each env column: R = V(s_t) (0 after a terminal state),
    then ``R ← r_i + γR`` backwards over the t_max steps ``[T, E]``."""
    out = np.zeros_like(rewards)
    r = bootstrap.copy()
    for i in range(len(rewards) - 1, -1, -1):
        r = rewards[i] + gamma * r * (1.0 - dones[i])
        out[i] = r
    return out


def rollout(args, local, envs, obs, rng) -> Tuple[Dict[str, Any], np.ndarray, float]:
    """t_max steps of every env of the worker (Algorithm 1 lines 9-13): the inputs, actions,
    rewards and terminal flags, the bootstrap R and the next observation."""
    xs, acts, valid, rews, dones = [], [], [], [], []
    ret_sum = 0.0
    for _ in range(args.t_max):
        x, order, n = ranked(obs, args)
        with torch.no_grad():
            dist, _ = local(torch.from_numpy(x), torch.from_numpy(n))
        probs = dist.probs.numpy().astype(np.float64)
        u = rng.random(len(probs))[:, None]
        rank = np.minimum((np.cumsum(probs, axis=1) < u).sum(axis=1), np.maximum(n - 1, 0))
        slot = np.where(n > 0, order[np.arange(len(rank)), rank], 0)
        obs, r, term, trunc, _info = envs.step(slot)
        done = term | trunc
        xs.append(x), acts.append(rank), valid.append(n), rews.append(r * args.reward_scale)
        dones.append(done.astype(np.float64))
        ret_sum += float(r.sum())
        if done.any():
            obs = envs.reset_ended()
    x, _order, n = ranked(obs, args)
    with torch.no_grad():
        _, v = local(torch.from_numpy(x), torch.from_numpy(n))
    batch = {"x": xs, "a": acts, "n": valid, "r": np.array(rews), "d": np.array(dones)}
    batch["R"] = n_step_returns(batch["r"], batch["d"], v.numpy().astype(np.float64), args.gamma)
    return batch, obs, ret_sum


def losses(args, local, batch) -> Tuple[torch.Tensor, Dict[str, float]]:
    """Eq. 1 (policy gradient with advantage R − V, eq. 2), eq. 3 (critic), entropy bonus."""
    x = torch.from_numpy(np.concatenate(batch["x"]))
    a = torch.from_numpy(np.concatenate(batch["a"]))
    n = torch.from_numpy(np.concatenate(batch["n"]))
    ret = torch.from_numpy(batch["R"].reshape(-1).astype(np.float32))
    dist, v = local(x, n)
    adv = ret - v
    policy = -(dist.log_prob(a) * adv.detach()).mean()
    value = adv.pow(2).mean()
    entropy = dist.entropy().mean()
    loss = policy + args.value_coef * value - args.entropy_beta * entropy
    stats = {"policy": policy.item(), "value": value.item(), "entropy": entropy.item()}
    return loss, stats


def worker(rank: int, args: Args, shared_model, optimizer, shared: Shared, logdir) -> None:
    """One actor-learner (Algorithm 1): its own envs, its own copy θ', θ'_v of the shared
    parameters, asynchronous updates until the shared update count reaches ``args.updates``."""
    torch.set_num_threads(1)
    torch.manual_seed(args.seed * 1000 + rank)
    rng = np.random.default_rng([args.seed, rank])
    envs = make_envs(args, rank)
    obs, _ = envs.reset(seed=env_seed_base(args.seed, rank))
    local = ActorCritic(args.max_paths, tuple(args.hidden_units))
    writer = None
    if rank == 0 and logdir is not None:
        from torch.utils.tensorboard import SummaryWriter

        writer = SummaryWriter(str(logdir))
    shared.ready.wait(timeout=600)
    shared.timing[3 * rank] = time.time()
    while True:
        with shared.updates.get_lock():
            if shared.updates.value >= args.updates or time.time() >= shared.stop_at:
                break
        local.load_state_dict(shared_model.state_dict())  # line 5: θ' = θ, θ'_v = θ_v
        batch, obs, ret_sum = rollout(args, local, envs, obs, rng)
        loss, stats = losses(args, local, batch)
        local.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(local.parameters(), args.max_grad_norm)
        for lp, sp in zip(local.parameters(), shared_model.parameters()):
            sp.grad = lp.grad  # line 20: the asynchronous update of θ, θ_v
        optimizer.step()
        with shared.updates.get_lock():
            shared.updates.value += 1
            u = shared.updates.value
        with shared.steps.get_lock():
            shared.steps.value += args.t_max * args.envs_per_worker
        shared.timing[3 * rank + 2] += args.t_max * args.envs_per_worker
        shared.timing[3 * rank + 1] = time.time()
        if writer is not None and u % args.log_every == 0:
            for k, v in stats.items():
                writer.add_scalar(f"loss/{k}", v, u)
            writer.add_scalar("reward/mean_step", ret_sum / batch["r"].size, u)
    if writer is not None:
        writer.close()
    envs.close()


# --- training -------------------------------------------------------------------------------


@dataclass
class TrainResult:
    """What a training run produced and how fast."""

    policy: Path
    updates: int
    env_steps: int
    wall_s: float
    #: env steps per second: the sum of each worker's steps / its loop time (start-up excluded)
    env_steps_per_s: float
    written: Dict[str, Path] = field(default_factory=dict)


def command_line(args: Args) -> str:
    """The command that repeats this training."""
    a = [
        "mpsched", "train", "pdaa3c", "--scenario", args.scenario, "--workers",
        str(args.workers), "--updates", str(args.updates), "--seed", str(args.seed),
        "--envs-per-worker", str(args.envs_per_worker), "--out", args.out,
    ]  # fmt: skip
    if args.duration_s is not None:
        a += ["--duration", str(args.duration_s)]
    if args.max_minutes is not None:
        a += ["--max-minutes", str(args.max_minutes)]
    if args.busy != "next":
        a += ["--busy", args.busy]
    return shlex.join(a)


def check_args(args: Args) -> None:
    """One-line ValueError for values training cannot use."""
    for name in ("workers", "updates", "envs_per_worker", "t_max"):
        if getattr(args, name) < 1:
            raise ValueError(f"{name}: expected a positive integer, got {getattr(args, name)}")
    if not 1 <= args.max_paths <= 8:
        raise ValueError(f"max_paths: expected 1..8, got {args.max_paths}")
    if not 0.0 <= args.gamma <= 1.0:
        raise ValueError(f"gamma: expected a value in [0, 1], got {args.gamma}")
    if args.busy not in ("next", "wait"):
        raise ValueError(f"busy: expected next or wait, got {args.busy!r}")


def policy_tensors(model: ActorCritic) -> Dict[str, np.ndarray]:
    """The actor's weights by the names the description lists (the critic only trains)."""
    return {f"actor.{k}": v.detach().numpy() for k, v in model.actor.state_dict().items()}


def policy_meta(args: Args, obs_block: Dict[str, Any], info: Dict[str, Any]) -> Dict[str, Any]:
    """The policy file's description: ``net`` (the Rust forward pass), ``obs``, ``train``."""
    n_linear = len(args.hidden_units) + 1
    return {
        "algorithm": ALGORITHM,
        "variant": POLICY_NAME,
        "paper": "pdaa3c.txt (Liang et al., IEICE Trans. Inf. & Syst. 2022)",
        "net": {
            "quality": {
                "gamma": args.quality_gamma,
                "eta": args.quality_eta,
                "alpha": args.quality_alpha,
            },  # fmt: skip
            "state": list(STATE),
            "actor": [f"actor.{2 * i}" for i in range(n_linear)],
        },
        "obs": obs_block,
        "train": info,
    }


def _run_workers(args: Args, model: ActorCritic, optimizer, shared: Shared, logdir) -> None:
    """Starts ``args.workers`` processes and waits for them; a failed worker is an error."""
    ctx = mp.get_context("spawn")
    procs = [
        ctx.Process(target=worker, args=(r, args, model, optimizer, shared, logdir))
        for r in range(args.workers)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    bad = [r for r, p in enumerate(procs) if p.exitcode != 0]
    if bad:
        raise RuntimeError(f"pdaa3c worker {bad[0]} failed (exit code {procs[bad[0]].exitcode})")


def steps_per_s(timing: List[float]) -> float:
    """The sum over workers of env steps / loop time, from ``[start, end, steps] × workers``."""
    rows = [timing[i : i + 3] for i in range(0, len(timing), 3)]
    return sum(n / (end - start) for start, end, n in rows if end > start)


def train(args: Args, log: Callable[[str], Any] = print) -> TrainResult:
    """Algorithm 1 in ``args.workers`` asynchronous processes until ``args.updates`` shared
    updates (or ``args.max_minutes``); writes ``pdaa3c.{json,safetensors}`` and TensorBoard
    logs (``runs/``) into ``args.out`` at once (a failed run leaves no output directory)."""
    from .._atomic import atomic_directory

    check_args(args)
    scenario = resolve_scenario(args.scenario)
    torch.manual_seed(args.seed)
    model = ActorCritic(args.max_paths, tuple(args.hidden_units))
    model.share_memory()
    optimizer = SharedAdam(model.parameters(), args.learning_rate)
    ctx = mp.get_context("spawn")
    limit = args.max_minutes * 60 if args.max_minutes is not None else float("inf")
    timing = ctx.Array("d", 3 * args.workers)
    shared = Shared(
        ctx.Value("q", 0), ctx.Value("q", 0), time.time() + limit, timing, ctx.Barrier(args.workers)
    )
    probe = make_envs(args, 0)
    obs_block = dict(probe.policy_obs)
    probe.close()
    out = Path(args.out)
    with atomic_directory(out) as tmp:
        started = time.perf_counter()
        _run_workers(args, model, optimizer, shared, tmp / "runs")
        wall = time.perf_counter() - started
        timing = list(shared.timing)
        rate = steps_per_s(timing)
        t0 = min(timing[0::3])
        steps, updates = int(shared.steps.value), int(shared.updates.value)
        info = {
            "algorithm": "a3c",
            "scenario": str(args.scenario),
            "scenario_sha256": hashlib.sha256(scenario.read_bytes()).hexdigest(),
            "command": command_line(args),
            "seed": args.seed,
            "workers": args.workers,
            "deterministic": args.workers == 1,
            "determinism": DETERMINISM,
            "env_seed_bases": [env_seed_base(args.seed, w) for w in range(args.workers)],
            "updates": updates,
            "env_steps": steps,
            "wall_s": round(wall, 2),
            "env_steps_per_s": round(rate, 1),
            # per worker: loop start and end (s after the first worker's start), env steps
            "worker_loops": [
                [round(timing[i] - t0, 3), round(timing[i + 1] - t0, 3), int(timing[i + 2])]
                for i in range(0, len(timing), 3)
            ],
            "args": {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(args).items()},
        }
        save_checkpoint(
            tmp / POLICY_NAME, policy_tensors(model), policy_meta(args, obs_block, info)
        )
        (tmp / "train.json").write_text(json.dumps(info, indent=2) + "\n")
    log(
        f"{updates} updates, {steps} env steps in {wall:.1f} s with {args.workers} worker(s) "
        f"({rate:.1f} env steps/s: the sum of the workers' own rates, start-up excluded)"
    )
    return TrainResult(
        policy=out / f"{POLICY_NAME}.json",
        updates=updates,
        env_steps=steps,
        wall_s=wall,
        env_steps_per_s=rate,
        written={"policy": out / f"{POLICY_NAME}.json", "runs": out / "runs"},
    )


def greedy_slots(model: ActorCritic, obs: np.ndarray, args: Args) -> np.ndarray:
    """The slot the trained actor picks (largest logit among the usable ranks), as the Rust
    runtime does: for tests and evaluation in Python."""
    x, order, n = ranked(obs, args)
    with torch.no_grad():
        dist, _ = model(torch.from_numpy(x), torch.from_numpy(n))
    rank = dist.logits.argmax(dim=-1).numpy()
    return np.where(n > 0, order[np.arange(len(rank)), rank], 0)
