"""mpsched: a deterministic packet-level multipath network simulator.

The simulator is written in Rust (``mpsched._core``); this package is what users touch::

    import mpsched

    res = mpsched.run("scenarios/demo.toml", seed=7)   # or a dict with the same structure
    res.summary["flows"][0]["goodput_mbps"]             # the summary, a dict
    res.flows, res.timeseries, res.links                # pyarrow Tables
    dfs = res.to_pandas()                               # {"flows": DataFrame, ...}
    mpsched.write_results(res, "out/demo")              # summary.json, *.parquet, scenario.toml
    mpsched.run_to_dir("long.toml", "out/long")         # the same files, timeseries streamed
    cmp = mpsched.compare("scenarios/edar-handoff.toml", schedulers=["minrtt", "blest"], seeds=[1, 2])
    cmp.summary, cmp.flows, cmp.timeseries             # pandas DataFrames over every run

    sim = mpsched.Simulation("scenarios/edar-handoff.toml")  # step by step, for outside policies
    for kind, flow in sim: ...                          # decision points: decide, continue

    @mpsched.scheduler("lowest-rtt")                    # a scheduler in Python, used by name
    def lowest_rtt(view): ...                           # docs/python-schedulers.md

Bad scenarios raise :class:`ScenarioError` (a ``ValueError``) with a one-line message.
The command line is ``mpsched`` (``python -m mpsched``): see ``mpsched --help``.
"""

from ._core import ScenarioError, SchedulerError, SchedView, SubflowView
from .api import run, run_streaming, run_to_dir
from .plugins import load_plugin, register_scheduler, scheduler, unregister_scheduler
from .results import Results, write_results
from .simulation import Simulation


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mpsched")
    except PackageNotFoundError:  # imported from a source tree, not installed
        from ._core import version as core_version

        return core_version()


__version__ = _version()


def _register_envs() -> None:
    """Registers the gymnasium ids (``mpsched/Scheduler-v0``, ``mpsched/CongestionControl-v0``,
    ``mpsched/Host-v0``)
    when gymnasium is installed (the ``rl`` extra); the env classes load on ``gym.make``."""
    try:
        from gymnasium.envs.registration import register, registry
    except ImportError:
        return
    for env_id, entry in ENV_IDS.items():
        if env_id not in registry:
            register(id=env_id, entry_point=f"mpsched.envs.{entry}")


#: The gymnasium ids and their classes in :mod:`mpsched.envs`.
ENV_IDS = {
    "mpsched/Scheduler-v0": "scheduler:SchedulerEnv",
    "mpsched/CongestionControl-v0": "scheduler:CongestionControlEnv",
    "mpsched/Host-v0": "host:HostEnv",
}

_register_envs()


def __getattr__(name: str):
    """``compare`` and ``Comparison`` load on first use (:mod:`mpsched.experiment` needs the
    package's ``__version__``, and its sweep machinery is not needed by ``import mpsched``)."""
    if name in ("compare", "Comparison"):
        from . import experiment

        return getattr(experiment, name)
    raise AttributeError(f"module 'mpsched' has no attribute {name!r}")


__all__ = [
    "compare",
    "Comparison",
    "run",
    "run_streaming",
    "run_to_dir",
    "Results",
    "ScenarioError",
    "SchedulerError",
    "SchedView",
    "SubflowView",
    "Simulation",
    "load_plugin",
    "register_scheduler",
    "scheduler",
    "unregister_scheduler",
    "write_results",
    "__version__",
]
