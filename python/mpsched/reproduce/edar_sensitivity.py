"""How EdAR's verdicts depend on the values the paper does not state and we chose (issue 20).

**Parameter sweeps** (``mpsched reproduce edar --sensitivity [--params a,b]``): for each
parameter of :data:`PARAMS` and each of its values, only the claims it can change are
re-judged on the held-out seeds, beside the committed reproduction (the *reference*,
``docs/reproductions/edar/claims.json``, or ``OUT/claims.json`` when ``--out`` holds a full
run):

* a scenario parameter (the handoff ramp, the settings' handoff process) re-runs every
  scheduler of the cases it edits (EdAR-o adapted online in the edited network, as the
  reproduction does);
* an EdAR-o parameter (online steps, ε, updates per flow) re-adapts EdAR-o in all 8 evaluation
  networks and re-runs EdAR-o only: the other schedulers' per-seed values are the reference's
  (the same deterministic runs).

Writes ``OUT/sensitivity.md`` / ``OUT/sensitivity.json`` (per claim the reference's verdict and
gain and each value's; per value the verdict counts and how many verdicts flip), from every
value finished under ``OUT/sensitivity/`` (resumable: runs and adaptations are cached).

**Offline data** (the paper: 100 trajectories per setting, the shipped EdAR-p 10), by hand:

    mpsched train edar --scenario scenarios/edar-setting-{1,2,3}.toml --offline-episodes 300 \\
        --offline-iterations 6000 --steps 0 --seed 1 --out out/edar-p100
    python -m mpsched.reproduce.edar_sensitivity out/edar-p100/edar-p.json out/edar-p100-eval

writes ``OUT/offline-data.json``: per case and metric, the other checkpoint's mean ± CI, the
shipped one's, and the paired gain of the other over the shipped one (percent).
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ..matrix import build_matrix
from ..sweep import run_sweep
from . import edar as E
from . import edar_runs as R
from .protocol import (
    HELD_OUT,
    NOT_MEASURED,
    NOT_REPRODUCED,
    PARTLY,
    REPRODUCED,
    Claim,
    load_committed,
)

#: The committed reproduction the sweeps are compared with.
COMMITTED = Path(__file__).resolve().parents[3] / "docs" / "reproductions" / "edar"
#: A quick run (a pipeline test): EdAR-o's online steps and updates per flow are this fraction
#: of the value's.
QUICK_FRACTION = 0.01


@dataclass(frozen=True)
class Param:
    """One parameter we chose: ``kind`` "scenario" (``edit(stem, scenario, x)`` changes the
    scenarios of ``groups``) or "adapt" (``adapt(x)`` gives EdAR-o's online steps and Args
    overrides); ``values``: (label, x) pairs beside ours (``ours``)."""

    name: str
    kind: str
    what: str
    ours: str
    paper: str
    groups: Tuple[str, ...]
    values: Tuple[Tuple[str, float], ...]
    edit: Optional[Callable[[str, Dict[str, Any], float], None]] = None
    adapt: Optional[Callable[[float], Tuple[int, Dict[str, Any]]]] = None


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


def _handoffs(stem: str, sc: Dict[str, Any]) -> List[Dict[str, Any]]:
    return sc.get("handoffs", []) if stem.startswith("edar-setting-") else []


def _handoff_rate(stem: str, sc: Dict[str, Any], x: float) -> None:
    """Handoffs per minute of the settings' random handoff process × ``x`` (ours: 3)."""
    for h in _handoffs(stem, sc):
        h["rate_per_min"] = h["rate_per_min"] * x


def _handoff_duration(stem: str, sc: Dict[str, Any], x: float) -> None:
    """The settings' handoff durations × ``x`` (ours: uniform 10-30 s; the 4 s outage kept)."""
    for h in _handoffs(stem, sc):
        h["duration_s"] = [d * x for d in h["duration_s"]]


def _steps(x: float) -> Tuple[int, Dict[str, Any]]:
    return int(round(x)), {}


def _epsilon(x: float) -> Tuple[int, Dict[str, Any]]:
    return R.ADAPT_STEPS, {"epsilon": x}


def _updates(x: float) -> Tuple[int, Dict[str, Any]]:
    return R.ADAPT_STEPS, {"online_iterations": int(x)}


