"""Batched environments: N simulations stepped in one call into Rust, GIL released.

``SchedulerVectorEnv`` is a :class:`gymnasium.vector.VectorEnv` (autoreset mode NEXT_STEP: the
step after an episode ended resets that sub-env, ignores its action and returns reward 0).
Sub-env i is seeded ``seed + i``; later episodes derive their seeds from it, so the results do
not depend on the number of threads.
"""

from __future__ import annotations

import os
from typing import Any, Dict, Optional, Tuple, Union

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from .. import _core
from ..rewards import RewardFn, Terms, get_reward
from ._spec import EnvConfigError, ScenarioLike, prepare
from .scheduler import ACTIONS, ObsLayout, action_space, default_scenario


class _CoreVectorBase(VectorEnv):
    """What the vector envs share: the core's ``VecEnv`` made at the first reset, the buffers
    it writes into, the reward, ``reset``/``step``/``reset_ended``. A subclass calls
    :meth:`_setup` and implements ``_write_actions`` and ``_mask_info``."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP}

    def _setup(
        self,
        spec_json: str,
        num_envs: int,
        obs_len: int,
        act_len: int,
        reward: Union[str, RewardFn],
        reward_kwargs: Optional[Dict[str, Any]],
        threads: Optional[int],
    ) -> None:
        self._spec_json = spec_json
        self.num_envs = num_envs
        self.threads = max(1, min(num_envs, threads or os.cpu_count() or 1))
        self.reward_fn = get_reward(reward, reward_kwargs)
        self._core: Optional[Any] = None
        self._seed = 0
        self._obs = np.zeros((num_envs, obs_len), np.float32)
        self._act = np.zeros((num_envs, act_len), np.float32)
        self._terms = np.zeros((num_envs, 0), np.float64)
        self._terminated = np.zeros(num_envs, np.bool_)
        self._truncated = np.zeros(num_envs, np.bool_)
        self._ended = np.zeros(num_envs, np.bool_)
        self._index: Dict[str, int] = {}

    def _write_actions(self, actions: Any) -> None:
        raise NotImplementedError

    def _mask_info(self) -> Dict[str, Any]:
        raise NotImplementedError

    def reset(
        self, *, seed: Optional[int] = None, options: Optional[Dict[str, Any]] = None
    ) -> Tuple[np.ndarray, Dict[str, Any]]:
        """Resets every sub-env. ``seed``: sub-env i uses ``seed + i`` (default: the next episodes,
        or seeds 0.. on the first reset)."""
        if seed is not None:
            self._seed = int(seed)
        if self._core is None:
            self._core = _core.VecEnv(self._spec_json, self.num_envs, self._seed, self.threads)
            self._terms = np.zeros((self.num_envs, self._core.terms_len), np.float64)
            self._index = {n: i for i, n in enumerate(self._core.term_names)}
            base: Optional[int] = self._seed
        else:
            base = self._seed if seed is not None else None
        self._core.reset(base, self._obs)
        self._terms[:] = 0.0
        self._ended[:] = False
        return self._obs.copy(), self._mask_info()

    def step(
        self, actions: Any
    ) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, Dict[str, Any]]:
        if self._core is None:
            raise RuntimeError("call reset() before step()")
        self._write_actions(actions)
        self._core.step(self._act, self._obs, self._terms, self._terminated, self._truncated)
        rewards = np.asarray(
            self.reward_fn(Terms(self._terms, self._index)), dtype=np.float64
        ).reshape(self.num_envs)
        # Sub-envs that were reset in this step (NEXT_STEP autoreset) earn nothing.
        rewards = np.where(self._ended, 0.0, rewards)
        self._ended = self._terminated | self._truncated
        info = {**self._mask_info(), "terms": Terms(self._terms.copy(), self._index)}
        return self._obs.copy(), rewards, self._terminated.copy(), self._truncated.copy(), info

    def reset_ended(self) -> np.ndarray:
        """Starts, at once, the next episode of every sub-env whose episode ended in the last
        step (instead of at the next step) and returns the observations, those sub-envs' rows
        being their new episodes' first: same-step autoreset, what stable-baselines3 expects
        (:class:`mpsched.envs.sb3.SB3VecEnv`)."""
        if self._core is None:
            raise RuntimeError("call reset() before reset_ended()")
        self._core.reset_ended(self._obs)
        self._ended[:] = False
        return self._obs.copy()

    def close_extras(self, **kwargs: Any) -> None:
        self._core = None


class SchedulerVectorEnv(_CoreVectorBase):
    """``num_envs`` copies of :class:`~mpsched.envs.SchedulerEnv` (same options), in Rust.

    Args:
        num_envs: sub-envs.
        threads: worker threads (default: the CPUs, at most ``num_envs``).
        action: ``"mode"``, ``"weights"``, ``"select"`` or ``"cwnd"`` (DRL-CC's windows).
        Other arguments as for :class:`~mpsched.envs.SchedulerEnv`.
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(
        self,
        scenario: Optional[ScenarioLike] = None,
        num_envs: int = 8,
        action: str = "mode",
        reward: Union[str, RewardFn] = "edar",
        reward_kwargs: Optional[Dict[str, Any]] = None,
        flow: Union[int, str, None] = None,
        interval: Union[float, str] = "min-rtt",
        max_paths: int = 4,
        history: int = 1,
        max_flows: int = 8,
        cwnd_step: float = 10.0,
        duration_s: Optional[float] = None,
        threads: Optional[int] = None,
        initial_mode: Union[int, str, None] = None,
        fallback: str = "minrtt",
        sender_only: bool = False,
        busy: str = "wait",
    ) -> None:
        if action not in ACTIONS + ("cwnd",):
            raise EnvConfigError(
                f"action: expected one of mode, weights, select, choose, cwnd, got {action!r}"
            )
        if not isinstance(num_envs, int) or num_envs < 1:
            raise EnvConfigError(f"num_envs: expected an integer >= 1, got {num_envs!r}")
        self._prepared = prepare(
            default_scenario(action) if scenario is None else scenario,
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
        self.action_kind = action
        self.layout = ObsLayout(max_paths, history, max_flows if action == "cwnd" else 0)
        self._setup(
            self._prepared.spec_json,
            num_envs,
            self.layout.size,
            1 if action == "mode" else max_paths,
            reward,
            reward_kwargs,
            threads,
        )
        self.single_observation_space = spaces.Box(-1.0, np.inf, (self.layout.size,), np.float32)
        self.single_action_space = action_space(action, max_paths)
        #: The ``obs`` block of a policy trained here (see :attr:`SchedulerEnv.policy_obs`).
        self.policy_obs = dict(self._prepared.policy_obs)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)

    def _mask_info(self) -> Dict[str, Any]:
        return {"action_mask": self.layout.path_mask(self._obs).astype(np.int8)}

    def _write_actions(self, actions: Any) -> None:
        if self.action_kind == "mode":
            self._act[:, 0] = np.asarray(actions).reshape(self.num_envs)
        elif self.action_kind == "choose":
            k = np.asarray(actions, dtype=np.int64).reshape(self.num_envs)
            if ((k < 0) | (k >= self._act.shape[1])).any():
                raise ValueError(f"actions: expected path slots in 0..{self._act.shape[1] - 1}")
            self._act[:] = 0.0
            self._act[np.arange(self.num_envs), k] = 1.0
        else:
            self._act[:] = np.asarray(actions, dtype=np.float32).reshape(self.num_envs, -1)
