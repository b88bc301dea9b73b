"""``mpsched reproduce olms``: the OLMS paper's evaluation (Cai et al., IEEE TNSE 2025).

Runs the paper's topologies (``scenarios/olms-*.toml``: Application I maxRTT constrained,
Application II bandwidth constrained, and Application I with dynamic bandwidth / dynamic RTT)
with OLMS and the baselines (minRTT, round-robin, BLEST, ECF, Peekaboo; names the core does not
know are skipped with a note) through the ``compare`` runner, then writes:

* ``olms-table.md`` / ``olms-summary.json``: bandwidth utilization, flow completion time (FCT),
  cumulative regret and violation per scheduler, and OLMS's gains over the baselines beside the
  paper's (+8.42–18.71 % utilization, −4.22–10.26 % FCT);
* ``figures/``: utilization and FCT bars, cumulative regret and violation curves (matplotlib);
* ``runs/<scenario>/``: the compare datasets (flows, subflows, timeseries Parquet).

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
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Dict, List, Optional, Sequence, Tuple

import pyarrow.parquet as pq
import typer
from rich.console import Console
from rich.table import Table

from ..matrix import MatrixError, build_matrix, parse_seeds
from ..sweep import run_sweep
from . import app

#: The paper's reported OLMS gains (abstract, §VI-B and §VI-D4).
PAPER_UTIL_GAIN = (8.42, 18.71)
PAPER_FCT_CHANGE = (-10.26, -4.22)

BASELINES = ("minrtt", "rr", "blest", "ecf", "peekaboo")
MSS = 1448


@dataclass(frozen=True)
class Case:
    name: str
    label: str
    olms: str
    dynamic: bool


CASES = (
    Case("olms-app1", "App I: maxRTT 50 ms", "olms", False),
    Case("olms-app2", "App II: bandwidth 40 Mbps", "olms-bw", False),
    Case("olms-dyn-bw", "App I, dynamic bandwidth", "olms", True),
    Case("olms-dyn-rtt", "App I, dynamic RTT", "olms", True),
)


def default_scenario_dir() -> Path:
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "scenarios" / "olms-app1.toml").is_file():
            return parent / "scenarios"
    return Path("scenarios")


# --- oracle ------------------------------------------------------------------------------


@dataclass(frozen=True)
class AppSpec:
    kind: str  # "max-rtt" | "bandwidth"
    limit: float  # normalized C_r or C_b
    l: int
    rtt_scale_ms: float
    bw_scale_mbps: float


def app_spec(flow: Dict[str, Any], olms_name: str) -> AppSpec:
    o = flow.get("olms") or {}
    kind = o.get("app") or ("bandwidth" if olms_name == "olms-bw" else "max-rtt")
    kind = "bandwidth" if kind in ("bandwidth", "bw") else "max-rtt"
    rs, bs = float(o.get("rtt_scale_ms", 100.0)), float(o.get("bw_scale_mbps", 100.0))
    limit = float(o.get("bw_max_mbps", 40.0)) / bs if kind == "bandwidth" else float(o.get("rtt_max_ms", 50.0)) / rs
    return AppSpec(kind, limit, int(o.get("l", 2)), rs, bs)


def solve_oracle(app_: AppSpec, b: Sequence[float], r: Sequence[float]) -> Optional[Tuple[List[float], float]]:
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
        return v if v is not None and sum(x * y for x, y in zip(v, b)) <= app_.limit + 1e-12 else None

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


def slot_costs(app_: AppSpec, b: Sequence[float], r: Sequence[float]) -> Optional[List[Tuple[float, float]]]:
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


def true_characteristics(scenario: Dict[str, Any], flow: Dict[str, Any], app_: AppSpec, t: float) -> Tuple[List[float], List[float]]:
    paths = {p["name"]: p for p in scenario["paths"]}
    b, r = [], []
    for name in flow["paths"]:
        rate, rtt = path_state(paths[name], t)
        b.append(min(rate / app_.bw_scale_mbps, 1.0))
        r.append(min(rtt / app_.rtt_scale_ms, 1.0))
    return b, r


def mean_capacity(scenario: Dict[str, Any], flow: Dict[str, Any], t_end: float, step: float = 0.05) -> float:
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


def prepare(case: Case, scenario_dir: Path, out: Path, size_mb: Optional[float], duration_s: Optional[float]) -> Tuple[Path, Dict[str, Any]]:
    src = scenario_dir / f"{case.name}.toml"
    scenario = tomllib.loads(src.read_text(encoding="utf-8"))
    if size_mb is not None:
        for f in scenario["flows"]:
            f["size_bytes"] = int(size_mb * 1e6)
    if duration_s is not None:
        scenario["sim"]["duration_s"] = duration_s
    path = out / "scenarios" / f"{case.name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(scenario, indent=1), encoding="utf-8")
    return path, scenario


def run_case(case: Case, path: Path, out: Path, seeds: Sequence[int], baselines: Sequence[str], jobs: int, notes: List[str]) -> Tuple[Path, List[str]]:
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


def analyse(case: Case, scenario: Dict[str, Any], ds: Path) -> Dict[str, Any]:
    flows = pq.read_table(ds / "flows.parquet").to_pylist()
    ts = pq.read_table(ds / "timeseries.parquet").to_pylist()
    flow = scenario["flows"][0]
    app_ = app_spec(flow, case.olms)
    per_run: Dict[str, Dict[str, Any]] = {}
    for row in flows:
        fct = row.get("fct_s")
        end = fct if fct is not None else float(scenario["sim"]["duration_s"])
        cap = mean_capacity(scenario, flow, end)
        per_run[row["run_id"]] = {
            "scheduler": row["scheduler"], "seed": row["seed"], "fct_s": fct,
            "completed": row["completed"], "goodput_mbps": row["goodput_mbps"],
            "utilization": row["goodput_mbps"] / cap if cap > 0 else 0.0,
            "curve": [],
        }
    # Regret / violation per sample interval, from each subflow's sending throughput.
    by_run: Dict[str, Dict[float, Dict[int, float]]] = {}
    for row in ts:
        by_run.setdefault(row["run_id"], {}).setdefault(row["time_s"], {})[row["subflow"]] = row["throughput_mbps"]
    cache: Dict[float, Optional[List[Tuple[float, float]]]] = {}
    for run_id, samples in by_run.items():
        times = sorted(samples)
        reg = vio = pkts = 0.0
        prev = 0.0
        curve = []
        for t in times:
            dt = t - prev
            mid = (t + prev) / 2
            prev = t
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
        if run_id in per_run:
            per_run[run_id]["curve"] = curve
    schedulers: Dict[str, Dict[str, Any]] = {}
    for r in per_run.values():
        s = schedulers.setdefault(r["scheduler"], {"runs": []})
        s["runs"].append(r)
    for s in schedulers.values():
        runs = s["runs"]
        fcts = [r["fct_s"] for r in runs if r["fct_s"] is not None]
        s["utilization"] = sum(r["utilization"] for r in runs) / len(runs)
        s["goodput_mbps"] = sum(r["goodput_mbps"] for r in runs) / len(runs)
        s["fct_s"] = sum(fcts) / len(fcts) if len(fcts) == len(runs) else None
        last = [r["curve"][-1] if r["curve"] else (0, 0, 0, 0) for r in runs]
        pk = sum(x[1] for x in last)
        s["regret_per_slot"] = sum(x[2] for x in last) / pk if pk else 0.0
        s["violation_per_slot"] = sum(x[3] for x in last) / pk if pk else 0.0
    olms = schedulers.get(case.olms)
    gains = {}
    if olms:
        for name, s in schedulers.items():
            if name == case.olms:
                continue
            g = {"util_gain_pct": (olms["utilization"] / s["utilization"] - 1) * 100 if s["utilization"] else None}
            if olms["fct_s"] is not None and s["fct_s"]:
                g["fct_change_pct"] = (olms["fct_s"] / s["fct_s"] - 1) * 100
            gains[name] = g
    return {"case": case, "app": app_, "schedulers": schedulers, "gains": gains}


# --- output ------------------------------------------------------------------------------


def _fmt(x: Optional[float], spec: str) -> str:
    return "—" if x is None else format(x, spec)


def _range(vals: Sequence[Optional[float]]) -> str:
    v = [x for x in vals if x is not None]
    return "—" if not v else f"{min(v):+.2f} … {max(v):+.2f}"


def write_outputs(results: List[Dict[str, Any]], out: Path, notes: List[str], console: Console) -> None:
    md = ["# OLMS reproduction", "", "Paper: Cai et al., OLMS, IEEE TNSE 2025. Paper's reported OLMS gains: "
          f"bandwidth utilization +{PAPER_UTIL_GAIN[0]}–{PAPER_UTIL_GAIN[1]} %, "
          f"FCT {PAPER_FCT_CHANGE[1]}…{PAPER_FCT_CHANGE[0]} %.", ""]
    summary: Dict[str, Any] = {"paper": {"util_gain_pct": PAPER_UTIL_GAIN, "fct_change_pct": PAPER_FCT_CHANGE}, "cases": {}, "notes": notes}
    gains_tab = Table(title="OLMS vs baselines (ours beside the paper's)")
    for col in ("scenario", "util. gain % (ours)", "util. gain % (paper)", "FCT change % (ours)", "FCT change % (paper)"):
        gains_tab.add_column(col)
    md += ["| scenario | scheduler | utilization | goodput Mbps | FCT s | regret/slot | violation/slot |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for res in results:
        case = res["case"]
        for name, s in res["schedulers"].items():
            md.append(f"| {case.name} | {name} | {s['utilization']:.3f} | {s['goodput_mbps']:.2f} | {_fmt(s['fct_s'], '.2f')} | "
                      f"{s['regret_per_slot']:.4f} | {s['violation_per_slot']:.4f} |")
        summary["cases"][case.name] = {
            "label": case.label,
            "schedulers": {n: {k: v for k, v in s.items() if k != "runs"} for n, s in res["schedulers"].items()},
            "gains": res["gains"],
        }
    md += ["", "| scenario | OLMS util. gain % (ours, min … max over baselines) | paper | OLMS FCT change % (ours) | paper |", "| --- | --- | --- | --- | --- |"]
    for res in results:
        case = res["case"]
        ug = _range([g.get("util_gain_pct") for g in res["gains"].values()])
        fc = _range([g.get("fct_change_pct") for g in res["gains"].values()])
        pu = f"+{PAPER_UTIL_GAIN[0]} … +{PAPER_UTIL_GAIN[1]}" if case.name != "olms-app2" else "— (App II: throttled by design)"
        pf = f"{PAPER_FCT_CHANGE[0]} … {PAPER_FCT_CHANGE[1]}"
        md.append(f"| {case.name} | {ug} | {pu} | {fc} | {pf} |")
        gains_tab.add_row(case.name, ug, pu, fc, pf)
    if notes:
        md += ["", "Notes:"] + [f"- {n}" for n in notes]
    (out / "olms-table.md").write_text("\n".join(md) + "\n", encoding="utf-8")
    (out / "olms-summary.json").write_text(json.dumps(summary, indent=1, default=lambda o: o.__dict__), encoding="utf-8")
    per = Table(title="Per scheduler (mean over seeds)")
    for col in ("scenario", "scheduler", "util.", "goodput", "FCT s", "regret/slot", "violation/slot"):
        per.add_column(col)
    for res in results:
        for name, s in res["schedulers"].items():
            per.add_row(res["case"].name, name, f"{s['utilization']:.3f}", f"{s['goodput_mbps']:.2f}", _fmt(s["fct_s"], ".2f"),
                        f"{s['regret_per_slot']:.4f}", f"{s['violation_per_slot']:.4f}")
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
    for metric, ylabel, fname in (("utilization", "bandwidth utilization", "utilization.png"), ("fct_s", "flow completion time (s)", "fct.png")):
        fig, axes = plt.subplots(1, len(results), figsize=(3.2 * len(results), 3.2), squeeze=False)
        for ax, res in zip(axes[0], results):
            names = list(res["schedulers"])
            vals = [res["schedulers"][n][metric] or 0.0 for n in names]
            ax.bar(range(len(names)), vals, color=["C3" if n.startswith("olms") else "C0" for n in names])
            ax.set_xticks(range(len(names)), names, rotation=45, ha="right")
            ax.set_title(res["case"].label, fontsize=9)
            ax.set_ylabel(ylabel)
        fig.tight_layout()
        fig.savefig(fig_dir / fname, dpi=120)
        plt.close(fig)
    for idx, ylabel, fname in ((2, "cumulative regret", "regret.png"), (3, "cumulative violation", "violation.png")):
        fig, axes = plt.subplots(1, len(results), figsize=(3.2 * len(results), 3.2), squeeze=False)
        for ax, res in zip(axes[0], results):
            for name, s in res["schedulers"].items():
                run = s["runs"][0]
                if run["curve"]:
                    ax.plot([c[0] for c in run["curve"]], [c[idx] for c in run["curve"]], label=name,
                            lw=2 if name.startswith("olms") else 1)
            ax.set_title(res["case"].label, fontsize=9)
            ax.set_xlabel("time (s)")
            ax.set_ylabel(ylabel)
        axes[0][0].legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(fig_dir / fname, dpi=120)
        plt.close(fig)


def reproduce_olms(out: Path, seeds: Sequence[int], *, scenario_dir: Optional[Path] = None, cases: Optional[Sequence[str]] = None,
                   baselines: Sequence[str] = BASELINES, size_mb: Optional[float] = None, duration_s: Optional[float] = None,
                   jobs: int = 2, console: Optional[Console] = None) -> List[Dict[str, Any]]:
    console = console or Console(stderr=True)
    scenario_dir = scenario_dir or default_scenario_dir()
    selected = [c for c in CASES if cases is None or c.name in cases]
    notes: List[str] = []
    out.mkdir(parents=True, exist_ok=True)
    results = []
    for case in selected:
        path, scenario = prepare(case, scenario_dir, out, size_mb, duration_s)
        with console.status(f"reproduce olms: {case.name}"):
            ds, _ = run_case(case, path, out, seeds, baselines, jobs, notes)
        results.append(analyse(case, scenario, ds))
    write_outputs(results, out, sorted(set(notes)), console)
    return results


@app.command("olms")
def olms_command(
    out: Annotated[Path, typer.Option("--out", "-o", help="Output directory.")] = Path("out/reproduce-olms"),
    seeds: Annotated[str, typer.Option("--seeds", help="Seeds, e.g. '1,2' or '1-3'.")] = "1,2",
    scenarios: Annotated[Optional[str], typer.Option("--scenarios", help="Comma-separated subset of " + ", ".join(c.name for c in CASES) + ".")] = None,
    baselines: Annotated[str, typer.Option("--baselines", help="Comma-separated baseline schedulers.")] = ",".join(BASELINES),
    size_mb: Annotated[Optional[float], typer.Option("--size-mb", help="Override the transfer size (MB).")] = None,
    duration: Annotated[Optional[float], typer.Option("--duration", help="Override the simulated duration cap (s).")] = None,
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=1, help="Parallel runs.")] = 2,
) -> None:
    """OLMS (Cai et al., TNSE 2025): utilization, FCT, regret and violation vs the baselines."""
    from ..cli import EXIT_BAD_INPUT

    err = Console(stderr=True)
    names = [c.name for c in CASES]
    chosen = None if scenarios is None else [s.strip() for s in scenarios.split(",") if s.strip()]
    bad = [s for s in chosen or [] if s not in names]
    if bad:
        err.print(f"error: --scenarios: unknown {bad[0]!r}, expected some of {', '.join(names)}", markup=False)
        raise typer.Exit(EXIT_BAD_INPUT)
    if size_mb is not None and size_mb <= 0 or duration is not None and duration <= 0:
        err.print("error: --size-mb/--duration: expected a positive number", markup=False)
        raise typer.Exit(EXIT_BAD_INPUT)
    try:
        seed_list = parse_seeds(seeds)
        reproduce_olms(out, seed_list, cases=chosen, baselines=[b.strip() for b in baselines.split(",") if b.strip()],
                       size_mb=size_mb, duration_s=duration, jobs=jobs, console=Console())
    except (MatrixError, ValueError) as e:
        err.print(f"error: {e}", markup=False)
        raise typer.Exit(EXIT_BAD_INPUT)
    Console().print(f"wrote {out}/olms-table.md, {out}/olms-summary.json, {out}/figures/")
