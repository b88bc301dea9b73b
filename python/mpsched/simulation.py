"""Step-by-step simulation for outside policies (learned schedulers, controllers).

``Simulation`` wraps the core's ``Sim``: run to the next decision point, read the flows'
state, decide, continue. A run paused at every decision and answered with the default gives
exactly the outputs of ``mpsched.run`` (the simulator makes the same choices inline)::

    sim = mpsched.Simulation(scenario, seed=1)       # a path, a dict, as for mpsched.run
    for kind, flow in sim:                           # ("decision" | "interval", flow index)
        state = sim.state(flow)                      # {"conn": {...}, "subflows": [{...}, ...]}
        if kind == "decision":                       # external-packet: one question per segment
            sim.decide_path(flow, 0)
        else:                                        # every decision_interval_ms
            sim.decide_mode(flow, 1)                 # external-mode: 1 = redundant
    results = sim.results()                          # a Results, as mpsched.run returns
"""

from __future__ import annotations

from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

from . import _core
from .results import Results
from .scenario import ScenarioLike, load


class Simulation:
    """A simulation advanced by the caller, pausing at decision points."""

    def __init__(self, scenario: ScenarioLike, seed: Optional[int] = None) -> None:
        loaded = load(scenario)
        self._sim = _core.Sim(loaded.text, loaded.source, loaded.fmt, seed)

    @property
    def now_s(self) -> float:
        """Simulated time in seconds."""
        return self._sim.now_s

    @property
    def flow_names(self) -> List[str]:
        """Flow names; decisions and state use their indices."""
        return list(self._sim.flow_names)

    def advance(self, until_s: Optional[float] = None) -> Tuple[str, Optional[int]]:
        """Simulate until ``until_s`` (default: the end) or the next decision point.

        Returns ``("decision", flow)`` (a per-packet question of an ``external-packet`` flow:
        answer with :meth:`decide_path` before advancing), ``("interval", flow)`` (a flow's
        decision interval elapsed: decide, or keep the current setting), ``("deadline", None)``
        or ``("finished", None)``. A scheduler written in Python that fails raises
        :class:`mpsched.SchedulerError`.
        """
        return self._sim.advance(until_s)

    def __iter__(self) -> Iterator[Tuple[str, int]]:
        """Decision points until the end of the run."""
        while True:
            kind, flow = self.advance()
            if kind in ("deadline", "finished"):
                return
            yield kind, flow

    def decide_mode(self, flow: int, mode: int) -> None:
        """``external-mode``: 0 = normal (minRTT), 1 = redundant, until the next decision."""
        self._sim.decide_mode(flow, mode)

    def decide_weights(self, flow: int, weights: Sequence[float]) -> None:
        """``external-weights``: share of new data per subflow (<= 0 leaves a subflow unused)."""
        self._sim.decide_weights(flow, [float(w) for w in weights])

    def decide_path(self, flow: int, subflow: Optional[int] = None) -> None:
        """``external-packet``: the subflow for the waiting segment; None = minRTT's choice."""
        self._sim.decide_path(flow, subflow)

    def set_cwnd(self, flow: int, subflow: int, cwnd_bytes: int) -> None:
        """``cc = "external"``: set a subflow's congestion window (bytes)."""
        self._sim.set_cwnd(flow, subflow, int(cwnd_bytes))

    def state(self, flow: int) -> Dict[str, Any]:
        """Connection counters (cumulative) and per-subflow state of ``flow`` now."""
        return self._sim.state(flow)

    def results(self) -> Results:
        """Everything the run produced so far, as :func:`mpsched.run` returns it."""
        return Results.from_core(self._sim.output())
