"""``mpsched bench --python-scheduler``: the cost of a scheduler written in Python.

Runs the shipped EdAR handoff scenario (one two-path MPTCP flow, 100 s) with the built-in
``minrtt-norp`` and with two Python schedulers registered for the measurement, each making the
same choices as the built-in (the results are checked identical):

- ``bench-passthrough`` answers ``view.min_rtt()``: the cost of crossing into Python (taking the
  GIL, building the view, the call) with the choice itself made in Rust;
- ``bench-loop`` picks the available active subflow with the smallest srtt in a Python loop
  over ``view.subflows`` (what a typical user scheduler does), ``view.min_rtt()`` for
  reinjections and when none is available.

Each is run ``repeats`` times, interleaved with the built-in, and the fastest wall time of each
kept (whole ``run_scenario`` calls: parsing and output included, the same for all three). The
overhead per decision is (Python wall − built-in wall) / decisions.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Dict, List

from . import _core
from .plugins import register_scheduler, unregister_scheduler


def _scenario_text(scheduler: str) -> str:
    from .scenario import shipped_scenario

    text = shipped_scenario("edar-handoff.toml").read_text()
    return text.replace('scheduler = "minrtt"', f'scheduler = "{scheduler}"')


def _loop(view: Any) -> Any:
    if view.reinjection:
        return view.min_rtt()
    best = None
    for s in view.subflows:
        if s.available and not s.backup and (best is None or s.srtt_ms < best.srtt_ms):
            best = s
    return best.index if best is not None else view.min_rtt()


def _strip_label(out: Dict[str, Any]) -> Any:
    flows = dict(out["flows"])
    flows.pop("scheduler", None)
    return (flows, out["subflows"], out["timeseries"], out["links"])


def bench_python_scheduler(repeats: int = 5) -> List[Dict[str, Any]]:
    """Rows ``{name, wall_s, decisions, us_per_decision, overhead_us_per_decision, ratio}``:
    the built-in first, then each Python scheduler."""
    calls = {"n": 0}

    def counted(f: Callable[[Any], Any]) -> Callable[[Any], Any]:
        def scheduler(view: Any) -> Any:
            calls["n"] += 1
            return f(view)

        return scheduler

    plugins = {"bench-passthrough": lambda view: view.min_rtt(), "bench-loop": _loop}
    names = ["minrtt-norp", *plugins]
    best = {n: float("inf") for n in names}
    decisions: Dict[str, int] = {}
    outputs: Dict[str, Any] = {}
    for name, f in plugins.items():
        register_scheduler(name, counted(f))
    try:
        for _ in range(repeats):
            for name in names:
                text = _scenario_text(name)
                calls["n"] = 0
                started = time.perf_counter()
                out = _core.run_scenario(text, "edar-handoff.toml")
                best[name] = min(best[name], time.perf_counter() - started)
                decisions[name] = calls["n"]
                outputs[name] = _strip_label(out)
    finally:
        for name in plugins:
            unregister_scheduler(name)
    n = max(decisions.values())
    base = best["minrtt-norp"]
    rows = []
    for name in names:
        rows.append(
            {
                "name": name,
                "wall_s": best[name],
                "decisions": n,
                "identical_to_builtin": outputs[name] == outputs["minrtt-norp"],
                "us_per_decision": best[name] / n * 1e6,
                "overhead_us_per_decision": (best[name] - base) / n * 1e6,
                "ratio": best[name] / base,
            }
        )
    return rows
