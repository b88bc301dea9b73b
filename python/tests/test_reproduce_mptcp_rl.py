"""`mpsched reproduce mptcp-rl` (reproduce/mptcp_rl*.py): the figures' scenario copies, the
lower-is-better reduction, a quick end-to-end run through the CLI, and the committed claims
table (docs/reproductions/mptcp-rl/) against the docs that quote it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mpsched.reproduce import mptcp_rl_claims, mptcp_rl_runs
from mpsched.reproduce import protocol as P
from mpsched.reproduce.mptcp_rl import paired_reduction, run_metrics

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "docs" / "reproductions" / "mptcp-rl"
SCENARIOS = ROOT / "scenarios"


def test_figure_copies_change_only_what_the_figure_varies():
    single = mptcp_rl_runs.figure_scenario("single", SCENARIOS, False)
    assert single["workloads"][0]["max_flows"] == 1
    assert single["workloads"][0]["size"] == {"dist": "fixed", "bytes": 10_000}
    long = mptcp_rl_runs.figure_scenario("fig4-long", SCENARIOS, False)
    assert long["workloads"][0]["max_flows"] == {"range": [10, 30], "steps": 3}
    two = mptcp_rl_runs.figure_scenario("fig5-wlan2", SCENARIOS, False)
    assert [p["name"] for p in two["paths"]] == ["wifi1", "wifi2", "lte"]
    assert two["workloads"][0]["paths"] == ["wifi1", "wifi2", "lte"]
    shipped = mptcp_rl_runs.figure_scenario("fig3", SCENARIOS, False)
    assert shipped["paths"] == mptcp_rl_runs.figure_scenario("single", SCENARIOS, False)["paths"]
    assert mptcp_rl_runs.figure_scenario("fig6-loss", SCENARIOS, True)["sim"]["duration_s"] == 5


def test_reduction_is_paired_by_seed_and_lower_is_better():
    m, ci, n = paired_reduction({1: 50.0, 2: 30.0, 3: 9.0}, {1: 100.0, 2: 60.0, 4: 1.0})
    assert (m, ci, n) == (pytest.approx(50.0), pytest.approx(0.0), 2)
    # equal runs whose sums differ by rounding: exactly 0, so "A is lower" does not hold
    same = paired_reduction({1: 0.1 + 0.2, 2: 5.0}, {1: 0.3, 2: 5.0})
    assert same == (0.0, 0.0, 2)
    assert (
        P.judge(P.Claim("x", "p", "w", "q", "m", "higher", None, "A", "B", gain=same[:2])).verdict
        == P.NOT_REPRODUCED
    )


def test_run_metrics_count_an_unfinished_flow_with_the_duration():
    s = {
        "duration_s": 60.0,
        "flows": [{"completed": True, "fct_s": 2.0}, {"completed": False, "fct_s": None}],
        "interfaces": [{"energy_j": 1.5}, {"energy_j": 2.5}],
    }
    assert run_metrics(s) == {"fct": 31.0, "energy": 4.0, "completed": 0.5}


def test_quick_reproduction_end_to_end(tmp_path):
    """`--quick --figures single` (2 seeds) through the CLI writes claims.md / claims.json /
    results; every claim has a verdict, the others' figures are not measured; the markdown and
    the JSON say the same."""
    pytest.importorskip("matplotlib")
    from typer.testing import CliRunner

    from mpsched.cli import app

    out = tmp_path / "r"
    argv = ["reproduce", "mptcp-rl", "--quick", "--figures", "single", "--out", str(out)]
    res = CliRunner().invoke(app, argv)
    assert res.exit_code == 0, res.output
    assert "NOT the reproduction" in res.output
    doc = json.loads((out / "claims.json").read_text(encoding="utf-8"))
    ids = [c["id"] for c in doc["claims"]]
    assert ids == [s.id for s in mptcp_rl_claims.specs()]
    measured = [c["id"] for c in doc["claims"] if c["verdict"] != P.NOT_MEASURED]
    assert measured == ["single-emptcp-rr", "single-emptcp-level", "single-rr-level"]
    rows = P.read_md_rows(out / "claims.md")
    assert list(rows) == ids
    for d in doc["claims"]:
        assert rows[d["id"]] == P.claim_row(P.claim_from_dict(d))
    table = json.loads((out / "results.json").read_text(encoding="utf-8"))["results"]
    assert set(table["single"][""]["fct"]) == set(mptcp_rl_runs.SCHEDULERS)
    assert all(v[2] == 2 for v in table["single"][""]["fct"].values())


def test_unknown_figure_is_bad_input(tmp_path):
    from typer.testing import CliRunner

    from mpsched.cli import app
    from mpsched.cli.errors import EXIT_BAD_INPUT

    argv = ["reproduce", "mptcp-rl", "--figures", "fig9", "--out", str(tmp_path)]
    res = CliRunner().invoke(app, argv)
    assert res.exit_code == EXIT_BAD_INPUT
    (line,) = res.output.strip().splitlines()  # one line, whatever the terminal's width
    assert line.startswith("error: --figures: ") and all(f in line for f in mptcp_rl_runs.FIGURES)
    assert not (tmp_path / "claims.md").exists()


def test_committed_claims_are_the_full_reproduction():
    """docs/reproductions/mptcp-rl holds the full run: the held-out seeds, every claim of the
    specs, not quick; claims.md says what claims.json says."""
    claims = P.check_committed_tables(COMMITTED)
    assert list(claims) == [s.id for s in mptcp_rl_claims.specs()]
    assert all(c.verdict != P.NOT_MEASURED for c in claims.values())
    assert "QUICK RUN" not in (COMMITTED / "claims.md").read_text(encoding="utf-8")
    results = json.loads((COMMITTED / "results.json").read_text(encoding="utf-8"))
    assert results["seeds"] == list(P.HELD_OUT) and not results["quick"]


def test_docs_quote_the_committed_claims():
    """docs/mptcp-rl.md's claims table is the committed claims-short.md, and the verdict
    counts it states are claims.json's."""
    docs = (ROOT / "docs" / "mptcp-rl.md").read_text(encoding="utf-8")
    short = (COMMITTED / "claims-short.md").read_text(encoding="utf-8")
    assert short.strip() in docs
    doc = json.loads((COMMITTED / "claims.json").read_text(encoding="utf-8"))
    v = doc["verdicts"]
    said = (
        f"Verdicts: {v.get(P.REPRODUCED, 0)} reproduced, {v.get(P.PARTLY, 0)} partly, "
        f"{v.get(P.NOT_REPRODUCED, 0)} not reproduced, {v.get(P.NOT_MEASURED, 0)} not measured "
        f"({len(doc['claims'])} claims)."
    )
    assert said in docs


