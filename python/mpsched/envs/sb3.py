"""stable-baselines3 adapter for the fast vector env.

SB3 has its own vector-env interface (``stable_baselines3.common.vec_env.VecEnv``): actions go
in with ``step_async``/``step_wait``, a finished sub-env is reset in the same step, and its last
observation travels in ``infos[i]["terminal_observation"]``. :class:`SB3VecEnv` gives
:class:`~mpsched.envs.SchedulerVectorEnv` that interface, so SB3's algorithms train on the
multi-threaded core directly::

    from stable_baselines3 import PPO
    from mpsched.envs import SchedulerVectorEnv
    from mpsched.envs.sb3 import SB3VecEnv

    venv = SB3VecEnv(SchedulerVectorEnv("scenarios/edar-handoff.toml", num_envs=8))
    PPO("MlpPolicy", venv).learn(10_000)

stable-baselines3 is a test dependency of mpsched, not a runtime one: this module imports it.
"""

from __future__ import annotations

from typing import Any, Iterable, List, Optional, Sequence, Type, Union

import gymnasium as gym
import numpy as np
from stable_baselines3.common.vec_env import VecEnv

from .vector import SchedulerVectorEnv


class SB3VecEnv(VecEnv):
    """A :class:`SchedulerVectorEnv` as a stable-baselines3 ``VecEnv`` (same-step autoreset,
    ``terminal_observation`` and ``TimeLimit.truncated`` in the infos, ``action_mask`` and the
    reward ``terms`` per sub-env)."""

    def __init__(self, venv: SchedulerVectorEnv) -> None:
        self.venv = venv
        super().__init__(venv.num_envs, venv.single_observation_space, venv.single_action_space)
        self._actions: Optional[np.ndarray] = None
        self._started = False

    def reset(self) -> np.ndarray:
        seed = self._seeds[0] if self._seeds and self._seeds[0] is not None else None
        obs, _ = self.venv.reset(seed=seed)
        self._reset_seeds()
        self._started = True
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions)

    def step_wait(self):  # noqa: ANN201  (SB3's VecEnvStepReturn)
        if not self._started:
            raise RuntimeError("call reset() before step()")
        obs, rewards, terminated, truncated, info = self.venv.step(self._actions)
        dones = terminated | truncated
        masks, terms = info["action_mask"], info["terms"]
        infos: List[dict] = [
            {"action_mask": masks[i], "terms": terms.row(i)} for i in range(self.num_envs)
        ]
        if dones.any():
            final = obs.copy()
            obs = self.venv.reset_ended()
            for i in np.flatnonzero(dones):
                infos[i]["terminal_observation"] = final[i]
                infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
        return obs, rewards.astype(np.float32), dones, infos

    def close(self) -> None:
        self.venv.close()

    # The rest of SB3's interface: the sub-envs live in the core, not as Python objects.
    def get_attr(self, attr_name: str, indices: Any = None) -> List[Any]:
        return [getattr(self.venv, attr_name)] * len(self._indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        raise AttributeError(f"{attr_name}: the sub-envs of SB3VecEnv have no settable attributes")

    def env_method(
        self, method_name: str, *args: Any, indices: Any = None, **kwargs: Any
    ) -> List[Any]:
        raise AttributeError(f"{method_name}: the sub-envs of SB3VecEnv are not Python objects")

    def env_is_wrapped(self, wrapper_class: Type[gym.Wrapper], indices: Any = None) -> List[bool]:
        return [False] * len(self._indices(indices))

    def _indices(self, indices: Union[None, int, Iterable[int]]) -> Sequence[int]:
        if indices is None:
            return range(self.num_envs)
        if isinstance(indices, int):
            return [indices]
        return list(indices)
