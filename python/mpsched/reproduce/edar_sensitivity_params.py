"""The values of EdAR's reproduction the paper does not state and we chose, as sweep parameters
of :mod:`mpsched.reproduce.edar_sensitivity` (issue 20): what each changes and its values.

Three kinds:

* ``scenario``: ``edit(stem, scenario, x)`` changes the scenarios of ``groups`` (the handoff
  ramp; the settings' random handoff process, which the two FCT sweeps share: ``fct`` names
  the values also run on the FCT sweeps, as a separate part "<value> FCT");
* ``adapt``: ``adapt(x)`` gives EdAR-o's online steps and :class:`~mpsched.agents.edar_args.Args`
  overrides of its adaptation in each evaluation network;
* ``train``: ``train(x)`` gives (the retraining's Args overrides, the adaptation's): EdAR-p is
  retrained with the shipped training's arguments and that one value changed
  (:func:`train_args`), then EdAR-o adapts from it in every network.

Values are ×0.5 and ×2 of ours (or the nearest round numbers), fixed before any was run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

from . import edar as E
from . import edar_runs as R

#: A quick run's retraining (a test of the pipeline): this many offline episodes of at most
#: this many simulated seconds, and this many offline updates.
QUICK_TRAIN = {"offline_episodes": 2, "duration_s": 5.0, "offline_iterations": 20}


@dataclass(frozen=True)
class Param:
    """One parameter we chose (module docstring): ``values``: (label, x) pairs beside ours
    (``ours``); ``fct``: the labels whose FCT part is run too (scenario parameters of the
    handoff process only)."""

    name: str
    kind: str
    what: str
    ours: str
    paper: str
    groups: Tuple[str, ...]
    values: Tuple[Tuple[str, float], ...]
    edit: Optional[Callable[[str, Dict[str, Any], float], None]] = None
    adapt: Optional[Callable[[float], Tuple[int, Dict[str, Any]]]] = None
    train: Optional[Callable[[float], Tuple[Dict[str, Any], Dict[str, Any]]]] = None
    fct: Tuple[str, ...] = ()
    #: Why a parameter is not run by default (``--params`` names it to run it anyway).
    note: str = ""

    @property
    def by_default(self) -> bool:
        return not self.note

    def units(self) -> List[Tuple[str, float, Tuple[str, ...]]]:
        """(label, x, groups) of every part to run: each value on ``groups``, then the values
        of ``fct`` on the FCT sweeps ("<label> FCT")."""
        res = [(label, x, self.groups) for label, x in self.values]
        res += [(f"{label} FCT", x, ("fct",)) for label, x in self.values if label in self.fct]
        return res


# --- scenario edits ---------------------------------------------------------------------------


def _handoff_events(stem: str, sc: Dict[str, Any]) -> List[Tuple[float, Dict[str, Any]]]:
    """The ramp events of the handoff scenario's path 2: (handoff start t1, event) for every
    event after t1 and before the link returns at t2."""
    if stem != "edar-handoff":
        return []
    return [
        (t1, ev)
        for ev in sc["paths"][1].get("schedule", [])
        for t1, t2 in E.HANDOFF
        if t1 <= ev["at_s"] < t2
    ]


def _ramp_length(stem: str, sc: Dict[str, Any], x: float) -> None:
    """Each ramp step (and the outage) starts ``x`` times as long after t1 (ours: 3, 6, 8 s)."""
    for t1, ev in _handoff_events(stem, sc):
        ev["at_s"] = round(t1 + (ev["at_s"] - t1) * x, 6)


def _ramp_depth(stem: str, sc: Dict[str, Any], x: float) -> None:
    """The ramp's loss rates and added delays × ``x`` (ours: loss 1, 5, 20 %; delay +10, +25,
    +50 ms on path 2's 50 ms)."""
    base = float(sc["paths"][1]["delay_ms"])
    for _t1, ev in _handoff_events(stem, sc):
        if "delay_ms" in ev:
            ev["delay_ms"] = round(base + (ev["delay_ms"] - base) * x, 6)
        if "loss" in ev:
            ev["loss"]["p"] = min(1.0, round(ev["loss"]["p"] * x, 9))


#: The scenarios whose ``[[handoffs]]`` process the settings-process parameters edit: settings
#: i-v and the two FCT sweeps (the same process: 3 per minute, 10-30 s, 4 s outage, 5 % loss,
#: path 2's delay doubled).
PROCESS_STEMS = ("edar-setting-", "edar-fct-")


def _handoffs(stem: str, sc: Dict[str, Any]) -> List[Dict[str, Any]]:
    return sc.get("handoffs", []) if stem.startswith(PROCESS_STEMS) else []


def _handoff_rate(stem: str, sc: Dict[str, Any], x: float) -> None:
    """Handoffs per minute of the settings' random handoff process × ``x`` (ours: 3)."""
    for h in _handoffs(stem, sc):
        h["rate_per_min"] = h["rate_per_min"] * x


