"""``mpsched/Host-v0``: one agent observes and controls every flow of a host (DRL-CC's and
MPTCP-RL's set-up), and :class:`HostVectorEnv`, many of them stepped in Rust.

The simulation pauses every ``interval`` ms. Flows come and go (workloads, repeated
downloads); each running flow holds a *slot* (``max_flows`` of them), so observations and
actions have a fixed shape, padded and masked. See docs/envs.md, "Host env", and the core's
``mpsched_sim::env::host`` for the slot rules.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import batch_space

from .. import _core
from ..results import Results
from ..rewards import RewardFn
from ..scenario import SCENARIO_DIR
from ._spec import FALLBACKS, EnvConfigError, ScenarioLike, _load
from .scheduler import FLOW_FEATURES, SUBFLOW_FEATURES, _CoreBase
from .vector import _CoreVectorBase

#: Action spaces of the host env.
HOST_ACTIONS = ("cwnd", "weights", "select", "choose", "paths")
#: ``cwnd`` targets: one flow per step in turn (DRL-CC), or every controlled flow at once.
TARGETS = ("rotate", "all")
#: The scenario a host env runs when none is given, per action: DRL-CC's random host (5 MPTCP
#: flows × 2 subflows) for windows, MPTCP-RL's WiFi/LTE short flows for path choices.
DEFAULT_HOST_SCENARIO = {"cwnd": "drl-cc-random.toml", "paths": "mptcp-rl-short.toml"}


@dataclass(frozen=True)
class HostLayout:
    """Where each feature sits in a host observation (offsets from the core's layout).

    ``history`` frames, oldest first, then the masks. A frame holds ``max_flows`` flow slots;
    a flow slot holds :data:`FLOW_FEATURES`, then ``max_subflows`` slots of
    :data:`SUBFLOW_FEATURES` (subflow i: the flow's i-th path). The subflow mask (1 = usable:
    established, path up; the action mask of path choices) and the flow mask (1 = running)
    follow the frames.
    """

    max_flows: int
    max_subflows: int
    history: int

    @cached_property
    def offsets(self) -> Dict[str, int]:
        """Every offset and length by name, as the core computes them."""
        return dict(_core.host_layout(self.max_flows, self.max_subflows, self.history))

    @property
    def size(self) -> int:
        return self.offsets["size"]

    def frames(self, obs: np.ndarray) -> np.ndarray:
        """``[..., history, max_flows, flow_stride]`` view of observations."""
        n = self.history * self.offsets["frame_len"]
        return obs[..., :n].reshape(*obs.shape[:-1], self.history, self.max_flows, -1)

    def flows(self, obs: np.ndarray) -> np.ndarray:
        """``[..., history, max_flows, n_flow_features]``."""
        return self.frames(obs)[..., : self.offsets["flow_len"]]

    def subflows(self, obs: np.ndarray) -> np.ndarray:
        """``[..., history, max_flows, max_subflows, n_subflow_features]``."""
        f = self.frames(obs)[..., self.offsets["flow_len"] :]
        return f.reshape(*f.shape[:-1], self.max_subflows, self.offsets["subflow_stride"])

    def subflow_mask(self, obs: np.ndarray) -> np.ndarray:
        """``[..., max_flows, max_subflows]``: 1 where a subflow can carry data."""
        o = self.offsets["subflow_mask_offset"]
        m = obs[..., o : o + self.max_flows * self.max_subflows]
        return m.reshape(*obs.shape[:-1], self.max_flows, self.max_subflows)

    def flow_mask(self, obs: np.ndarray) -> np.ndarray:
        """``[..., max_flows]``: 1 where a slot holds a running flow."""
        o = self.offsets["flow_mask_offset"]
        return obs[..., o : o + self.max_flows]


def host_feature_names(layout: HostLayout) -> List[str]:
    """Name of every observation element, e.g. ``t0/flow2/goodput``, ``t0/flow2/sub1/srtt``."""
    names: List[str] = []
    for h in range(layout.history):
        tag = f"t{h - layout.history + 1}" if h < layout.history - 1 else "t0"
        for j in range(layout.max_flows):
            names += [f"{tag}/flow{j}/{n}" for n in FLOW_FEATURES]
            names += [
                f"{tag}/flow{j}/sub{i}/{n}"
                for i in range(layout.max_subflows)
                for n in SUBFLOW_FEATURES
            ]
    names += [
        f"mask/flow{j}/sub{i}" for j in range(layout.max_flows) for i in range(layout.max_subflows)
    ]
    names += [f"mask/flow{j}" for j in range(layout.max_flows)]
    return names


def host_action_space(action: str, target: str, max_flows: int, max_subflows: int) -> spaces.Space:
    """``cwnd``: Box [-1, 1] per subflow of the target flow (``rotate``) or of every flow slot
    (``all``); ``weights``: Box [0, 1] per flow slot and subflow; ``select``: MultiBinary of the
    same shape; ``choose``: MultiDiscrete, one subflow per flow slot; ``paths``: Box [0, 1] per
    path slot, shared by every controlled flow (MPTCP-RL's host-level path probabilities)."""
    shape = (max_flows, max_subflows)
    if action == "paths":
        return spaces.Box(0.0, 1.0, (max_subflows,), np.float32)
    if action == "cwnd":
        return spaces.Box(-1.0, 1.0, (max_subflows,) if target == "rotate" else shape, np.float32)
    if action == "weights":
        return spaces.Box(0.0, 1.0, shape, np.float32)
    if action == "select":
        return spaces.MultiBinary(list(shape))
    return spaces.MultiDiscrete([max_subflows] * max_flows)


def host_action_rows(action: str, actions: Any, out: np.ndarray, max_subflows: int) -> None:
    """Writes a batch of host actions (``[n, *action_space.shape]``) into the core's rows."""
    n = out.shape[0]
    if action == "choose":
        k = np.asarray(actions, dtype=np.int64).reshape(n, -1)
        if k.shape[1] * max_subflows != out.shape[1]:
            raise ValueError(f"action: expected {out.shape[1] // max_subflows} subflow choices")
        if ((k < 0) | (k >= max_subflows)).any():
            raise ValueError(f"action: expected subflow slots in 0..{max_subflows - 1}")
        out[:] = 0.0
        rows = np.repeat(np.arange(n), k.shape[1])
        out[rows, (np.arange(k.shape[1]) * max_subflows + k).reshape(-1)] = 1.0
        return
    a = np.asarray(actions, dtype=np.float32)
    if a.size != out.size:
        raise ValueError(f"action: expected {out.size // n} values per env, got {a.size // n}")
    out[:] = a.reshape(out.shape)


def _host_names(sc: Dict[str, Any]) -> List[str]:
    """Flow and workload names of a scenario (what ``flows=`` may name)."""
    items = list(sc.get("flows") or []) + list(sc.get("workloads") or [])
    return [str(f.get("name")) for f in items if isinstance(f, dict)]


def _max_paths(sc: Dict[str, Any], flows: Optional[Sequence[str]]) -> int:
    items = list(sc.get("flows") or []) + list(sc.get("workloads") or [])
    n = [
        len(f.get("paths", [f.get("path")]))
        for f in items
        if isinstance(f, dict) and (flows is None or str(f.get("name")) in flows)
    ]
    return max(n, default=1)


def _check_int(name: str, value: Any, lo: int, hi: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise EnvConfigError(f"{name}: expected an integer in {lo}..{hi}, got {value!r}")


def prepare_host(
    scenario: Optional[ScenarioLike],
    *,
    action: str,
    target: str = "rotate",
    flows: Optional[Sequence[str]] = None,
    control: str = "multipath",
    interval: float = 100.0,
    max_flows: Optional[int] = None,
    max_subflows: int = 4,
    history: int = 1,
    cwnd_step: float = 10.0,
    duration_s: Optional[float] = None,
    fallback: str = "minrtt",
    sender_only: bool = False,
) -> Tuple[str, HostLayout]:
    """Checks the options and returns the core's spec (JSON) and the layout."""
    if not isinstance(sender_only, bool):
        raise EnvConfigError(f"sender_only: expected True or False, got {sender_only!r}")
    if action not in HOST_ACTIONS:
        raise EnvConfigError(f"action: expected one of {', '.join(HOST_ACTIONS)}, got {action!r}")
    if target not in TARGETS:
        raise EnvConfigError(f"target: expected one of {', '.join(TARGETS)}, got {target!r}")
    if control not in ("multipath", "all", "none") or (control == "all" and action != "cwnd"):
        raise EnvConfigError(
            f'control: expected "multipath", "none" (or "all" with action="cwnd"), got {control!r}'
        )
    if (
        isinstance(interval, bool)
        or not isinstance(interval, (int, float))
        or not interval >= 0.001
    ):
        raise EnvConfigError(f"interval: expected a period in ms >= 0.001 (1 µs), got {interval!r}")
    if not (isinstance(cwnd_step, (int, float)) and cwnd_step > 0):
        raise EnvConfigError(f"cwnd_step: expected a number of segments > 0, got {cwnd_step!r}")
    if fallback not in FALLBACKS:
        raise EnvConfigError(f"fallback: expected one of {', '.join(FALLBACKS)}, got {fallback!r}")
    if scenario is None:
        scenario = SCENARIO_DIR / DEFAULT_HOST_SCENARIO["cwnd" if action == "cwnd" else "paths"]
    if max_flows is None:
        max_flows = 8 if action == "cwnd" else 32
    _check_int("max_flows", max_flows, 1, 64)
    _check_int("max_subflows", max_subflows, 1, 8)
    _check_int("history", history, 1, 64)
    sc, source = _load(scenario)
    names = _host_names(sc)
    if not names:
        raise EnvConfigError(f"{source}: flows: expected [[flows]] or [[workloads]] entries")
    if flows is not None:
        if isinstance(flows, str) or not all(isinstance(f, str) for f in flows):
            raise EnvConfigError(f"flows: expected a list of flow or workload names, got {flows!r}")
        unknown = [f for f in flows if f not in names]
        if unknown:
            raise EnvConfigError(
                f"flows: no flow or workload named {unknown[0]!r} in {source} "
                f"(names: {', '.join(names)})"
            )
    need = _max_paths(sc, flows)
    if need > max_subflows:
        raise EnvConfigError(
            f"max_subflows: {source} has a flow with {need} paths, more than max_subflows = "
            f"{max_subflows}"
        )
    if duration_s is not None:
        sc.setdefault("sim", {})["duration_s"] = float(duration_s)
    spec = {
        "kind": "host",
        "scenario": json.dumps(sc),
        "source": source,
        "format": "json",
        "action": "select" if action == "choose" else action,
        "target": target,
        "flows": list(flows) if flows is not None else None,
        "control": control,
        "interval_ms": float(interval),
        "max_flows": max_flows,
        "max_subflows": max_subflows,
        "history": history,
        "cwnd_step": float(cwnd_step),
        "fallback": fallback,
        "sender_only": sender_only,
    }
    return json.dumps(spec), HostLayout(max_flows, max_subflows, history)


def host_policy_obs(spec_json: str) -> Dict[str, Any]:
    """The ``obs`` block of a host policy trained in an env of this spec (the core's JSON):
    what the Rust runtime needs to control a host as the env did (docs/policies.md): windows
    (``cwnd``, as ``cc = "policy:PATH"``) or path preferences (``paths``, MPTCP-RL, as
    ``scheduler = "policy:PATH"``). ``weights``, ``select`` and ``choose`` host policies
    cannot run in the runtime."""
    spec = json.loads(spec_json)
    if spec["action"] not in ("cwnd", "paths"):
        raise EnvConfigError(
            'action: only "cwnd" and "paths" host policies run in the Rust runtime, not '
            f"{spec['action']!r}"
        )
    obs = {
        "env": "host",
        "action": spec["action"],
        "interval": spec["interval_ms"],
        "max_flows": spec["max_flows"],
        "max_subflows": spec["max_subflows"],
        "history": spec["history"],
        "sender_only": spec["sender_only"],
        "features": {"flow": list(FLOW_FEATURES), "subflow": list(SUBFLOW_FEATURES)},
    }
    if spec["action"] == "cwnd":
        obs.update(target=spec["target"], cwnd_step=spec["cwnd_step"])
    return obs


def _action_len(action: str, target: str, layout: HostLayout) -> int:
    """Length of the core's action row."""
    if (action, target) == ("cwnd", "rotate") or action == "paths":
        return layout.max_subflows
    return layout.max_flows * layout.max_subflows


def _default_reward(action: str) -> str:
    """DRL-CC's reward for windows, MPTCP-RL's for path choices."""
    return "drl-cc" if action == "cwnd" else "mptcp-rl"


def paths_mask(layout: HostLayout, obs: np.ndarray) -> np.ndarray:
    """``[..., max_subflows]``: 1 where path slot i is usable by some flow the next ``paths``
    action applies to (flow feature ``target`` of the newest frame: the controlled, running
    flows), MPTCP-RL's action mask (mptcp-rl.txt, "Action")."""
    target = layout.flows(obs)[..., -1, :, FLOW_FEATURES.index("target")]
    return (layout.subflow_mask(obs) * target[..., None]).max(axis=-2)


def _host_masks(layout: HostLayout, obs: np.ndarray, action: str) -> Dict[str, Any]:
    """``action_mask`` (usable subflows; ``paths``: usable paths, :func:`paths_mask`) and
    ``flow_mask`` (running flows) of observations."""
    mask = paths_mask(layout, obs) if action == "paths" else layout.subflow_mask(obs)
    return {"action_mask": mask.astype(np.int8), "flow_mask": layout.flow_mask(obs).astype(np.int8)}


class HostEnv(_CoreBase):
    """``mpsched/Host-v0``: one agent for every flow of a host.

    Args:
        scenario: a scenario file or dict; default per action (:data:`DEFAULT_HOST_SCENARIO`).
            Ranges are drawn anew every episode.
        action: ``"cwnd"`` (window changes of ``a · cwnd_step`` segments, DRL-CC),
            ``"weights"`` (each multipath flow's share per subflow, MPTCP-RL's path
            probabilities), ``"select"`` (the subflows each multipath flow uses) or
            ``"choose"`` (one subflow per flow for the next interval, PDAA3C's per-epoch
            choice). ``info["action_mask"]`` (= the observation's subflow mask) marks usable
            subflows; a flow whose choice has none usable is scheduled by ``fallback``.
            ``"paths"`` (MPTCP-RL): one value >= 0 per path slot (subflow index), shared by
            every controlled flow, set as each flow's path preference; the controlled flows
            run ``dmptcp``, which picks each flow's path set by the MPTCP transmission model
            in preference order (minRTT inside it). ``info["action_mask"]`` has one entry per
            path slot (:func:`paths_mask`). Negative, NaN and infinite values count as 0 (no
            new data on that path); a flow with no usable path valued > 0 gets no
            preference (dmptcp's own srtt order).
        target: ``cwnd`` only: ``"rotate"`` (one flow per step, in turn; the action is its
            subflows and flow feature ``target`` marks it, DRL-CC) or ``"all"``.
        flows: the host's flows by flow or workload name (default: every flow).
        control: ``"multipath"`` (the agent controls MPTCP flows; TCP flows are observed,
            DRL-CC), ``"all"`` (``cwnd`` only) or ``"none"`` (every flow runs its scenario's
            algorithms, actions are ignored: transitions of traditional schedulers, MPTCP-RL's
            offline phase).
        reward: a name of :data:`mpsched.rewards.REWARDS` or ``fn(terms)``; default
            ``drl-cc`` (Σ log goodput over the running flows) for ``cwnd``, ``mptcp-rl``
            otherwise. The terms are in ``info["terms"]`` (docs/envs.md).
        interval: decision period (ms).
        max_flows: flow slots (default 8 for ``cwnd``, 32 for path actions);
            ``max_subflows``: subflow slots per flow; ``history``: frames.
        sender_only: observations hold only what the host's sender computes (flow goodput
            at the receiver and energy read 0): what a policy deployed as ``cc =
            "policy:PATH"`` sees; recorded in :attr:`policy_obs`.
    """

    def __init__(
        self,
        scenario: Optional[ScenarioLike] = None,
        action: str = "cwnd",
        target: str = "rotate",
        flows: Optional[Sequence[str]] = None,
        control: str = "multipath",
        reward: Union[str, RewardFn, None] = None,
        reward_kwargs: Optional[Dict[str, Any]] = None,
        interval: float = 100.0,
        max_flows: Optional[int] = None,
        max_subflows: int = 4,
        history: int = 1,
        cwnd_step: float = 10.0,
        duration_s: Optional[float] = None,
        fallback: str = "minrtt",
        sender_only: bool = False,
    ) -> None:
        spec_json, self.layout = prepare_host(
            scenario, action=action, target=target, flows=flows, control=control,
            interval=interval, max_flows=max_flows, max_subflows=max_subflows,
            history=history, cwnd_step=cwnd_step, duration_s=duration_s, fallback=fallback,
            sender_only=sender_only,
        )  # fmt: skip
        self._spec_json = spec_json
        self.action_kind, self.target = action, target
        lay = self.layout
        self.action_space = host_action_space(action, target, lay.max_flows, lay.max_subflows)
        reward = _default_reward(action) if reward is None else reward
        super().__init__(
            spec_json, lay.size, _action_len(action, target, lay), reward, reward_kwargs
        )
        self.observation_space = spaces.Box(-1.0, np.inf, (lay.size,), np.float32)

    @property
    def policy_obs(self) -> Dict[str, Any]:
        """The ``obs`` block a host policy trained here is exported with (``cwnd`` and
        ``paths``): ``mpsched.policies.export(..., obs=env.policy_obs)`` makes it ``cc =
        "policy:PATH"`` (windows) or ``scheduler = "policy:PATH"`` (paths)."""
        return host_policy_obs(self._spec_json)

    def _write_action(self, action: Any) -> None:
        host_action_rows(self.action_kind, action, self._act[None, :], self.layout.max_subflows)

    def _mask_info(self) -> Dict[str, Any]:
        return _host_masks(self.layout, self._obs, self.action_kind)

    def slot_flows(self) -> List[Optional[str]]:
        """The flow in each slot now (``None``: free)."""
        if self._core is None:
            return [None] * self.layout.max_flows
        return self._core.slot_flows()

    def _controlled(self, res: Results) -> Tuple[List[str], str]:
        column = "cc" if self.action_kind == "cwnd" else "scheduler"
        # ``paths`` flows run dmptcp (a host flow whose scenario names dmptcp counts too).
        algo = "dmptcp" if self.action_kind == "paths" else "external"
        names = res.flows.column("name").to_pylist()
        algos = res.flows.column(column).to_pylist()
        return [n for n, a in zip(names, algos) if str(a).startswith(algo)], column


class HostVectorEnv(_CoreVectorBase):
    """``num_envs`` copies of :class:`HostEnv` (same options), stepped in Rust with the GIL
    released (autoreset NEXT_STEP, sub-env i seeded ``seed + i``, as
    :class:`~mpsched.envs.SchedulerVectorEnv`). ``threads``: worker threads."""

    def __init__(
        self,
        scenario: Optional[ScenarioLike] = None,
        num_envs: int = 8,
        action: str = "cwnd",
        target: str = "rotate",
        flows: Optional[Sequence[str]] = None,
        control: str = "multipath",
        reward: Union[str, RewardFn, None] = None,
        reward_kwargs: Optional[Dict[str, Any]] = None,
        interval: float = 100.0,
        max_flows: Optional[int] = None,
        max_subflows: int = 4,
        history: int = 1,
        cwnd_step: float = 10.0,
        duration_s: Optional[float] = None,
        fallback: str = "minrtt",
        threads: Optional[int] = None,
        sender_only: bool = False,
    ) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
            raise EnvConfigError(f"num_envs: expected an integer >= 1, got {num_envs!r}")
        spec_json, self.layout = prepare_host(
            scenario, action=action, target=target, flows=flows, control=control,
            interval=interval, max_flows=max_flows, max_subflows=max_subflows,
            history=history, cwnd_step=cwnd_step, duration_s=duration_s, fallback=fallback,
            sender_only=sender_only,
        )  # fmt: skip
        self._spec_json = spec_json
        lay = self.layout
        self.action_kind = action
        self._setup(
            spec_json, num_envs, lay.size, _action_len(action, target, lay),
            _default_reward(action) if reward is None else reward, reward_kwargs, threads,
        )  # fmt: skip
        self.single_observation_space = spaces.Box(-1.0, np.inf, (lay.size,), np.float32)
        self.single_action_space = host_action_space(
            action, target, lay.max_flows, lay.max_subflows
        )
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)

    @property
    def policy_obs(self) -> Dict[str, Any]:
        """The ``obs`` block of a host policy trained here (see :attr:`HostEnv.policy_obs`)."""
        return host_policy_obs(self._spec_json)

    def _write_actions(self, actions: Any) -> None:
        host_action_rows(self.action_kind, actions, self._act, self.layout.max_subflows)

    def _mask_info(self) -> Dict[str, Any]:
        return _host_masks(self.layout, self._obs, self.action_kind)
