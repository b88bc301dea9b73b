"""``mpsched reproduce edar``: the EdAR paper's evaluation (Han et al., IEEE TWC 2023;
``edar.txt`` §VI-B).

Runs EdAR-p and EdAR-o (trained checkpoints, run in Rust inside the simulator) and the
paper's baselines through the ``compare`` runner on:

* **handoff** (Table III, Figs. 8-9; ``scenarios/edar-handoff.toml``): goodput over time and
  the mean goodput in stable periods (0-20, 40-60, 80-100 s) and handoff periods (20-40,
  60-80 s);
* **settings** i-v (Table II, Fig. 12; ``scenarios/edar-setting-{1..5}.toml``): goodput, flow
  completion time (FCT) and out-of-order bytes of one 10-100 MB transfer;
* **fct-delay** and **fct-loss** (Figs. 10-11; ``scenarios/edar-fct-{delay,loss}.toml``): mean
  FCT of repeated 10 MB downloads against path 2's delay and loss.

EdAR-p is offline learning only (settings i-iii); EdAR-o continued online. In settings iv and v,
which are not in the offline data, EdAR-o first learns online from EdAR-p in that network
(``--adapt-steps``; the paper: "after online training, EdAR-o further improves").

Baselines: minRTT as the paper ran it (ns-3's, without opportunistic retransmission and
penalization: ``minrtt-norp``), Linux's minRTT (``minrtt``, with both), BLEST and Peekaboo.
Writes ``edar-table.md`` / ``edar-summary.json`` (our numbers beside the paper's where it gives
them, and the acceptance checks), ``figures/`` and the compare datasets under
``runs/``. Use seeds that were not used in training (the default, 101-105, is disjoint from the
training seeds of the shipped checkpoints).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Dict, List, Optional, Sequence, Tuple

import pyarrow.parquet as pq
import typer
from rich.console import Console

from ..matrix import MatrixError, build_matrix, load_scenario, parse_seeds
from ..stats import mean_ci
from ..sweep import run_sweep
from . import _common, app

CHECKPOINT_DIR = Path(__file__).resolve().parents[1] / "agents" / "checkpoints"
#: The shipped EdAR-p and EdAR-o checkpoints (``mpsched train edar``; see their ``train`` metadata).
DEFAULT_P = CHECKPOINT_DIR / "edar-p.json"
DEFAULT_O = CHECKPOINT_DIR / "edar-default.json"

#: Baselines of §VI: minRTT (ns-3, as the paper ran it), Linux minRTT, BLEST, Peekaboo.
BASELINES = ("minrtt-norp", "minrtt", "blest", "peekaboo")
LABELS = {
    "minrtt-norp": "minRTT (ns-3)",
    "minrtt": "minRTT (Linux)",
    "blest": "BLEST",
    "peekaboo": "Peekaboo",
    "edar-p": "EdAR-p",
    "edar-o": "EdAR-o",
}
#: Settings not in the offline data (§VI-A trains on i-iii), where EdAR-o first learns online
#: in the network it is evaluated in (§VI-B: "after online training, EdAR-o further improves").
ADAPT = ("edar-setting-4", "edar-setting-5")

HANDOFF = ((20.0, 40.0), (60.0, 80.0))
STABLE = ((0.0, 20.0), (40.0, 60.0), (80.0, 100.0))

#: What the paper states in numbers (edar.txt §VI-B and the abstract).
PAPER = {
    "minrtt_handoff_mbps": 2.4,  # Fig. 9(a): "the goodput of minRTT ... decreases to 2.4 Mbps"
    "edar_handoff_gain": 2.0,  # abstract/§I: "2× improvement in terms of goodput during handoff"
}

#: The reproduction's acceptance checks: handoff ≥ 1.5× minRTT, stable ≥ 0.9× minRTT, EdAR-o ≥ EdAR-p on iv, v.
ACCEPT_HANDOFF, ACCEPT_STABLE = 1.5, 0.9


@dataclass(frozen=True)
class Case:
    name: str  # scenario file stem
    kind: str  # handoff | setting | sweep
    label: str


CASES = (
    Case("edar-handoff", "handoff", "handoff (Table III)"),
    *(
        Case(f"edar-setting-{i}", "setting", f"setting {r}")
        for i, r in zip(range(1, 6), ("i", "ii", "iii", "iv", "v"))
    ),
    Case("edar-fct-delay", "sweep", "FCT vs path-2 delay"),
    Case("edar-fct-loss", "sweep", "FCT vs path-2 loss"),
)
GROUPS = {
    "handoff": ["edar-handoff"],
    "settings": [c.name for c in CASES if c.kind == "setting"],
    "fct": ["edar-fct-delay", "edar-fct-loss"],
}


def default_scenario_dir() -> Path:
    return _common.default_scenario_dir("edar-handoff.toml")


def _mean_ci(xs: Sequence[float]) -> Tuple[Optional[float], float]:
    """Mean over seeds and the half-width of its 95 % CI (Student's t; 0 with one seed)."""
    mean, ci = mean_ci(xs)
    return mean, ci or 0.0


def _prepare(case: Case, scenario_dir: Path, out: Path, downloads: Optional[int]) -> Path:
    """The case's scenario as JSON under ``out/scenarios`` (fewer downloads for a quick run)."""
    scenario = load_scenario(scenario_dir / f"{case.name}.toml")
    if downloads is not None and case.kind == "sweep":
        for f in scenario.get("flows", []):
            if "repeat" in f:
                f["repeat"] = downloads
    return _common.write_scenario(scenario, out, case.name)


def _label(scheduler: str) -> str:
    return LABELS.get(scheduler, scheduler)


def _rename(result: Dict[str, Any], names: Dict[str, str]) -> Dict[str, Any]:
    """Keys ``edar:PATH`` → ``edar-p`` / ``edar-o``."""
    return {names.get(k, k): v for k, v in result.items()}


def _by_scheduler(rows: List[Dict[str, Any]], key: str) -> Dict[str, Dict[str, List[float]]]:
    """{scheduler: {params: [value per seed]}} for the multipath flow(s) of each run."""
    out: Dict[str, Dict[str, List[float]]] = {}
    for r in rows:
        if r.get("subflows", 1) < 2 and r.get("path") is not None:
            continue
        v = r.get(key)
        if v is None:
            continue
        out.setdefault(r["scheduler"], {}).setdefault(r["params"] or "", []).append(float(v))
    return out


def analyse_handoff(ds: Path) -> Dict[str, Any]:
    """Goodput per 1 s bin (mean over seeds) and stable / handoff means per scheduler."""
    ts = pq.read_table(
        ds / "timeseries.parquet",
        columns=["scheduler", "seed", "time_s", "flow", "subflow", "flow_goodput_mbps"],
    ).to_pylist()
    # flow_goodput_mbps repeats on every subflow row of a sample: take subflow 0's (of the
    # scenario's one flow).
    samples: Dict[str, Dict[int, List[Tuple[float, float]]]] = {}
    flow = ts[0]["flow"] if ts else None
    for r in ts:
        if r["flow"] == flow and r["subflow"] == 0:
            samples.setdefault(r["scheduler"], {}).setdefault(r["seed"], []).append(
                (r["time_s"], r["flow_goodput_mbps"])
            )
    out: Dict[str, Any] = {}
    for sched, by_seed in samples.items():
        per_seed = {"stable": [], "handoff": []}
        bins: Dict[int, List[float]] = {}
        for _seed, s in sorted(by_seed.items()):
            for period, ranges in (("stable", STABLE), ("handoff", HANDOFF)):
                v = [g for t, g in s if any(a < t <= b for a, b in ranges)]
                per_seed[period].append(sum(v) / len(v) if v else float("nan"))
            for t, g in s:
                bins.setdefault(int(math.ceil(t)) - 1, []).append(g)
        (stable, stable_ci), (handoff, handoff_ci) = (
            _mean_ci(per_seed["stable"]),
            _mean_ci(per_seed["handoff"]),
        )
        out[sched] = {
            "stable_mbps": stable,
            "stable_ci": stable_ci,
            "handoff_mbps": handoff,
            "handoff_ci": handoff_ci,
            "per_seed": per_seed,
            "seeds": sorted(by_seed),
            "timeline": [(b + 0.5, sum(v) / len(v)) for b, v in sorted(bins.items())],
        }
    return out


def analyse_flows(ds: Path) -> Dict[str, Any]:
    """Goodput, FCT (mean transfer time) and mean out-of-order bytes per scheduler and sweep point."""
    rows = pq.read_table(ds / "flows.parquet").to_pylist()
    out: Dict[str, Any] = {}
    for key, name in (
        ("goodput_mbps", "goodput_mbps"),
        ("mean_transfer_s", "fct_s"),
        ("mean_ooo_bytes", "ooo_bytes"),
    ):
        for sched, points in _by_scheduler(rows, key).items():
            for params, vals in points.items():
                d = out.setdefault(sched, {}).setdefault(params, {})
                (d[name], d[name + "_ci"]), d["n"] = _mean_ci(vals), len(vals)
    return out


def run_case(
    case: Case, path: Path, out: Path, schedulers: Sequence[str], seeds: Sequence[int], jobs: int
) -> Path:
    matrix = build_matrix(path, seeds=list(seeds), schedulers=list(schedulers))
    ds = out / "runs" / case.name
    run_sweep(matrix, ds, jobs=jobs)
    return ds


def acceptance(handoff: Optional[Dict[str, Any]], settings: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The acceptance checks, on the numbers of this run."""
    p, o = "edar-p", "edar-o"
    checks: List[Dict[str, Any]] = []
    base = "minrtt-norp"
    if handoff and base in handoff:
        for edar in (p, o):
            if edar not in handoff:
                continue
            h = handoff[edar]["handoff_mbps"] / handoff[base]["handoff_mbps"]
            s = handoff[edar]["stable_mbps"] / handoff[base]["stable_mbps"]
            checks.append(
                {
                    "check": f"{LABELS[edar]}: handoff goodput ≥ {ACCEPT_HANDOFF}× minRTT (ns-3)",
                    "value": h,
                    "pass": h >= ACCEPT_HANDOFF,
                }
            )
            checks.append(
                {
                    "check": f"{LABELS[edar]}: stable goodput ≥ {ACCEPT_STABLE:.0%} of minRTT (ns-3)",
                    "value": s,
                    "pass": s >= ACCEPT_STABLE,
                }
            )
    for case in ("edar-setting-4", "edar-setting-5"):
        res = settings.get(case, {})
        if p in res and o in res:
            gp, go = res[p][""]["goodput_mbps"], res[o][""]["goodput_mbps"]
            checks.append(
                {
                    "check": f"{case}: EdAR-o goodput ≥ EdAR-p",
                    "value": go / gp if gp else float("nan"),
                    "pass": go >= gp,
                }
            )
    return checks


def _f(x: Optional[float], spec: str = ".2f") -> str:
    return "—" if x is None or not math.isfinite(x) else format(x, spec)


def write_outputs(summary: Dict[str, Any], out: Path) -> str:
    lab = _label
    lines = ["# EdAR reproduction (edar.txt §VI-B)", ""]
    ck = summary["checkpoints"]
    lines.append(
        f"Seeds {summary['seeds']}; EdAR-p = `{ck['edar-p']}`, EdAR-o = `{ck['edar-o']}`"
        + "".join(
            f"; in {c}, EdAR-o = `{v}` ({summary['adapt_steps']} online steps from EdAR-p)"
            for c, v in ck.get("adapted", {}).items()
        )
        + "."
    )
    lines.append("")
    h = summary.get("handoff")
    if h:
        base = h.get("minrtt-norp", {})
        lines += [
            "## Handoff scenario (Table III, Figs. 8-9): mean goodput (Mbit/s, ± 95 % CI over seeds)",
            "",
            "| scheduler | stable | handoff | handoff / minRTT (ns-3) | stable / minRTT (ns-3) | paper |",
            "|---|---:|---:|---:|---:|---|",
        ]
        for sched, r in h.items():
            ratio_h = r["handoff_mbps"] / base["handoff_mbps"] if base else None
            ratio_s = r["stable_mbps"] / base["stable_mbps"] if base else None
            paper = ""
            if sched == "minrtt-norp":
                paper = f"handoff ≈ {PAPER['minrtt_handoff_mbps']} Mbit/s (Fig. 9a)"
            elif sched in ("edar-p", "edar-o"):
                paper = f"≈ {PAPER['edar_handoff_gain']:.0f}× minRTT during handoff (abstract)"
            lines.append(
                f"| {lab(sched)} | {_f(r['stable_mbps'])} ± {_f(r['stable_ci'])} | {_f(r['handoff_mbps'])} ± {_f(r['handoff_ci'])} "
                f"| {_f(ratio_h)}× | {_f(ratio_s)}× | {paper} |"
            )
        lines.append("")
    settings = summary.get("settings", {})
    if settings:
        lines += [
            "## Settings i-v (Table II, Fig. 12): goodput (Mbit/s) / FCT (s) / out-of-order (KB), mean over seeds",
            "",
        ]
        scheds = list(next(iter(settings.values())).keys())
        lines += [
            "| setting | " + " | ".join(lab(s) for s in scheds) + " |",
            "|---|" + "---:|" * len(scheds),
        ]
        for case, res in settings.items():
            cells = []
            for s in scheds:
                r = res.get(s, {}).get("", {})
                cells.append(
                    f"{_f(r.get('goodput_mbps'))} / {_f(r.get('fct_s'), '.1f')} / {_f((r.get('ooo_bytes') or 0) / 1e3, '.0f')}"
                )
            lines.append(f"| {case.replace('edar-setting-', '')} | " + " | ".join(cells) + " |")
        lines += [
            "",
            "The paper plots these (Fig. 12) without numbers: EdAR-p/-o best in i-iii, EdAR-o improving on EdAR-p in iv-v.",
            "",
        ]
    for case, res in summary.get("fct", {}).items():
        scheds = list(res.keys())
        params = sorted({p for r in res.values() for p in r}, key=_param_value)
        lines += [
            f"## {case}: mean FCT of the downloads (s) per {params[0].split('=')[0] if params else 'point'} (Figs. 10-11)",
            "",
            "| value | " + " | ".join(lab(s) for s in scheds) + " |",
            "|---|" + "---:|" * len(scheds),
        ]
        for p in params:
            lines.append(
                f"| {p.split('=')[-1]} | "
                + " | ".join(_f(res[s].get(p, {}).get("fct_s")) for s in scheds)
                + " |"
            )
        lines += [
            "",
            "The paper plots these without numbers: EdAR-p/-o give the lowest FCT and spread.",
            "",
        ]
    checks = summary.get("acceptance", [])
    if checks:
        lines += ["## Acceptance checks", "", "| check | value | result |", "|---|---:|---|"]
        for c in checks:
            lines.append(f"| {c['check']} | {_f(c['value'])} | {'pass' if c['pass'] else 'FAIL'} |")
        lines.append("")
    text = "\n".join(lines)
    (out / "edar-table.md").write_text(text, encoding="utf-8")
    (out / "edar-summary.json").write_text(
        json.dumps(summary, indent=1, default=str), encoding="utf-8"
    )
    return text


def _param_value(p: str) -> float:
    try:
        return float(p.split("=")[-1])
    except ValueError:
        return math.inf


def figures(summary: Dict[str, Any], fig_dir: Path) -> List[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig_dir.mkdir(parents=True, exist_ok=True)
    written: List[Path] = []
    lab = _label
    h = summary.get("handoff")
    if h:
        fig, ax = plt.subplots(figsize=(8, 3.6))
        for a, b in HANDOFF:
            ax.axvspan(a, b, color="0.9", lw=0)
        for sched, r in h.items():
            t, g = zip(*r["timeline"]) if r["timeline"] else ((), ())
            ax.plot(t, g, label=lab(sched), lw=1.6 if sched.startswith("edar") else 1.0)
        ax.set(
            xlabel="time (s)",
            ylabel="goodput (Mbit/s)",
            title="Handoff scenario: goodput over time (grey: handoffs)",
        )
        ax.legend(fontsize=8, ncol=3)
        fig.tight_layout()
        written.append(fig_dir / "handoff-goodput.png")
        fig.savefig(written[-1], dpi=120)
        plt.close(fig)
        fig, ax = plt.subplots(figsize=(7, 3.4))
        scheds = list(h)
        x = range(len(scheds))
        for k, period in enumerate(("stable", "handoff")):
            ax.bar(
                [i + (k - 0.5) * 0.38 for i in x],
                [h[s][f"{period}_mbps"] for s in scheds],
                0.38,
                yerr=[h[s][f"{period}_ci"] for s in scheds],
                label=period,
                capsize=3,
            )
        ax.set_xticks(list(x), [lab(s) for s in scheds], rotation=20, fontsize=8)
        ax.set(
            ylabel="goodput (Mbit/s)", title="Handoff scenario: stable vs handoff periods (Fig. 9a)"
        )
        ax.legend()
        fig.tight_layout()
        written.append(fig_dir / "handoff-periods.png")
        fig.savefig(written[-1], dpi=120)
        plt.close(fig)
    settings = summary.get("settings", {})
    if settings:
        fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
        cases = list(settings)
        scheds = list(settings[cases[0]])
        w = 0.8 / max(1, len(scheds))
        for j, s in enumerate(scheds):
            for ax, key in zip(axes, ("goodput_mbps", "fct_s")):
                vals = [settings[c].get(s, {}).get("", {}).get(key) or 0 for c in cases]
                errs = [settings[c].get(s, {}).get("", {}).get(key + "_ci") or 0 for c in cases]
                ax.bar(
                    [i + (j - (len(scheds) - 1) / 2) * w for i in range(len(cases))],
                    vals,
                    w,
                    yerr=errs,
                    label=lab(s),
                    capsize=2,
                )
        for ax, yl in zip(axes, ("goodput (Mbit/s)", "FCT (s)")):
            ax.set_xticks(
                range(len(cases)),
                [c.replace("edar-setting-", "setting ") for c in cases],
                fontsize=8,
            )
            ax.set_ylabel(yl)
        axes[0].legend(fontsize=7)
        fig.suptitle("Settings i-v (Fig. 12)")
        fig.tight_layout()
        written.append(fig_dir / "settings.png")
        fig.savefig(written[-1], dpi=120)
        plt.close(fig)
    for case, res in summary.get("fct", {}).items():
        fig, ax = plt.subplots(figsize=(6, 3.4))
        for s, points in res.items():
            ps = sorted(points, key=_param_value)
            ax.errorbar(
                [_param_value(p) for p in ps],
                [points[p]["fct_s"] for p in ps],
                yerr=[points[p]["fct_s_ci"] for p in ps],
                label=lab(s),
                marker="o",
                ms=3,
                capsize=2,
            )
        axis = next(iter(next(iter(res.values())))).split("=")[0] if res else ""
        ax.set(xlabel=axis, ylabel="mean FCT (s)", title=f"{case} (Figs. 10-11)")
        if "loss" in case:
            ax.set_xscale("log")
        ax.legend(fontsize=7)
        fig.tight_layout()
        written.append(fig_dir / f"{case}.png")
        fig.savefig(written[-1], dpi=120)
        plt.close(fig)
    return written


def adapt(
    case: Case, scenario: Path, checkpoint_p: Path, steps: int, out: Path, console: Console
) -> Path:
    """EdAR-o for ``case``: online learning from EdAR-p in that network (cached in ``out``)."""
    from ..agents.edar import Args, train

    dest = out / "adapted" / case.name
    ck = dest / "edar-o.json"
    if ck.is_file():
        meta = json.loads(ck.read_text(encoding="utf-8")).get("train", {})
        if meta.get("init") == str(checkpoint_p) and meta.get("online_steps") == steps:
            return ck
    with console.status(f"reproduce edar: EdAR-o learning online in {case.name} ({steps} steps)"):
        train(
            Args(
                scenario=[str(scenario)], out=str(dest), init=str(checkpoint_p), steps=steps, seed=1
            ),
            log=lambda m: None,
        )
    return ck


def reproduce_edar(
    out: Path,
    seeds: Sequence[int],
    *,
    checkpoint_p: Path = DEFAULT_P,
    checkpoint_o: Path = DEFAULT_O,
    groups: Sequence[str] = ("handoff", "settings", "fct"),
    baselines: Sequence[str] = BASELINES,
    downloads: Optional[int] = None,
    adapt_steps: int = 4000,
    jobs: int = 2,
    scenario_dir: Optional[Path] = None,
    cases: Optional[Sequence[str]] = None,
    console: Optional[Console] = None,
) -> Dict[str, Any]:
    """Runs the evaluation and writes the table, summary and figures under ``out`` (``cases``:
    a subset of the scenario names within ``groups``)."""
    console = console or Console(stderr=True)
    scenario_dir = scenario_dir or default_scenario_dir()
    checkpoint_p, checkpoint_o = Path(checkpoint_p).resolve(), Path(checkpoint_o).resolve()
    out.mkdir(parents=True, exist_ok=True)
    summary: Dict[str, Any] = {
        "seeds": list(seeds),
        "paper": PAPER,
        "labels": LABELS,
        "adapt_steps": adapt_steps,
        "checkpoints": {"edar-p": str(checkpoint_p), "edar-o": str(checkpoint_o)},
    }
    for case in (
        c
        for c in CASES
        if any(c.name in GROUPS[g] for g in groups) and (cases is None or c.name in cases)
    ):
        path = _prepare(case, scenario_dir, out, downloads)
        ck_o = checkpoint_o
        if case.name in ADAPT and adapt_steps > 0:
            ck_o = adapt(
                case, scenario_dir / f"{case.name}.toml", checkpoint_p, adapt_steps, out, console
            ).resolve()
            summary["checkpoints"].setdefault("adapted", {})[case.name] = str(ck_o)
        p, o = f"edar:{checkpoint_p}", f"edar:{ck_o}"
        names = {p: "edar-p", o: "edar-o"}
        with console.status(f"reproduce edar: {case.name}"):
            ds = run_case(case, path, out, [*baselines, p, o], seeds, jobs)
        if case.kind == "handoff":
            summary["handoff"] = _rename(analyse_handoff(ds), names)
        elif case.kind == "setting":
            summary.setdefault("settings", {})[case.name] = _rename(analyse_flows(ds), names)
        else:
            summary.setdefault("fct", {})[case.name] = _rename(analyse_flows(ds), names)
    summary["acceptance"] = acceptance(summary.get("handoff"), summary.get("settings", {}))
    figures(summary, out / "figures")
    text = write_outputs(summary, out)
    console.print(text, markup=False, highlight=False)
    return summary


@app.command("edar")
def edar_command(
    out: Annotated[Path, typer.Option("--out", "-o", help="Output directory.")] = Path(
        "out/reproduce-edar"
    ),
    seeds: Annotated[
        str, typer.Option("--seeds", help="Seeds (not used in training), e.g. '101-105'.")
    ] = "101-105",
    checkpoint_p: Annotated[
        Path,
        typer.Option(
            "--edar-p",
            help="EdAR-p checkpoint (.json). Default: the shipped one.",
            show_default=False,
        ),
    ] = DEFAULT_P,
    checkpoint_o: Annotated[
        Path,
        typer.Option(
            "--edar-o",
            help="EdAR-o checkpoint (.json). Default: the shipped one.",
            show_default=False,
        ),
    ] = DEFAULT_O,
    only: Annotated[
        Optional[str],
        typer.Option("--only", help="Comma-separated subset of: handoff, settings, fct."),
    ] = None,
    baselines: Annotated[
        str, typer.Option("--baselines", help="Comma-separated baseline schedulers.")
    ] = ",".join(BASELINES),
    downloads: Annotated[
        Optional[int],
        typer.Option("--downloads", min=1, help="Downloads per FCT point (paper: 50)."),
    ] = None,
    adapt_steps: Annotated[
        int,
        typer.Option(
            "--adapt-steps",
            min=0,
            help="Online steps of EdAR-o (from EdAR-p) in settings iv and v before they are evaluated; 0: use --edar-o there too.",
        ),
    ] = 4000,
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=1, help="Parallel runs.")] = 2,
) -> None:
    """EdAR (Han et al., TWC 2023): handoff goodput over time, settings i-v, FCT vs delay and
    loss; EdAR-p and EdAR-o against minRTT, BLEST and Peekaboo, with the paper's numbers."""
    from ..cli.errors import EXIT_BAD_INPUT, require_extra
    from ..matrix import parse_names

    require_extra(["matplotlib"], "mpsched reproduce edar")  # the figures

    err = Console(stderr=True)
    groups = list(GROUPS) if only is None else [g.strip() for g in only.split(",") if g.strip()]
    bad = [g for g in groups if g not in GROUPS]
    if bad or not groups:
        err.print(
            f"error: --only: unknown {bad[0] if bad else only!r}, expected some of {', '.join(GROUPS)}",
            markup=False,
        )
        raise typer.Exit(EXIT_BAD_INPUT)
    try:
        seed_list = parse_seeds(seeds)
        names = parse_names(baselines, "--baselines")
        for opt, ck in (("--edar-p", checkpoint_p), ("--edar-o", checkpoint_o)):
            try:
                parse_names(f"edar:{ck}", "--scheduler")
            except MatrixError as e:
                raise MatrixError(f"{opt}: " + str(e).split(": ", 2)[-1]) from None
        reproduce_edar(
            out,
            seed_list,
            checkpoint_p=checkpoint_p,
            checkpoint_o=checkpoint_o,
            groups=groups,
            baselines=names,
            downloads=downloads,
            adapt_steps=adapt_steps,
            jobs=jobs,
            console=Console(stderr=True),
        )
    except (MatrixError, ValueError) as e:
        err.print(f"error: {e}", markup=False)
        raise typer.Exit(EXIT_BAD_INPUT) from None
    except ImportError as e:
        err.print(
            f"error: EdAR-o's online learning (--adapt-steps) needs the `rl` extra (torch); use --adapt-steps 0 without it: {e}",
            markup=False,
        )
        raise typer.Exit(1) from None
    Console().print(f"wrote {out}/edar-table.md, {out}/edar-summary.json, {out}/figures/")
