"""``mpsched reproduce olms``: OLMS's evaluation (Cai et al., "OLMS: A Flexible Online Learning
Multi-Path Scheduling Framework", IEEE TNSE 2025; ``olms.txt`` §VI, Figs. 3-13) on the shared
protocol (:mod:`mpsched.reproduce.protocol`).

The paper's prototype runs in MPQUIC (Go) over Mininet; ours is the same algorithm in a
simulated MPTCP (Linux-like subflows, OLIA as in the paper). The substitution matters: MPQUIC
has no opportunistic retransmission, so ``olms`` here runs without it (``olms+rp`` with it),
and the paper's minRTT is ``minrtt-norp``. The paper's 5 ms netem jitter on the App I paths is
modelled (``jitter_ms = 5`` on the data direction: uniform ± 5 ms per packet, no reordering;
``docs/scenarios.md``). Not modelled: LP solving time (the simulator charges none, so
Fig. 13's overhead effect cannot appear; Figs. 10-11's execution time is measured as our
scheduler's CPU time instead, :mod:`mpsched.reproduce.olms_exec`), the web pages' objects (one
download of the page's bytes).

Runs (:mod:`mpsched.reproduce.olms_runs`): every figure's case in two regimes (``loss``: the
paper's loss rates, every scheduler loss-limited; ``noloss``: without random loss, the regime
whose path utilization is comparable to the paper's 22-98 %), every variant on the held-out
seeds :data:`~mpsched.reproduce.protocol.HELD_OUT`. Writes under ``--out``:

* ``claims.md`` / ``claims.json`` / ``claims-short.md`` — every claim of §VI
  (:mod:`mpsched.reproduce.olms_claims`) with ours (mean ± 95 % CI) and a verdict;
* ``results.md`` / ``results.json`` — every metric per regime, case and variant;
* ``figures/`` — bars with 95 % CIs (PNG + PDF; :mod:`mpsched.reproduce.olms_figures`);
* ``runs/`` — the compare datasets (resumable).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Any, Dict, List, Optional, Sequence

import typer
from rich.console import Console

from . import _common, app, olms_exec
from . import olms_claims as cl
from . import olms_runs as runs
from .olms_metrics import Values, collect
from .olms_oracle import AppSpec, slot_costs, solve_oracle  # noqa: F401  (public names)
from .protocol import HELD_OUT, Claim, mean_ci, write_claims

#: ``--quick``: seeds of a smoke test (not the reproduction).
QUICK_SEEDS = (1001, 1002)

_SAME = (
    "At the paper's loss rates every subflow is window-limited by random loss (OLMS uses 1-13 % "
    "of its paths' rates): an ACK frees window on one path at a time, so OLMS's sampled set "
    "rarely has room and its minRTT fallback (§VI-B) sends each segment where minRTT, RR and "
    "BLEST send it: their runs are identical (gain 0 ± 0). ECF and Peekaboo wait for a faster "
    "path and lose by it."
)
_UTIL = (
    "The paper's per-path utilization needs paths that are not loss-limited; at its own stated "
    "loss rates (1-1.56 %) a Reno-like controller gets a few Mbit/s per path (Mathis), with "
    "or without the paper's 5 ms jitter."
)
_NOCOST = (
    "Measured here as the CPU time of our Rust OLMS per path selection (beyond minRTT's for "
    "Fig. 11), on this machine and under its load, not MPQUIC's Go selectPath(). The simulator "
    "charges no computing time to the sender, so the LP's cost never delays a packet here "
    "(the transfer-time effects of Figs. 12-13 are not modelled)."
)
_FIG13 = (
    "Fig. 13's effect is LP solving time, which the simulator does not charge: our "
    "comparison isolates the scheduling decisions."
)
_SAME_NOLOSS = (
    "Without random loss the subflows are still window-limited (OLIA fills each path's "
    "one-BDP queue, then backs off): an ACK frees window on one path at a time, so OLMS's minRTT "
    "fallback (§VI-B) sends each segment where minRTT, RR and BLEST send it (identical runs, "
    "gain 0 ± 0; without loss the seed changes nothing for them, CI 0). ECF and Peekaboo wait "
    "for a faster path: lower selected-path throughput and goodput in App I, lower RTT and "
    "regret but more violation in App II. `olms+wait`, which holds packets for its sampled "
    "set, is the variant in which the learned scheduling vector decides."
)
_UTIL_NOLOSS = (
    "Every path runs at about 95 % of its rate under OLMS as under minRTT: a 20 s bulk "
    "transfer fills them whatever the scheduler. The paper's 22 % (App I) and 25-33 % (App II) "
    "mean its OLMS kept packets off some paths, which ours, falling back to minRTT whenever "
    "its sampled set has no window space, does not."
)

#: What we believe explains a claim that is not reproduced, by claim-id prefix (first match).
NOTES: Dict[str, str] = {
    "noloss-app1-util": _UTIL_NOLOSS,
    "noloss-app2-util": _UTIL_NOLOSS,
    "noloss-": _SAME_NOLOSS,
    "loss-app1-util": _UTIL,
    "loss-": _SAME,
    "noloss-cycle-exec": _NOCOST,
    "noloss-exec-olms": _NOCOST,
    "noloss-bw-": _FIG13,
    "loss-cycle-exec": _NOCOST,
    "loss-exec-olms": _NOCOST,
}
NOTES = dict(sorted(NOTES.items(), key=lambda kv: -len(kv[0])))


def results_table(values: Values) -> Dict[str, Any]:
    """{regime: {case: {metric: {variant: [mean, ci, n]}}}} for results.json and the figures."""
    out: Dict[str, Any] = {}
    order = {c.name: c.variants for c in runs.cases()}
    order[olms_exec.CASE] = olms_exec.VARIANTS
    for (regime, case, metric), by_variant in sorted(values.items()):
        cell = out.setdefault(regime, {}).setdefault(case, {}).setdefault(metric, {})
        for variant in order.get(case, tuple(by_variant)):
            if variant in by_variant:
                m, ci = mean_ci(list(by_variant[variant].values()))
                cell[variant] = [m, ci, len(by_variant[variant])]
    return out


def _results_md(table: Dict[str, Any]) -> str:
    labels = {c.name: f"{c.fig}: {c.label}" for c in runs.cases()}
    labels[olms_exec.CASE] = "Figs. 10-11: CPU time per path selection (measured)"
    variants_of = {c.name: c.variants for c in runs.cases()}
    variants_of[olms_exec.CASE] = olms_exec.VARIANTS
    lines = ["# OLMS reproduction: every metric (mean ± 95 % CI over the seeds)", ""]
    for regime, cases in table.items():
        for case, metrics in cases.items():
            variants = list(variants_of[case])
            variants = [v for v in variants if any(v in m for m in metrics.values())]
            lines += [f"## [{regime}] {labels.get(case, case)}", ""]
            lines += [
                "| metric | " + " | ".join(variants) + " |",
                "|---|" + "---:|" * len(variants),
            ]
            for metric, by_variant in metrics.items():
                cells = [
                    f"{by_variant[v][0]:.3g} ± {by_variant[v][1] or 0:.2g}"
                    if v in by_variant and by_variant[v][0] is not None
                    else "—"
                    for v in variants
                ]
                lines.append(f"| {metric} | " + " | ".join(cells) + " |")
            lines.append("")
    return "\n".join(lines)


def reproduce_olms(
    out: Path,
    *,
    seeds: Sequence[int] = HELD_OUT,
    jobs: int = 2,
    quick: bool = False,
    only: Optional[Sequence[str]] = None,
    regimes: Sequence[str] = runs.REGIMES,
    run: bool = True,
    keep_from: Optional[Path] = None,
    console: Optional[Console] = None,
) -> List[Claim]:
    """Runs (or resumes) the evaluation and writes the claims, results and figures under ``out``;
    with ``keep_from``, the cases not complete here come from that previous reproduction
    (:mod:`mpsched.reproduce.olms_keep`)."""
    from .olms_figures import write_figures

    console = console or Console(stderr=True)
    started = time.monotonic()
    datasets = runs.run_all(
        out, seeds, scenario_dir=_common.default_scenario_dir("olms-app1.toml"), only=only,
        regimes=regimes, jobs=jobs, quick=quick, run=run,
        log=lambda m: console.print(f"reproduce olms: {m}", markup=False, highlight=False),
    )  # fmt: skip
    values = collect(datasets)
    if only is None or olms_exec.CASE in only:
        values.update(
            olms_exec.measure(
                out,
                seeds,
                regimes,
                scenario_dir=_common.default_scenario_dir("olms-app1.toml"),
                quick=quick,
                run=run,
                log=lambda m: console.print(f"reproduce olms: {m}", markup=False, highlight=False),
            )  # fmt: skip
        )
    claims = cl.build(values, NOTES)
    table = results_table(values)
    wall = time.monotonic() - started
    preamble = _preamble(seeds, quick, wall, only, regimes, run)
    if keep_from is not None:
        from . import olms_keep as keep

        ran = keep.complete_cases(datasets)
        claims, table = keep.keep_previous(claims, table, keep_from, ran, keep.changed_cases())
        preamble += ["", keep.kept_note(ran, keep_from)]
    write_claims(
        claims,
        out,
        title="OLMS (Cai et al., IEEE TNSE 2025): claims of §VI",
        preamble=preamble,
    )
    (out / "results.md").write_text(_results_md(table) + "\n", encoding="utf-8")
    doc = {"seeds": list(seeds), "quick": quick, "wall_s": wall, "results": table}
    (out / "results.json").write_text(json.dumps(doc, indent=1), encoding="utf-8")
    write_figures(table, out / "figures", regimes)
    return claims


PREAMBLE = (
    "Our model: the OLMS algorithm (Thompson sampling, the LP of eq. (4) / (8), dependent "
    "rounding, the monitor with q = 20, δ = 3, h = 3) in a simulated MPTCP with OLIA, in place of "
    "the paper's MPQUIC prototype on Mininet. `olms` is the paper's scheduler as MPQUIC runs it: "
    "minRTT's path when no path of the sampled set has window space (§VI-B), no opportunistic "
    "retransmission; `olms+rp` adds Linux's opportunistic retransmission and penalization, "
    "`olms+wait` holds the packet for its sampled set instead of falling back. Baselines the paper "
    "names: `minrtt-norp` (MPQUIC's minRTT: no opportunistic retransmission), `rr`, `ecf`, "
    "`blest`, `peekaboo`; ours, not in the paper: `minrtt` (Linux) and `redundant` (`redundant` "
    "is in results.md and the figures; no claim of the paper concerns it). The App I "
    "paths (Figs. 3, 6, 7) carry the paper's 5 ms netem jitter (uniform ± 5 ms per packet on the "
    "data direction, never reordered). App II's set-up has neither loss nor jitter (the paper "
    "states none): its values are the same on every seed (CI ± 0) for every scheduler but "
    "Peekaboo (OLMS's Thompson draws depend on the seed but do not change its App II values), so "
    "there the 20 seeds amount to one run. Not modelled: LP solving time (Figs. 10-11 measure our "
    "scheduler's CPU time per path selection instead), the web pages' separate "
    "objects. "
    "Regimes: `loss` = the paper's loss rates (every scheduler loss-limited, a few % of the "
    "paths' capacity); `noloss` = the same paths without random loss (bottleneck queue one BDP), "
    "where utilization is comparable to the paper's 22-98 %. Claims quoting a range over the "
    "baselines use its low end for every baseline. Lower-is-better metrics are judged on the "
    "per-seed reduction 100·(1 − A/B)."
)


def _preamble(
    seeds: Sequence[int],
    quick: bool,
    wall: float,
    only: Optional[Sequence[str]],
    regimes: Sequence[str],
    run: bool,
) -> List[str]:
    how = f"This call: {wall:.0f} s." if run else "Built from the finished runs in the output."
    lines = [
        PREAMBLE,
        "",
        f"Seeds: {', '.join(map(str, seeds))} ({len(seeds)}). Cases: "
        + (", ".join(only) if only else "all")
        + f"; regimes: {', '.join(regimes)}; claims without finished runs: not measured. "
        + how,
    ]
    if quick:
        lines.insert(
            0,
            f"**QUICK RUN ({len(seeds)} seeds, runs cut to 4 s / 2 MB): a test of the pipeline, "
            "NOT the reproduction. Its verdicts mean nothing.**",
        )
    return lines


@app.command("olms")
def olms_command(
    out: Annotated[Path, typer.Option("--out", "-o", help="Output directory (resumable).")] = Path(
        "out/reproduce-olms"
    ),
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=1, help="Parallel runs.")] = 2,
    quick: Annotated[
        bool,
        typer.Option(
            "--quick",
            help=f"{len(QUICK_SEEDS)} seeds, runs cut to 4 s / 2 MB: a test of the pipeline, not the reproduction.",
        ),
    ] = False,
    only: Annotated[
        Optional[str],
        typer.Option(
            "--only",
            help="Comma-separated cases of "
            + ", ".join([*runs.case_names(), olms_exec.CASE])
            + " (default: all).",
        ),
    ] = None,
    regimes: Annotated[
        str, typer.Option("--regimes", help="Comma-separated regimes: loss, noloss.")
    ] = ",".join(runs.REGIMES),
    collect_only: Annotated[
        bool,
        typer.Option(
            "--collect-only",
            help="Run nothing: build the claims from the runs already finished in --out.",
        ),
    ] = False,
    keep_from: Annotated[
        Optional[Path],
        typer.Option(
            "--keep-from",
            help="A previous reproduction (e.g. docs/reproductions/olms): the cases not complete "
            "in --out keep its claims and results, marked where their scenario changed since.",
        ),
    ] = None,
    sensitivity: Annotated[
        bool,
        typer.Option(
            "--sensitivity",
            help="Instead: sweep the parameters the paper does not state (queue, loss scale, jitter).",
        ),
    ] = False,
) -> None:
    """OLMS (Cai et al., TNSE 2025): Figs. 3-13 against RR, minRTT, ECF, BLEST, Peekaboo (and
    Linux minRTT, redundant) on the held-out seeds 1001-1020; claims table with verdicts."""
    from ..cli.errors import fail, require_extra

    require_extra(["matplotlib"], "mpsched reproduce olms")
    chosen = None if only is None else [s.strip() for s in only.split(",") if s.strip()]
    regs = [r.strip() for r in regimes.split(",") if r.strip()]
    cases = [*runs.case_names(), olms_exec.CASE]
    bad = [s for s in chosen or [] if s not in cases]
    bad += [r for r in regs if r not in runs.REGIMES]
    if bad or (chosen is not None and not chosen) or not regs:
        fail(
            f"--only/--regimes: unknown {bad[0] if bad else 'empty list'!r}, expected some "
            f"of {', '.join(cases)} / {', '.join(runs.REGIMES)}"
        )
    seeds = QUICK_SEEDS if quick else HELD_OUT
    if sensitivity:
        from .olms_sensitivity import sensitivity as run_sensitivity

        run_sensitivity(out, seeds=seeds, jobs=jobs, quick=quick)
        return
    claims = reproduce_olms(
        out, seeds=seeds, jobs=jobs, quick=quick, only=chosen, regimes=regs,
        run=not collect_only, keep_from=keep_from,
    )  # fmt: skip
    _common.print_outcome(out, claims, quick)
