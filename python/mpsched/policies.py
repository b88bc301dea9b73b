"""Export a PyTorch network for the Rust policy runtime (``crates/mpsched-policy/src/net.rs``).

::

    import torch.nn as nn
    from mpsched.policies import export

    actor = nn.Sequential(nn.Linear(12, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(),
                          nn.Linear(64, 4))
    export(actor, "out/my-policy", input_size=12, head="argmax",
           provenance={"algorithm": "ppo", "command": "python train.py"})

writes ``out/my-policy.json`` (the network's description) and ``out/my-policy.safetensors``
(float32 weights; nothing executable, so loading never runs code). Supported modules:
``Linear``, ``ReLU``, ``Tanh``, ``Sigmoid``, ``ELU``, ``LeakyReLU``, ``LayerNorm`` (over the
last dimension), ``Identity``/``Flatten`` (skipped), and one-layer unidirectional ``LSTM`` /
``GRU``, which read the running vector as a sequence of ``steps × input_size`` values (oldest
step first) and pass on their last hidden state. Heads: ``identity``, ``argmax`` (a discrete
action), ``softmax`` (probabilities) and ``tanh`` (a continuous action squashed to
[``low``, ``high``], as stable-baselines3's SAC/TD3 actors).

The weights come from a module object in the caller's process: exporting never unpickles a file
(see docs/policies.md for the trust boundary of stable-baselines3 zips).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from .agents.checkpoint import CheckpointError, save_checkpoint

__all__ = ["export", "export_sb3", "reference_forward", "HEADS"]

#: Actor heads the runtime knows.
HEADS = ("identity", "argmax", "softmax", "tanh", "clip", "binary", "multi_argmax")

_ACTIVATIONS = {"ReLU": "relu", "Tanh": "tanh", "Sigmoid": "sigmoid", "ELU": "elu"}


def _flatten(modules: Any) -> List[Any]:
    """The leaf modules of a module, ``Sequential`` or list, in order."""
    import torch.nn as nn

    if isinstance(modules, (list, tuple)):
        return [m for x in modules for m in _flatten(x)]
    if isinstance(modules, nn.Sequential):
        return [m for x in modules for m in _flatten(x)]
    return [modules]


def _layer(m: Any, k: int, tensors: Dict[str, np.ndarray]) -> Optional[Dict[str, Any]]:
    """The description of module ``m`` (its weights added to ``tensors``); None to skip it."""
    import torch.nn as nn

    def put(name: str, t: Any) -> str:
        key = f"layers.{k}.{name}"
        tensors[key] = t.detach().cpu().numpy().astype(np.float32)
        return key

    kind = type(m).__name__
    if isinstance(m, (nn.Identity, nn.Flatten)):
        return None
    if isinstance(m, nn.Linear):
        bias = put("bias", m.bias) if m.bias is not None else None
        return {"type": "linear", "weight": put("weight", m.weight), "bias": bias}
    if kind in _ACTIVATIONS:
        return {"type": _ACTIVATIONS[kind]}
    if isinstance(m, nn.LeakyReLU):
        return {"type": "leaky_relu", "negative_slope": float(m.negative_slope)}
    if isinstance(m, nn.LayerNorm):
        if len(m.normalized_shape) != 1 or not m.elementwise_affine:
            raise CheckpointError(f"layer {k}: LayerNorm: expected one affine dimension")
        return {"type": "layer_norm", "weight": put("weight", m.weight),
                "bias": put("bias", m.bias), "eps": float(m.eps)}  # fmt: skip
    if isinstance(m, (nn.LSTM, nn.GRU)):
        if m.num_layers != 1 or m.bidirectional or not m.bias or getattr(m, "proj_size", 0):
            raise CheckpointError(
                f"layer {k}: {kind}: expected one unidirectional layer with biases"
            )
        return {
            "type": kind.lower(),
            "hidden": int(m.hidden_size),
            **{n: put(n, getattr(m, f"{n}_l0")) for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")},
        }  # fmt: skip
    raise CheckpointError(f"layer {k}: {kind}: not supported (see mpsched.policies)")


def export(
    module: Any,
    path: Union[str, Path],
    *,
    input_size: int,
    head: str = "identity",
    low: Optional[Sequence[float]] = None,
    high: Optional[Sequence[float]] = None,
    sizes: Optional[Sequence[int]] = None,
    normalize: Optional[Tuple[Sequence[float], Sequence[float], float]] = None,
    provenance: Optional[Mapping[str, Any]] = None,
    observation: Optional[Mapping[str, Any]] = None,
    action: Optional[Mapping[str, Any]] = None,
    obs: Optional[Mapping[str, Any]] = None,
) -> Tuple[Path, Path]:
    """Writes ``module`` (a ``Sequential``, a list of modules or one module) as a checkpoint the
    Rust runtime loads (``_core.Net``); returns the (description, weights) paths.

    ``normalize``: (mean, std, clip) applied to the observation first (stable-baselines3's
    ``VecNormalize``). ``obs``: what the network observes and how its output acts, as the
    runtime reads it to run the policy as a scheduler (an env's ``policy_obs``: action kind,
    decision interval, slots, history, features...; docs/policies.md). ``observation`` /
    ``action``: free-form notes, recorded; ``provenance``: algorithm, scenario hash, training
    command.
    """
    if head not in HEADS:
        raise CheckpointError(f"head: expected one of {', '.join(HEADS)}, got {head!r}")
    tensors: Dict[str, np.ndarray] = {}
    layers = [d for k, m in enumerate(_flatten(module)) if (d := _layer(m, k, tensors))]
    net: Dict[str, Any] = {
        "input": {"size": int(input_size)},
        "layers": layers,
        "head": {"type": head},
    }
    if normalize is not None:
        mean, std, clip = normalize
        tensors["input.mean"] = np.asarray(mean, np.float32).reshape(input_size)
        tensors["input.std"] = np.asarray(std, np.float32).reshape(input_size)
        net["input"]["normalize"] = {"mean": "input.mean", "std": "input.std", "clip": float(clip)}
    if head in ("tanh", "clip"):
        if low is None or high is None:
            raise CheckpointError(f"head: {head} needs low and high (the action's bounds)")
        net["head"].update(low=[float(x) for x in low], high=[float(x) for x in high])
    if head == "multi_argmax":
        if sizes is None:
            raise CheckpointError("head: multi_argmax needs sizes (the action's group sizes)")
        net["head"]["sizes"] = [int(n) for n in sizes]
    meta = {
        "algorithm": "net",
        "net": net,
        "observation": dict(observation or {}),
        "action": dict(action or {}),
        "provenance": dict(provenance or {}),
    }
    if obs is not None:
        meta["obs"] = dict(obs)
    return save_checkpoint(path, tensors, meta)


def reference_forward(module: Any, obs: np.ndarray) -> np.ndarray:
    """What the runtime computes, in PyTorch (float32), for observations ``[B, input_size]``
    before the head: the modules in order, a recurrent layer reading its input as
    ``[B, steps, input_size]`` and passing on its last hidden state."""
    import torch
    import torch.nn as nn

    x = torch.as_tensor(np.asarray(obs, np.float32))
    with torch.no_grad():
        for m in _flatten(module):
            if isinstance(m, (nn.LSTM, nn.GRU)):
                seq = x.reshape(x.shape[0], -1, m.input_size)
                out, _ = m(seq) if m.batch_first else m(seq.transpose(0, 1))
                x = out[:, -1] if m.batch_first else out[-1]
            else:
                x = m(x)
    return x.numpy()


def _check_flat(extractor: Any, name: str) -> None:
    """Only SB3's default feature extractor (flattening the observation) is supported."""
    if type(extractor).__name__ != "FlattenExtractor":
        raise CheckpointError(
            f"{name}: feature extractor {type(extractor).__name__}: only MlpPolicy's "
            "FlattenExtractor is supported"
        )


