"""Gymnasium environments for learned multipath scheduling and congestion control.

::

    import gymnasium as gym
    import mpsched  # registers the ids (with gymnasium installed)

    env = gym.make("mpsched/Scheduler-v0", scenario="scenarios/edar-handoff.toml",
                   action="mode", reward="edar", interval="min-rtt", history=6)
    obs, info = env.reset(seed=1)
    obs, reward, terminated, truncated, info = env.step(1)   # redundant until the next TI

    venv = mpsched.envs.SchedulerVectorEnv("scenarios/edar-handoff.toml", num_envs=16)

    cc = gym.make("mpsched/CongestionControl-v0", scenario="scenarios/drl-cc-random.toml")

    host = gym.make("mpsched/Host-v0", action="cwnd", target="rotate")   # DRL-CC's host

Observations are flat float32 vectors; :class:`ObsLayout` (``env.unwrapped.layout``) slices
them into subflow, connection and flow features and the masks. Rewards are in
:mod:`mpsched.rewards`. See docs/envs.md.
"""

from .. import _register_envs
from ._spec import EnvConfigError
from .host import HostEnv, HostLayout, HostVectorEnv, host_feature_names
from .scheduler import (
    CONN_FEATURES,
    FEATURES,
    FLOW_FEATURES,
    INTEGER_FEATURES,
    SENDER_FEATURES,
    SUBFLOW_FEATURES,
    CongestionControlEnv,
    Feature,
    ObsLayout,
    SchedulerEnv,
    feature_names,
)
from .vector import SchedulerVectorEnv

__all__ = [
    "SchedulerEnv",
    "HostEnv",
    "HostVectorEnv",
    "HostLayout",
    "host_feature_names",
    "CongestionControlEnv",
    "SchedulerVectorEnv",
    "ObsLayout",
    "EnvConfigError",
    "feature_names",
    "SUBFLOW_FEATURES",
    "CONN_FEATURES",
    "FLOW_FEATURES",
    "FEATURES",
    "INTEGER_FEATURES",
    "SENDER_FEATURES",
    "Feature",
]

_register_envs()
