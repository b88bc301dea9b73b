"""``mpsched reproduce mptcp-rl --sensitivity``: how the verdicts depend on the values the paper
does not state and we chose (the reproduction protocol, issue 20).

Settings, fixed before any of them was run. Each re-runs every figure of the main run (or those
of ``--figures``) with every scheduler of the main run, the shipped policies unchanged, on the
same held-out seeds, with one value of every scenario copy changed:

* ``wlan-loss-0`` / ``wlan-loss-1-5pct``: the paper blames random loss on the WLAN link for
  Round-Robin's slow flows ("Challenges"; "Experimental results": "the packet loss rate on the
  WLAN link") and gives no rate; our scenarios draw it log-uniform in 0.1-1 % per seed. These
  take it away, or draw it log-uniform in 1-5 %. Only the WLAN paths' initial loss changes:
  Fig. 6's stated 8 % from 10 s on (a ``schedule`` entry) stays.
* ``queue-100pkt``: the paper simulates in "NS 3.14" and gives no queue length; our links hold
  one bandwidth-delay product (the library's default). This gives every link ns-3's
  ``DropTailQueue`` default of 100 packets (``MaxPackets``).
* ``rcvbuf-128k``: the paper's head-of-line blocking argument rests on the receive buffer
  filling up ("Challenges") without a size; our flows have the library's 6 MiB. This gives
  every connection ns-3's ``TcpSocket`` default ``RcvBufSize`` of 131 072 bytes.
* ``cc-olia``: the paper names no congestion control (its transmission model has "the coupled
  congestion avoidance"); ours is LIA (RFC 6356). This runs OLIA, the other coupled one.

Not swept: :data:`NOT_SWEPT` (with the reasons; also in the output).

Writes ``sensitivity.md`` / ``sensitivity.json`` under ``--out``: per claim of the figures run,
the reference verdict (``claims.json`` of the main run in ``--out`` if there is one, else the
committed reproduction ``docs/reproductions/mptcp-rl``) and each setting's, with our gain; per
setting its verdict counts and the claims whose verdict flipped.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

from rich.console import Console

from . import _common
from . import mptcp_rl_claims as cl
from . import mptcp_rl_runs as runs
from .protocol import (
    Claim,
    record_setting,
    sensitivity_claim_rows,
    sensitivity_head,
    verdict_counts,
    verdict_list,
    write_sensitivity,
)

#: ns-3's ``DropTailQueue`` default ``MaxPackets`` (src/network/utils/drop-tail-queue.cc).
NS3_QUEUE_PACKETS = 100
#: ns-3's ``TcpSocket`` default ``RcvBufSize`` in bytes (src/internet/model/tcp-socket.cc).
NS3_RCV_BUF_BYTES = 131_072


def _wlan_loss(lo: float, hi: float) -> runs.Modify:
    """Random loss of every WLAN path: none (``hi == 0``) or log-uniform in ``[lo, hi]``."""

    def edit(figure: str, sc: Dict[str, Any]) -> None:
        for p in sc["paths"]:
            if p.get("interface") != "wifi":
                continue
            if hi == 0:
                p.pop("loss", None)
            else:
                p["loss"] = {"model": "bernoulli", "p": {"range": [lo, hi], "dist": "loguniform"}}

    return edit


def _queue_packets(figure: str, sc: Dict[str, Any]) -> None:
    for p in sc["paths"]:
        p.pop("queue_bytes", None)
        p["queue_packets"] = NS3_QUEUE_PACKETS


def connections(sc: Dict[str, Any]) -> Iterator[Dict[str, Any]]:
    """Every connection entry of a scenario: its workloads and its hand-written flows."""
    yield from sc.get("workloads", [])
    yield from sc.get("flows", [])


def _rcv_buf(figure: str, sc: Dict[str, Any]) -> None:
    for f in connections(sc):
        f["rcv_buf_bytes"] = NS3_RCV_BUF_BYTES


def _cc(name: str) -> runs.Modify:
    def edit(figure: str, sc: Dict[str, Any]) -> None:
        for f in connections(sc):
            f["cc"] = name

    return edit


@dataclass(frozen=True)
class Setting:
    """One sensitivity setting: its edit of every figure's scenario copy, what it changes and
    what the main run has instead (for the table)."""

    name: str
    what: str
    main: str
    edit: runs.Modify


SETTINGS: Tuple[Setting, ...] = (
    Setting("wlan-loss-0", "no random loss on the WLAN paths (Fig. 6's 8 % event kept)",
            "log-uniform 0.1-1 %", _wlan_loss(0.0, 0.0)),
    Setting("wlan-loss-1-5pct", "WLAN random loss log-uniform in 1-5 % (Fig. 6's 8 % event kept)",
            "log-uniform 0.1-1 %", _wlan_loss(0.01, 0.05)),
    Setting("queue-100pkt", f"every link's queue: {NS3_QUEUE_PACKETS} packets (ns-3's "
            "DropTailQueue default)", "one bandwidth-delay product", _queue_packets),
    Setting("rcvbuf-128k", f"every connection's receive buffer: {NS3_RCV_BUF_BYTES} bytes "
            "(ns-3's TcpSocket default)", "6 MiB", _rcv_buf),
    Setting("cc-olia", "every subflow on OLIA (coupled)", "LIA (coupled)", _cc("olia")),
)  # fmt: skip
NAMES = tuple(s.name for s in SETTINGS)
#: Values we chose that no setting sweeps, and why.
NOT_SWEPT: Tuple[Tuple[str, str], ...] = (
    ("the policy's decision interval (100 ms) and training values",
     "the shipped policy was trained with them: a change means retraining it (`mpsched train "
     "mptcp-rl`, about 2-3 min CPU per value on a quiet machine, docs/mptcp-rl.md); not built "
     "in this round"),
    ("Fig. 3's Pareto shape 1.2 (the paper gives the mean, 57 KB)",
     "acts on Fig. 3 only; the settings above act on every figure"),
    ("Fig. 6's 200 MB flow",
     "not an unstated value: the paper's long flows are 15 MB, which finish before the 10 s / "
     "20 s event at these rates (scenarios/mptcp-rl-dynamic-*.toml)"),
    ("one-way delay = RTT / 2, link values drawn uniformly in the paper's ranges per seed",
     "the ranges are the paper's; the seeds already sample them"),
)  # fmt: skip


def _reference(out: Path) -> Tuple[Dict[str, str], str]:
    """Verdicts of the main run in ``out`` if it has one, else of the committed reproduction."""
    committed = Path(__file__).resolve().parents[3] / "docs" / "reproductions" / "mptcp-rl"
    main = "the main run in --out (committed as docs/reproductions/mptcp-rl/claims.json)"
    for where, label in ((out, main), (committed, "the committed reproduction")):
        path = where / "claims.json"
        if path.is_file():
            doc = json.loads(path.read_text(encoding="utf-8"))
            return {c["id"]: c["verdict"] for c in doc["claims"]}, label
    return {}, "none"


def measured_ids(figures: Sequence[str]) -> List[str]:
    """The claims whose figures (both sides) are all among ``figures``, in the paper's order."""
    run = set(figures)
    return [
        s.id for s in cl.specs() if s.figure in run and (s.b_figure is None or s.b_figure in run)
    ]


