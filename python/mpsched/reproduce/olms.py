"""``mpsched reproduce olms``: the OLMS paper's evaluation (Cai et al., IEEE TNSE 2025).

Runs the paper's topologies (``scenarios/olms-*.toml``: Application I maxRTT constrained,
Application II bandwidth constrained, Application I with dynamic bandwidth / dynamic RTT, and the
two-flow Wi-Fi/LTE dumbbell of Fig. 8) with OLMS and the baselines (minRTT, round-robin, BLEST,
ECF, Peekaboo; names the core does not know are skipped with a note) through the ``compare``
runner, then writes:

* ``olms-table.md`` / ``olms-summary.json``: per scheduler the paper's metrics and ours, and
  OLMS's gains over the baselines beside the paper's;
* ``figures/``: selected-path throughput, goodput utilization and FCT bars, cumulative regret and
  violation curves (matplotlib);
* ``runs/<scenario>[/<variant>]/``: the compare datasets (flows, subflows, timeseries Parquet).

What is measured. The paper's bandwidth metric (§VI-B) is not receiver goodput: "We estimate the
throughput of the scheduled paths using the ratios of the size of the congestion window to the
smoothed RTT. The throughput of the selected path quantifies the total throughput of the paths
selected by the scheduler in each time slot", a time slot being one packet transmission (§II-A),
and "We estimate the RTT of the scheduled path by reading from the measurements of smoothed RTT";
they "present the first 20-second experiment results". The simulator records, for every new-data
segment a connection schedules, the chosen subflow's cwnd and srtt (``slots``,
``slot_bw_mbps``, ``slot_srtt_ms`` in the flows, subflows and timeseries tables); the
*selected-path throughput* here is the slot-weighted mean of cwnd / srtt over the first 20 s
(``WINDOW_S``; a flow done sooner: its whole transfer), the *selected-path RTT* likewise. Beside it: receiver goodput, goodput /
mean capacity of the flow's paths ("utilization"), and flow completion time (FCT). The paper's
+8.42–18.71 % is on the selected-path throughput of Application I (Fig. 3(a)); its
−4.22…−10.26 % FCT is the dumbbell's flow 1 (Fig. 9: flow 1's scheduler varies, flow 2 runs
OLMS); its −15.97…−29.12 % regret and −36.14…−44.98 % violation are Application II (Fig. 4).

OLMS variants. ``olms`` is the paper's scheduler as specified: when no path of the sampled set has
congestion-window space the packet goes to minRTT's choice (§VI-B: the set of L paths "ensures
that packets are transmitted via high-quality paths in case the primary path becomes
unavailable. By pre-selecting a subset of optimal paths, the scheduler reduces the risk of
falling back to a suboptimal path selected by minRTT"). With window-limited subflows an ACK
usually frees window on one path only, so that fallback makes OLMS send exactly like minRTT.
``olms+wait`` (``on_busy = "wait"``) holds the packet instead and re-draws at the next
opportunity; it shows what the learned scheduling vector does when it is enforced.

Regret and violation (paper §II-C, eqs. (1)-(3)) are computed by an oracle that knows the
true path characteristics from the scenario (bottleneck rate, 2 × one-way delay, at each time,
including scheduled changes), normalized like the scheduler's measurements (100 Mbps, 100 ms by
default). One slot = one MSS-sized transmission; the packets each path sent in a sample interval
are its sending throughput × interval / 1448 bytes. The oracle's per-slot utility is v*ᵀu / L
(u = b for the maxRTT app, r for the bandwidth app; v* solves eq. (5) / (9)); a packet on path
p costs regret (OPT − b_p)⁺ resp. (r_p − OPT)⁺ and violation (r_p − C_r)⁺ resp. (b_p − C_b)⁺.
The same definitions apply to every scheduler (the Rust `Oracle` in sched/olms.rs is the
reference; this module re-derives v* in closed form: greedy for eq. (5), bisection for eq. (9)).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Dict, List, Optional, Sequence, Tuple

import pyarrow.parquet as pq
import typer
from rich.console import Console
from rich.table import Table

from ..matrix import MatrixError, build_matrix, load_scenario, parse_seeds
from ..sweep import run_sweep
from . import _common, app

#: The paper's reported OLMS gains: selected-path throughput, Application I (abstract, §VI-B,
#: Fig. 3(a)); FCT, two-flow dumbbell (abstract, §VI-D4, Fig. 9); cumulative regret and violation,
#: Application II (§VI-C, Fig. 4(c)/(d)).
PAPER_UTIL_GAIN = (8.42, 18.71)
PAPER_FCT_CHANGE = (-10.26, -4.22)
PAPER_REGRET_CHANGE = (-29.12, -15.97)
PAPER_VIOLATION_CHANGE = (-44.98, -36.14)

BASELINES = ("minrtt", "rr", "blest", "ecf", "peekaboo")
MSS = 1448
#: "we present the first 20-second experiment results" (§VI-B).
WINDOW_S = 20.0
#: Label of the OLMS variant that holds the packet when its sampled set has no window space.
WAIT = "+wait"


@dataclass(frozen=True)
class Case:
    name: str
    label: str
    olms: str
    dynamic: bool
    #: Several flows: the first one's scheduler varies, the others keep theirs (OLMS).
    multi: bool = False


CASES = (
    Case("olms-app1", "App I: maxRTT 50 ms", "olms", False),
    Case("olms-app2", "App II: bandwidth 40 Mbps", "olms-bw", False),
    Case("olms-dyn-bw", "App I, dynamic bandwidth", "olms", True),
    Case("olms-dyn-rtt", "App I, dynamic RTT", "olms", True),
    Case("olms-dumbbell", "Dumbbell, 2 flows (flow 2: OLMS)", "olms", False, True),
)


def default_scenario_dir() -> Path:
    return _common.default_scenario_dir("olms-app1.toml")


# --- oracle ------------------------------------------------------------------------------


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


# --- running -----------------------------------------------------------------------------


def _unknown_schedulers(message: str) -> List[str]:
    m = re.search(r"expected one of \[(.*?)\]", message)
    if "unknown scheduler" not in message or not m:
        return []
    return re.findall(r'"([^"]+)"', m.group(1))


@dataclass
class Group:
    """One dataset: its runs' label is the flows table's scheduler column, or ``label``."""

    ds: Path
    scenario: Dict[str, Any]
    label: Optional[str] = None


def prepare(
    case: Case,
    scenario_dir: Path,
    out: Path,
    size_mb: Optional[float],
    duration_s: Optional[float],
    *,
    first_scheduler: Optional[str] = None,
    wait: bool = False,
    tag: str = "",
) -> Tuple[Path, Dict[str, Any]]:
    """The case's scenario as JSON under ``out/scenarios``, with the overrides applied:
    ``first_scheduler`` on the first flow, ``on_busy = "wait"`` for the OLMS flows it varies
    (the first flow of a multi-flow case, every flow otherwise)."""
    scenario = load_scenario(scenario_dir / f"{case.name}.toml")
    if size_mb is not None:
        for f in scenario["flows"]:
            f["size_bytes"] = int(size_mb * 1e6)
    if duration_s is not None:
        scenario["sim"]["duration_s"] = duration_s
    if first_scheduler is not None:
        scenario["flows"][0]["scheduler"] = first_scheduler
    if wait:
        for f in scenario["flows"][:1] if case.multi else scenario["flows"]:
            f.setdefault("scheduler_params", {}).setdefault("olms", {})["on_busy"] = "wait"
    return _common.write_scenario(scenario, out, f"{case.name}{tag}"), scenario


def _sweep(
    path: Path, ds: Path, seeds: Sequence[int], names: Optional[Sequence[str]], jobs: int
) -> None:
    run_sweep(
        build_matrix(path, seeds=list(seeds), schedulers=None if names is None else list(names)),
        ds,
        jobs=jobs,
    )


def run_case(
    case: Case,
    path: Path,
    out: Path,
    seeds: Sequence[int],
    baselines: Sequence[str],
    jobs: int,
    notes: List[str],
) -> Tuple[Path, List[str]]:
    """One compare sweep of ``path`` over OLMS and ``baselines`` (unknown names skipped)."""
    names = [case.olms, *baselines]
    known: Optional[List[str]] = None
    while True:
        try:
            matrix = build_matrix(path, seeds=list(seeds), schedulers=names)
            break
        except MatrixError as e:
            allowed = _unknown_schedulers(str(e))
            if not allowed or known is not None:
                raise
            known = allowed
            skipped = [n for n in names if n.lower() not in allowed and n != case.olms]
            for n in skipped:
                notes.append(f"scheduler {n!r} is not in this build's registry: skipped")
            names = [n for n in names if n not in skipped]
    ds = out / "runs" / case.name
    run_sweep(matrix, ds, jobs=jobs)
    return ds, names


def run_groups(
    case: Case,
    scenario_dir: Path,
    out: Path,
    seeds: Sequence[int],
    baselines: Sequence[str],
    jobs: int,
    notes: List[str],
    size_mb: Optional[float],
    duration_s: Optional[float],
) -> List[Group]:
    """Every dataset of a case: OLMS and the baselines, and the ``olms+wait`` variant."""
    if not case.multi:
        path, scenario = prepare(case, scenario_dir, out, size_mb, duration_s)
        ds, _ = run_case(case, path, out, seeds, baselines, jobs, notes)
        wpath, wscen = prepare(case, scenario_dir, out, size_mb, duration_s, wait=True, tag="-wait")
        wds = out / "runs" / case.name / "wait"
        _sweep(wpath, wds, seeds, [case.olms], jobs)
        return [Group(ds, scenario), Group(wds, wscen, case.olms + WAIT)]
    groups = []
    for name in [case.olms, *baselines, case.olms + WAIT]:
        wait = name.endswith(WAIT)
        sched = name[: -len(WAIT)] if wait else name
        tag = "-" + re.sub(r"[^A-Za-z0-9_.+-]", "_", name)
        path, scenario = prepare(
            case, scenario_dir, out, size_mb, duration_s, first_scheduler=sched, wait=wait, tag=tag
        )
        ds = out / "runs" / case.name / tag[1:]
        try:
            _sweep(path, ds, seeds, None, jobs)
        except MatrixError as e:
            if "unknown scheduler" not in str(e) or name == case.olms:
                raise
            notes.append(f"scheduler {name!r} is not in this build's registry: skipped")
            continue
        groups.append(Group(ds, scenario, name))
    return groups


def _mean(xs: Sequence[Optional[float]]) -> Optional[float]:
    v = [x for x in xs if x is not None]
    return sum(v) / len(v) if v and len(v) == len(xs) else None


def _change(ours: Optional[float], base: Optional[float]) -> Optional[float]:
    return (ours / base - 1) * 100 if ours is not None and base else None


def selected_path(ts_rows: Sequence[Dict[str, Any]], window_s: float = WINDOW_S) -> Dict[str, Any]:
    """The paper's per-slot metrics from one flow's timeseries rows (``slots``, ``slot_bw_mbps``,
    ``slot_srtt_ms`` per subflow and interval): slot-weighted means of the selected path's
    cwnd / srtt (Mbit/s) and srtt (ms) over the intervals ending at or before ``window_s``, and
    each subflow's share of those slots."""
    n = bw = rtt = 0.0
    per: Dict[int, float] = {}
    for r in ts_rows:
        if r["time_s"] > window_s + 1e-9:
            continue
        k = r["slots"]
        n += k
        bw += k * r["slot_bw_mbps"]
        rtt += k * r["slot_srtt_ms"]
        per[r["subflow"]] = per.get(r["subflow"], 0.0) + k
    shares = [per.get(i, 0.0) / n if n else 0.0 for i in range(max(per) + 1 if per else 0)]
    return {
        "slots": int(n),
        "sel_mbps": bw / n if n else None,
        "sel_srtt_ms": rtt / n if n else None,
        "path_shares": shares,
    }


