"""``mpsched calibrate``: the calibration suite of issue 21 on both engines — the simulator
(``mpsched run``) and the kernel (``mpsched emulate``) — over several seeds, with a side-by-side
report: median goodput, first path's share, retransmissions, srtt and, for the outage rows,
the time to recover after the outage and the goodput over time (``calibrate_outage``).
"""

import json
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence

from ..results import Results, write_results

#: Two rows agree when the simulator's median is within this fraction of the kernel's.
TOLERANCE = 0.10


@dataclass(frozen=True)
class Case:
    """One row of the suite: a scenario as TOML text, and whether it has an outage."""

    name: str
    toml: str
    outage: Optional[tuple] = None  # (path index, down_s, up_s)


def _path(name: str, mbps: float, delay_ms: float, loss: float = 0.0) -> str:
    loss_line = f'loss = {{ model = "bernoulli", p = {loss} }}\n' if loss else ""
    return f'[[paths]]\nname = "{name}"\nrate_mbps = {mbps}\ndelay_ms = {delay_ms}\n{loss_line}'


def _flow(paths: Sequence[str], cc: str, rcv_buf: Optional[int] = None) -> str:
    where = (
        f'path = "{paths[0]}"'
        if len(paths) == 1
        else "paths = [" + ", ".join(f'"{p}"' for p in paths) + "]"
    )
    buf = f"\nrcv_buf_bytes = {rcv_buf}" if rcv_buf else ""
    return f'[[flows]]\nname = "f"\n{where}\ncc = "{cc}"{buf}\n'


def _with_outage(path_toml: str, down: float, up: float) -> str:
    """A path whose links go down at ``down`` and up at ``up`` (a link schedule: the endpoints
    are not told, on either engine — a path event would tell the simulator's)."""
    return (
        path_toml
        + f"schedule = [ {{ at_s = {down}, outage = true }}, {{ at_s = {up}, outage = false }} ]\n"
    )


def suite(duration_s: float, outage_s: float = 20.0) -> List[Case]:
    """The suite: single TCP Reno/CUBIC with and without loss at 10 and 100 Mbit/s; two-path
    MPTCP symmetric, lossy, heterogeneous (20 Mbit/s·10 ms + 5 Mbit/s·100 ms) with the default
    and a 256 KB receive buffer; an outage of ``outage_s`` on one path of an MPTCP connection
    and of a single TCP flow (those rows last ``outage_s + 2 × duration_s``)."""
    head = f"[sim]\nduration_s = {duration_s}\n"
    cases = []
    for mbps in (10, 100):
        for cc in ("reno", "cubic"):
            for loss in (0.0, 0.005):
                tag = f"tcp-{cc}-{mbps}m" + ("-loss" if loss else "")
                cases.append(Case(tag, head + _path("p", mbps, 20, loss) + _flow(["p"], cc)))
    two = _path("a", 10, 20) + _path("b", 10, 20)
    cases.append(Case("mptcp-symmetric", head + two + _flow(["a", "b"], "cubic")))
    lossy = _path("a", 10, 20, 0.005) + _path("b", 10, 20, 0.005)
    cases.append(Case("mptcp-lossy", head + lossy + _flow(["a", "b"], "cubic")))
    het = _path("a", 20, 10) + _path("b", 5, 100)
    cases.append(Case("mptcp-het", head + het + _flow(["a", "b"], "cubic")))
    cases.append(Case("mptcp-het-256k", head + het + _flow(["a", "b"], "cubic", 256 * 1024)))
    down, up = duration_s, duration_s + outage_s
    long_head = f"[sim]\nduration_s = {up + duration_s}\n"
    two_out = _path("a", 10, 20) + _with_outage(_path("b", 10, 20), down, up)
    cases.append(
        Case("mptcp-outage", long_head + two_out + _flow(["a", "b"], "cubic"), (1, down, up))
    )
    one_out = _with_outage(_path("p", 10, 20), down, up)
    cases.append(Case("tcp-outage", long_head + one_out + _flow(["p"], "cubic"), (0, down, up)))
    return cases