def _sb3_actor(model: Any) -> Tuple[List[Any], str, Dict[str, Any]]:
    """The deterministic actor of a stable-baselines3 model: its modules, the head and the
    head's arguments, by algorithm and action space (what ``model.predict(obs,
    deterministic=True)`` computes)."""
    import torch.nn as nn
    from gymnasium import spaces

    space = model.action_space
    policy = model.policy
    name = type(model).__name__
    if name in ("PPO", "A2C"):
        _check_flat(policy.pi_features_extractor, name)
        if policy.squash_output:
            raise CheckpointError(f"{name}: squashed (gSDE) policies are not supported")
        modules = [policy.mlp_extractor.policy_net, policy.action_net]
    elif name == "DQN":
        _check_flat(policy.q_net.features_extractor, name)
        modules = [policy.q_net.q_net]
    elif name == "SAC":
        _check_flat(policy.actor.features_extractor, name)
        modules = [policy.actor.latent_pi, policy.actor.mu]
    elif name == "TD3":
        _check_flat(policy.actor.features_extractor, name)
        mu = list(policy.actor.mu)
        if not isinstance(mu[-1], nn.Tanh):
            raise CheckpointError("TD3: expected the actor to end in Tanh")
        modules = mu[:-1]
    else:
        raise CheckpointError(f"{name}: expected a PPO, A2C, DQN, SAC or TD3 model")
    if isinstance(space, spaces.Discrete):
        return modules, "argmax", {}
    if isinstance(space, spaces.MultiDiscrete):
        return modules, "multi_argmax", {"sizes": [int(n) for n in space.nvec.reshape(-1)]}
    if isinstance(space, spaces.MultiBinary):
        return modules, "binary", {}
    if isinstance(space, spaces.Box):
        bounds = {"low": space.low.reshape(-1).tolist(), "high": space.high.reshape(-1).tolist()}
        return modules, ("tanh" if name in ("SAC", "TD3") else "clip"), bounds
    raise CheckpointError(f"{name}: action space {space} not supported")