def analyse(case: Case, groups: Sequence[Group]) -> Dict[str, Any]:
    scenario = groups[0].scenario
    flow = scenario["flows"][0]
    focus = flow["name"]
    app_ = app_spec(flow, case.olms)
    per_run: List[Dict[str, Any]] = []
    cache: Dict[float, Optional[List[Tuple[float, float]]]] = {}
    for g in groups:
        flows = [r for r in pq.read_table(g.ds / "flows.parquet").to_pylist() if r["name"] == focus]
        ts_by_run: Dict[str, List[Dict[str, Any]]] = {}
        for row in pq.read_table(g.ds / "timeseries.parquet").to_pylist():
            if row["flow"] == focus:
                ts_by_run.setdefault(row["run_id"], []).append(row)
        subs: Dict[str, List[Dict[str, Any]]] = {}
        for row in pq.read_table(g.ds / "subflows.parquet").to_pylist():
            if row["flow"] == focus:
                subs.setdefault(row["run_id"], []).append(row)
        for row in flows:
            fct = row.get("fct_s")
            end = fct if fct is not None else float(scenario["sim"]["duration_s"])
            cap = mean_capacity(scenario, flow, end)
            ts = ts_by_run.get(row["run_id"], [])
            sel = selected_path(ts)
            if fct is not None and fct <= WINDOW_S:
                # Done within the window: the whole run's exact totals (the timeseries misses the
                # last partial sample interval).
                sub = sorted(subs.get(row["run_id"], []), key=lambda r: r["subflow"])
                n = sum(r["slots"] for r in sub)
                sel = {
                    "slots": row["slots"],
                    "sel_mbps": row["slot_bw_mbps"] if n else None,
                    "sel_srtt_ms": row["slot_srtt_ms"] if n else None,
                    "path_shares": [r["slots"] / n if n else 0.0 for r in sub],
                }
            run = {
                "scheduler": g.label or row["scheduler"],
                "seed": row["seed"],
                "fct_s": fct,
                "completed": row["completed"],
                "goodput_mbps": row["goodput_mbps"],
                "utilization": row["goodput_mbps"] / cap if cap > 0 else 0.0,
                "sel_mbps_run": row["slot_bw_mbps"],
                "sel_srtt_ms_run": row["slot_srtt_ms"],
                **sel,
            }
            run["curve"] = _regret_curve(ts, scenario, flow, app_, cache)
            per_run.append(run)
    schedulers: Dict[str, Dict[str, Any]] = {}
    for r in per_run:
        schedulers.setdefault(r["scheduler"], {"runs": []})["runs"].append(r)
    for s in schedulers.values():
        runs = s["runs"]
        for key in (
            "utilization",
            "goodput_mbps",
            "fct_s",
            "sel_mbps",
            "sel_srtt_ms",
            "sel_mbps_run",
            "sel_srtt_ms_run",
        ):
            s[key] = _mean([r[key] for r in runs])
        k = max(len(r["path_shares"]) for r in runs)
        s["path_shares"] = [
            sum(r["path_shares"][i] if i < len(r["path_shares"]) else 0.0 for r in runs) / len(runs)
            for i in range(k)
        ]
        last = [r["curve"][-1] if r["curve"] else (0, 0, 0, 0) for r in runs]
        pk = sum(x[1] for x in last)
        s["regret_per_slot"] = sum(x[2] for x in last) / pk if pk else 0.0
        s["violation_per_slot"] = sum(x[3] for x in last) / pk if pk else 0.0
    gains: Dict[str, Dict[str, Dict[str, Optional[float]]]] = {}
    for variant in (case.olms, case.olms + WAIT):
        o = schedulers.get(variant)
        if not o:
            continue
        gains[variant] = {
            name: {
                "sel_gain_pct": _change(o["sel_mbps"], s["sel_mbps"]),
                "goodput_gain_pct": _change(o["goodput_mbps"], s["goodput_mbps"]),
                # Kept under its earlier name: goodput / capacity, same ratio as goodput.
                "util_gain_pct": _change(o["utilization"], s["utilization"]),
                "fct_change_pct": _change(o["fct_s"], s["fct_s"]),
                "regret_change_pct": _change(o["regret_per_slot"], s["regret_per_slot"]),
                "violation_change_pct": _change(o["violation_per_slot"], s["violation_per_slot"]),
            }
            for name, s in schedulers.items()
            if not name.startswith(case.olms)
        }
    return {"case": case, "app": app_, "schedulers": schedulers, "gains": gains}