def test_throughput_band_is_a_percentile_band_of_the_seeds_and_never_negative():
    """Fig. 6a-b: per seed and 1 s bin the mean over the bin's sample times of path 1's and
    the other paths' throughput (a subflow without a row sent nothing); a seed whose flow has
    completed counts 0 in the later bins; the band is the 25-75 % of the seeds, so it stays
    within their values (a t-interval of the few seeds still running went below 0)."""
    from mpsched.reproduce.mptcp_rl_figures import percentile_band, throughput_bins

    rows = [
        {"seed": 1, "time_s": 0.1, "subflow": 0, "throughput_mbps": 4.0},
        {"seed": 1, "time_s": 0.1, "subflow": 1, "throughput_mbps": 6.0},
        {"seed": 1, "time_s": 0.5, "subflow": 1, "throughput_mbps": 2.0},  # subflow 0 silent
        {"seed": 2, "time_s": 0.1, "subflow": 3, "throughput_mbps": 1.0},  # seed 2's path 1
        {"seed": 2, "time_s": 1.2, "subflow": 3, "throughput_mbps": 30.0},  # a burst, then done
        {"seed": 3, "time_s": 0.2, "subflow": 0, "throughput_mbps": None},
    ]
    bins = throughput_bins(rows, {1: {0}, 2: {3}, 3: {0}})
    assert bins == {1: {0: [2.0, 4.0]}, 2: {0: [1.0, 0.0], 1: [30.0, 0.0]}, 3: {0: [0.0, 0.0]}}
    med, lo, hi = percentile_band(bins, 0, 3)
    assert med == [1.0, 0.0, 0.0] and lo == [0.5, 0.0, 0.0] and hi == [1.5, 15.0, 0.0]
    assert min(lo) >= 0.0