def _handoff_duration(stem: str, sc: Dict[str, Any], x: float) -> None:
    """The settings' handoff durations × ``x`` (ours: uniform 10-30 s; the 4 s outage kept)."""
    for h in _handoffs(stem, sc):
        h["duration_s"] = [d * x for d in h["duration_s"]]


def _largest(v: Any) -> float:
    """A value's largest: a number, or the top of a ``{ range = [lo, hi] }`` (or a sweep)."""
    return float(max(v["range"])) if isinstance(v, dict) else float(v)


def _handoff_delay(stem: str, sc: Dict[str, Any], x: float) -> None:
    """The delay a handoff adds to path 2's largest delay × ``x``: ours doubles it (setting i:
    30 → 60 ms; the delay sweep: 100 → 200 ms), so ×0.5 gives 1.5 times, ×2 three times."""
    for h in _handoffs(stem, sc):
        path = next(p for p in sc["paths"] if p["name"] == h["path"])
        base = _largest(path["delay_ms"])
        h["delay_ms"] = round(base + (float(h["delay_ms"]) - base) * x, 6)


def _handoff_loss(stem: str, sc: Dict[str, Any], x: float) -> None:
    """The loss rate during a handoff × ``x`` (ours: 5 %)."""
    for h in _handoffs(stem, sc):
        h["loss"]["p"] = min(1.0, round(h["loss"]["p"] * x, 9))


def _handoff_outage(stem: str, sc: Dict[str, Any], x: float) -> None:
    """The outage in the middle of each handoff × ``x`` (ours: 4 s; at most the shortest
    handoff, 10 s)."""
    for h in _handoffs(stem, sc):
        h["outage_s"] = round(h["outage_s"] * x, 6)


# --- EdAR-o's adaptation and EdAR-p's training -------------------------------------------------


def _steps(x: float) -> Tuple[int, Dict[str, Any]]:
    return int(round(x)), {}


def _epsilon(x: float) -> Tuple[int, Dict[str, Any]]:
    return R.ADAPT_STEPS, {"epsilon": x}


def _updates(x: float) -> Tuple[int, Dict[str, Any]]:
    return R.ADAPT_STEPS, {"online_iterations": int(x)}


def _offline_updates(x: float) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """M of Algorithm 1 (offline learning only: EdAR-o's adaptation is unchanged)."""
    return {"offline_iterations": int(x)}, {}


def _minibatch(x: float) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """H: one value of the learner, offline and online, so EdAR-o adapts with it too."""
    return {"batch_size": int(x)}, {"batch_size": int(x)}


def _control(x: float) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """No value changed: EdAR-p retrained with every shipped value (the retraining's control)."""
    return {}, {}


def _capacity(x: float) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """The replay capacity: online learning only (offline learning samples all offline data);
    the adaptation's too. It never binds here: a replay starts empty (Algorithm 2, l. 1) and
    holds at most the online steps, 4,000 per adaptation (20,000 for the shipped EdAR-o), fewer
    than 25,000: so both values train and adapt exactly as 50,000 does, and are not run."""
    return {"buffer_size": int(x)}, {"buffer_size": int(x)}


def shipped_train() -> Dict[str, Any]:
    """The shipped EdAR-p's training arguments (``train`` of edar-p.json: the Args of its
    ``command``)."""
    return dict(json.loads(R.DEFAULT_P.read_text(encoding="utf-8"))["train"])


def train_args(overrides: Dict[str, Any], out: Path, quick: bool = False) -> Any:
    """The Args of a retraining: the shipped EdAR-p's (:func:`shipped_train`; scenarios from
    the shipped directory) with ``overrides``, into ``out``, and ``steps`` = 0: EdAR-p is
    written when offline learning ends, before the online phase that makes the shipped
    EdAR-o (which the sweeps do not use: EdAR-o adapts from EdAR-p in each network)."""
    from ..agents.edar_args import Args

    meta = shipped_train()
    kw = {f.name: meta[f.name] for f in fields(Args) if f.name in meta}
    kw["scenario"] = [str(E.default_scenario_dir() / Path(s).name) for s in kw["scenario"]]
    kw["core_units"] = tuple(kw["core_units"])
    kw.update(out=str(out), steps=0, **overrides)
    if quick:
        kw.update(QUICK_TRAIN)
    return Args(**kw)


