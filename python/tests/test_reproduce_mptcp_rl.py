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