def _regret_curve(
    ts: Sequence[Dict[str, Any]],
    scenario: Dict[str, Any],
    flow: Dict[str, Any],
    app_: AppSpec,
    cache: Dict[float, Optional[List[Tuple[float, float]]]],
) -> List[Tuple[float, float, float, float]]:
    """(time, packets, cumulative regret, cumulative violation) per sample interval, from each
    subflow's sending throughput."""
    samples: Dict[float, Dict[int, float]] = {}
    for row in ts:
        samples.setdefault(row["time_s"], {})[row["subflow"]] = row["throughput_mbps"]
    reg = vio = pkts = prev = 0.0
    curve = []
    for t in sorted(samples):
        dt, mid, prev = t - prev, (t + prev) / 2, t
        key = round(mid, 6)
        if key not in cache:
            b, r = true_characteristics(scenario, flow, app_, mid)
            cache[key] = slot_costs(app_, b, r)
        costs = cache[key]
        for sf, mbps in samples[t].items():
            n = mbps * 1e6 * dt / 8 / MSS
            pkts += n
            if costs is not None and sf < len(costs):
                reg += n * costs[sf][0]
                vio += n * costs[sf][1]
        curve.append((t, pkts, reg, vio))
    return curve


# --- output ------------------------------------------------------------------------------