def run_setting(
    s: Setting, out: Path, seeds: Sequence[int], *, figures: Sequence[str], jobs: int,
    quick: bool, console: Console,
) -> Tuple[List[Claim], int, int]:  # fmt: skip
    """Runs (or resumes) one setting under ``out/sensitivity/<name>``; returns its claims on
    ``figures`` and the runs it ran and reused."""
    from .mptcp_rl import build_claims, collect

    datasets = runs.run_all(
        out / "sensitivity" / s.name, seeds,
        scenario_dir=_common.default_scenario_dir("mptcp-rl-short.toml"), figures=figures,
        jobs=jobs, quick=quick, modify=s.edit,
        log=lambda m: console.print(f"sensitivity {s.name}: {m}", markup=False, highlight=False),
    )  # fmt: skip
    keep = set(measured_ids(figures))
    claims = [c for c in build_claims(collect(datasets)) if c.id in keep]
    return claims, sum(d.ran for d in datasets), sum(d.reused for d in datasets)


def sensitivity(
    out: Path,
    *,
    seeds: Sequence[int],
    names: Sequence[str] = NAMES,
    figures: Sequence[str] = runs.FIGURES,
    jobs: int = 2,
    quick: bool = False,
    console: Optional[Console] = None,
) -> Path:
    """Runs the settings ``names`` on ``figures`` and writes ``sensitivity.md`` / ``.json``;
    returns the markdown's path."""
    console = console or Console(stderr=True)
    reference, label = _reference(out)
    doc: Dict[str, Any] = {
        "seeds": list(seeds), "quick": quick, "figures": list(figures), "reference": label,
        "settings": {}, "not_swept": [{"value": v, "why": w} for v, w in NOT_SWEPT],
        "claims": {c: {"reference": reference.get(c, "—")} for c in measured_ids(figures)},
    }  # fmt: skip
    for s in (s for s in SETTINGS if s.name in names):
        started = time.monotonic()
        claims, ran, reused = run_setting(
            s, out, seeds, figures=figures, jobs=jobs, quick=quick, console=console
        )
        flipped = record_setting(doc["claims"], s.name, claims, reference)
        doc["settings"][s.name] = {
            "what": s.what, "main": s.main, "claims": len(claims),
            "verdicts": verdict_counts(claims), "flips": len(flipped), "flipped": flipped,
            "runs_new": ran, "runs_reused": reused, "wall_s": time.monotonic() - started,
        }  # fmt: skip
    out.mkdir(parents=True, exist_ok=True)
    return write_sensitivity(out, doc, _markdown(doc))


def _markdown(doc: Dict[str, Any]) -> List[str]:
    names = list(doc["settings"])
    seeds = doc["seeds"]
    intro = (
        f"Seeds {seeds[0]}-{seeds[-1]} ({len(seeds)}); figures: {', '.join(doc['figures'])}. "
        f"Reference verdicts: {doc['reference']}. A flip: the setting's verdict differs from "
        "the reference's. Every setting runs the shipped MPTCP-RL and ReLeS policies unchanged."
    )
    lines = sensitivity_head("MPTCP-RL", doc["quick"], intro)
    lines += [
        "| setting | what it changes | main run | claims | flips | verdicts | runs | wall |",
        "|---|---|---|---:|---:|---|---:|---:|",
    ]
    for n in names:
        s = doc["settings"][n]
        verdicts = verdict_list(s["verdicts"])
        lines.append(
            f"| `{n}` | {s['what']} | {s['main']} | {s['claims']} | {s['flips']} | {verdicts} "
            f"| {s['runs_new']} (+{s['runs_reused']} reused) | {s['wall_s']:.0f} s |"
        )
    lines += ["", "Not swept:", ""]
    lines += [f"- {d['value']}: {d['why']}." for d in doc["not_swept"]]
    return lines + ["", *sensitivity_claim_rows(doc["claims"], names)]