_RAMP = "handoff scenario: loss 1 → 5 → 20 %, delay +10 → +25 → +50 ms at t1, +3, +6 s, outage from t1 + 8 s to t2"  # fmt: skip
_PROCESS = "settings i-v and the FCT sweeps: a random handoff on path 2, 3 per minute (20 s mean gap), 10-30 s long, path 2's delay doubled, 5 % loss, 4 s outage in the middle"  # fmt: skip
_MOVE = '"The user starts moving away from the router at t_1 until the link is unavailable, and moves back at t_2" (§VI-A); no numbers'  # fmt: skip
_EVERY_40 = '"the last hop link of a path randomly suffers a mobile link and causes handoff every 40s (starts at time t_1 and ends at time t_2)" (§VI-A)'  # fmt: skip
#: The retraining parameters' control.
CONTROL = "retrained-control"
_HALF_TWICE = (("×0.5", 0.5), ("×2", 2.0))
_ALL = ("handoff", "settings", "fct")
#: The settings-process values also run on the FCT sweeps: the rate's two only, chosen before
#: any FCT value ran, as a full FCT re-run (1,980 runs of 50 downloads) for each of the ten
#: values did not look affordable in the time this sweep had (costs: docs/edar.md).
_FCT = ("×0.5", "×2")
_NO_BIND = (
    "not run: it does not bind. Offline learning samples all the offline data (59,317 "
    "transitions); an online replay starts empty and holds at most the online steps, 4,000 in "
    "each adaptation (20,000 for the shipped EdAR-o), fewer than 25,000, so both values give the "
    "checkpoints and runs of 50,000 (the retrained control's) bit for bit"
)
#: Every parameter we chose that the sweep covers, in table order.
PARAMS: Tuple[Param, ...] = (
    Param("handoff-ramp-length", "scenario", "the handoff ramp's length (the outage starts 4 / 16 s after t1)",
          _RAMP, _MOVE, ("handoff", "motivation"), _HALF_TWICE, edit=_ramp_length),
    Param("handoff-ramp-depth", "scenario", "the ramp's loss rates and added delays",
          _RAMP, _MOVE, ("handoff", "motivation"), _HALF_TWICE, edit=_ramp_depth),
    Param("settings-handoff-rate", "scenario", "handoffs per minute in settings i-v (FCT: the two sweeps)", _PROCESS,
          _EVERY_40, ("settings",), _HALF_TWICE, edit=_handoff_rate, fct=_FCT),
    Param("settings-handoff-duration", "scenario", "handoff duration in settings i-v", _PROCESS,
          "no duration (t_1, t_2 not given)", ("settings",), _HALF_TWICE, edit=_handoff_duration),
    Param("settings-handoff-delay", "scenario", "the delay a handoff adds to path 2's largest delay in settings i-v (×0.5: 1.5 times it, ×2: 3 times)",
          _PROCESS, "no delay (a mobile link causes the handoff)", ("settings",), _HALF_TWICE, edit=_handoff_delay),
    Param("settings-handoff-loss", "scenario", "the loss rate during a handoff in settings i-v (2.5 / 10 %)",
          _PROCESS, "no loss rate", ("settings",), _HALF_TWICE, edit=_handoff_loss),
    Param("settings-handoff-outage", "scenario", "the outage in the middle of each handoff in settings i-v (2 / 8 s)",
          _PROCESS, '"until the link is unavailable" (§VI-A); no length', ("settings",), _HALF_TWICE, edit=_handoff_outage),
    Param("online-steps", "adapt", "EdAR-o's online steps in each evaluation network",
          f"{R.ADAPT_STEPS} steps (TIs)", '"the online training converges after several or tens of training episodes" (§VI-A)',
          _ALL, (("2000", 2000.0), ("8000", 8000.0)), adapt=_steps),
    Param("epsilon", "adapt", "ε of the ε-greedy actor while EdAR-o adapts", "ε = 0.1",
          '"with probability ϵ < 1" (§V-C); no value', _ALL, (("0.05", 0.05), ("0.2", 0.2)), adapt=_epsilon),
    Param("online-updates", "adapt", "learner updates after each flow while EdAR-o adapts (M of Algorithm 2)",
          "M = 200", "M not given (Algorithm 2)", _ALL, (("100", 100.0), ("400", 400.0)), adapt=_updates),
    # Retraining: first the control (every value ours: a retraining here does not give the
    # shipped EdAR-p bit for bit), then ×0.5 and ×2 of ours, fixed before any was run.
    Param(CONTROL, "train", "none: EdAR-p retrained with the shipped training's values (the control of the retraining parameters)",
          "the shipped EdAR-p", "—", _ALL, (("ours", 0.0),), train=_control),
    Param("offline-updates", "train", "EdAR-p's offline updates (M of Algorithm 1), retrained; EdAR-o adapted from it",
          "M = 6,000", "M not given (Algorithm 1)", _ALL, (("3000", 3000.0), ("12000", 12000.0)), train=_offline_updates),
    Param("minibatch-h", "train", "the minibatch H, retrained and in EdAR-o's adaptation",
          "H = 64", "H not given (Algorithms 1-2)", _ALL, (("32", 32.0), ("128", 128.0)), train=_minibatch),
    Param("replay-capacity", "train", "the replay capacity (online learning), retrained and in EdAR-o's adaptation",
          "50,000 transitions", "not given (§V-C)", _ALL, (("25000", 25000.0), ("100000", 100000.0)), train=_capacity,
          note=_NO_BIND),
)  # fmt: skip
BY_NAME = {p.name: p for p in PARAMS}
