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
  (the same deterministic runs);
* a training parameter (offline updates, minibatch H, replay capacity) retrains EdAR-p with
  the shipped training's arguments and that one value changed, re-adapts EdAR-o from it in
  all 8 networks and re-runs both; the other schedulers' values are the reference's.

The settings' handoff process is shared by the two FCT sweeps: its values listed in a
parameter's ``fct`` also run there, as a separate part ("×2 FCT").

Writes ``OUT/sensitivity.md`` / ``OUT/sensitivity.json`` (per claim the reference's verdict and
gain and each value's; per value the verdict counts and how many verdicts flip), from every
value finished under ``OUT/sensitivity/`` (resumable: runs, adaptations and retrainings are
cached). With the committed reference, the committed sweep's values are imported first
(:func:`import_committed`), not re-run: the tables keep them beside the new ones.

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
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

from ..matrix import build_matrix
from ..sweep import run_sweep
from . import edar as E
from . import edar_runs as R
from .edar_sensitivity_params import (  # noqa: F401 (the edits: tests use them from here)
    BY_NAME,
    CONTROL,
    PARAMS,
    Param,
    _epsilon,
    _handoff_delay,
    _handoff_duration,
    _handoff_loss,
    _handoff_outage,
    _handoff_rate,
    _ramp_depth,
    _ramp_length,
    train_args,
)
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


def reference_values(
    claims: Dict[str, Claim], seeds: Sequence[int], exclude: Sequence[str] = ("edar-o",)
) -> E.Values:
    """The per-seed values of every variant but ``exclude`` that the reference's claims hold."""
    values: E.Values = {}
    for c in claims.values():
        x = c.extra or {}
        point = x.get("point")
        key = (x["case"], None if point is None else float(point), x["metric_key"])
        for variant, by_seed in x.get("per_seed", {}).items():
            if variant in exclude:
                continue
            for s, v in by_seed.items():
                if int(s) in seeds:
                    values.setdefault(key, {}).setdefault(variant, {})[int(s)] = float(v)
    return values


def _cell(c: Claim) -> List[Any]:
    """[verdict, gain %, its CI, A's mean] of a judged claim."""
    g = c.gain or (None, None)
    return [c.verdict, g[0], g[1], c.ours_a.mean if c.ours_a else None]


def _dir(out: Path, p: Param, label: str) -> Path:
    return out / "sensitivity" / p.name / label.replace(" ", "-")


def _setup(p: Param, x: float, quick: bool) -> Tuple[int, Dict[str, Any], Dict[str, Any]]:
    """(EdAR-o's adaptation steps, the adaptation's Args overrides, the retraining's) of one
    value of ``p``."""
    if p.kind == "scenario":
        return (0 if quick else R.ADAPT_STEPS), {}, {}
    train: Dict[str, Any] = {}
    if p.kind == "adapt":
        assert p.adapt is not None
        steps, extra = p.adapt(x)
    else:
        assert p.train is not None
        (train, extra), steps = p.train(x), R.ADAPT_STEPS
    if quick:
        from ..agents.edar_args import Args

        m = extra.get("online_iterations", Args.online_iterations)
        steps = max(1, int(steps * QUICK_FRACTION))
        extra = {**extra, "online_iterations": max(1, int(m * QUICK_FRACTION))}
    return steps, extra, train


def retrain(overrides: Dict[str, Any], dest: Path, quick: bool, log: Callable[[str], None]) -> Path:
    """EdAR-p retrained with the shipped arguments and ``overrides`` (:func:`train_args`) into
    ``dest``; kept when ``dest`` holds one trained with the same ``overrides``."""
    ck = dest / "edar-p.json"
    if ck.is_file():
        meta = json.loads(ck.read_text(encoding="utf-8")).get("train", {})
        if all(meta.get(k) == v for k, v in overrides.items()):
            return ck
    if dest.exists():
        import shutil

        shutil.rmtree(dest)
    from ..agents.edar import train

    log(f"retraining EdAR-p ({', '.join(f'{k} {v}' for k, v in overrides.items())})")
    t0 = time.monotonic()
    train(train_args(overrides, dest, quick), log=lambda m: None)
    log(f"retrained in {time.monotonic() - t0:.0f} s")
    return ck


#: The variants each kind of parameter re-runs (a scenario parameter: all).
_RERUN = {"scenario": (), "adapt": ("edar-o",), "train": ("edar-o", "edar-p")}


def _judge(
    p: Param, values: E.Values, reference: Dict[str, Claim], names: Set[str], seeds: Sequence[int]
) -> Dict[str, List[Any]]:
    """The cells of the claims of cases ``names`` a value can change: with the variants it
    did not re-run taken from the reference (the same deterministic runs)."""
    mine = _RERUN[p.kind]
    if mine:
        for key, by in reference_values(reference, seeds, exclude=mine).items():
            if key[0] in names:
                values.setdefault(key, {}).update(by)
    claims = {}
    for c in E.build_claims(values):
        if c.extra["case"] not in names or c.verdict == NOT_MEASURED:
            continue
        if mine and not set(mine) & set(c.extra["per_seed"]):
            continue
        claims[c.id] = _cell(c)
    return claims


def run_value(
    p: Param, label: str, x: float, groups: Sequence[str], out: Path, reference: Dict[str, Claim], *,
    seeds: Sequence[int], jobs: int, quick: bool, log: Callable[[str], None],
) -> Dict[str, Any]:  # fmt: skip
    """Runs one value of ``p`` on the cases of ``groups`` and writes / returns its
    ``result.json``: the claims it can change (module docstring) with verdict and gain."""
    dest = _dir(out, p, label)
    started = time.monotonic()
    names = {n for g in groups for n in R.GROUPS[g]}
    cases = [c for c in R.CASES if c.name in names]
    steps, extra, train = _setup(p, x, quick)
    ck_p = R.DEFAULT_P.resolve()
    if p.kind == "train":
        ck_p = retrain(train, dest / "train", quick, log).resolve()
    edit = p.edit
    datasets = R.run_all(
        dest, seeds, cases=cases, checkpoint_p=ck_p,
        checkpoint_o=R.DEFAULT_O.resolve(), adapt_steps=steps, scenario_dir=E.default_scenario_dir(),
        downloads=E.QUICK_DOWNLOADS if quick else None, jobs=jobs, log=log,
        modify=None if edit is None else (lambda stem, sc: edit(stem, sc, x)),
        adapt_args=extra, baselines=R.BASELINES if p.kind == "scenario" else (),
        edar_p=p.kind != "adapt",
    )  # fmt: skip
    values, _ = E.collect(datasets)
    res = {
        "param": p.name, "value": label, "x": x, "seeds": list(seeds), "quick": quick,
        "adapt_steps": steps, "adapt_args": extra, "train_args": train, "cases": [c.name for c in cases],
        "wall_s": round(time.monotonic() - started, 1), "claims": _judge(p, values, reference, names, seeds),
    }  # fmt: skip
    (dest / "result.json").write_text(json.dumps(res, indent=1), encoding="utf-8")
    return res


def _result(out: Path, p: Param, label: str, seeds: Sequence[int], quick: bool) -> Optional[Dict[str, Any]]:  # fmt: skip
    """A finished value's result.json (with these seeds, quick or not), or None."""
    f = _dir(out, p, label) / "result.json"
    if not f.is_file():
        return None
    r = json.loads(f.read_text(encoding="utf-8"))
    return r if r["seeds"] == list(seeds) and r["quick"] == quick else None


def import_committed(out: Path, seeds: Sequence[int]) -> List[str]:
    """Writes a ``result.json`` under ``out`` for every value of the committed sweep
    (``docs/reproductions/edar/sensitivity.json``, these seeds) that ``out`` lacks, so a
    call adds its values to the committed ones without re-running them; returns their
    columns."""
    f = COMMITTED / "sensitivity.json"
    doc = json.loads(f.read_text(encoding="utf-8")) if f.is_file() else {}
    if doc.get("seeds") != list(seeds) or doc.get("quick", True):
        return []
    done = []
    for col, s in doc["values"].items():
        p = BY_NAME.get(s["param"])
        unit = {u[0]: u for u in p.units()}.get(s["value"]) if p else None
        if p is None or unit is None or _result(out, p, s["value"], seeds, False) is not None:
            continue
        res = {
            "param": p.name, "value": s["value"], "x": unit[1], "seeds": list(seeds), "quick": False,
            "adapt_steps": s["adapt_steps"], "adapt_args": s["adapt_args"], "train_args": s.get("train_args", {}),
            "cases": s["cases"], "wall_s": s["wall_s"],
            "claims": {cid: by[col] for cid, by in doc["claims"].items() if col in by},
            "imported": "docs/reproductions/edar/sensitivity.json",
        }  # fmt: skip
        dest = _dir(out, p, s["value"])
        dest.mkdir(parents=True, exist_ok=True)
        (dest / "result.json").write_text(json.dumps(res, indent=1), encoding="utf-8")
        done.append(col)
    return done


def sensitivity(
    out: Path,
    *,
    params: Optional[Sequence[str]] = None,
    seeds: Sequence[int] = HELD_OUT,
    jobs: int = 1,
    quick: bool = False,
    reference_dir: Optional[Path] = None,
    log: Callable[[str], None] = lambda m: None,
) -> Path:
    """Runs every value of ``params`` (default: every parameter run by default) not finished
    under ``out/sensitivity`` and writes ``sensitivity.md`` / ``.json`` from all finished
    values (with the committed reference: the committed sweep's values too, imported);
    returns the markdown's path."""
    params = [p.name for p in PARAMS if p.by_default] if params is None else list(params)
    unknown = [n for n in params if n not in BY_NAME]
    if unknown:
        raise ValueError(f"--params: unknown {unknown[0]!r}, expected some of {', '.join(BY_NAME)}")
    ref_dir = reference_dir or (out if (out / "claims.json").is_file() else COMMITTED)
    reference, _ = load_committed(ref_dir)
    if ref_dir == COMMITTED and not quick:
        for col in import_committed(out, seeds):
            log(f"{col}: the committed sweep's")
    for name in params:
        p = BY_NAME[name]
        for label, x, groups in p.units():
            if _result(out, p, label, seeds, quick) is not None:
                continue
            log(f"{p.name} {label}")
            run_value(p, label, x, groups, out, reference, seeds=seeds, jobs=jobs, quick=quick,
                      log=lambda m, n=f"{p.name} {label}": log(f"{n}: {m}"))  # fmt: skip
    return write_tables(out, reference, ref_dir, seeds, quick)


def _finished(out: Path, seeds: Sequence[int], quick: bool) -> List[Dict[str, Any]]:
    res = []
    for p in PARAMS:
        for label, _x, _g in p.units():
            r = _result(out, p, label, seeds, quick)
            if r is not None:
                res.append(r)
    return res


def _summary(
    r: Dict[str, Any], reference: Dict[str, Claim], table: Dict[str, Dict[str, Any]]
) -> Dict[str, Any]:
    """One value's summary (verdict counts, flips against the reference); adds its cells to
    ``table`` (claim → column → cell)."""
    col = f"{r['param']} {r['value']}"
    counts: Dict[str, int] = {}
    ref_counts: Dict[str, int] = {}
    flips = []
    rank = {cid: i for i, cid in enumerate(reference)}
    for cid in sorted(r["claims"], key=rank.__getitem__):  # the claims table's order
        cell, ref = r["claims"][cid], _cell(reference[cid])
        table.setdefault(cid, {"reference": ref})[col] = cell
        counts[cell[0]] = counts.get(cell[0], 0) + 1
        ref_counts[ref[0]] = ref_counts.get(ref[0], 0) + 1
        if cell[0] != ref[0]:
            flips.append(cid)
    res = {
        "param": r["param"], "value": r["value"], "claims": len(r["claims"]),
        "verdicts": counts, "reference_verdicts": ref_counts, "flips": len(flips), "flipped": flips, "wall_s": r["wall_s"],
        "adapt_steps": r["adapt_steps"], "adapt_args": r["adapt_args"], "cases": r["cases"],
    }  # fmt: skip
    if r.get("train_args"):
        res["train_args"] = r["train_args"]
    return res


def _against_control(
    summary: Dict[str, Any], table: Dict[str, Dict[str, Any]], reference: Dict[str, Claim]
) -> None:
    """A retraining value's flips against the retrained control too (``control_flips``,
    ``control_flipped``): what the value changes beyond what retraining alone does."""
    ctl = next((c for c, s in summary.items() if s["param"] == CONTROL), None)
    order = list(reference)
    for col, s in summary.items():
        if ctl is None or col == ctl or BY_NAME[s["param"]].kind != "train":
            continue
        by_claim = [(cid, table.get(cid, {})) for cid in order]
        flipped = [
            cid for cid, by in by_claim if col in by and ctl in by and by[col][0] != by[ctl][0]
        ]
        s["control_flips"], s["control_flipped"] = len(flipped), flipped


def write_tables(
    out: Path, reference: Dict[str, Claim], ref_dir: Path, seeds: Sequence[int], quick: bool
) -> Path:
    """``sensitivity.json`` / ``.md`` from every finished value."""
    results = _finished(out, seeds, quick)
    table: Dict[str, Dict[str, Any]] = {}
    summary = {f"{r['param']} {r['value']}": _summary(r, reference, table) for r in results}
    _against_control(summary, table, reference)
    params = {
        p.name: {"what": p.what, "ours": p.ours, "paper": p.paper, "kind": p.kind,
                 "groups": list(p.groups), "values": [u[0] for u in p.units()], "note": p.note}
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
        f"({doc['reference']}). A flip: the value's verdict differs from the reference's. "
        "A retraining value is also compared with the retrained control (every value ours), "
        "which itself differs from the shipped EdAR-p.",
        "",
        "| parameter | value | claims | flips | flips vs the retrained control | verdicts | the reference's on these claims | wall |",
        "|---|---|---:|---:|---:|---|---|---:|",
    ]
    for s in doc["values"].values():
        v, r = (", ".join(f"{c[k]} {k}" for k in _ORDER if k in c) for c in (s["verdicts"], s["reference_verdicts"]))  # fmt: skip
        ctl = s.get("control_flips", "—")
        lines.append(f"| {s['param']} | {s['value']} | {s['claims']} | {s['flips']} | {ctl} | {v} | {r} | {s['wall_s']:.0f} s |")  # fmt: skip
    for name, p in doc["params"].items():
        cols = [f"{name} {v}" for v in p["values"] if f"{name} {v}" in doc["values"]]
        lines += ["", f"## {name}: {p['what']}", "", f"- ours: {p['ours']}", f"- the paper: {p['paper']}"]  # fmt: skip
        lines += [f"- {p['note']}", ""] if p.get("note") else [""]
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