_RAMP = "handoff scenario: loss 1 → 5 → 20 %, delay +10 → +25 → +50 ms at t1, +3, +6 s, outage from t1 + 8 s to t2"  # fmt: skip
_PROCESS = "settings i-v: a random handoff on path 2, 3 per minute (20 s mean gap), 10-30 s long, 4 s outage"  # fmt: skip
_MOVE = '"The user starts moving away from the router at t_1 until the link is unavailable, and moves back at t_2" (§VI-A); no numbers'  # fmt: skip
#: Every parameter we chose that the sweep covers, in table order.
PARAMS: Tuple[Param, ...] = (
    Param("handoff-ramp-length", "scenario", "the handoff ramp's length (the outage starts 4 / 16 s after t1)",
          _RAMP, _MOVE, ("handoff", "motivation"), (("×0.5", 0.5), ("×2", 2.0)), edit=_ramp_length),
    Param("handoff-ramp-depth", "scenario", "the ramp's loss rates and added delays",
          _RAMP, _MOVE, ("handoff", "motivation"), (("×0.5", 0.5), ("×2", 2.0)), edit=_ramp_depth),
    Param("settings-handoff-rate", "scenario", "handoffs per minute in settings i-v", _PROCESS,
          '"causes handoff every 40s (starts at time t_1 and ends at time t_2)" (§VI-A)',
          ("settings",), (("×0.5", 0.5), ("×2", 2.0)), edit=_handoff_rate),
    Param("settings-handoff-duration", "scenario", "handoff duration in settings i-v", _PROCESS,
          "no duration (t_1, t_2 not given)", ("settings",), (("×0.5", 0.5), ("×2", 2.0)),
          edit=_handoff_duration),
    Param("online-steps", "adapt", "EdAR-o's online steps in each evaluation network",
          f"{R.ADAPT_STEPS} steps (TIs)", '"the online training converges after several or tens of training episodes" (§VI-A)',
          ("handoff", "settings", "fct"), (("2000", 2000.0), ("8000", 8000.0)), adapt=_steps),
    Param("epsilon", "adapt", "ε of the ε-greedy actor while EdAR-o adapts", "ε = 0.1",
          '"with probability ϵ < 1" (§V-C); no value', ("handoff", "settings", "fct"),
          (("0.05", 0.05), ("0.2", 0.2)), adapt=_epsilon),
    Param("online-updates", "adapt", "learner updates after each flow while EdAR-o adapts (M of Algorithm 2)",
          "M = 200", "M not given (Algorithm 2)", ("handoff", "settings", "fct"),
          (("100", 100.0), ("400", 400.0)), adapt=_updates),
)  # fmt: skip
BY_NAME = {p.name: p for p in PARAMS}


def reference_values(claims: Dict[str, Claim], seeds: Sequence[int]) -> E.Values:
    """The per-seed values of every variant but EdAR-o that the reference's claims hold."""
    values: E.Values = {}
    for c in claims.values():
        x = c.extra or {}
        point = x.get("point")
        key = (x["case"], None if point is None else float(point), x["metric_key"])
        for variant, by_seed in x.get("per_seed", {}).items():
            if variant == "edar-o":
                continue
            for s, v in by_seed.items():
                if int(s) in seeds:
                    values.setdefault(key, {}).setdefault(variant, {})[int(s)] = float(v)
    return values


def _cell(c: Claim) -> List[Any]:
    """[verdict, gain %, its CI, A's mean] of a judged claim."""
    g = c.gain or (None, None)
    return [c.verdict, g[0], g[1], c.ours_a.mean if c.ours_a else None]


def run_value(
    p: Param, label: str, x: float, out: Path, reference: Dict[str, Claim], *,
    seeds: Sequence[int], jobs: int, quick: bool, log: Callable[[str], None],
) -> Dict[str, Any]:  # fmt: skip
    """Runs one value of ``p`` and writes / returns its ``result.json``: the claims of the
    affected cases (EdAR-o's alone for an EdAR-o parameter) with verdict and gain."""
    dest = out / "sensitivity" / p.name / label
    started = time.monotonic()
    names = {n for g in p.groups for n in R.GROUPS[g]}
    cases = [c for c in R.CASES if c.name in names]
    if p.kind == "scenario":
        assert p.edit is not None
        steps, extra = (0 if quick else R.ADAPT_STEPS), {}
    else:
        assert p.adapt is not None
        steps, extra = p.adapt(x)
        if quick:
            from ..agents.edar_args import Args

            m = extra.get("online_iterations", Args.online_iterations)
            steps = max(1, int(steps * QUICK_FRACTION))
            extra = {**extra, "online_iterations": max(1, int(m * QUICK_FRACTION))}
    datasets = R.run_all(
        dest, seeds, cases=cases, checkpoint_p=R.DEFAULT_P.resolve(),
        checkpoint_o=R.DEFAULT_O.resolve(), adapt_steps=steps, scenario_dir=E.default_scenario_dir(),
        downloads=E.QUICK_DOWNLOADS if quick else None, jobs=jobs, log=log,
        modify=None if p.edit is None else (lambda stem, sc: p.edit(stem, sc, x)),  # type: ignore[misc]
        adapt_args=extra, baselines=R.BASELINES if p.kind == "scenario" else (),
        edar_p=p.kind == "scenario",
    )  # fmt: skip
    values, _ = E.collect(datasets)
    if p.kind == "adapt":
        for key, by in reference_values(reference, seeds).items():
            if key[0] in names:
                values.setdefault(key, {}).update(by)
    claims = {}
    for c in E.build_claims(values):
        if c.extra["case"] not in names or c.verdict == NOT_MEASURED:
            continue
        if p.kind == "adapt" and "edar-o" not in c.extra["per_seed"]:
            continue
        claims[c.id] = _cell(c)
    res = {
        "param": p.name, "value": label, "x": x, "seeds": list(seeds), "quick": quick,
        "adapt_steps": steps, "adapt_args": extra, "cases": [c.name for c in cases],
        "wall_s": round(time.monotonic() - started, 1), "claims": claims,
    }  # fmt: skip
    (dest / "result.json").write_text(json.dumps(res, indent=1), encoding="utf-8")
    return res


