"""The OLMS paper's oracle (Cai et al., IEEE TNSE 2025, §II-C, eqs. (1)-(3), (5), (9)): the true
path characteristics of a scenario at a time, the optimal scheduling vector v* and per-slot
utility, and the regret and violation of one packet on each path.

Regret and violation are computed from the true path characteristics in the scenario
(bottleneck rate, 2 × one-way delay, at each time, scheduled changes included), normalized like
the scheduler's measurements (100 Mbit/s, 100 ms). One slot = one new-data segment. The oracle's
per-slot utility is v*ᵀu / L (u = b for the maxRTT app, r for the bandwidth app; v* solves eq.
(5) / (9)); a packet on path p costs regret (OPT − b_p)⁺ resp. (r_p − OPT)⁺ and violation
(r_p − C_r)⁺ resp. (b_p − C_b)⁺. The same definitions apply to every scheduler (the Rust
``Oracle`` in sched/olms.rs is the reference; this module re-derives v* in closed form: greedy for
eq. (5), bisection for eq. (9)).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple


@dataclass(frozen=True)
class AppSpec:
    kind: str  # "max-rtt" | "bandwidth"
    limit: float  # normalized C_r or C_b
    l: int  # noqa: E741 (the paper's symbol)
    rtt_scale_ms: float
    bw_scale_mbps: float


def app_spec(flow: Dict[str, Any], olms_name: str) -> AppSpec:
    o = (flow.get("scheduler_params") or {}).get("olms") or {}
    kind = o.get("app") or ("bandwidth" if olms_name == "olms-bw" else "max-rtt")
    kind = "bandwidth" if kind in ("bandwidth", "bw") else "max-rtt"
    rs, bs = float(o.get("rtt_scale_ms", 100.0)), float(o.get("bw_scale_mbps", 100.0))
    limit = (
        float(o.get("bw_max_mbps", 40.0)) / bs
        if kind == "bandwidth"
        else float(o.get("rtt_max_ms", 50.0)) / rs
    )
    return AppSpec(kind, limit, int(o.get("l", 2)), rs, bs)


def solve_oracle(
    app_: AppSpec, b: Sequence[float], r: Sequence[float]
) -> Optional[Tuple[List[float], float]]:
    """v* of eq. (5) (greedy: fill the highest b first up to min(1, C_r/r_i)) or eq. (9)
    (bisection on z: feasible iff with caps min(1, z/r_i) the L cheapest-b units fit C_b), and
    the per-slot optimal utility v*ᵀu / L. None if infeasible."""
    k = len(b)
    L = max(1, min(app_.l, k - 1))

    def fill(caps: Sequence[float], order: Sequence[int]) -> Optional[List[float]]:
        v, left = [0.0] * k, float(L)
        for i in order:
            take = min(caps[i], left)
            v[i], left = take, left - take
        return None if left > 1e-9 else v

    if app_.kind == "max-rtt":
        caps = [min(1.0, app_.limit / ri) if ri > 0 else 1.0 for ri in r]
        v = fill(caps, sorted(range(k), key=lambda i: -b[i]))
        if v is None:
            return None
        return v, sum(x * y for x, y in zip(v, b)) / L

    def at(z: float) -> Optional[List[float]]:
        caps = [min(1.0, z / ri) if ri > 0 else 1.0 for ri in r]
        v = fill(caps, sorted(range(k), key=lambda i: b[i]))
        return (
            v if v is not None and sum(x * y for x, y in zip(v, b)) <= app_.limit + 1e-12 else None
        )

    hi = max(r) if r else 0.0
    if at(hi) is None:
        return None
    lo = 0.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if at(mid) is None:
            lo = mid
        else:
            hi = mid
    v = at(hi)
    assert v is not None
    return v, sum(x * y for x, y in zip(v, r)) / L


def slot_costs(
    app_: AppSpec, b: Sequence[float], r: Sequence[float]
) -> Optional[List[Tuple[float, float]]]:
    """(regret, violation) of one packet on each path, or None if the true problem is infeasible."""
    sol = solve_oracle(app_, b, r)
    if sol is None:
        return None
    _, opt = sol
    if app_.kind == "max-rtt":
        return [(max(opt - bi, 0.0), max(ri - app_.limit, 0.0)) for bi, ri in zip(b, r)]
    return [(max(ri - opt, 0.0), max(bi - app_.limit, 0.0)) for bi, ri in zip(b, r)]


def path_state(path: Dict[str, Any], t: float) -> Tuple[float, float]:
    """(rate Mbps, RTT ms) of a shortcut path at time t (its schedule applied)."""
    rate, delay = float(path["rate_mbps"]), float(path.get("delay_ms", 0.0))
    for ch in path.get("schedule", []):
        if ch["at_s"] <= t:
            rate = float(ch.get("rate_mbps", rate))
            delay = float(ch.get("delay_ms", delay))
    return rate, 2 * delay


def true_characteristics(
    scenario: Dict[str, Any], flow: Dict[str, Any], app_: AppSpec, t: float
) -> Tuple[List[float], List[float]]:
    paths = {p["name"]: p for p in scenario["paths"]}
    b, r = [], []
    for name in flow["paths"]:
        rate, rtt = path_state(paths[name], t)
        b.append(min(rate / app_.bw_scale_mbps, 1.0))
        r.append(min(rtt / app_.rtt_scale_ms, 1.0))
    return b, r


def mean_capacity(
    scenario: Dict[str, Any], flow: Dict[str, Any], t_end: float, step: float = 0.05
) -> float:
    paths = {p["name"]: p for p in scenario["paths"]}
    n = max(1, int(t_end / step))
    total = 0.0
    for k in range(n):
        t = (k + 0.5) * t_end / n
        total += sum(path_state(paths[p], t)[0] for p in flow["paths"])
    return total / n