def recovery_s(res: Results, case: Case) -> Optional[float]:
    """Seconds after the outage ends until the outaged path carries half its pre-outage goodput
    again (a sample's subflow goodput; None if it never does)."""
    if case.outage is None:
        return None
    path, down, up = case.outage
    ts = res.timeseries.to_pylist()
    rows = [r for r in ts if r["subflow"] == path] if len(ts) and path else ts
    before = [r["goodput_mbps"] or 0.0 for r in rows if down - 2.0 <= r["time_s"] <= down]
    level = 0.5 * (sum(before) / len(before)) if before else 0.0
    for r in rows:
        if r["time_s"] > up and (r["goodput_mbps"] or 0.0) >= level > 0:
            return r["time_s"] - up
    return None


def metrics(res: Results, case: Case) -> Dict[str, Any]:
    """A run's row: goodput, first path's share of the acknowledged bytes, retransmits, srtt."""
    flow = res.flows.to_pylist()[0]
    subs = res.subflows.to_pylist()
    acked = [s["bytes_acked"] for s in subs]
    share = acked[0] / sum(acked) if len(acked) > 1 and sum(acked) > 0 else None
    return {
        "goodput_mbps": flow["goodput_mbps"],
        "share_first": share,
        "retransmits": flow["retransmits"],
        "srtt_ms": flow["srtt_ms"],
        "recovery_s": recovery_s(res, case),
        "flagged": bool(res.summary.get("emulation", {}).get("flagged", False)),
    }


Runner = Callable[[Path, int], Results]


def run_case(
    case: Case, engines: Dict[str, Runner], seeds: Sequence[int], out: Path
) -> Dict[str, Any]:
    """Runs one case on every engine and seed; writes each run under ``out/runs/``."""
    d = out / "runs" / case.name
    d.mkdir(parents=True, exist_ok=True)
    scenario = d / f"{case.name}.toml"
    scenario.write_text(case.toml)
    row: Dict[str, Any] = {"case": case.name, "outage": case.outage is not None}
    for engine, runner in engines.items():
        runs = []
        for seed in seeds:
            res = runner(scenario, seed)
            write_results(res, d / f"{engine}-seed{seed}")
            runs.append(metrics(res, case))
        # A run flagged for real-time lateness is kept in the JSON but left out of the medians.
        good = [r for r in runs if not r["flagged"]] or runs
        row[engine] = {k: _median([r[k] for r in good]) for k in runs[0] if k != "flagged"}
        row[engine]["flagged"] = sum(r["flagged"] for r in runs)
        row[engine]["runs"] = runs
    return row


def _median(xs: Sequence[Any]) -> Optional[float]:
    vals = [x for x in xs if x is not None]
    return statistics.median(vals) if vals else None


def _diff(sim: Optional[float], kernel: Optional[float]) -> Optional[float]:
    if sim is None or kernel is None or kernel == 0:
        return None
    return sim / kernel - 1.0


def report(rows: List[Dict[str, Any]], seeds: Sequence[int], command: str) -> str:
    """The markdown table: per case and metric, simulator and kernel medians, their
    difference, and whether goodput and share are within the tolerance."""
    lines = [
        f"Calibration: simulator (profile linux) against the kernel, median over seeds {list(seeds)}",
        "(kernel runs flagged for real-time lateness are left out of the medians unless all are).",
        f"Made by `{command}`.",
        "",
        "| case | goodput sim | goodput kernel | Δ | share sim | share kernel | retrans sim | retrans kernel "
        "| srtt sim | srtt kernel | recovery sim (s) | recovery kernel (s) | flagged kernel runs | within ±10 % |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    outside = []
    for r in rows:
        s, k = r.get("sim", {}), r.get("kernel", {})
        d_gp = _diff(s.get("goodput_mbps"), k.get("goodput_mbps"))
        d_sh = _diff(s.get("share_first"), k.get("share_first"))
        ok = all(abs(x) <= TOLERANCE for x in (d_gp, d_sh) if x is not None) and d_gp is not None
        if not ok:
            outside.append(_outside_note(r["case"], s, k, d_gp, d_sh))
        cells = [
            r["case"], _fmt(s.get("goodput_mbps")), _fmt(k.get("goodput_mbps")), _pct(d_gp),
            _fmt(s.get("share_first")), _fmt(k.get("share_first")), _fmt(s.get("retransmits"), 0),
            _fmt(k.get("retransmits"), 0), _fmt(s.get("srtt_ms"), 1), _fmt(k.get("srtt_ms"), 1),
            _recovery(r, s), _recovery(r, k), str(k.get("flagged", "—")),
            "yes" if ok else "**no**",
        ]  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        f"Within ±{TOLERANCE * 100:.0f} % in goodput and share: {len(rows) - len(outside)} of {len(rows)} rows.",
    ]
    if outside:
        lines += ["Outside (what explains them, measured: docs/fidelity.md):", ""] + outside
    return "\n".join(lines) + "\n"