def sensitivity(
    out: Path,
    *,
    params: Sequence[str] = tuple(BY_NAME),
    seeds: Sequence[int] = HELD_OUT,
    jobs: int = 1,
    quick: bool = False,
    reference_dir: Optional[Path] = None,
    log: Callable[[str], None] = lambda m: None,
) -> Path:
    """Runs every value of ``params`` not finished under ``out/sensitivity`` and writes
    ``sensitivity.md`` / ``.json`` from all finished values; returns the markdown's path."""
    unknown = [n for n in params if n not in BY_NAME]
    if unknown:
        raise ValueError(f"--params: unknown {unknown[0]!r}, expected some of {', '.join(BY_NAME)}")
    ref_dir = reference_dir or (out if (out / "claims.json").is_file() else COMMITTED)
    reference, _ = load_committed(ref_dir)
    for name in params:
        p = BY_NAME[name]
        for label, x in p.values:
            done = out / "sensitivity" / p.name / label / "result.json"
            if done.is_file():
                prev = json.loads(done.read_text(encoding="utf-8"))
                if prev["seeds"] == list(seeds) and prev["quick"] == quick:
                    continue
            log(f"{p.name} {label}")
            run_value(p, label, x, out, reference, seeds=seeds, jobs=jobs, quick=quick,
                      log=lambda m, n=f"{p.name} {label}": log(f"{n}: {m}"))  # fmt: skip
    return write_tables(out, reference, ref_dir, seeds, quick)


def _finished(out: Path, seeds: Sequence[int], quick: bool) -> List[Dict[str, Any]]:
    res = []
    for p in PARAMS:
        for label, _x in p.values:
            f = out / "sensitivity" / p.name / label / "result.json"
            if f.is_file():
                r = json.loads(f.read_text(encoding="utf-8"))
                if r["seeds"] == list(seeds) and r["quick"] == quick:
                    res.append(r)
    return res


def write_tables(
    out: Path, reference: Dict[str, Claim], ref_dir: Path, seeds: Sequence[int], quick: bool
) -> Path:
    """``sensitivity.json`` / ``.md`` from every finished value."""
    results = _finished(out, seeds, quick)
    table: Dict[str, Dict[str, Any]] = {}
    summary: Dict[str, Any] = {}
    for r in results:
        col = f"{r['param']} {r['value']}"
        counts: Dict[str, int] = {}
        ref_counts: Dict[str, int] = {}
        flips = []
        for cid, cell in r["claims"].items():
            ref = _cell(reference[cid])
            table.setdefault(cid, {"reference": ref})[col] = cell
            counts[cell[0]] = counts.get(cell[0], 0) + 1
            ref_counts[ref[0]] = ref_counts.get(ref[0], 0) + 1
            if cell[0] != ref[0]:
                flips.append(cid)
        summary[col] = {
            "param": r["param"], "value": r["value"], "claims": len(r["claims"]),
            "verdicts": counts, "reference_verdicts": ref_counts, "flips": len(flips), "flipped": flips, "wall_s": r["wall_s"],
            "adapt_steps": r["adapt_steps"], "adapt_args": r["adapt_args"], "cases": r["cases"],
        }  # fmt: skip
    params = {
        p.name: {"what": p.what, "ours": p.ours, "paper": p.paper, "kind": p.kind,
                 "groups": list(p.groups), "values": [v for v, _ in p.values]}
        for p in PARAMS
    }  # fmt: skip
    doc = {
        "seeds": list(seeds), "quick": quick, "reference": str(ref_dir.name if ref_dir == COMMITTED else ref_dir),
        "params": params, "values": summary, "claims": table,
    }  # fmt: skip
    (out / "sensitivity.json").write_text(json.dumps(doc, indent=1), encoding="utf-8")
    path = out / "sensitivity.md"
    path.write_text("\n".join(_markdown(doc)) + "\n", encoding="utf-8")
    return path