def export_sb3(
    model: Any,
    path: Union[str, Path],
    *,
    provenance: Optional[Mapping[str, Any]] = None,
    observation: Optional[Mapping[str, Any]] = None,
    env: Any = None,
) -> Tuple[Path, Path]:
    """Exports the deterministic actor of a stable-baselines3 PPO, A2C, DQN, SAC or TD3 model
    (default ``MlpPolicy``, flat Box observations) for the Rust runtime: the network and the head
    ``model.predict(obs, deterministic=True)`` applies (argmax; one per group for MultiDiscrete;
    logit > 0 for MultiBinary; the mean clipped to the bounds for PPO/A2C Box actions; tanh
    scaled to the bounds for SAC/TD3).

    The weights are read from ``model``, an object in this process: loading an SB3 zip
    (``PPO.load``) unpickles parts of it, so load only zips you trust; this function never
    reads a file.

    ``env``: the env the model was trained in (an mpsched env, its vector or SB3 wrapper, or
    ``gym.make``'s wrapper of one): its ``policy_obs`` is recorded, so that the policy runs as
    a scheduler (``--scheduler policy:PATH``)."""
    modules, head, kw = _sb3_actor(model)
    obs = _policy_obs(env) if env is not None else None
    size = int(np.prod(model.observation_space.shape))
    prov = {
        "algorithm": type(model).__name__.lower(),
        "library": "stable-baselines3",
        **(provenance or {}),
    }
    return export(
        modules, path, input_size=size, head=head, provenance=prov, observation=observation,
        action={"space": str(model.action_space)}, obs=obs, **kw,
    )  # fmt: skip


def _policy_obs(env: Any) -> Dict[str, Any]:
    """``policy_obs`` of an mpsched env, looking through SB3's and gymnasium's wrappers."""
    for candidate in (env, getattr(env, "venv", None), getattr(env, "unwrapped", None)):
        obs = getattr(candidate, "policy_obs", None)
        if isinstance(obs, dict):
            return obs
    raise CheckpointError(
        f"env: {type(env).__name__} is not an mpsched scheduling env (no policy_obs)"
    )
