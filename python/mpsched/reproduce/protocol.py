"""The reproduction protocol shared by every ``mpsched reproduce`` command (issue 20).

**Seeds.** Every reported number is over :data:`HELD_OUT`, the seeds 1001-1020, fixed before
any result was looked at and never a subset chosen afterwards. Training seeds are listed per
paper in :data:`TRAINING_SEEDS` and are disjoint from :data:`HELD_OUT` (a test checks it).

**Statistics.** A metric is computed once per seed (one run per seed and variant); we report
the mean over the seeds and the half-width of its 95 % confidence interval (Student's t with
n - 1 degrees of freedom: :func:`mean_ci`). A relative gain of variant A over variant B is
*paired by seed* (both run the same seeds): per seed ``A_s / B_s - 1``, then the mean and CI
of those per-seed gains (:func:`paired_gain`), in percent.

**Claims.** A :class:`Claim` is one quantitative or qualitative statement of a paper (quoted),
what it compares, and our numbers. Its verdict follows :func:`judge`, mechanically:

* ``gain`` — the paper: A beats B by g % (g > 0). *not reproduced* when the lower end of the
  CI of our paired gain is ≤ 0 (direction not shown); *reproduced* when it is > 0 and our mean
  gain is at least :data:`GAIN_FACTOR` (½) of the paper's g; *partly* when it is > 0 but
  smaller than that.
* ``higher`` — the paper: A beats B, no number. *reproduced* when the lower end of the CI of
  our paired gain is > 0 and our mean gain is at least :data:`NEGLIGIBLE_GAIN` (1 %); *partly*
  when the CI excludes 0 but the gain is smaller (a real but negligible difference: two
  schedulers that send the same packets but one are not "better"); else *not reproduced*.
* ``similar`` — the paper: A and B are about the same. *reproduced* when the whole CI of our
  paired gain lies within ± :data:`SIMILAR_TOL` (15 %); *partly* when only its mean does;
  *not reproduced* otherwise.
* ``at_least`` — the paper: A's metric is close to / at least a level v (e.g. Jain's index
  "close to 1": v = :data:`JAIN_CLOSE`). *reproduced* when the lower end of our CI is ≥ v;
  *partly* when only our mean is; *not reproduced* otherwise.
* ``level`` — the paper gives A's value v. *reproduced* when our mean is within
  ± :data:`LEVEL_TOL` (20 %) of v; *partly* when it is within a factor of 2 of v; *not
  reproduced* otherwise.

A claim we could not measure (the runs are missing) gets the verdict *not measured*. Every
claim carries a ``reason``: the rule's arithmetic, and, where the verdict is not
*reproduced*, what we believe explains the difference (given by the paper's module).

:func:`write_claims` writes ``claims.md`` and ``claims.json`` from the same records (and
``claims-short.md``, the table without quotes, for the docs).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from ..stats import mean_ci as _stats_mean_ci

#: The held-out seeds of every reproduction: 1001-1020 (20 seeds), chosen before looking.
HELD_OUT: Tuple[int, ...] = tuple(range(1001, 1021))

#: Seeds used in training, per paper (must not meet :data:`HELD_OUT`).
TRAINING_SEEDS: Dict[str, Tuple[int, ...]] = {
    # agents/checkpoints/drl-cc-default.json: `train drl-cc --seed 1 --num-envs 4`; the vector
    # env is reset with seeds 1-4 (seed + env index) and its later episodes continue those
    # environments' generators.
    "drl-cc": (1, 2, 3, 4),
    # agents/checkpoints/edar-p.json, edar-default.json (`train edar --seed 1`) and EdAR-o's
    # online adaptation in each evaluation network (`reproduce edar`, seed 1): episode e resets
    # the env with seed 100_003 + e (e < 400 in every run so far: 42 episodes in the shipped
    # training, 300 in the 100-trajectories-per-setting EdAR-p of docs/edar.md) and draws its
    # scenario seed (63 bits) from it: reproduce.edar_runs.
    # training_scenario_seeds gives them; a test checks they miss HELD_OUT.
    "edar": tuple(range(100_003, 100_403)),
    # agents/checkpoints/pdaa3c-default.json: `train pdaa3c --workers 1 --seed 1`, 2 envs per
    # worker: first episodes at env_seed_base(1, 0) + i = 1 010 000 + i; later episodes draw
    # 64-bit seeds from them by hashing (agents/pdaa3c_args.env_seed_base).
    "pdaa3c": (1_010_000, 1_010_001),
    # agents/checkpoints/mptcp-rl-default.json (`train mptcp-rl --seed 1`): the online envs of
    # the three training scenarios are reset with seeds 1-3 (seed + scenario index), later
    # episodes continue their generators; the offline episodes' env seeds are
    # 200_000 + seed + 10_000·scenario + 1000·behaviour + episode (agents.mptcp_rl.offline_seed;
    # 3 scenarios × 3 behaviours × 4 episodes). Every episode draws its scenario seed (63 bits)
    # from its env seed.
    "mptcp-rl": (1, 2, 3)
    + tuple(
        200_001 + 10_000 * k + 1000 * b + e for k in range(3) for b in range(3) for e in range(4)
    ),
    # agents/checkpoints/reles-default.json (`train reles --seed 1`): episode e resets the env
    # with seed 300_000 + e (1 669 episodes) and draws its scenario seed (63 bits) from it.
    "reles": tuple(range(300_000, 301_669)),
}

#: ``gain`` claims: our mean gain must reach this fraction of the paper's to be *reproduced*.
GAIN_FACTOR = 0.5
#: ``higher`` claims: the smallest mean gain (percent) called *reproduced*; a gain whose CI
#: excludes 0 but that is smaller is *partly* (negligible). Chosen as the difference no reader
#: of a paper's "A beats B" would accept as meant (our CIs resolve 0.02 %).
NEGLIGIBLE_GAIN = 1.0
#: ``similar`` claims: the largest relative difference (either way) still called similar.
SIMILAR_TOL = 0.15
#: ``level`` claims: the relative distance from the paper's value still called reproduced.
LEVEL_TOL = 0.20
#: ``at_least`` level for Jain's index "close to 1".
JAIN_CLOSE = 0.95

REPRODUCED, PARTLY, NOT_REPRODUCED, NOT_MEASURED = (
    "reproduced",
    "partly",
    "not reproduced",
    "not measured",
)
KINDS = ("gain", "higher", "similar", "at_least", "level")


def mean_ci(values: Sequence[float]) -> Tuple[Optional[float], Optional[float]]:
    """Mean of the per-seed values and the half-width of its 95 % CI (Student's t).

    NaN and None are dropped; ``(None, None)`` without values, ``(mean, None)`` with one."""
    return _stats_mean_ci(values)


def paired_gain(
    a: Mapping[int, float], b: Mapping[int, float]
) -> Tuple[Optional[float], Optional[float], int]:
    """Relative gain of A over B in percent, paired by seed: mean and 95 % CI half-width of
    ``100 · (a[s] / b[s] - 1)`` over the seeds both have (with b[s] > 0), and their count."""
    gains = [
        100.0 * (a[s] / b[s] - 1.0)
        for s in sorted(set(a) & set(b))
        if _finite(a[s]) and _finite(b[s]) and b[s] > 0
    ]
    mean, ci = mean_ci(gains)
    return mean, ci, len(gains)


def _finite(x: Any) -> bool:
    return x is not None and isinstance(x, (int, float)) and math.isfinite(x)


@dataclass
class Side:
    """One variant's value of the claim's metric: mean ± 95 % CI over ``n`` seeds."""

    variant: str
    mean: Optional[float]
    ci: Optional[float]
    n: int


@dataclass
class Claim:
    """One claim of a paper and our numbers for it.

    Attributes:
        id: a short stable name (``s1-8mb-gain-lia``).
        paper: the paper's key (``drl-cc``).
        where: figure / section (``Fig. 3a, §IV-B Scenario 1``).
        quote: the paper's words.
        metric: what is measured, with its unit and how.
        kind: one of :data:`KINDS` (see the module docstring for each rule).
        paper_value: the paper's number (a gain in percent for ``gain``; the level for
            ``at_least`` / ``level``), None for qualitative claims.
        a, b: the variants compared (b is None for ``at_least`` / ``level``).
        ours_a, ours_b: our values of the metric for a and b.
        gain: our paired gain of a over b in percent (mean, CI half-width), where b is given.
        verdict: set by :func:`judge`.
        reason: the rule's arithmetic, then the explanation (``note``) when not reproduced.
        note: what we believe explains a difference from the paper (set by the paper's module).
    """

    id: str
    paper: str
    where: str
    quote: str
    metric: str
    kind: str
    paper_value: Optional[float]
    a: str
    b: Optional[str] = None
    ours_a: Optional[Side] = None
    ours_b: Optional[Side] = None
    gain: Optional[Tuple[Optional[float], Optional[float]]] = None
    verdict: str = NOT_MEASURED
    reason: str = ""
    note: str = ""
    extra: Dict[str, Any] = field(default_factory=dict)


def _fmt(x: Optional[float], spec: str = ".3g") -> str:
    return "—" if x is None or not math.isfinite(x) else format(x, spec)


def _interval(mean: Optional[float], ci: Optional[float]) -> Tuple[float, float]:
    """(low, high) of the CI; a missing CI (one seed) is a point."""
    half = ci if ci is not None and math.isfinite(ci) else 0.0
    return mean - half, mean + half


def judge(claim: Claim) -> Claim:
    """Sets ``claim.verdict`` and ``claim.reason`` by the rule of its kind (module docstring)."""
    if claim.kind not in KINDS:
        raise ValueError(f"unknown claim kind {claim.kind!r}")
    if claim.kind in ("gain", "higher", "similar"):
        mean, ci = claim.gain if claim.gain is not None else (None, None)
    else:
        mean = claim.ours_a.mean if claim.ours_a is not None else None
        ci = claim.ours_a.ci if claim.ours_a is not None else None
    if mean is None or not math.isfinite(mean):
        claim.verdict, claim.reason = NOT_MEASURED, "no runs for this claim"
        return claim
    lo, hi = _interval(mean, ci)
    verdict, why = _RULES[claim.kind](mean, lo, hi, claim.paper_value)
    claim.verdict = verdict
    claim.reason = why + (f" {claim.note}" if claim.note and verdict != REPRODUCED else "")
    return claim


def _rule_gain(mean: float, lo: float, hi: float, paper: Optional[float]):
    if paper is None or paper <= 0:
        raise ValueError("a gain claim needs the paper's positive gain")
    if lo <= 0:
        return NOT_REPRODUCED, _not_above_zero(mean, lo, hi)
    need = GAIN_FACTOR * paper
    if mean >= need:
        return REPRODUCED, f"gain {mean:+.1f} % > 0 (CI) and ≥ {need:.0f} % (½ of the paper's)."
    return (
        PARTLY,
        f"gain {mean:+.1f} % > 0 (CI) but < {need:.0f} % (½ of the paper's {paper:.0f} %).",
    )


def _not_above_zero(mean: float, lo: float, hi: float) -> str:
    if hi < 0:
        return f"reversed: gain {mean:+.1f} %, 95 % CI [{lo:+.1f}, {hi:+.1f}] < 0."
    return f"gain {mean:+.1f} %, 95 % CI [{lo:+.1f}, {hi:+.1f}] includes 0."


def _rule_higher(mean: float, lo: float, hi: float, paper: Optional[float]):
    if lo > 0 and mean >= NEGLIGIBLE_GAIN:
        return REPRODUCED, f"gain {mean:+.1f} %, CI [{lo:+.1f}, {hi:+.1f}] > 0."
    if lo > 0:
        return (
            PARTLY,
            f"gain {mean:+.2f} %, CI [{lo:+.2f}, {hi:+.2f}] > 0 but below {NEGLIGIBLE_GAIN:g} %: "
            f"a negligible difference.",
        )
    return NOT_REPRODUCED, _not_above_zero(mean, lo, hi)


def _rule_similar(mean: float, lo: float, hi: float, paper: Optional[float]):
    tol = 100 * SIMILAR_TOL
    span = f"difference {mean:+.1f} %, CI [{lo:+.1f}, {hi:+.1f}]"
    if -tol <= lo and hi <= tol:
        return REPRODUCED, f"{span} within ±{tol:.0f} %."
    if -tol <= mean <= tol:
        return PARTLY, f"{span}: mean within ±{tol:.0f} %, CI not."
    return NOT_REPRODUCED, f"{span} outside ±{tol:.0f} %."


def _rule_at_least(mean: float, lo: float, hi: float, paper: Optional[float]):
    if paper is None:
        raise ValueError("an at_least claim needs a level")
    if lo >= paper:
        return REPRODUCED, f"{mean:.3g}, CI low end {lo:.3g} ≥ {paper:.3g}."
    if mean >= paper:
        return PARTLY, f"{mean:.3g} ≥ {paper:.3g} but CI low end {lo:.3g} below."
    return NOT_REPRODUCED, f"{mean:.3g} < {paper:.3g}."


def _rule_level(mean: float, lo: float, hi: float, paper: Optional[float]):
    if paper is None or paper <= 0:
        raise ValueError("a level claim needs the paper's positive value")
    ratio = mean / paper
    if abs(ratio - 1) <= LEVEL_TOL:
        return (
            REPRODUCED,
            f"{mean:.3g} is {ratio:.2f}× the paper's {paper:.3g} (within ±{LEVEL_TOL:.0%}).",
        )
    if 0.5 <= ratio <= 2.0:
        return (
            PARTLY,
            f"{mean:.3g} is {ratio:.2f}× the paper's {paper:.3g} (within 2×, not ±{LEVEL_TOL:.0%}).",
        )
    return NOT_REPRODUCED, f"{mean:.3g} is {ratio:.2f}× the paper's {paper:.3g}."


_RULES = {
    "gain": _rule_gain,
    "higher": _rule_higher,
    "similar": _rule_similar,
    "at_least": _rule_at_least,
    "level": _rule_level,
}

RULE_TEXT = (
    f"Verdict rule (`mpsched.reproduce.protocol`): gain claims are *reproduced* when the 95 % CI "
    f"of our per-seed paired gain excludes 0 in the paper's direction and our mean gain is at "
    f"least {GAIN_FACTOR:.0%} of the paper's, *partly* when the direction holds but the gain is "
    f"smaller, *not reproduced* when the CI includes 0 or the sign is reversed; qualitative "
    f"'A beats B' claims need the CI to exclude 0 and a mean gain ≥ {NEGLIGIBLE_GAIN:g} % (partly: "
    f"the CI excludes 0 but the gain is smaller, a negligible difference); 'about the same' claims need the gain's CI "
    f"within ±{SIMILAR_TOL:.0%} (partly: its mean); 'at least v' claims need the CI's low end ≥ v "
    f"(partly: the mean); value claims need our mean within ±{LEVEL_TOL:.0%} of the paper's "
    f"(partly: within 2×)."
)


def _side_text(side: Optional[Side]) -> str:
    if side is None or side.mean is None:
        return "—"
    return f"{_fmt(side.mean)} ± {_fmt(side.ci, '.2g')}"


def claim_row(c: Claim) -> List[str]:
    """The cells of the claim's row in ``claims.md`` (also used by the tests to compare)."""
    paper = (
        "—"
        if c.paper_value is None
        else (f"{c.paper_value:+g} %" if c.kind == "gain" else f"{c.paper_value:g}")
    )
    gain = "—"
    if c.gain is not None and c.gain[0] is not None:
        gain = f"{c.gain[0]:+.1f} ± {_fmt(c.gain[1], '.1f')} %"
    versus = f"{c.a} vs {c.b}" if c.b else c.a
    quote = c.quote.replace("|", "/")
    return [
        c.id,
        c.where,
        f"“{quote}”",
        c.metric,
        versus,
        paper,
        _side_text(c.ours_a),
        _side_text(c.ours_b),
        gain,
        f"**{c.verdict}**",
        c.reason.replace("|", "/"),
    ]


HEADER = ["id", "where", "paper says", "metric", "compared", "paper", "ours A", "ours B",
          "our gain (A over B)", "verdict", "reason"]  # fmt: skip


def verdict_counts(claims: Iterable[Claim]) -> Dict[str, int]:
    """How many claims have each verdict, in the order the verdicts first appear."""
    counts: Dict[str, int] = {}
    for c in claims:
        counts[c.verdict] = counts.get(c.verdict, 0) + 1
    return counts


def verdict_cell(c: Claim) -> str:
    """The verdict, with our mean gain where the claim has one: a sensitivity table's cell."""
    gain = c.gain[0] if c.gain else None
    return c.verdict + (f" ({gain:+.1f} %)" if gain is not None else "")


def record_setting(
    rows: Dict[str, Dict[str, str]],
    name: str,
    claims: Sequence[Claim],
    reference: Mapping[str, str],
) -> List[str]:
    """Writes setting ``name``'s cell of every claim into a sensitivity report's ``rows``
    (claim id → {"reference": its verdict, setting: cell}) and returns the ids whose verdict
    differs from the reference's (the setting's flips)."""
    for c in claims:
        rows.setdefault(c.id, {"reference": reference.get(c.id, "—")})[name] = verdict_cell(c)
    return [c.id for c in claims if reference.get(c.id) not in (None, c.verdict)]


def sensitivity_head(paper: str, quick: bool, intro: str) -> List[str]:
    """A sensitivity report's title, the quick-run banner when ``quick``, and ``intro``."""
    lines = [f"# {paper} reproduction: sensitivity to the values the paper does not state", ""]
    if quick:
        lines += ["**QUICK RUN: a test of the pipeline, NOT the sensitivity sweep.**", ""]
    return lines + [intro, ""]


def verdict_list(verdicts: Mapping[str, int]) -> str:
    """``{"reproduced": 4, ...}`` as "reproduced 4, ..." (a sensitivity table's cell)."""
    return ", ".join(f"{k} {v}" for k, v in verdicts.items())


def sensitivity_claim_rows(
    claims: Mapping[str, Mapping[str, str]], names: Sequence[str]
) -> List[str]:
    """A sensitivity report's per-claim table: the reference verdict, then each setting's
    [`verdict_cell`] ("—" where the setting does not run the claim)."""
    lines = ["| claim | reference | " + " | ".join(names) + " |", "|---|---|" + "---|" * len(names)]
    for cid, by in claims.items():
        lines.append(f"| {cid} | {by['reference']} | " + " | ".join(by.get(n, "—") for n in names) + " |")  # fmt: skip
    return lines


def write_sensitivity(out: Path, doc: Mapping[str, Any], lines: Sequence[str]) -> Path:
    """Writes ``sensitivity.json`` (``doc``) and ``sensitivity.md`` (``lines``) into ``out``;
    returns the markdown's path."""
    (out / "sensitivity.json").write_text(json.dumps(doc, indent=1), encoding="utf-8")
    path = out / "sensitivity.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_claims(
    claims: Sequence[Claim], out: Path, *, title: str, preamble: Sequence[str] = ()
) -> Tuple[Path, Path]:
    """Writes ``out/claims.md`` (a table, the rule, the verdict counts) and ``out/claims.json``
    (the same claims as records) and returns both paths."""
    out.mkdir(parents=True, exist_ok=True)
    counts = verdict_counts(claims)
    lines = [f"# {title}", "", *preamble, "", RULE_TEXT, ""]
    lines.append(
        "Verdicts: "
        + ", ".join(
            f"{counts[v]} {v}"
            for v in (REPRODUCED, PARTLY, NOT_REPRODUCED, NOT_MEASURED)
            if v in counts
        )
        + "."
    )
    lines += ["", "| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(claim_row(c)) + " |" for c in claims]
    md = out / "claims.md"
    md.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (out / "claims-short.md").write_text(compact_table(claims), encoding="utf-8")
    doc = {
        "title": title,
        "rule": RULE_TEXT,
        "held_out_seeds": list(HELD_OUT),
        "verdicts": counts,
        "claims": [asdict(c) for c in claims],
    }
    js = out / "claims.json"
    js.write_text(json.dumps(doc, indent=1, ensure_ascii=False), encoding="utf-8")
    return md, js


def compact_table(claims: Sequence[Claim]) -> str:
    """A short markdown table of the claims (id, where, paper, ours, gain, verdict) for the docs;
    the same cells as ``claims.md`` without the quotes, metrics and reasons."""
    lines = [
        "| claim | where | compared | paper | ours A | ours B | our gain | verdict |",
        "|---|---|---|---:|---:|---:|---:|---|",
    ]
    for c in claims:
        cells = claim_row(c)
        lines.append("| " + " | ".join([cells[0], cells[1], *cells[4:10]]) + " |")
    return "\n".join(lines) + "\n"


def read_md_rows(path: Path) -> Dict[str, List[str]]:
    """The claims table of a ``claims.md`` as {id: cells} (for checking it against the JSON)."""
    rows: Dict[str, List[str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("| ") and not line.startswith("| id |"):
            cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
            rows[cells[0]] = cells
    return rows


def claim_from_dict(d: Mapping[str, Any]) -> Claim:
    """A :class:`Claim` from its ``claims.json`` record."""
    d = dict(d)
    for key in ("ours_a", "ours_b"):
        if d.get(key) is not None:
            d[key] = Side(**d[key])
    if d.get("gain") is not None:
        d["gain"] = tuple(d["gain"])
    return Claim(**d)


def load_committed(directory: Path) -> Tuple[Dict[str, Claim], Dict[str, Any]]:
    """The claims of a committed ``claims.json`` (``docs/reproductions/<paper>/``) by id, and
    the whole document."""
    doc = json.loads((directory / "claims.json").read_text(encoding="utf-8"))
    return {d["id"]: claim_from_dict(d) for d in doc["claims"]}, doc


def check_committed_tables(directory: Path) -> Dict[str, Claim]:
    """Asserts that a committed reproduction is one run's: ``claims.json`` on the held-out seeds,
    ``claims.md``'s rows its claims (same ids, same order, same cells), ``claims-short.md`` its
    compact table. Returns the claims by id."""
    claims, doc = load_committed(directory)
    assert doc["held_out_seeds"] == list(HELD_OUT), doc["held_out_seeds"]
    rows = read_md_rows(directory / "claims.md")
    assert list(rows) == list(claims)
    for c in claims.values():
        assert rows[c.id] == claim_row(c), c.id
    short = (directory / "claims-short.md").read_text(encoding="utf-8")
    assert short == compact_table(list(claims.values()))
    return claims


#: A pinned acceptance result: (verdict, lowest and highest accepted mean gain in percent).
Pinned = Tuple[str, float, float]


def check_pinned(claims: Mapping[str, Claim], cid: str, pinned: Pinned) -> None:
    """Asserts that committed claim ``cid`` has the pinned verdict and a mean gain within the
    pinned range (tests pin the measured result of headline claims so that a change that moves
    one is noticed, and update a pin only from a new reproduction's output)."""
    verdict, lo, hi = pinned
    c = claims[cid]
    assert c.verdict == verdict, (cid, c.verdict, c.gain)
    assert c.gain is not None and lo <= c.gain[0] <= hi, (cid, c.gain)