#: A gain as the docs quote it: "+1.2 ± 0.3 %" (ASCII or Unicode minus).
GAIN = r"[+\-−]\d+\.\d ± \d+\.\d %"


def _mptcp_rl_sections():
    """The MPTCP-RL text of each document: docs/mptcp-rl.md, BENCHMARKS.md's MPTCP-RL
    section, the README's paragraph on the MPTCP-RL reproduction."""
    bench = (ROOT / "BENCHMARKS.md").read_text(encoding="utf-8")
    bench = bench.split("## MPTCP-RL training time and held-out results", 1)[1]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    readme = readme.split("MPTCP-RL's (`mpsched reproduce mptcp-rl`", 1)[1].split("\n\n", 1)[0]
    return {
        "docs/mptcp-rl.md": (ROOT / "docs" / "mptcp-rl.md").read_text(encoding="utf-8"),
        "BENCHMARKS.md": bench.split("\n## ", 1)[0],
        "README.md": readme,
    }


def test_docs_numbers_are_the_claims_tables():
    """Every "x ± y %" the MPTCP-RL docs quote is a cell of the committed claims-short.md or
    claims.md (the docs quote nothing else), and the README and BENCHMARKS.md state the verdict
    counts of claims.json."""
    import re

    short = (COMMITTED / "claims-short.md").read_text(encoding="utf-8")
    full = (COMMITTED / "claims.md").read_text(encoding="utf-8")
    cells = set(re.findall(GAIN, short + full))
    for name, text in _mptcp_rl_sections().items():
        for said in re.findall(GAIN, text.replace(short, "")):
            assert said.replace("−", "-") in cells, (name, said)
    claims, _ = P.load_committed(COMMITTED)
    n = {v: sum(c.verdict == v for c in claims.values()) for v in (P.REPRODUCED, P.PARTLY, P.NOT_REPRODUCED)}  # fmt: skip
    line = (
        f"{n[P.REPRODUCED]} of {len(claims)} claims reproduced, {n[P.PARTLY]} partly, "
        f"{n[P.NOT_REPRODUCED]} not"
    )
    for name in ("README.md", "BENCHMARKS.md"):
        assert line in " ".join(_mptcp_rl_sections()[name].split()), name


