"""Offline data: roll a fixed policy through a scheduling env and store every transition.

``mpsched collect SCENARIO --policy always-normal --episodes 100`` writes one Parquet file with
a row per transition (``episode, step, obs, action, reward, next_obs, terminated, truncated``,
``time_s``, the action mask and every reward term as ``term.<name>``), plus the env's set-up in
the file's metadata. :func:`load_transitions` reads it back as a replay buffer; because the
reward terms are stored, the same data can be relabelled with another reward
(:meth:`Transitions.relabel`). EdAR's offline learning starts from exactly such data (edar.txt,
§III-D: trajectories of always-normal and always-redundant scheduling).
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ._atomic import write_file_atomic
from .envs import SchedulerEnv, feature_names
from .envs._spec import ScenarioLike
from .rewards import Terms, get_reward

#: Built-in behaviour policies.
POLICIES = ("always-normal", "always-redundant", "minrtt", "random")
FORMAT = "mpsched-transitions/1"


class CollectError(ValueError):
    """Bad collect options or a file that is no transitions file (one-line message)."""


def _policy(name: str, env: SchedulerEnv, seed: int) -> Callable[[np.ndarray], Any]:
    space = env.action_space
    kind = env.action_kind
    if name == "random":
        space.seed(seed)
        return lambda obs: space.sample()
    if name == "always-normal":
        if kind != "mode":
            raise CollectError(f"--policy always-normal: needs --action mode, got {kind}")
        return lambda obs: 0
    if name == "always-redundant":
        if kind != "mode":
            raise CollectError(f"--policy always-redundant: needs --action mode, got {kind}")
        return lambda obs: 1
    if name == "minrtt":
        # Mode 0 is minRTT; an empty selection or all-zero weights fall back to minRTT too.
        zeros = np.zeros(env.layout.max_paths, np.float32)
        return (lambda obs: 0) if kind == "mode" else (lambda obs: zeros.astype(space.dtype))
    raise CollectError(f"--policy: expected one of {', '.join(POLICIES)}, got {name!r}")


def collect(
    scenario: ScenarioLike,
    policy: str,
    episodes: int,
    *,
    seed: int = 0,
    action: str = "mode",
    reward: str = "edar",
    interval: Union[float, str] = "min-rtt",
    history: int = 1,
    max_paths: int = 4,
    duration_s: Optional[float] = None,
    progress: Optional[Callable[[int], None]] = None,
) -> pa.Table:
    """Runs ``episodes`` episodes (seeds ``seed, seed + 1, ...``) and returns the transitions."""
    if episodes < 1:
        raise CollectError(f"--episodes: expected at least 1, got {episodes}")
    env = SchedulerEnv(
        scenario,
        action=action,
        reward=reward,
        interval=interval,
        history=history,
        max_paths=max_paths,
        duration_s=duration_s,
    )
    act = _policy(policy, env, seed)
    cols: Dict[str, List[Any]] = {
        k: []
        for k in (
            "episode",
            "step",
            "obs",
            "action",
            "reward",
            "next_obs",
            "terminated",
            "truncated",
            "time_s",
            "action_mask",
        )
    }
    terms: List[np.ndarray] = []
    term_names: List[str] = []
    for ep in range(episodes):
        obs, info = env.reset(seed=seed + ep)
        step = 0
        while True:
            a = act(obs)
            nxt, r, te, tr, info = env.step(a)
            cols["episode"].append(ep)
            cols["step"].append(step)
            cols["obs"].append(obs)
            cols["action"].append(np.asarray(a, np.float32).reshape(-1))
            cols["reward"].append(float(r))
            cols["next_obs"].append(nxt)
            cols["terminated"].append(bool(te))
            cols["truncated"].append(bool(tr))
            cols["time_s"].append(info["time_s"])
            cols["action_mask"].append(info["action_mask"])
            terms.append(info["terms"]._data)
            term_names = info["terms"].names()
            obs, step = nxt, step + 1
            if te or tr:
                break
        if progress:
            progress(ep + 1)
    stacked = {k: np.stack(v) if k in _LIST_COLUMNS else np.asarray(v) for k, v in cols.items()}
    t = np.stack(terms) if terms else np.zeros((0, len(term_names)))
    meta = {
        "format": FORMAT,
        "scenario": env._prepared.source,
        "flow": env.flow_name,
        "policy": policy,
        "episodes": episodes,
        "seed": seed,
        "action": action,
        "reward": reward,
        "interval": interval,
        "history": history,
        "max_paths": max_paths,
        "duration_s": duration_s,
        "features": feature_names(env.layout),
        "terms": term_names,
    }
    return transitions_table(stacked, t, term_names, meta)


# Arrow types of the columns of a transitions file; 2-D arrays are fixed-size list columns.
_COLUMN_TYPES = {
    "episode": pa.int32(),
    "step": pa.int32(),
    "obs": pa.float32(),
    "action": pa.float32(),
    "reward": pa.float64(),
    "next_obs": pa.float32(),
    "terminated": pa.bool_(),
    "truncated": pa.bool_(),
    "time_s": pa.float64(),
    "action_mask": pa.int8(),
}
_LIST_COLUMNS = ("obs", "action", "next_obs", "action_mask")


def transitions_table(
    cols: Dict[str, np.ndarray], terms: np.ndarray, term_names: Sequence[str], meta: Dict[str, Any]
) -> pa.Table:
    """A transitions table (``FORMAT``) from numpy columns, in the order given (``episode,
    step, obs, action, reward, next_obs, terminated, truncated``, optionally ``time_s`` and
    ``action_mask``; ``[N, width]`` arrays become fixed-size lists), then one ``term.<name>``
    column per reward term; ``meta`` is stored as the file's ``mpsched`` metadata. Used by
    ``mpsched collect`` and by EdAR's training (its collected offline data)."""
    arrays: Dict[str, pa.Array] = {}
    for name, a in cols.items():
        typ = _COLUMN_TYPES[name]
        a = np.asarray(a)
        if a.ndim == 2:
            flat = a.reshape(-1).astype(typ.to_pandas_dtype())
            arrays[name] = pa.FixedSizeListArray.from_arrays(pa.array(flat, typ), a.shape[1])
        else:
            arrays[name] = pa.array(a, typ)
    for i, name in enumerate(term_names):
        arrays[f"term.{name}"] = pa.array(terms[:, i], pa.float64())
    return pa.table(arrays).replace_schema_metadata({"mpsched": json.dumps(meta)})


