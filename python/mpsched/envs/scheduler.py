"""``mpsched/Scheduler-v0`` and ``mpsched/CongestionControl-v0``: one simulation per env.

The simulation pauses at every decision boundary of one controlled flow (a fixed period, or
EdAR's transmission interval = the minimum subflow RTT); the action applies until the next
boundary. Observations are flat ``float32`` vectors laid out by :class:`ObsLayout`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple, Union

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from .. import _core
from ..results import Results
from ..rewards import RewardFn, Terms, get_reward
from ..scenario import SCENARIO_DIR
from ._spec import EnvConfigError, ScenarioLike, prepare


@dataclass(frozen=True)
class Feature:
    """One observation feature, as the core defines it (``mpsched_sim::env::features``)."""

    name: str
    kind: str  # "float" or "int"
    unit: str
    seen_by: str  # "sender", "receiver" or "model" (the simulator's energy model)
    doc: str


#: Feature groups of a frame, in frame order: ``subflow``, ``connection``, ``flow``. The one
#: definition lives in the core; every name, offset and kind here is derived from it.
FEATURES: Dict[str, Tuple[Feature, ...]] = {
    group: tuple(Feature(*f) for f in feats) for group, feats in _core.obs_features()
}
SUBFLOW_FEATURES = tuple(f.name for f in FEATURES["subflow"])
CONN_FEATURES = tuple(f.name for f in FEATURES["connection"])
FLOW_FEATURES = tuple(f.name for f in FEATURES["flow"])
#: Integer-valued features per group (flags, discrete actions; stored exactly as float32).
INTEGER_FEATURES: Dict[str, Tuple[str, ...]] = {
    group: tuple(f.name for f in feats if f.kind == "int") for group, feats in FEATURES.items()
}
#: Features a sending host can compute from its own connection, per group: what a policy meant
#: to run in a real sender may read (the others need the receiver or the simulator's models).
SENDER_FEATURES: Dict[str, Tuple[str, ...]] = {
    group: tuple(f.name for f in feats if f.seen_by == "sender")
    for group, feats in FEATURES.items()
}

ACTIONS = ("mode", "weights", "select", "choose")


@dataclass(frozen=True)
class ObsLayout:
    """Where each feature sits in the flat observation (offsets from the core's layout).

    The observation is ``history`` frames, oldest first, then a mask. A frame holds
    ``max_paths`` subflow slots of :data:`SUBFLOW_FEATURES`, the connection's
    :data:`CONN_FEATURES` and (congestion-control envs) ``max_flows`` slots of
    :data:`FLOW_FEATURES`. The mask is 1 per usable subflow (then 1 per active flow).
    """

    max_paths: int
    history: int
    max_flows: int = 0

    @cached_property
    def offsets(self) -> Dict[str, int]:
        """Every offset and length by name, as the core computes them."""
        return dict(_core.obs_layout(self.max_paths, self.history, self.max_flows))

    @property
    def frame_len(self) -> int:
        return self.offsets["frame_len"]

    @property
    def mask_len(self) -> int:
        return self.offsets["mask_len"]

    @property
    def size(self) -> int:
        return self.offsets["size"]

    def frames(self, obs: np.ndarray) -> np.ndarray:
        """``[..., history, frame_len]`` view of observations."""
        return obs[..., : self.history * self.frame_len].reshape(
            *obs.shape[:-1], self.history, self.frame_len
        )

    def subflows(self, obs: np.ndarray) -> np.ndarray:
        """``[..., history, max_paths, n_subflow_features]``."""
        o, n = self.offsets["subflow_offset"], self.offsets["subflow_stride"]
        f = self.frames(obs)[..., o : o + self.max_paths * n]
        return f.reshape(*f.shape[:-1], self.max_paths, n)

    def connection(self, obs: np.ndarray) -> np.ndarray:
        """``[..., history, n_conn_features]``."""
        o = self.offsets["conn_offset"]
        return self.frames(obs)[..., o : o + self.offsets["conn_len"]]

    def flows(self, obs: np.ndarray) -> np.ndarray:
        """``[..., history, max_flows, n_flow_features]`` (congestion-control envs)."""
        o, n = self.offsets["flow_offset"], self.offsets["flow_stride"]
        f = self.frames(obs)[..., o : o + self.max_flows * n]
        return f.reshape(*f.shape[:-1], self.max_flows, n)

    def path_mask(self, obs: np.ndarray) -> np.ndarray:
        o = self.offsets["path_mask_offset"]
        return obs[..., o : o + self.max_paths]

    def flow_mask(self, obs: np.ndarray) -> np.ndarray:
        o = self.offsets["flow_mask_offset"]
        return obs[..., o : o + self.max_flows]


def action_space(action: str, max_paths: int) -> spaces.Space:
    if action == "mode":
        return spaces.Discrete(2)
    if action == "weights":
        return spaces.Box(0.0, 1.0, (max_paths,), np.float32)
    if action == "select":
        return spaces.MultiBinary(max_paths)
    if action == "choose":
        return spaces.Discrete(max_paths)
    if action == "cwnd":
        return spaces.Box(-1.0, 1.0, (max_paths,), np.float32)
    raise EnvConfigError(f"action: expected one of mode, weights, select, choose, got {action!r}")


def action_row(action: str, a: Any, out: np.ndarray) -> None:
    """Writes a (single-env) action into the core's float32 row."""
    if action == "mode":
        out[0] = float(int(np.asarray(a).reshape(-1)[0]))
    elif action == "choose":
        k = int(np.asarray(a).reshape(-1)[0])
        if not 0 <= k < out.shape[0]:
            raise ValueError(f"action: expected a path slot in 0..{out.shape[0] - 1}, got {k}")
        out[:] = 0.0
        out[k] = 1.0
    else:
        row = np.asarray(a, dtype=np.float32).reshape(-1)
        if row.shape[0] != out.shape[0]:
            raise ValueError(
                f"action: expected {out.shape[0]} values (one per path slot, max_paths), got {row.shape[0]}"
            )
        out[:] = row


def _relabel(res: Results, flows: Any, column: str, label: str) -> Results:
    """``res`` with the ``column`` (scheduler or cc) of the flows named in ``flows`` set to
    ``label``."""
    import dataclasses

    import pyarrow as pa

    names = res.flows.column("name").to_pylist()
    old = res.flows.column(column).to_pylist()
    values = [label if n in flows else v for n, v in zip(names, old)]
    i = res.flows.column_names.index(column)
    table = res.flows.set_column(i, column, pa.array(values, pa.string()))
    summary = dict(res.summary)
    summary["flows"] = [
        {**f, column: label} if f.get("name") in flows else f for f in res.summary["flows"]
    ]
    return dataclasses.replace(res, flows=table, summary=summary)


#: The scenario (in the package's scenarios/) an env runs when none is given:
#: ``mpsched/Scheduler-v0`` EdAR's WiFi/LTE handoff, ``mpsched/CongestionControl-v0`` DRL-CC's
#: random host.
DEFAULT_SCENARIO = {"scheduler": "edar-handoff.toml", "cc": "drl-cc-random.toml"}


def default_scenario(action: str) -> Path:
    """The packaged scenario an env with ``action`` runs when none is given."""
    return SCENARIO_DIR / DEFAULT_SCENARIO["cc" if action == "cwnd" else "scheduler"]


class _CoreBase(gym.Env):
    """What every env of the core shares: the core object made at the first reset, the
    buffers it writes into, the reward, ``reset``/``step``/``results``. A subclass sets
    ``action_space``, ``observation_space``, ``layout`` and implements ``_write_action``,
    ``_mask_info`` and ``_controlled``."""

    metadata = {"render_modes": []}

    def __init__(
        self,
        spec_json: str,
        obs_len: int,
        act_len: int,
        reward: Union[str, RewardFn],
        reward_kwargs: Optional[Dict[str, Any]],
    ) -> None:
        super().__init__()
        self._spec_json = spec_json
        self.reward_fn = get_reward(reward, reward_kwargs)
        self.reward_name = (
            reward if isinstance(reward, str) else getattr(reward, "__name__", "custom")
        )
        self._core: Optional[Any] = None
        # Buffers the core writes into, made once.
        self._obs = np.zeros(obs_len, np.float32)
        self._act = np.zeros(act_len, np.float32)
        self._terms = np.zeros(0, np.float64)
        self._index: Dict[str, int] = {}
        self.episode_seed: Optional[int] = None

    def _write_action(self, action: Any) -> None:
        raise NotImplementedError

    def _mask_info(self) -> Dict[str, Any]:
        raise NotImplementedError

    def _controlled(self, res: Results) -> Tuple[List[str], str]:
        """The flows the agent controls in ``res`` and the column naming their algorithm."""
        raise NotImplementedError

    def _info(self) -> Dict[str, Any]:
        return {
            "time_s": self._core.now_s,
            **self._mask_info(),
            "terms": Terms(self._terms.copy(), self._index),
        }

    def reset(
        self, *, seed: Optional[int] = None, options: Optional[Dict[str, Any]] = None
    ) -> Tuple[np.ndarray, Dict[str, Any]]:
        """A new episode; ranges in the scenario are drawn anew from the episode's seed."""
        super().reset(seed=seed)
        episode_seed = int(self.np_random.integers(0, 2**63 - 1))
        if options and "scenario_seed" in options:
            episode_seed = int(options["scenario_seed"])
        self.episode_seed = episode_seed
        if self._core is None:
            self._core = _core.Env(self._spec_json, episode_seed)
            self._terms = np.zeros(self._core.terms_len, np.float64)
            self._index = {n: i for i, n in enumerate(self._core.term_names)}
        self._core.reset(episode_seed, self._obs)
        self._terms[:] = 0.0
        return self._obs.copy(), self._info()

    def results(self, label: Optional[str] = None) -> Results:
        """The current episode as :func:`mpsched.run` reports a run (summary and tables up to
        now; the whole episode once it ended), for ``write_results``, ``plot`` and ``report``.
        ``label`` names the agent in the controlled flows' ``scheduler`` (or ``cc``) column and
        summary entries, instead of the external algorithm's label."""
        if self._core is None:
            raise gym.error.ResetNeeded("call reset() before results()")
        res = Results.from_core(self._core.output())
        if label is not None:
            flows, column = self._controlled(res)
            res = _relabel(res, flows, column, label)
        return res

    def step(self, action: Any) -> Tuple[np.ndarray, float, bool, bool, Dict[str, Any]]:
        if self._core is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        self._write_action(action)
        terminated, truncated = self._core.step(self._act, self._obs, self._terms)
        reward = float(self.reward_fn(Terms(self._terms, self._index)))
        return self._obs.copy(), reward, terminated, truncated, self._info()


class _CoreEnv(_CoreBase):
    """Shared machinery of the two single-flow envs."""

    def __init__(
        self,
        scenario: ScenarioLike,
        *,
        action: str,
        reward: Union[str, RewardFn],
        reward_kwargs: Optional[Dict[str, Any]],
        flow: Union[int, str, None],
        interval: Union[float, str],
        max_paths: int,
        history: int,
        max_flows: int,
        cwnd_step: float = 10.0,
        duration_s: Optional[float] = None,
        initial_mode: Union[int, str, None] = None,
        fallback: str = "minrtt",
        sender_only: bool = False,
        busy: str = "wait",
    ) -> None:
        self.action_kind = action
        self._prepared = prepare(
            scenario,
            action=action,
            flow=flow,
            interval=interval,
            max_paths=max_paths,
            history=history,
            max_flows=max_flows,
            cwnd_step=cwnd_step,
            duration_s=duration_s,
            initial_mode=initial_mode,
            fallback=fallback,
            sender_only=sender_only,
            busy=busy,
        )
        host = max_flows if action == "cwnd" else 0
        self.layout = ObsLayout(max_paths, history, host)
        super().__init__(
            self._prepared.spec_json,
            self.layout.size,
            1 if action == "mode" else max_paths,
            reward,
            reward_kwargs,
        )
        self.action_space = action_space(action, max_paths)
        self.observation_space = spaces.Box(-1.0, np.inf, (self.layout.size,), np.float32)

    @property
    def flow_name(self) -> str:
        """The controlled flow."""
        return self._prepared.flow_name

    @property
    def policy_obs(self) -> Dict[str, Any]:
        """What a policy trained here observes and how its action acts: the ``obs`` block
        :func:`mpsched.policies.export_sb3` writes with ``env=``."""
        return dict(self._prepared.policy_obs)

    def _write_action(self, action: Any) -> None:
        action_row(self.action_kind, action, self._act)

    def _mask_info(self) -> Dict[str, Any]:
        return {"action_mask": self.layout.path_mask(self._obs).astype(np.int8)}

    def _controlled(self, res: Results) -> Tuple[List[str], str]:
        return [self.flow_name], "cc" if self.action_kind == "cwnd" else "scheduler"


class SchedulerEnv(_CoreEnv):
    """``mpsched/Scheduler-v0``: schedule one multipath connection of a scenario.

    Args:
        scenario: a scenario file or dict (see docs/scenarios.md); default the packaged
            ``edar-handoff.toml`` (:data:`DEFAULT_SCENARIO`). Ranges in it
            (``{range = [lo, hi]}``) are drawn anew every episode from the episode's seed.
        action: ``"mode"`` (Discrete(2): normal/redundant, EdAR), ``"weights"`` (Box [0, 1]^P:
            each path's share of new data, PDAA3C), ``"choose"`` (Discrete(P): the one path for the
            next interval, PDAA3C's per-epoch choice) or ``"select"`` (MultiBinary(P): the paths to
            use, MPTCP-RL). ``info["action_mask"]`` marks usable paths. Weights all zero, or no
            usable path selected, leave the choice to ``fallback``.
        reward: a name of :data:`mpsched.rewards.REWARDS` (``edar``, ``mptcp-rl``, ``pdaa3c``,
            ``drl-cc``, ``goodput``) or ``fn(terms) -> float``; ``reward_kwargs`` override its
            weights.
        flow: the controlled flow (name or index; default the first multipath flow).
        interval: decision period in ms, or ``"min-rtt"`` (EdAR's transmission interval).
        max_paths: observation/action slots (paths beyond the flow's are masked out).
        history: intervals of history in the observation (EdAR: k + 1 = 6).
        duration_s: overrides the scenario's duration (episode length).
        initial_mode: ``action="mode"`` only: the mode from the flow's start until the first
            decision, ``"normal"`` (default) or ``"redundant"`` (EdAR: redundant at the start of
            a connection, before the first transmission interval is known).
        fallback: ``weights``/``select`` only: the scheduler when the agent chooses nothing
            usable, ``"minrtt"`` (default: the minRTT ``mpsched compare`` runs, with
            opportunistic retransmission and penalization) or ``"minrtt-norp"``.
        sender_only: observations hold only what the flow's sender can compute (features seen
            by the receiver or a model are 0): train so to deploy the policy as a scheduler
            (``--scheduler policy:PATH``, docs/policies.md).
        busy: ``weights``/``select``/``choose`` only: when the path due for a segment has no
            window space, ``"wait"`` for it (default) or send on ``"minrtt"``'s choice among
            the available paths (RLDS-proxy's fallback, rl-baselines.md §4).
    """

    def __init__(
        self,
        scenario: Optional[ScenarioLike] = None,
        action: str = "mode",
        reward: Union[str, RewardFn] = "edar",
        reward_kwargs: Optional[Dict[str, Any]] = None,
        flow: Union[int, str, None] = None,
        interval: Union[float, str] = "min-rtt",
        max_paths: int = 4,
        history: int = 1,
        duration_s: Optional[float] = None,
        initial_mode: Union[int, str, None] = None,
        fallback: str = "minrtt",
        sender_only: bool = False,
        busy: str = "wait",
    ) -> None:
        if action not in ACTIONS:
            raise EnvConfigError(f"action: expected one of {', '.join(ACTIONS)}, got {action!r}")
        super().__init__(
            default_scenario(action) if scenario is None else scenario,
            action=action,
            reward=reward,
            reward_kwargs=reward_kwargs,
            flow=flow,
            interval=interval,
            max_paths=max_paths,
            history=history,
            max_flows=8,
            duration_s=duration_s,
            initial_mode=initial_mode,
            fallback=fallback,
            sender_only=sender_only,
            busy=busy,
        )


class CongestionControlEnv(_CoreEnv):
    """``mpsched/CongestionControl-v0``: set the congestion windows of one MPTCP connection
    among the flows of a host (DRL-CC's set-up).

    Every interval the action ``a ∈ [-1, 1]^P`` changes subflow i's window by
    ``a_i · cwnd_step`` segments (at least 2 segments remain). The observation adds, per flow of
    the scenario (up to ``max_flows``, masked), DRL-CC's per-flow state: sending rate, goodput,
    mean RTT, RTT deviation, window. Default reward: DRL-CC's Σ log(goodput) over active flows.
    """

    def __init__(
        self,
        scenario: Optional[ScenarioLike] = None,
        reward: Union[str, RewardFn] = "drl-cc",
        reward_kwargs: Optional[Dict[str, Any]] = None,
        flow: Union[int, str, None] = None,
        interval: Union[float, str] = 100.0,
        max_paths: int = 4,
        max_flows: int = 8,
        history: int = 1,
        cwnd_step: float = 10.0,
        duration_s: Optional[float] = None,
    ) -> None:
        if not isinstance(max_flows, int) or not 1 <= max_flows <= 64:
            raise EnvConfigError(f"max_flows: expected an integer in 1..64, got {max_flows!r}")
        if not cwnd_step > 0:
            raise EnvConfigError(f"cwnd_step: expected a number of segments > 0, got {cwnd_step!r}")
        super().__init__(
            default_scenario("cwnd") if scenario is None else scenario,
            action="cwnd",
            reward=reward,
            reward_kwargs=reward_kwargs,
            flow=flow,
            interval=interval,
            max_paths=max_paths,
            history=history,
            max_flows=max_flows,
            cwnd_step=cwnd_step,
            duration_s=duration_s,
        )


def feature_names(layout: ObsLayout) -> List[str]:
    """Name of every observation element, e.g. ``t-1/sub0/srtt``, ``t0/conn/goodput``, ``mask/path0``."""
    names: List[str] = []
    for h in range(layout.history):
        tag = f"t{h - layout.history + 1}" if h < layout.history - 1 else "t0"
        names += [f"{tag}/sub{i}/{n}" for i in range(layout.max_paths) for n in SUBFLOW_FEATURES]
        names += [f"{tag}/conn/{n}" for n in CONN_FEATURES]
        names += [f"{tag}/flow{j}/{n}" for j in range(layout.max_flows) for n in FLOW_FEATURES]
    names += [f"mask/path{i}" for i in range(layout.max_paths)]
    names += [f"mask/flow{j}" for j in range(layout.max_flows)]
    return names
