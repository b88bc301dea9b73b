"""`mpsched reproduce edar --sensitivity` (issue 20): the edits of the swept parameters, the
pipeline in quick mode, bad input, and the committed full-seed sweep the docs quote."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mpsched.matrix import load_scenario
from mpsched.reproduce import edar as E
from mpsched.reproduce import edar_claims as C
from mpsched.reproduce import edar_sensitivity as S
from mpsched.reproduce import protocol as P

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "docs" / "reproductions" / "edar"


def _scenario(stem):
    return load_scenario(E.default_scenario_dir() / f"{stem}.toml")


def _ramp(sc):
    return [
        (e["at_s"], e.get("delay_ms"), e.get("loss", {}).get("p"), e.get("outage"))
        for e in sc["paths"][1]["schedule"]
    ]


def test_ramp_length_scales_the_steps_after_t1_and_keeps_t2():
    sc = _scenario("edar-handoff")
    S._ramp_length("edar-handoff", sc, 2.0)
    times = [t for t, *_ in _ramp(sc)]
    assert times == [20, 26, 32, 36, 40, 60, 66, 72, 76, 80]
    sc = _scenario("edar-handoff")
    S._ramp_length("edar-handoff", sc, 0.5)
    assert [t for t, *_ in _ramp(sc)] == [20, 21.5, 23, 24, 40, 60, 61.5, 63, 64, 80]


def test_ramp_depth_scales_loss_and_added_delay_not_the_return():
    sc = _scenario("edar-handoff")
    S._ramp_depth("edar-handoff", sc, 2.0)
    first = _ramp(sc)[:5]
    assert first == [
        (20, 70, 0.02, None),
        (23, 100, 0.1, None),
        (26, 150, 0.4, None),
        (28, None, None, True),
        (40, 50, 0.001, False),  # t2: back to the initial state
    ]


def test_settings_edits_touch_only_the_settings_handoff_process():
    sc = _scenario("edar-setting-2")
    S._handoff_rate("edar-setting-2", sc, 0.5)
    S._handoff_duration("edar-setting-2", sc, 2.0)
    h = sc["handoffs"][0]
    assert (h["rate_per_min"], h["duration_s"], h["outage_s"]) == (1.5, [20, 60], 4)
    sc, before = _scenario("edar-handoff"), _scenario("edar-handoff")
    S._handoff_rate("edar-handoff", sc, 2.0)
    S._ramp_length("edar-setting-1", sc, 2.0)  # the ramp edit only applies to the handoff case
    assert sc == before


def test_params_are_typed_and_name_known_groups():
    assert len(S.BY_NAME) == len(S.PARAMS)
    for p in S.PARAMS:
        assert p.kind in ("scenario", "adapt") and set(p.groups) <= set(E.runs.GROUPS)
        assert (p.edit is None) == (p.kind == "adapt") and (p.adapt is None) == (p.kind == "scenario")  # fmt: skip
        assert len(p.values) == 2
    assert S._epsilon(0.2) == (E.runs.ADAPT_STEPS, {"epsilon": 0.2})


def test_reference_values_leave_out_edar_o_and_other_seeds():
    claims, _ = P.load_committed(COMMITTED)
    values = S.reference_values(claims, (1001, 1002))
    assert values and all("edar-o" not in by for by in values.values())
    assert {s for by in values.values() for v in by.values() for s in v} == {1001, 1002}
    ho = values[("edar-handoff", None, "handoff_goodput")]
    assert ho["minrtt-norp"][1001] == claims["ho-gain-edar-p-handoff"].extra["per_seed"]["minrtt-norp"]["1001"]  # fmt: skip


def test_quick_sensitivity_end_to_end(tmp_path):
    """`--sensitivity --quick` for one scenario and one EdAR-o parameter: every value's claims
    are the affected ones, and the tables agree with result.json."""
    pytest.importorskip("torch")
    pytest.importorskip("matplotlib")
    from typer.testing import CliRunner

    from mpsched.cli import app

    out = tmp_path / "s"
    args = ["reproduce", "edar", "--sensitivity", "--quick", "--params", "handoff-ramp-length,epsilon"]  # fmt: skip
    res = CliRunner().invoke(app, [*args, "--out", str(out), "-j", "1"])
    assert res.exit_code == 0, res.output
    assert "NOT the sensitivity sweep" in res.output
    doc = json.loads((out / "sensitivity.json").read_text(encoding="utf-8"))
    assert doc["quick"] and doc["seeds"] == list(E.QUICK_SEEDS)
    assert list(doc["values"]) == ["handoff-ramp-length ×0.5", "handoff-ramp-length ×2", "epsilon 0.05", "epsilon 0.2"]  # fmt: skip
    cases = {s.id: s for s in C.specs()}
    ramp = {cid for cid, by in doc["claims"].items() if "handoff-ramp-length ×2" in by}
    assert ramp == {s.id for s in cases.values() if s.case in ("edar-handoff", "edar-motivation")}  # fmt: skip
    eps = {cid for cid, by in doc["claims"].items() if "epsilon 0.2" in by}
    assert eps == {s.id for s in cases.values() if "edar-o" in (s.a, s.b) and s.case != "edar-motivation"}  # fmt: skip
    r = json.loads((out / "sensitivity" / "epsilon" / "0.2" / "result.json").read_text(encoding="utf-8"))  # fmt: skip
    assert (r["adapt_steps"], r["adapt_args"]) == (40, {"epsilon": 0.2, "online_iterations": 2})
    assert (out / "sensitivity.md").read_text(encoding="utf-8") == "\n".join(S._markdown(doc)) + "\n"  # fmt: skip


def test_unknown_param_is_bad_input(tmp_path):
    from typer.testing import CliRunner

    from mpsched.cli import app
    from mpsched.cli.errors import EXIT_BAD_INPUT

    res = CliRunner().invoke(
        app, ["reproduce", "edar", "--sensitivity", "--params", "nope", "--out", str(tmp_path)]
    )
    assert res.exit_code == EXIT_BAD_INPUT
    assert "--params" in res.output and len(res.output.strip().splitlines()) == 1
    assert not (tmp_path / "sensitivity.md").exists()


# --- the committed sweep and the docs that quote it ----------------------------------------


def _committed_sweep():
    return json.loads((COMMITTED / "sensitivity.json").read_text(encoding="utf-8"))


def test_committed_sweep_is_the_full_seed_run():
    doc = _committed_sweep()
    assert doc["seeds"] == list(P.HELD_OUT) and not doc["quick"]
    claims, _ = P.load_committed(COMMITTED)
    assert doc["values"], "no value measured"
    for col, s in doc["values"].items():
        cells = {cid: by[col] for cid, by in doc["claims"].items() if col in by}
        assert len(cells) == s["claims"] > 0
        flips = [cid for cid, c in cells.items() if c[0] != claims[cid].verdict]
        assert sorted(flips) == sorted(s["flipped"]) and len(flips) == s["flips"]
    md = (COMMITTED / "sensitivity.md").read_text(encoding="utf-8")
    assert md == "\n".join(S._markdown(doc)) + "\n"


def test_docs_quote_the_committed_sweep():
    """docs/edar.md's "Sensitivity" section gives every measured value's flips and claims."""
    text = (ROOT / "docs" / "edar.md").read_text(encoding="utf-8")
    section = text.split("### Sensitivity", 1)[1].split("\n### ", 1)[0]
    for s in _committed_sweep()["values"].values():
        assert f"| {s['param']} | {s['value']} | {s['flips']} of {s['claims']} |" in section, s
    for p in S.PARAMS:
        assert f"`{p.name}`" in section, p.name
