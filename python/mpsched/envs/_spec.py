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
    "choose": "external:mode=weights,fallback={fallback}",
}

#: The core's action kind for each action space (``choose`` is a one-hot ``select``).
CORE_ACTION = {"choose": "select"}

#: What the weights/select envs do when the agent chooses no usable path: ``minrtt`` as
#: ``mpsched compare --scheduler minrtt`` runs it (with opportunistic retransmission and
#: penalization), or ``minrtt-norp``.
FALLBACKS = ("minrtt", "minrtt-norp")

#: What the weights/select/choose envs do when the path due has no window space: ``wait``
#: for it, send on ``minrtt``'s choice (RLDS-proxy, rl-baselines.md §4), or on the ``next``
#: subflow by quality Q (PDAA3C, docs/pdaa3c.md).
BUSY = ("wait", "minrtt", "next", "skip")


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
    #: The ``obs`` block a policy trained here is exported with (:func:`policy_obs`).
    policy_obs: Dict[str, Any]


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
    return _sweeps_as_ranges(resolve_trace_paths(loaded.data, loaded.base_dir)), loaded.source


def _sweeps_as_ranges(x: Any) -> Any:
    """A sweep (``{range = [lo, hi], steps = n}``, several runs for ``compare``) is, in an env,
    its range: every episode draws one value from it (domain randomization)."""
    if isinstance(x, dict):
        if "range" in x:
            x.pop("steps", None)
        for v in x.values():
            _sweeps_as_ranges(v)
    elif isinstance(x, list):
        for v in x:
            _sweeps_as_ranges(v)
    return x


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
    sender_only: bool = False,
    busy: str = "wait",
) -> Prepared:
    """Sets the controlled flow up for outside decisions and returns the spec for the core."""
    if not isinstance(sender_only, bool):
        raise EnvConfigError(f"sender_only: expected True or False, got {sender_only!r}")
    if busy not in BUSY:
        raise EnvConfigError(f"busy: expected one of {', '.join(BUSY)}, got {busy!r}")
    if busy != "wait" and action in ("mode", "cwnd"):
        raise EnvConfigError(
            f'busy: only with action="weights", "select" or "choose", got action={action!r}'
        )
    sc, source = _load(scenario)
    if not sc.get("flows") and sc.get("workloads"):
        # A workload's flows exist only once the core resolves each episode's scenario: name
        # the controlled one and let the core set it up.
        wl, name = _workload_flow(sc["workloads"], flow, source)
        what = f"workload {wl.get('name')!r}"
        control = _control(action, interval, fallback, wl, f"{source}: {what}", busy)
        _check_sizes(max_paths, history, wl, what)
        f, named = 0, {"flow_name": name, "control": _core_control(control)}
    else:
        flows = sc.get("flows")
        if not isinstance(flows, list):
            raise EnvConfigError(f"{source}: flows: expected a list of [[flows]] tables")
        f = _flow_index(flows, flow, source)
        fl = flows[f]
        fl.pop("decision_interval_ms", None)
        fl.pop("decision_every_min_rtt", None)
        fl.update(_control(action, interval, fallback, fl, f"{source}: flows[{f}]", busy))
        name = str(fl.get("name", f))
        _check_sizes(max_paths, history, fl, f"flow {fl.get('name', f)!r}")
        named = {}
    if duration_s is not None:
        sc.setdefault("sim", {})["duration_s"] = float(duration_s)
    init = _initial_mode(initial_mode, action)
    spec = {
        "scenario": json.dumps(sc),
        "source": source,
        "format": "json",
        "flow": f,
        **named,
        "action": CORE_ACTION.get(action, action),
        "max_paths": max_paths,
        "history": history,
        "max_flows": max_flows,
        "cwnd_step": float(cwnd_step),
    }
    if init is not None:
        spec["initial_mode"] = init
    if sender_only:
        spec["sender_only"] = True
    obs = policy_obs(action, interval, max_paths, history, init, fallback, sender_only)
    if busy != "wait":
        obs["busy"] = busy
    return Prepared(json.dumps(spec), f, name, source, max_paths, obs)


