"""``mpsched reproduce olms --sensitivity``: how the verdicts depend on the parameters the paper
does not state and we chose.

* **Bottleneck queue** (``noloss``): the paper shapes its ports with tc/netem and gives no queue
  length; we use the simulator's default of one bandwidth-delay product. The sweep adds netem's
  default ``limit`` of 1000 packets (1000 × 1514 bytes).
* **Loss between the regimes**: the paper's stated rates (``loss``) make every scheduler
  loss-limited, while its reported utilization (22-98 %) needs far less loss (``noloss``). The
  sweep adds one tenth of the paper's rates (``loss``, each Bernoulli p × 0.1).
* **The jitter's model**: the paper adds "jitter of 5 ms" on each App I path with netem and
  states no distribution; we draw each packet's delay uniformly in delay ± 5 ms and keep the
  packets in order (docs/scenarios.md, "Jitter"), where netem without a rate reorders them. The
  sweep bounds what that choice can do: App I without the jitter, in both regimes.

Each setting reruns its cases (App I, Fig. 3, and the dumbbell, Fig. 9; App I only for the
jitter, the dumbbell having none) with OLMS and the baselines the claims compare, and writes
``sensitivity.md`` / ``sensitivity.json``: per claim of those cases, the verdict in the main run
(``claims.json`` in ``--out``, if present) and in each setting.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Dict, List, Sequence, Tuple

from rich.console import Console

from . import _common
from . import olms_claims as cl
from . import olms_runs as runs
from .olms_metrics import collect
from .protocol import verdict_cell

CASES = ("app1", "dumbbell")
VARIANTS = ("olms", *cl.VERSUS)


def _queue_1000(sc: Dict[str, Any]) -> None:
    for p in sc["paths"]:
        p["queue_bytes"] = 1000 * 1514


def _loss_tenth(sc: Dict[str, Any]) -> None:
    for p in sc["paths"]:
        loss = p.get("loss")
        if loss and "p" in loss:
            loss["p"] = loss["p"] * 0.1


def _no_jitter(sc: Dict[str, Any]) -> None:
    for p in sc["paths"]:
        p.pop("jitter_ms", None)


#: (name, regime whose scenarios it edits, edit, what it changes, cases it reruns)
SETTINGS: Tuple[Tuple[str, str, Callable[[Dict[str, Any]], None], str, Tuple[str, ...]], ...] = (
    ("queue-1000pkt", "noloss", _queue_1000, "noloss with netem's 1000-packet queue", CASES),
    ("loss-0.1x", "loss", _loss_tenth, "loss with a tenth of the paper's loss rates", CASES),
    (
        "no-jitter-loss",
        "loss",
        _no_jitter,
        "loss without the 5 ms jitter on App I's paths",
        ("app1",),
    ),
    (
        "no-jitter-noloss",
        "noloss",
        _no_jitter,
        "noloss without the 5 ms jitter on App I's paths",
        ("app1",),
    ),
)


def sensitivity(out: Path, *, seeds: Sequence[int], jobs: int = 2, quick: bool = False) -> Path:
    """Runs every setting of :data:`SETTINGS` and writes the verdict table; returns its path."""
    con = Console(stderr=True)
    main: Dict[str, str] = {}
    if (out / "claims.json").exists():
        doc = json.loads((out / "claims.json").read_text(encoding="utf-8"))
        main = {c["id"]: c["verdict"] for c in doc["claims"]}
    table: Dict[str, Dict[str, str]] = {}
    summary: Dict[str, Any] = {}
    for name, regime, edit, what, cases in SETTINGS:
        dest = out / "sensitivity" / name
        datasets = runs.run_all(
            dest, seeds, scenario_dir=_common.default_scenario_dir("olms-app1.toml"),
            only=cases, regimes=(regime,), jobs=jobs, quick=quick, variants=VARIANTS,
            modify=edit, log=lambda m, n=name: con.print(f"sensitivity {n}: {m}", markup=False),
        )  # fmt: skip
        claims = [
            c
            for c in cl.build(collect(datasets), {})
            if c.extra["case"] in cases and c.extra["regime"] == regime
        ]
        summary[name] = {"regime": regime, "what": what, "verdicts": cl.counts(claims)}
        for c in claims:
            table.setdefault(c.id, {})[name] = verdict_cell(c)
    lines = _markdown(table, main, summary)
    path = out / "sensitivity.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (out / "sensitivity.json").write_text(
        json.dumps({"seeds": list(seeds), "settings": summary, "claims": table}, indent=1),
        encoding="utf-8",
    )
    return path


def _markdown(
    table: Dict[str, Dict[str, str]], main: Dict[str, str], summary: Dict[str, Any]
) -> List[str]:
    names = [s[0] for s in SETTINGS]
    lines = [
        "# OLMS reproduction: sensitivity to the parameters the paper does not state",
        "",
        *[f"- `{n}`: {summary[n]['what']}; verdicts {summary[n]['verdicts']}" for n in names],
        "",
        "| claim | main run | " + " | ".join(names) + " |",
        "|---|---|" + "---|" * len(names),
    ]
    for cid, by in table.items():
        lines.append(
            f"| {cid} | {main.get(cid, '—')} | " + " | ".join(by.get(n, "—") for n in names) + " |"
        )
    return lines
