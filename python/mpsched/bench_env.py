"""``mpsched bench --env``: environment steps per second.

Measures, in one process: on the EdAR handoff scenario, a single ``mpsched/Scheduler-v0`` env
through ``gymnasium.make`` (every wrapper included, EdAR reward computed in Python), the raw core
env (no Python per step beyond the call), and the vector env with 1 and 2 threads (the actions
alternate normal/redundant so both scheduling paths run); then ``mpsched/Host-v0`` on DRL-CC's
random host (5 MPTCP flows × 2 subflows, 100 ms epochs, the target flow's windows changed by
+1/−1 in turn, DRL-CC reward in Python), single through ``gymnasium.make`` and vectorised.
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
    rows += _bench_host(steps, num_envs)
    for r in rows:
        r["steps_per_s"] = r["steps"] / r["wall_s"]
    return rows


def _bench_host(steps: int, num_envs: int) -> List[Dict[str, Any]]:
    """Host env rows: DRL-CC's host (the packaged drl-cc-random.toml), single and vector."""
    import gymnasium as gym

    from mpsched.envs import HostVectorEnv

    opts = dict(action="cwnd", target="rotate", max_flows=8, max_subflows=2, reward="drl-cc")
    rows: List[Dict[str, Any]] = []
    env = gym.make("mpsched/Host-v0", **opts)
    env.reset(seed=0)
    acts = [np.ones(2, np.float32), -np.ones(2, np.float32)]
    t0, n = time.perf_counter(), 0
    while n < steps:
        _, _, te, tr, _ = env.step(acts[n & 1])
        n += 1
        if te or tr:
            env.reset()
    wall = time.perf_counter() - t0
    rows.append(
        {"name": "host env (gymnasium.make)", "envs": 1, "threads": 1, "steps": n, "wall_s": wall}
    )
    for threads in (1, 2):
        venv = HostVectorEnv(num_envs=num_envs, threads=threads, **opts)
        venv.reset(seed=0)
        a = np.ones((num_envs, 2), np.float32)
        t0, n = time.perf_counter(), 0
        while n < steps * 2:
            venv.step(a)
            a = -a
            n += num_envs
        name = f"host vector env ({threads} thread{'s' if threads > 1 else ''})"
        rows.append(
            {"name": name, "envs": num_envs, "threads": threads, "steps": n,
             "wall_s": time.perf_counter() - t0}
        )  # fmt: skip
    return rows
