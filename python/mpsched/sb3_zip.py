"""Export a stable-baselines3 zip without unpickling it (``mpsched export sb3``).

An SB3 zip holds ``data`` (JSON; some entries are cloudpickled, which ``PPO.load`` runs) and
``policy.pth`` (the policy's state dict, a PyTorch pickle). This reader takes only the JSON's
plain fields (the spaces' ``n``, ``nvec``, ``low``, ``high``) and loads ``policy.pth`` with
``torch.load(weights_only=True)``, PyTorch's restricted unpickler that builds tensors and
containers and nothing else; cloudpickled entries are never decoded. The network is rebuilt from
the tensor names (default ``MlpPolicy`` of PPO, A2C, DQN, SAC or TD3) and exported with
:func:`mpsched.policies.export`.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np

from .agents.checkpoint import CheckpointError
from .policies import export

#: Activation of the default MlpPolicy per algorithm (stable-baselines3's defaults).
DEFAULT_ACTIVATION = {"ppo": "tanh", "a2c": "tanh", "dqn": "relu", "sac": "relu", "td3": "relu"}

#: Where each algorithm's actor sits in the state dict: (hidden layers' prefix, output prefix).
_ACTORS = {
    "ppo/a2c": ("mlp_extractor.policy_net.", "action_net."),
    "dqn": ("q_net.q_net.", None),
    "sac": ("actor.latent_pi.", "actor.mu."),
    "td3": ("actor.mu.", None),
}


def _numbers(text: Any, where: str) -> np.ndarray:
    """A numpy array printed by ``repr``/``str`` (``"[-4.8 -inf 0.4]"``, ``"[3 2 4]"``, ``"2"``)."""
    tokens = re.findall(r"[-+]?(?:inf|nan|\d+\.?\d*(?:e[-+]?\d+)?|\.\d+)", str(text))
    if not tokens:
        raise CheckpointError(f"{where}: expected numbers, got {str(text)[:40]!r}")
    return np.array([float(t) for t in tokens])


def _space(entry: Any, where: str) -> Tuple[str, Dict[str, Any]]:
    """(kind, fields) of a space in the zip's ``data``, from its plain fields only."""
    if not isinstance(entry, dict) or ":type:" not in entry:
        raise CheckpointError(f"{where}: expected a gymnasium space")
    kind = str(entry[":type:"]).rsplit(".", 1)[-1].rstrip("'>")
    if kind == "Discrete":
        return kind, {"n": int(_numbers(entry["n"], where)[0])}
    if kind == "MultiDiscrete":
        return kind, {"sizes": [int(x) for x in _numbers(entry["nvec"], where)]}
    if kind == "MultiBinary":
        return kind, {"n": int(np.prod(_numbers(entry["n"], where)))}
    if kind == "Box":
        low, high = _numbers(entry["low"], where), _numbers(entry["high"], where)
        return kind, {"low": low.tolist(), "high": high.tolist(), "size": low.size}
    raise CheckpointError(f"{where}: space {kind} not supported")


def _algorithm(keys: List[str]) -> str:
    if any(k.startswith("action_net.") for k in keys):
        return "ppo/a2c"
    if any(k.startswith("q_net.q_net.") for k in keys):
        return "dqn"
    if any(k.startswith("actor.latent_pi.") for k in keys):
        return "sac"
    if any(k.startswith("actor.mu.0.") for k in keys):
        return "td3"
    raise CheckpointError("policy.pth: not the default MlpPolicy of PPO, A2C, DQN, SAC or TD3")


def _linears(state: Dict[str, Any], prefix: str) -> List[Any]:
    """The ``Linear`` layers under ``prefix`` (``prefix.<i>.weight``), in index order."""
    import torch.nn as nn

    idx = sorted({int(k[len(prefix) :].split(".")[0]) for k in state if k.startswith(prefix)})
    out = []
    for i in idx:
        w, b = state[f"{prefix}{i}.weight"], state.get(f"{prefix}{i}.bias")
        lin = nn.Linear(w.shape[1], w.shape[0], bias=b is not None)
        lin.weight.data.copy_(w)
        if b is not None:
            lin.bias.data.copy_(b)
        out.append(lin)
    return out


def _actor(state: Dict[str, Any], algo: str, activation: str) -> List[Any]:
    """The actor's modules: hidden linears each followed by the activation, then the output."""
    import torch.nn as nn

    act = {"tanh": nn.Tanh, "relu": nn.ReLU}[activation]
    hidden_prefix, out_prefix = _ACTORS[algo]
    hidden = _linears(state, hidden_prefix)
    if out_prefix is None:  # the output layer is the last of the sequence
        hidden, last = hidden[:-1], hidden[-1]
    else:
        w, b = state[out_prefix + "weight"], state[out_prefix + "bias"]
        last = nn.Linear(w.shape[1], w.shape[0])
        last.weight.data.copy_(w)
        last.bias.data.copy_(b)
    modules: List[Any] = []
    for lin in hidden:
        modules += [lin, act()]
    return modules + [last]


def export_sb3_zip(
    zip_path: Union[str, Path], out: Union[str, Path], activation: Optional[str] = None
) -> Tuple[Path, Path]:
    """Exports the deterministic actor of an SB3 zip (see the module docs); ``activation``
    overrides the algorithm's default (needed when the model was trained with another
    ``activation_fn``, which the zip stores only cloudpickled)."""
    import torch

    zp = Path(zip_path)
    try:
        with zipfile.ZipFile(zp) as z:
            data = json.loads(z.read("data"))
            state = torch.load(
                io.BytesIO(z.read("policy.pth")), weights_only=True, map_location="cpu"
            )
    except (zipfile.BadZipFile, KeyError, OSError, ValueError) as e:
        raise CheckpointError(f"{zp}: not a stable-baselines3 zip ({e})") from None
    except Exception as e:  # torch's restricted unpickler refuses anything but tensors
        raise CheckpointError(f"{zp}: policy.pth: not plain tensors ({type(e).__name__})") from None
    algo = _algorithm(list(state))
    name = {"ppo/a2c": "ppo"}.get(algo, algo)
    kwargs = data.get("policy_kwargs") or {}
    if activation is None:
        if isinstance(kwargs, dict) and "activation_fn" in kwargs:
            raise CheckpointError(
                f"{zp}: the model sets its own activation_fn (stored pickled): give --activation"
            )
        activation = DEFAULT_ACTIVATION[name]
    if activation not in ("tanh", "relu"):
        raise CheckpointError(f"activation: expected tanh or relu, got {activation!r}")
    obs_kind, obs = _space(data.get("observation_space"), f"{zp}: observation_space")
    if obs_kind != "Box":
        raise CheckpointError(f"{zp}: observation_space: expected a Box, got {obs_kind}")
    kind, space = _space(data.get("action_space"), f"{zp}: action_space")
    head: Dict[str, Any] = {
        "Discrete": {"head": "argmax"},
        "MultiDiscrete": {"head": "multi_argmax", "sizes": space.get("sizes")},
        "MultiBinary": {"head": "binary"},
        "Box": {"head": "tanh" if name in ("sac", "td3") else "clip",
                "low": space.get("low"), "high": space.get("high")},
    }[kind]  # fmt: skip
    return export(
        _actor(state, algo, activation), out, input_size=int(obs["size"]),
        provenance={"library": "stable-baselines3", "algorithm": algo, "source": zp.name},
        action={"space": kind, **space}, **head,
    )  # fmt: skip
