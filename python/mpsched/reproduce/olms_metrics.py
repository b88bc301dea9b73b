"""Per-seed metrics of the OLMS reproduction's runs (one value per seed and variant).

For the first flow of each run (the flow whose scheduler varies):

* ``fct_s`` — flow completion time (missing when the flow did not complete);
* ``goodput_mbps`` — receiver goodput;
* ``sel_mbps`` / ``sel_rtt_ms`` — the paper's *selected-path throughput* and RTT (§VI-B: "We
  estimate the throughput of the scheduled paths using the ratios of the size of the congestion
  window to the smoothed RTT", per time slot = per packet): slot-weighted means of the chosen
  subflow's cwnd / srtt and srtt over the new-data segments scheduled in the first
  :data:`~mpsched.reproduce.olms_runs.WINDOW_S` s;
* ``regret`` / ``violation`` — mean regret and violation per slot over the same segments
  (:mod:`mpsched.reproduce.olms_oracle`): the cumulative regret and violation at an equal number
  of slots, the paper's Figs. 3(c)-(d), 4(c)-(d) compared at the same T;
* ``util_p<i>`` — path i's sending throughput / its rate, mean over the window's sample
  intervals (the paper's per-path "bandwidth utilization" of OLMS, §VI-B/C).
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Tuple

import pyarrow.parquet as pq

from .olms_oracle import AppSpec, app_spec, path_state, slot_costs, true_characteristics
from .olms_runs import WINDOW_S, Dataset

#: {metric: {seed: value}}
PerSeed = Dict[str, Dict[int, float]]

_TS = ["run_id", "flow", "subflow", "time_s", "slots", "slot_bw_mbps", "slot_srtt_ms",
       "throughput_mbps"]  # fmt: skip
_FLOWS = ["run_id", "name", "seed", "fct_s", "completed", "goodput_mbps", "slots",
          "slot_bw_mbps", "slot_srtt_ms"]  # fmt: skip


def dataset_metrics(ds: Dataset, with_oracle: bool) -> PerSeed:
    """Every metric of one dataset, per seed."""
    flow = ds.scenario["flows"][0]
    focus = flow["name"]
    app_ = app_spec(flow, "olms")
    flows = [
        r
        for r in pq.read_table(ds.path / "flows.parquet", columns=_FLOWS).to_pylist()
        if r["name"] == focus
    ]
    ts: Dict[str, List[Dict[str, Any]]] = {}
    if with_oracle:
        for r in pq.read_table(ds.path / "timeseries.parquet", columns=_TS).to_pylist():
            if r["flow"] == focus:
                ts.setdefault(r["run_id"], []).append(r)
    out: PerSeed = {}
    cache: Dict[float, Any] = {}
    for row in flows:
        seed = row["seed"]
        vals: Dict[str, Optional[float]] = {
            "fct_s": row["fct_s"] if row["completed"] else None,
            "goodput_mbps": row["goodput_mbps"],
        }
        if with_oracle:
            vals.update(window_metrics(ts.get(row["run_id"], []), ds.scenario, flow, app_, cache))
        for k, v in vals.items():
            if v is not None and math.isfinite(v):
                out.setdefault(k, {})[seed] = float(v)
    return out


def window_metrics(
    rows: List[Dict[str, Any]],
    scenario: Dict[str, Any],
    flow: Dict[str, Any],
    app_: AppSpec,
    cache: Dict[float, Any],
) -> Dict[str, Optional[float]]:
    """The first-window metrics of one run from its flow's timeseries rows."""
    n = bw = rtt = reg = vio = 0.0
    util: Dict[int, List[float]] = {}
    paths = {p["name"]: p for p in scenario["paths"]}
    prev: Dict[int, float] = {}
    for r in sorted(rows, key=lambda r: (r["time_s"], r["subflow"])):
        t, sf = r["time_s"], r["subflow"]
        if t > WINDOW_S + 1e-9:
            continue
        t0 = prev.get(sf, 0.0)
        prev[sf] = t
        k = r["slots"] or 0
        n += k
        bw += k * (r["slot_bw_mbps"] or 0.0)
        rtt += k * (r["slot_srtt_ms"] or 0.0)
        mid = round((t + t0) / 2, 6)
        if mid not in cache:
            cache[mid] = slot_costs(app_, *true_characteristics(scenario, flow, app_, mid))
        costs = cache[mid]
        if costs is not None and sf < len(costs):
            reg += k * costs[sf][0]
            vio += k * costs[sf][1]
        if sf < len(flow["paths"]):
            rate = path_state(paths[flow["paths"][sf]], mid)[0]
            if rate > 0:
                util.setdefault(sf, []).append(100.0 * (r["throughput_mbps"] or 0.0) / rate)
    out: Dict[str, Optional[float]] = {
        "sel_mbps": bw / n if n else None,
        "sel_rtt_ms": rtt / n if n else None,
        "regret": reg / n if n else None,
        "violation": vio / n if n else None,
    }
    for sf, xs in util.items():
        out[f"util_p{sf + 1}"] = sum(xs) / len(xs)
    return out


Values = Dict[Tuple[str, str, str], Dict[str, Dict[int, float]]]


def collect(datasets: List[Dataset]) -> Values:
    """{(regime, case, metric): {variant: {seed: value}}} over every dataset."""
    values: Values = {}
    for ds in datasets:
        oracle = ds.case in ("app1", "app2")
        for metric, per_seed in dataset_metrics(ds, oracle).items():
            values.setdefault((ds.regime, ds.case, metric), {})[ds.variant] = per_seed
    return values