def policy_obs(
    action: str,
    interval: Union[float, str],
    max_paths: int,
    history: int,
    initial_mode: Optional[int],
    fallback: str,
    sender_only: bool,
) -> Dict[str, Any]:
    """The ``obs`` block of a policy file trained in an env with these options: what the Rust
    runtime needs to observe and act as the env did (docs/policies.md)."""
    from .scheduler import FEATURES

    out: Dict[str, Any] = {
        "action": action,
        "interval": interval,
        "max_paths": max_paths,
        "history": history,
        "fallback": fallback,
        "sender_only": sender_only,
        "features": {g: [f.name for f in feats] for g, feats in FEATURES.items()},
    }
    if initial_mode is not None:
        out["initial_mode"] = initial_mode
    return out


def _check_sizes(max_paths: Any, history: Any, fl: Dict[str, Any], what: str) -> None:
    """``max_paths`` (1..8, at least the flow's paths) and ``history`` (1..64)."""
    if not isinstance(max_paths, int) or not 1 <= max_paths <= 8:
        raise EnvConfigError(f"max_paths: expected an integer in 1..8, got {max_paths!r}")
    n_paths = len(fl.get("paths", [fl.get("path")]))
    if n_paths > max_paths:
        raise EnvConfigError(
            f"max_paths: {what} has {n_paths} paths, more than max_paths = {max_paths}"
        )
    if not isinstance(history, int) or not 1 <= history <= 64:
        raise EnvConfigError(f"history: expected an integer in 1..64, got {history!r}")


def _control(
    action: str,
    interval: Union[float, str],
    fallback: str,
    fl: Dict[str, Any],
    where: str,
    busy: str = "wait",
) -> Dict[str, Any]:
    """The controlled flow's settings, as scenario fields: decision interval, and the external
    scheduler (scheduling actions) or congestion control (``cwnd``)."""
    out: Dict[str, Any] = {}
    if interval == "min-rtt":
        out["decision_every_min_rtt"] = True
    elif isinstance(interval, (int, float)) and not isinstance(interval, bool) and interval > 0:
        out["decision_interval_ms"] = float(interval)
    else:
        raise EnvConfigError(
            f'interval: expected a period in ms > 0 or "min-rtt", got {interval!r}'
        )
    if action == "cwnd":
        out["cc"] = "external"
        return out
    if "paths" not in fl:
        raise EnvConfigError(f"{where}: a scheduling env needs a multipath flow (`paths = [...]`)")
    if fallback not in FALLBACKS:
        raise EnvConfigError(f"fallback: expected one of {', '.join(FALLBACKS)}, got {fallback!r}")
    out["scheduler"] = SCHEDULER_OF_ACTION[action].format(fallback=fallback)
    if busy != "wait":
        out["scheduler"] += f",busy={busy}"
    return out


def _workload_flow(workloads: List[Any], flow: Union[int, str, None], source: str) -> tuple:
    """The controlled flow of a scenario whose flows come from ``[[workloads]]``: ``flow=`` names
    a generated flow (``"short-3"``) or a workload (its first flow, ``"short-0"``); by default
    the first flow of the first multipath workload. Returns (workload table, flow name)."""
    tables = [w for w in workloads if isinstance(w, dict)]
    if not tables:
        raise EnvConfigError(f"{source}: workloads: expected a list of [[workloads]] tables")
    if flow is None:
        w = next((w for w in tables if "paths" in w), tables[0])
        return w, f"{w.get('name')}-0"
    if isinstance(flow, str):
        for w in tables:
            name = str(w.get("name"))
            if flow == name:
                return w, f"{name}-0"
            if flow.startswith(name + "-") and flow[len(name) + 1 :].isdigit():
                return w, flow
    names = ", ".join(str(w.get("name")) for w in tables)
    raise EnvConfigError(
        f"flow: expected a workload name or <workload>-<i> in {source} (workloads: {names}), "
        f"got {flow!r}"
    )


def _core_control(control: Dict[str, Any]) -> Dict[str, Any]:
    """The scenario fields of :func:`_control` as the core's ``control`` of a named flow."""
    return {
        "scheduler": control.get("scheduler"),
        "cc": control.get("cc"),
        "interval_ms": control.get("decision_interval_ms"),
        "every_min_rtt": control.get("decision_every_min_rtt", False),
    }