def _outside_note(
    case: str, s: Dict[str, Any], k: Dict[str, Any], d_gp: Optional[float], d_sh: Optional[float]
) -> str:
    """A line naming a row outside the tolerance: its differences and the range of the
    kernel's runs the medians came from (a simulator median inside that range differs from the
    kernel's median by less than the kernel's runs differ from each other)."""
    if not k:
        return f"- `{case}`: no kernel run."
    gps = [x["goodput_mbps"] for x in k.get("runs", []) if x.get("goodput_mbps") is not None]
    spread = f"; the kernel's runs {min(gps):.2f}–{max(gps):.2f} Mbit/s" if gps else ""
    return f"- `{case}`: goodput {_pct(d_gp)}, share {_pct(d_sh)} (simulator {_fmt(s.get('goodput_mbps'))} Mbit/s{spread})."


def _recovery(row: Dict[str, Any], engine: Dict[str, Any]) -> str:
    """The recovery cell: "—" without an outage or an engine, "never" if the path did not
    recover before the end of the run."""
    if not row.get("outage") or not engine:
        return "—"
    return _fmt(engine.get("recovery_s"), 1) if engine.get("recovery_s") is not None else "never"


def _fmt(x: Optional[float], digits: int = 2) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def _pct(x: Optional[float]) -> str:
    return "—" if x is None else f"{x * 100:+.1f} %"


def merge(out: Path, rows: List[Dict[str, Any]], order: Sequence[str]) -> List[Dict[str, Any]]:
    """``rows`` over the rows of an earlier ``out/calibration.json``, in suite order: a case run
    again replaces the engines it ran and keeps the others' (``--only`` re-runs some cases,
    ``--engines sim`` the simulator's side of them: the kernel's measurement does not depend on
    the model)."""
    path = out / "calibration.json"
    old = json.loads(path.read_text()) if path.is_file() else []
    by_case = {r["case"]: r for r in old}
    for r in rows:
        by_case[r["case"]] = {**by_case.get(r["case"], {}), **r}
    rank = {name: i for i, name in enumerate(order)}
    return sorted(by_case.values(), key=lambda r: rank.get(r["case"], len(rank)))


def outages(cases: Sequence[Case]) -> Dict[str, tuple]:
    """(down_s, up_s) of each case with an outage, by name."""
    return {c.name: (c.outage[1], c.outage[2]) for c in cases if c.outage is not None}


def write(
    out: Path,
    rows: List[Dict[str, Any]],
    seeds: Sequence[int],
    command: str,
    outage_times: Optional[Dict[str, tuple]] = None,
) -> None:
    """calibration.json (every run's metrics) and calibration.md (the table; with
    ``outage_times``, the outage rows' goodput over time below it and their figures beside it,
    from the runs under ``out/runs``)."""
    from . import calibrate_outage

    (out / "calibration.json").write_text(json.dumps(rows, indent=2, sort_keys=True) + "\n")
    times = {k: v for k, v in (outage_times or {}).items() if any(r["case"] == k for r in rows)}
    extra = calibrate_outage.table(out, times, seeds)
    for case, (down, up) in times.items():
        calibrate_outage.figure(out, case, down, up, seeds)
    (out / "calibration.md").write_text(
        report(rows, seeds, command) + "".join(x + "\n" for x in extra)
    )
