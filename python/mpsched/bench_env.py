"""``mpsched bench --env``: environment steps per second on the EdAR handoff scenario.

Measures, in one process: a single ``mpsched/Scheduler-v0`` env through ``gymnasium.make``
(every wrapper included, EdAR reward computed in Python), the raw core env (no Python per
step beyond the call), and the vector env with 1 and 2 threads. The actions alternate
normal/redundant so both scheduling paths run.
"""

from __future__ import annotations

import time
from typing import Any, Dict, List

import numpy as np

from . import _core


def _scenario() -> str:
    """The shipped EdAR handoff scenario (found from any working directory)."""
    from .scenario import shipped_scenario

    return str(shipped_scenario("edar-handoff.toml"))


def bench_env(steps: int = 20000, num_envs: int = 32) -> List[Dict[str, Any]]:
    import gymnasium as gym

    import mpsched.envs  # noqa: F401  (registers the ids)
    from mpsched.envs import SchedulerVectorEnv
    from mpsched.envs._spec import prepare

    scenario = _scenario()
    opts = dict(action="mode", interval="min-rtt", history=6, max_paths=4)
    rows: List[Dict[str, Any]] = []

    env = gym.make("mpsched/Scheduler-v0", scenario=scenario, reward="edar", **opts)
    env.reset(seed=0)
    t0, n = time.perf_counter(), 0
    while n < steps:
        _, _, te, tr, _ = env.step(n & 1)
        n += 1
        if te or tr:
            env.reset()
    rows.append(
        {
            "name": "single env (gymnasium.make)",
            "envs": 1,
            "threads": 1,
            "steps": n,
            "wall_s": time.perf_counter() - t0,
        }
    )

    p = prepare(scenario, flow=None, **opts)
    core = _core.Env(p.spec_json, 0)
    obs = np.zeros(core.obs_len, np.float32)
    terms = np.zeros(core.terms_len)
    acts = [np.zeros(1, np.float32), np.ones(1, np.float32)]
    core.reset(0, obs)
    t0, n = time.perf_counter(), 0
    while n < steps:
        te, tr = core.step(acts[n & 1], obs, terms)
        n += 1
        if te or tr:
            core.reset(n, obs)
    rows.append(
        {
            "name": "core env (no Python per step)",
            "envs": 1,
            "threads": 1,
            "steps": n,
            "wall_s": time.perf_counter() - t0,
        }
    )

    for threads in (1, 2):
        venv = SchedulerVectorEnv(
            scenario, num_envs=num_envs, threads=threads, reward="edar", **opts
        )
        venv.reset(seed=0)
        a = np.arange(num_envs) & 1
        t0, n = time.perf_counter(), 0
        while n < steps * 2:
            venv.step(a)
            a = 1 - a
            n += num_envs
        rows.append(
            {
                "name": f"vector env ({threads} thread{'s' if threads > 1 else ''})",
                "envs": num_envs,
                "threads": threads,
                "steps": n,
                "wall_s": time.perf_counter() - t0,
            }
        )
    for r in rows:
        r["steps_per_s"] = r["steps"] / r["wall_s"]
    return rows