def _fmt(cell: Optional[List[Any]]) -> str:
    if cell is None:
        return "—"
    verdict, g, ci, a = cell
    if g is None:  # a level the paper states: ours
        return verdict + ("" if a is None else f" ({a:.3g})")
    return verdict + f" ({g:+.1f} ± {ci or 0:.1f} %)"


_ORDER = (REPRODUCED, PARTLY, NOT_REPRODUCED)


def _markdown(doc: Dict[str, Any]) -> List[str]:
    """The summary (flips per value) and one table per parameter (claim × value)."""
    lines = ["# EdAR reproduction: sensitivity to the values the paper does not state", ""]
    if doc["quick"]:
        lines += ["**QUICK RUN: a test of the pipeline, NOT the sensitivity sweep.**", ""]
    seeds = doc["seeds"]
    lines += [
        f"Seeds {seeds[0]}-{seeds[-1]} ({len(seeds)}). Reference: the committed reproduction "
        f"({doc['reference']}). A flip: the value's verdict differs from the reference's.",
        "",
        "| parameter | value | claims | flips | verdicts | the reference's on these claims | wall |",
        "|---|---|---:|---:|---|---|---:|",
    ]
    for s in doc["values"].values():
        v, r = (", ".join(f"{c[k]} {k}" for k in _ORDER if k in c) for c in (s["verdicts"], s["reference_verdicts"]))  # fmt: skip
        lines.append(f"| {s['param']} | {s['value']} | {s['claims']} | {s['flips']} | {v} | {r} | {s['wall_s']:.0f} s |")  # fmt: skip
    for name, p in doc["params"].items():
        cols = [f"{name} {v}" for v in p["values"] if f"{name} {v}" in doc["values"]]
        lines += ["", f"## {name}: {p['what']}", "", f"- ours: {p['ours']}", f"- the paper: {p['paper']}", ""]  # fmt: skip
        if not cols:
            lines.append("Not measured.")
            continue
        lines += ["| claim | reference | " + " | ".join(c.split(" ", 1)[1] for c in cols) + " |"]
        lines.append("|---|---|" + "---|" * len(cols))
        for cid, by in doc["claims"].items():
            if any(c in by for c in cols):
                cells = " | ".join(_fmt(by.get(c)) for c in cols)
                lines.append(f"| {cid} | {_fmt(by['reference'])} | {cells} |")
    return lines


#: The cases where the offline data matters (the handoff scenario and the offline settings).
CASES = ("edar-handoff", "edar-setting-1", "edar-setting-2", "edar-setting-3")
METRICS = ("goodput", "handoff_goodput", "stable_goodput", "ooo")


def compare_checkpoints(other: Path, out: Path, jobs: int = 2) -> Dict[str, Any]:
    """Runs the shipped EdAR-p and ``other`` on :data:`CASES` × the held-out seeds and returns
    {"case metric": [other mean, ci, shipped mean, ci, gain %, ci]}."""
    shipped, alt = f"edar:{R.DEFAULT_P.resolve()}", f"edar:{Path(other).resolve()}"
    datasets = []
    for name in CASES:
        case = next(c for c in R.CASES if c.name == name)
        matrix = build_matrix(
            E.default_scenario_dir() / f"{name}.toml",
            seeds=list(HELD_OUT),
            schedulers=[shipped, alt],
        )
        run_sweep(matrix, out / name, jobs=jobs)
        datasets.append(R.Dataset(case, out / name, {shipped: "shipped", alt: "other"}))
    values, _ = E.collect(datasets)
    res: Dict[str, Any] = {}
    for (case, _point, metric), by in sorted(values.items(), key=lambda kv: str(kv[0])):
        if metric in METRICS and "other" in by and "shipped" in by:
            g, ci = E._gain(metric, by["other"], by["shipped"])
            res[f"{case} {metric}"] = [
                *E.mean_ci(list(by["other"].values())),
                *E.mean_ci(list(by["shipped"].values())),
                g,
                ci,
            ]
    return res


if __name__ == "__main__":  # pragma: no cover - a measurement, run by hand
    out = Path(sys.argv[2])
    res = compare_checkpoints(Path(sys.argv[1]), out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "offline-data.json").write_text(json.dumps(res, indent=1), encoding="utf-8")
    for k, (m, c, ms, cs, g, gc) in res.items():
        print(
            f"{k:32s} other {m:.3g} ± {c:.2g}  shipped {ms:.3g} ± {cs:.2g}  gain {g:+.1f} ± {gc:.1f} %"
        )
