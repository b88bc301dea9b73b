"""EdAR's offline data (§VI-A: trajectories of the fixed policies): the replay of transitions
and the Parquet transitions files it is read from and written to (the ``mpsched collect``
format). Moved out of :mod:`mpsched.agents.edar` (which re-exports every name) to keep that
file under 800 lines; the agent itself still reads top to bottom there."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Sequence

import numpy as np

from ..envs import ObsLayout, feature_names
from ..rewards import Terms
from ..rewards import edar as edar_reward

#: Transitions files (shared with ``mpsched collect``).
TRANSITIONS_FORMAT = "mpsched-transitions/1"


@dataclass
class Replay:
    """Transitions ``(s_t, a_t, r_t, s_{t+1})`` plus the flow-ended flag and reward terms."""

    obs: np.ndarray
    action: np.ndarray
    reward: np.ndarray
    next_obs: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    episode: np.ndarray
    terms: np.ndarray
    term_names: List[str]

    def __len__(self) -> int:
        return int(self.reward.shape[0])

    @staticmethod
    def empty(d: int, term_names: List[str]) -> "Replay":
        z = lambda *s, t=np.float32: np.zeros(s, t)  # noqa: E731
        return Replay(
            z(0, d),
            z(0, t=np.int64),
            z(0, t=np.float64),
            z(0, d),
            z(0, t=bool),
            z(0, t=bool),
            z(0, t=np.int32),
            z(0, len(term_names), t=np.float64),
            list(term_names),
        )

    @staticmethod
    def concat(parts: Sequence["Replay"]) -> "Replay":
        c = lambda n: np.concatenate([getattr(p, n) for p in parts])  # noqa: E731
        return Replay(
            c("obs"),
            c("action"),
            c("reward"),
            c("next_obs"),
            c("terminated"),
            c("truncated"),
            c("episode"),
            c("terms"),
            parts[0].term_names,
        )

    def tail(self, n: int) -> "Replay":
        """The newest ``n`` transitions (a full replay buffer drops its oldest, §V-C)."""
        if len(self) <= n:
            return self
        s = slice(len(self) - n, None)
        return Replay(
            self.obs[s],
            self.action[s],
            self.reward[s],
            self.next_obs[s],
            self.terminated[s],
            self.truncated[s],
            self.episode[s],
            self.terms[s],
            self.term_names,
        )

    def relabel(self, alpha: float, beta: float) -> "Replay":
        """Rewards recomputed with EdAR's reward from the stored terms."""
        idx = {n: i for i, n in enumerate(self.term_names)}
        r = np.asarray(
            edar_reward(Terms(self.terms, idx), alpha=alpha, beta=beta), np.float64
        ).reshape(len(self))
        return Replay(
            self.obs,
            self.action,
            r,
            self.next_obs,
            self.terminated,
            self.truncated,
            self.episode,
            self.terms,
            self.term_names,
        )


def write_transitions(replay: Replay, path: Path, meta: Dict[str, Any]) -> None:
    """Writes transitions as Parquet (the ``mpsched collect`` format), atomically."""
    from .. import collect

    steps = np.zeros(len(replay), np.int32)
    for i in range(1, len(replay)):
        steps[i] = steps[i - 1] + 1 if replay.episode[i] == replay.episode[i - 1] else 0
    cols = {
        "episode": replay.episode,
        "step": steps,
        "obs": replay.obs,
        "action": replay.action.reshape(-1, 1),
        "reward": replay.reward,
        "next_obs": replay.next_obs,
        "terminated": replay.terminated,
        "truncated": replay.truncated,
    }
    meta = dict(meta, format=TRANSITIONS_FORMAT, terms=replay.term_names)
    path.parent.mkdir(parents=True, exist_ok=True)
    collect.write_transitions(
        collect.transitions_table(cols, replay.terms, replay.term_names, meta), path
    )


class DataError(ValueError):
    """A bad offline-data file (one-line message naming the file and field)."""


def read_transitions(path: Path, layout: ObsLayout) -> Replay:
    """Reads a transitions file for ``layout`` (mode action, same history and subflow slots)."""
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except FileNotFoundError:
        raise DataError(f"{path}: no such file") from None
    except Exception as e:  # pyarrow's errors for non-Parquet files
        raise DataError(
            f"{path}: not a Parquet transitions file ({' '.join(str(e).split())})"
        ) from None
    raw = (table.schema.metadata or {}).get(b"mpsched")
    if raw is None:
        raise DataError(
            f"{path}: missing 'mpsched' metadata (write it with `mpsched collect` or `mpsched train edar`)"
        )
    meta = json.loads(raw)
    if meta.get("format") != TRANSITIONS_FORMAT:
        raise DataError(
            f"{path}: metadata 'format': expected {TRANSITIONS_FORMAT!r}, got {meta.get('format')!r}"
        )
    if meta.get("action") != "mode":
        raise DataError(
            f"{path}: metadata 'action': expected 'mode' (EdAR's normal/redundant), got {meta.get('action')!r}"
        )
    for key, want in (("history", layout.history), ("max_paths", layout.max_paths)):
        if meta.get(key) != want:
            raise DataError(f"{path}: metadata {key!r}: expected {want}, got {meta.get(key)!r}")
    if meta.get("interval") != "min-rtt":
        raise DataError(
            f"{path}: metadata 'interval': expected 'min-rtt' (EdAR's TI), got {meta.get('interval')!r}"
        )
    if "features" in meta and list(meta["features"]) != feature_names(layout):
        raise DataError(
            f"{path}: metadata 'features': the observation layout differs from this build's"
        )
    for col in ("obs", "action", "reward", "next_obs", "terminated"):
        if col not in table.column_names:
            raise DataError(f"{path}: missing column {col!r}")

    def mat(col: str, width: int) -> np.ndarray:
        a = table.column(col).combine_chunks()
        flat = a.flatten().to_numpy(zero_copy_only=False)
        if len(table) and flat.size != len(table) * width:
            raise DataError(
                f"{path}: column {col!r}: expected {width} values per row, got {flat.size // max(len(table), 1)}"
            )
        return flat.reshape(len(table), width)

    obs = mat("obs", layout.size).astype(np.float32)
    nxt = mat("next_obs", layout.size).astype(np.float32)
    act = mat("action", 1)[:, 0].astype(np.int64)
    if np.any((act != 0) & (act != 1)):
        raise DataError(f"{path}: column 'action': expected 0 (normal) or 1 (redundant)")
    term_names = list(meta.get("terms", []))
    terms = (
        np.stack([table.column(f"term.{n}").to_numpy() for n in term_names], 1)
        if term_names
        else np.zeros((len(table), 0))
    )

    def get(c, t):
        if c in table.column_names:
            return table.column(c).to_numpy().astype(t)
        return np.zeros(len(table), t)

    return Replay(
        obs,
        act,
        table.column("reward").to_numpy().astype(np.float64),
        nxt,
        get("terminated", bool),
        get("truncated", bool),
        get("episode", np.int32),
        terms.astype(np.float64),
        term_names,
    )