#: The measured result of every claim of MPTCP-RL against a baseline the paper names, and of
#: the "beyond the paper" claims that decide whether it beats our strongest schedulers, pinned
#: from the committed claims.json (verdict, and the range of our mean reduction in percent):
#: where MPTCP-RL beats a baseline as the paper says, *reproduced*; where it does not, the
#: honest result is pinned so that a change that moves it is noticed. (2026-11-28: the full
#: run with twelve schedulers; the 45 claims of the paper's comparisons are unchanged from the
#: seven-scheduler run, to the last digit.)
PINNED = {
    # Fig. 3 (30 short flows): slower and costlier than RR, eMPTCP, ReLeS; DMPTCP: CI includes 0
    **{
        f"f3-{m}-{b}": (P.NOT_REPRODUCED, lo, hi)
        for m, lo, hi in (("fct", -10, -5), ("energy", -12, -6))
        for b in ("roundrobin", "reles")
    },  # fmt: skip
    "f3-fct-emptcp": (P.NOT_REPRODUCED, -9, -4),
    "f3-energy-emptcp": (P.NOT_REPRODUCED, -12, -6),
    "f3-fct-dmptcp": (P.NOT_REPRODUCED, 0, 2.5),
    "f3-energy-dmptcp": (P.NOT_REPRODUCED, 0, 6),
    # Fig. 4: the paper's −45.1 % / −44.7 % against Round-Robin: about 0 here, within ±1 %
    # (media30-energy −0.4 % before the one-event links of 2026-11-29, −0.6 % after)
    **{
        f"f4-{c}": (P.NOT_REPRODUCED, -1, 1)
        for c in (
            "long30-fct",
            "long30-energy",
            "media30-fct",
            "media30-energy",
            "long30-fct-reles",
            "long30-energy-reles",
            "media30-fct-reles",
            "media30-energy-reles",
        )
    },  # fmt: skip
    "f4-emptcp-worse": (P.REPRODUCED, 50, 65),
    "single-emptcp-rr": (P.NOT_REPRODUCED, 0, 0),
    # Fig. 5 (3 WLAN + LTE): within 1 % of Round-Robin and ReLeS
    **{
        f"f5-{m}-{b}": (P.NOT_REPRODUCED, -1, 1) for m in ("fct", "energy") for b in ("rr", "reles")
    },
    # Fig. 6: only eMPTCP's FCT is beaten; Round-Robin, DMPTCP, ReLeS give the same runs
    "f6-loss-fct-upto": (P.PARTLY, 20, 40),
    "f6-loss-energy-upto": (P.PARTLY, 0, 0.1),
    "f6-loss-fct-emptcp": (P.REPRODUCED, 20, 40),
    "f6-cut-fct-emptcp": (P.REPRODUCED, 8, 20),
    "f6-loss-energy-emptcp": (P.NOT_REPRODUCED, -60, -10),  # eMPTCP: fewer bytes in 150 s
    "f6-cut-energy-emptcp": (P.NOT_REPRODUCED, 0, 8),
    "f6-loss-energy-roundrobin": (P.PARTLY, 0, 0.1),  # +0.02 %: negligible
    "f6-loss-energy-reles": (P.PARTLY, 0, 0.1),
    **{
        f"f6-loss-{m}-{b}": (P.NOT_REPRODUCED, -0.1, 0.1)
        for m, b in (
            ("fct", "roundrobin"),
            ("fct", "dmptcp"),
            ("fct", "reles"),
            ("energy", "dmptcp"),
        )
    },  # fmt: skip
    **{
        f"f6-cut-{m}-{b}": (P.NOT_REPRODUCED, 0, 0)
        for m in ("fct", "energy")
        for b in ("roundrobin", "dmptcp", "reles")
    },  # fmt: skip
    # beyond the paper: redundant wins with short flows, Linux minRTT in Fig. 6; MPTCP-RL beats
    # redundant, ECF and Peekaboo with bulk flows
    "f3-fct-beyond-redundant": (P.NOT_REPRODUCED, -90, -60),
    "f3-fct-beyond-minrtt": (P.NOT_REPRODUCED, -10, -5),
    "f3-fct-beyond-ecf": (P.NOT_REPRODUCED, -2, 3),
    "f5-fct-beyond-redundant": (P.REPRODUCED, 40, 55),
    "f5-fct-beyond-minrtt": (P.NOT_REPRODUCED, -1, 1),
    "f5-fct-beyond-ecf": (P.REPRODUCED, 1, 5),
    "f6-loss-fct-beyond-minrtt": (P.NOT_REPRODUCED, -4, -0.5),
    "f6-loss-fct-beyond-minrtt-norp": (P.NOT_REPRODUCED, -0.1, 0.1),
    "f6-loss-fct-beyond-blest": (P.NOT_REPRODUCED, -2, 1),
    "f6-loss-fct-beyond-ecf": (P.REPRODUCED, 25, 45),
    "f6-loss-fct-beyond-redundant": (P.REPRODUCED, 1, 6),
    "f6-cut-fct-beyond-minrtt": (P.NOT_REPRODUCED, -8, 2),
    "f6-cut-fct-beyond-redundant": (P.NOT_REPRODUCED, -3, 6),
    "f6-loss-energy-beyond-peekaboo": (P.NOT_REPRODUCED, -200, -50),  # Peekaboo: unfinished
}


@pytest.mark.parametrize("cid", sorted(PINNED))
def test_pinned_results(cid):
    P.check_pinned(P.load_committed(COMMITTED)[0], cid, PINNED[cid])


def test_pinned_cover_every_claim_against_a_named_baseline():
    """Every claim of MPTCP-RL against one of the paper's baselines (and the "up to" claims)
    is pinned."""
    named = [
        s.id for s in mptcp_rl_claims.specs()
        if s.a == "mptcp-rl" and s.b in (*mptcp_rl_runs.PAPER_BASELINES, "worst")
    ]  # fmt: skip
    assert named and not [c for c in named if c not in PINNED]