def _fmt(x: Optional[float], spec: str) -> str:
    return "—" if x is None else format(x, spec)


def _range(vals: Sequence[Optional[float]]) -> str:
    v = [x for x in vals if x is not None]
    return "—" if not v else f"{min(v):+.2f} … {max(v):+.2f}"


def _paper(case: Case, metric: str) -> str:
    """The paper's reported OLMS change for ``metric`` on ``case``, or a dash."""
    if metric == "sel" and case.name == "olms-app1":
        return f"+{PAPER_UTIL_GAIN[0]} … +{PAPER_UTIL_GAIN[1]} (Fig. 3a)"
    if metric == "fct" and case.name == "olms-dumbbell":
        return f"{PAPER_FCT_CHANGE[0]} … {PAPER_FCT_CHANGE[1]} (Fig. 9)"
    if metric == "regret" and case.name == "olms-app2":
        return f"{PAPER_REGRET_CHANGE[0]} … {PAPER_REGRET_CHANGE[1]} (Fig. 4c)"
    if metric == "violation" and case.name == "olms-app2":
        return f"{PAPER_VIOLATION_CHANGE[0]} … {PAPER_VIOLATION_CHANGE[1]} (Fig. 4d)"
    return "—"


def write_outputs(
    results: List[Dict[str, Any]], out: Path, notes: List[str], console: Console
) -> None:
    md = [
        "# OLMS reproduction",
        "",
        "Paper: Cai et al., OLMS, IEEE TNSE 2025. Paper's reported OLMS gains: "
        f'selected-path throughput (its "bandwidth utilization") +{PAPER_UTIL_GAIN[0]}–{PAPER_UTIL_GAIN[1]} % '
        f"(Application I), FCT {PAPER_FCT_CHANGE[1]}…{PAPER_FCT_CHANGE[0]} % (two-flow dumbbell), "
        f"cumulative regret {PAPER_REGRET_CHANGE[1]}…{PAPER_REGRET_CHANGE[0]} % and violation "
        f"{PAPER_VIOLATION_CHANGE[1]}…{PAPER_VIOLATION_CHANGE[0]} % (Application II).",
        "",
        f"*Selected-path throughput* (the paper's metric, §VI-B): cwnd / srtt of the path each new-data segment "
        f"was scheduled on, averaged over the segments sent in the first {WINDOW_S:g} s; *sel. RTT*: that path's "
        "srtt, likewise; *path shares*: each path's share of those segments. *Goodput*: receiver goodput of the "
        "(first) flow; *util.*: goodput / mean capacity of its paths; FCT: flow completion time. Means over seeds. "
        "`olms` falls back to minRTT when no path of its sampled set has window space (the paper's rule); "
        "`olms+wait` holds the packet instead.",
        "",
        "| scenario | scheduler | sel.-path Mbps (20 s) | sel. RTT ms (20 s) | path shares (20 s) | goodput Mbps | util. | FCT s | regret/slot | violation/slot |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    summary: Dict[str, Any] = {
        "paper": {
            "sel_gain_pct": PAPER_UTIL_GAIN,
            "util_gain_pct": PAPER_UTIL_GAIN,
            "fct_change_pct": PAPER_FCT_CHANGE,
            "regret_change_pct": PAPER_REGRET_CHANGE,
            "violation_change_pct": PAPER_VIOLATION_CHANGE,
        },
        "window_s": WINDOW_S,
        "cases": {},
        "notes": notes,
    }
    for res in results:
        case = res["case"]
        for name, s in res["schedulers"].items():
            shares = "/".join(f"{x:.2f}" for x in s["path_shares"])
            md.append(
                f"| {case.name} | {name} | {_fmt(s['sel_mbps'], '.2f')} | {_fmt(s['sel_srtt_ms'], '.1f')} | {shares} | "
                f"{_fmt(s['goodput_mbps'], '.2f')} | {_fmt(s['utilization'], '.3f')} | {_fmt(s['fct_s'], '.2f')} | "
                f"{s['regret_per_slot']:.4f} | {s['violation_per_slot']:.4f} |"
            )
        summary["cases"][case.name] = {
            "label": case.label,
            "schedulers": {
                n: {k: v for k, v in s.items() if k != "runs"} for n, s in res["schedulers"].items()
            },
            "gains": res["gains"],
        }
    md += [
        "",
        "OLMS vs the baselines (min … max over the baselines, ours beside the paper's):",
        "",
        "| scenario | OLMS | sel.-path throughput % (ours) | paper | goodput % (ours) | FCT % (ours) | paper | regret % (ours) | violation % (ours) | paper (regret; violation) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    gains_tab = Table(title="OLMS vs baselines (ours beside the paper's)")
    for col in (
        "scenario",
        "OLMS",
        "sel.-path thr. % (ours)",
        "paper",
        "goodput %",
        "FCT % (ours)",
        "paper",
    ):
        gains_tab.add_column(col)
    for res in results:
        case = res["case"]
        for variant, g in res["gains"].items():
            rng = {
                k: _range([x.get(k) for x in g.values()])
                for k in (
                    "sel_gain_pct",
                    "goodput_gain_pct",
                    "fct_change_pct",
                    "regret_change_pct",
                    "violation_change_pct",
                )
            }
            pr = _paper(case, "regret")
            pv = _paper(case, "violation")
            md.append(
                f"| {case.name} | {variant} | {rng['sel_gain_pct']} | {_paper(case, 'sel')} | {rng['goodput_gain_pct']} | "
                f"{rng['fct_change_pct']} | {_paper(case, 'fct')} | {rng['regret_change_pct']} | {rng['violation_change_pct']} | "
                f"{pr if pr == '—' else pr + '; ' + pv} |"
            )
            gains_tab.add_row(
                case.name,
                variant,
                rng["sel_gain_pct"],
                _paper(case, "sel"),
                rng["goodput_gain_pct"],
                rng["fct_change_pct"],
                _paper(case, "fct"),
            )
    md += [
        "",
        "Per baseline (OLMS change %: selected-path throughput / goodput / FCT):",
        "",
        "| scenario | OLMS | " + " | ".join(BASELINES) + " |",
        "| --- | --- | " + " | ".join("---" for _ in BASELINES) + " |",
    ]
    for res in results:
        for variant, g in res["gains"].items():
            cells = []
            for b in BASELINES:
                x = g.get(b)
                cells.append(
                    "—"
                    if x is None
                    else "/".join(
                        _fmt(x.get(k), "+.1f")
                        for k in ("sel_gain_pct", "goodput_gain_pct", "fct_change_pct")
                    )
                )
            md.append(f"| {res['case'].name} | {variant} | " + " | ".join(cells) + " |")
    if notes:
        md += ["", "Notes:"] + [f"- {n}" for n in notes]
    (out / "olms-table.md").write_text("\n".join(md) + "\n", encoding="utf-8")
    (out / "olms-summary.json").write_text(
        json.dumps(summary, indent=1, default=lambda o: o.__dict__), encoding="utf-8"
    )
    per = Table(
        title=f"Per scheduler (mean over seeds; selected path over the first {WINDOW_S:g} s)"
    )
    for col in (
        "scenario",
        "scheduler",
        "sel. Mbps",
        "sel. RTT ms",
        "goodput",
        "util.",
        "FCT s",
        "regret/slot",
        "violation/slot",
    ):
        per.add_column(col)
    for res in results:
        for name, s in res["schedulers"].items():
            per.add_row(
                res["case"].name,
                name,
                _fmt(s["sel_mbps"], ".2f"),
                _fmt(s["sel_srtt_ms"], ".1f"),
                _fmt(s["goodput_mbps"], ".2f"),
                _fmt(s["utilization"], ".3f"),
                _fmt(s["fct_s"], ".2f"),
                f"{s['regret_per_slot']:.4f}",
                f"{s['violation_per_slot']:.4f}",
            )
    console.print(per)
    console.print(gains_tab)
    for n in notes:
        console.print(f"note: {n}")
    _figures(results, out / "figures")


def _figures(results: List[Dict[str, Any]], fig_dir: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig_dir.mkdir(parents=True, exist_ok=True)
    for metric, ylabel, fname in (
        (
            "sel_mbps",
            f"selected-path cwnd/srtt, first {WINDOW_S:g} s (Mbit/s)",
            "selected_path.png",
        ),
        ("utilization", "goodput / capacity", "utilization.png"),
        ("fct_s", "flow completion time (s)", "fct.png"),
    ):
        fig, axes = plt.subplots(1, len(results), figsize=(3.2 * len(results), 3.4), squeeze=False)
        for ax, res in zip(axes[0], results):
            names = list(res["schedulers"])
            vals = [res["schedulers"][n][metric] or 0.0 for n in names]
            ax.bar(
                range(len(names)),
                vals,
                color=["C3" if n.startswith("olms") else "C0" for n in names],
            )
            ax.set_xticks(range(len(names)), names, rotation=45, ha="right")
            ax.set_title(res["case"].label, fontsize=9)
            ax.set_ylabel(ylabel, fontsize=8)
        fig.tight_layout()
        fig.savefig(fig_dir / fname, dpi=120)
        plt.close(fig)
    for idx, ylabel, fname in (
        (2, "cumulative regret", "regret.png"),
        (3, "cumulative violation", "violation.png"),
    ):
        fig, axes = plt.subplots(1, len(results), figsize=(3.2 * len(results), 3.2), squeeze=False)
        for ax, res in zip(axes[0], results):
            for name, s in res["schedulers"].items():
                run = s["runs"][0]
                if run["curve"]:
                    ax.plot(
                        [c[0] for c in run["curve"]],
                        [c[idx] for c in run["curve"]],
                        label=name,
                        lw=2 if name.startswith("olms") else 1,
                    )
            ax.set_title(res["case"].label, fontsize=9)
            ax.set_xlabel("time (s)")
            ax.set_ylabel(ylabel)
        axes[0][0].legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(fig_dir / fname, dpi=120)
        plt.close(fig)


def reproduce_olms(
    out: Path,
    seeds: Sequence[int],
    *,
    scenario_dir: Optional[Path] = None,
    cases: Optional[Sequence[str]] = None,
    baselines: Sequence[str] = BASELINES,
    size_mb: Optional[float] = None,
    duration_s: Optional[float] = None,
    jobs: int = 2,
    console: Optional[Console] = None,
) -> List[Dict[str, Any]]:
    console = console or Console(stderr=True)
    scenario_dir = scenario_dir or default_scenario_dir()
    selected = [c for c in CASES if cases is None or c.name in cases]
    notes: List[str] = []
    out.mkdir(parents=True, exist_ok=True)
    results = []
    for case in selected:
        with console.status(f"reproduce olms: {case.name}"):
            groups = run_groups(
                case, scenario_dir, out, seeds, baselines, jobs, notes, size_mb, duration_s
            )
        results.append(analyse(case, groups))
    write_outputs(results, out, sorted(set(notes)), console)
    return results


@app.command("olms")
def olms_command(
    out: Annotated[Path, typer.Option("--out", "-o", help="Output directory.")] = Path(
        "out/reproduce-olms"
    ),
    seeds: Annotated[str, typer.Option("--seeds", help="Seeds, e.g. '1,2' or '1-3'.")] = "1-5",
    scenarios: Annotated[
        Optional[str],
        typer.Option(
            "--scenarios",
            help="Comma-separated subset of " + ", ".join(c.name for c in CASES) + ".",
        ),
    ] = None,
    baselines: Annotated[
        str, typer.Option("--baselines", help="Comma-separated baseline schedulers.")
    ] = ",".join(BASELINES),
    size_mb: Annotated[
        Optional[float], typer.Option("--size-mb", help="Override the transfer size (MB).")
    ] = None,
    duration: Annotated[
        Optional[float], typer.Option("--duration", help="Override the simulated duration cap (s).")
    ] = None,
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=1, help="Parallel runs.")] = 2,
) -> None:
    """OLMS (Cai et al., TNSE 2025) vs the baselines: the paper's selected-path throughput
    (cwnd / srtt of the path each packet is scheduled on, first 20 s) and RTT, goodput, FCT,
    regret and violation, with the paper's reported gains beside ours."""
    from ..cli.errors import EXIT_BAD_INPUT, require_extra

    require_extra(["matplotlib"], "mpsched reproduce olms")  # the figures

    err = Console(stderr=True)
    names = [c.name for c in CASES]
    chosen = None if scenarios is None else [s.strip() for s in scenarios.split(",") if s.strip()]
    bad = [s for s in chosen or [] if s not in names]
    if bad:
        err.print(
            f"error: --scenarios: unknown {bad[0]!r}, expected some of {', '.join(names)}",
            markup=False,
        )
        raise typer.Exit(EXIT_BAD_INPUT)
    if size_mb is not None and size_mb <= 0 or duration is not None and duration <= 0:
        err.print("error: --size-mb/--duration: expected a positive number", markup=False)
        raise typer.Exit(EXIT_BAD_INPUT)
    try:
        seed_list = parse_seeds(seeds)
        reproduce_olms(
            out,
            seed_list,
            cases=chosen,
            baselines=[b.strip() for b in baselines.split(",") if b.strip()],
            size_mb=size_mb,
            duration_s=duration,
            jobs=jobs,
            console=Console(),
        )
    except (MatrixError, ValueError) as e:
        err.print(f"error: {e}", markup=False)
        raise typer.Exit(EXIT_BAD_INPUT) from None
    Console().print(f"wrote {out}/olms-table.md, {out}/olms-summary.json, {out}/figures/")