def write_transitions(table: pa.Table, path: Union[str, Path]) -> None:
    """Writes the table atomically (a half-written file never appears under ``path``)."""
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd")
    write_file_atomic(path, buf.getvalue())


@dataclass
class Transitions:
    """Transitions as numpy arrays: a replay buffer."""

    obs: np.ndarray
    action: np.ndarray
    reward: np.ndarray
    next_obs: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    episode: np.ndarray
    terms: np.ndarray
    meta: Dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.reward.shape[0])

    @property
    def term_index(self) -> Dict[str, int]:
        return {n: i for i, n in enumerate(self.meta.get("terms", []))}

    def sample(self, batch_size: int, rng: np.random.Generator) -> Dict[str, np.ndarray]:
        """A uniform minibatch (with replacement)."""
        idx = rng.integers(0, len(self), batch_size)
        return {
            "obs": self.obs[idx],
            "action": self.action[idx],
            "reward": self.reward[idx],
            "next_obs": self.next_obs[idx],
            "terminated": self.terminated[idx],
        }

    def relabel(
        self, reward: Union[str, Callable[[Terms], Any]], kwargs: Optional[Dict[str, Any]] = None
    ) -> "Transitions":
        """The same transitions with rewards recomputed from the stored terms."""
        fn = get_reward(reward, kwargs)
        r = np.asarray(fn(Terms(self.terms, self.term_index)), np.float64).reshape(len(self))
        return Transitions(
            self.obs,
            self.action,
            r,
            self.next_obs,
            self.terminated,
            self.truncated,
            self.episode,
            self.terms,
            dict(self.meta, reward=str(reward)),
        )

    @staticmethod
    def concat(parts: Sequence["Transitions"]) -> "Transitions":
        if not parts:
            raise CollectError("no transitions to concatenate")
        shapes = {
            (p.obs.shape[1], p.action.shape[1], tuple(p.meta.get("terms", []))) for p in parts
        }
        if len(shapes) > 1:
            raise CollectError(
                "transitions files have different observation, action or term layouts"
            )
        cat = lambda name: np.concatenate([getattr(p, name) for p in parts])  # noqa: E731
        return Transitions(
            cat("obs"),
            cat("action"),
            cat("reward"),
            cat("next_obs"),
            cat("terminated"),
            cat("truncated"),
            cat("episode"),
            cat("terms"),
            dict(parts[0].meta, sources=[p.meta for p in parts]),
        )


def load_transitions(path: Union[str, Path]) -> Transitions:
    """Reads a file written by ``mpsched collect``."""
    path = Path(path)
    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowInvalid) as e:
        raise CollectError(f"{path}: not a readable Parquet file ({e})") from None
    raw = (table.schema.metadata or {}).get(b"mpsched")
    try:
        meta = json.loads(raw) if raw else None
    except ValueError:
        meta = None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise CollectError(f"{path}: metadata: expected an `mpsched collect` file ({FORMAT})")
    need = ["obs", "action", "reward", "next_obs", "terminated", "truncated", "episode"]
    missing = [c for c in need if c not in table.column_names]
    if missing:
        raise CollectError(f"{path}: column {missing[0]!r}: missing")

    def matrix(name: str) -> np.ndarray:
        col = table.column(name).combine_chunks()
        width = col.type.list_size
        return np.asarray(col.flatten().to_numpy(zero_copy_only=False)).reshape(-1, width)

    term_cols = [f"term.{n}" for n in meta.get("terms", [])]
    terms = (
        np.stack([table.column(c).to_numpy() for c in term_cols], axis=1)
        if term_cols
        else np.zeros((table.num_rows, 0))
    )
    return Transitions(
        obs=matrix("obs"),
        action=matrix("action"),
        reward=table.column("reward").to_numpy(),
        next_obs=matrix("next_obs"),
        terminated=table.column("terminated").to_numpy(zero_copy_only=False),
        truncated=table.column("truncated").to_numpy(zero_copy_only=False),
        episode=table.column("episode").to_numpy(),
        terms=terms,
        meta=meta,
    )
