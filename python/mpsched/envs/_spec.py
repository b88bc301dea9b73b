"""Turn a scenario and env options into the core's env spec (JSON)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Union

from .._core import ScenarioError
from ..matrix import resolve_trace_paths
from ..scenario import ScenarioLike, check, load

#: Scheduler the controlled flow gets for each scheduling action space (``{fallback}``: the
#: env's ``fallback`` option).
SCHEDULER_OF_ACTION = {
    "mode": "external-mode",
    "weights": "external:mode=weights,fallback={fallback}",
    "select": "external:mode=weights,fallback={fallback}",
}

#: What the weights/select envs do when the agent chooses no usable path: ``minrtt`` as
#: ``mpsched compare --scheduler minrtt`` runs it (with opportunistic retransmission and
#: penalization), or ``minrtt-norp``.
FALLBACKS = ("minrtt", "minrtt-norp")


class EnvConfigError(ScenarioError):
    """A bad environment option or scenario (one-line message naming the option or file); a
    :class:`~mpsched.ScenarioError`."""


@dataclass(frozen=True)
class Prepared:
    spec_json: str
    flow: int
    flow_name: str
    source: str
    max_paths: int


def _load(scenario: ScenarioLike) -> tuple[Dict[str, Any], str]:
    """The scenario (trace paths absolute) and its source name, read by :mod:`mpsched.scenario`;
    a file is checked as written first, so its mistakes read as in ``mpsched run``."""
    try:
        loaded = load(scenario)
        check(loaded)
    except TypeError as e:
        raise EnvConfigError(str(e)) from None
    except ScenarioError as e:
        raise EnvConfigError(str(e)) from None
    return resolve_trace_paths(loaded.data, loaded.base_dir), loaded.source


def _flow_index(flows: List[Dict[str, Any]], flow: Union[int, str, None], source: str) -> int:
    if not flows:
        raise EnvConfigError(f"{source}: flows: expected at least one [[flows]] entry")
    if flow is None:
        for i, f in enumerate(flows):
            if isinstance(f, dict) and "paths" in f:
                return i
        return 0
    if isinstance(flow, bool):
        raise EnvConfigError(f"flow: expected a flow name or index, got {flow!r}")
    if isinstance(flow, int):
        if not 0 <= flow < len(flows):
            raise EnvConfigError(f"flow: expected an index below {len(flows)}, got {flow}")
        return flow
    for i, f in enumerate(flows):
        if isinstance(f, dict) and f.get("name") == flow:
            return i
    names = ", ".join(str(f.get("name")) for f in flows if isinstance(f, dict))
    raise EnvConfigError(f"flow: no flow named {flow!r} in {source} (flows: {names})")


INITIAL_MODES = {"normal": 0, "redundant": 1}


def _initial_mode(value: Union[int, str, None], action: str) -> Optional[int]:
    """``initial_mode`` as 0/1 (None: not set)."""
    if value is None:
        return None
    if action != "mode":
        raise EnvConfigError(f'initial_mode: only with action="mode", got action={action!r}')
    if isinstance(value, str) and value in INITIAL_MODES:
        return INITIAL_MODES[value]
    if isinstance(value, int) and not isinstance(value, bool) and value in (0, 1):
        return value
    raise EnvConfigError(f'initial_mode: expected "normal", "redundant", 0 or 1, got {value!r}')


def prepare(
    scenario: ScenarioLike,
    *,
    action: str,
    flow: Union[int, str, None],
    interval: Union[float, str],
    max_paths: int,
    history: int,
    max_flows: int = 8,
    cwnd_step: float = 10.0,
    duration_s: Optional[float] = None,
    initial_mode: Union[int, str, None] = None,
    fallback: str = "minrtt",
) -> Prepared:
    """Sets the controlled flow up for outside decisions and returns the spec for the core."""
    sc, source = _load(scenario)
    flows = sc.get("flows")
    if not isinstance(flows, list):
        raise EnvConfigError(f"{source}: flows: expected a list of [[flows]] tables")
    f = _flow_index(flows, flow, source)
    fl = flows[f]
    fl.pop("decision_interval_ms", None)
    fl.pop("decision_every_min_rtt", None)
    if interval == "min-rtt":
        fl["decision_every_min_rtt"] = True
    elif isinstance(interval, (int, float)) and not isinstance(interval, bool) and interval > 0:
        fl["decision_interval_ms"] = float(interval)
    else:
        raise EnvConfigError(
            f'interval: expected a period in ms > 0 or "min-rtt", got {interval!r}'
        )
    if action == "cwnd":
        fl["cc"] = "external"
    else:
        if "paths" not in fl:
            raise EnvConfigError(
                f"{source}: flows[{f}]: a scheduling env needs a multipath flow (`paths = [...]`)"
            )
        if fallback not in FALLBACKS:
            raise EnvConfigError(
                f"fallback: expected one of {', '.join(FALLBACKS)}, got {fallback!r}"
            )
        fl["scheduler"] = SCHEDULER_OF_ACTION[action].format(fallback=fallback)
    if not isinstance(max_paths, int) or not 1 <= max_paths <= 8:
        raise EnvConfigError(f"max_paths: expected an integer in 1..8, got {max_paths!r}")
    n_paths = len(fl.get("paths", [fl.get("path")]))
    if n_paths > max_paths:
        raise EnvConfigError(
            f"max_paths: flow {fl.get('name', f)!r} has {n_paths} paths, more than max_paths = {max_paths}"
        )
    if not isinstance(history, int) or not 1 <= history <= 64:
        raise EnvConfigError(f"history: expected an integer in 1..64, got {history!r}")
    if duration_s is not None:
        sc.setdefault("sim", {})["duration_s"] = float(duration_s)
    init = _initial_mode(initial_mode, action)
    spec = {
        "scenario": json.dumps(sc),
        "source": source,
        "format": "json",
        "flow": f,
        "action": action,
        "max_paths": max_paths,
        "history": history,
        "max_flows": max_flows,
        "cwnd_step": float(cwnd_step),
    }
    if init is not None:
        spec["initial_mode"] = init
    return Prepared(json.dumps(spec), f, str(fl.get("name", f)), source, max_paths)
