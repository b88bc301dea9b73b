"""``mpsched reproduce olms --sensitivity``: the settings edit what they say, on cases and regimes
that exist (the sweep itself is a long command; docs/reproductions/olms/sensitivity.md)."""

from mpsched.reproduce import _common
from mpsched.reproduce import olms_runs as runs
from mpsched.reproduce import olms_sensitivity as sens


def _scenario(case: str, regime: str):
    return runs.variant_scenario(
        runs.cases_by_name()[case], regime, "olms", _common.default_scenario_dir("olms-app1.toml")
    )


def test_every_setting_names_a_regime_and_cases_that_exist():
    names = set(runs.case_names())
    for name, regime, _edit, what, cases in sens.SETTINGS:
        assert regime in runs.REGIMES, name
        assert cases and set(cases) <= names, name
        assert regime in what, name


def test_no_jitter_removes_app1s_5_ms_jitter_and_nothing_else():
    edit = {s[0]: s[2] for s in sens.SETTINGS}["no-jitter-noloss"]
    sc = _scenario("app1", "noloss")
    assert [p.get("jitter_ms") for p in sc["paths"]] == [5, 5, 5, 5]
    before = [{k: v for k, v in p.items() if k != "jitter_ms"} for p in sc["paths"]]
    edit(sc)
    assert [p.get("jitter_ms") for p in sc["paths"]] == [None] * 4
    assert sc["paths"] == before


def test_the_jitter_settings_rerun_app1_only_the_dumbbell_has_none():
    assert not any("jitter_ms" in p for p in _scenario("dumbbell", "loss")["paths"])
    by = {s[0]: s[4] for s in sens.SETTINGS}
    assert by["no-jitter-loss"] == by["no-jitter-noloss"] == ("app1",)


def test_docs_flip_counts_are_the_committed_sweeps():
    """docs/olms.md's counts of flipped verdicts per setting are those of the committed sweep
    (docs/reproductions/olms/sensitivity.json) against the committed claims table."""
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    committed = root / "docs" / "reproductions" / "olms"
    main = {
        c["id"]: c["verdict"] for c in json.loads((committed / "claims.json").read_text())["claims"]
    }
    doc = json.loads((committed / "sensitivity.json").read_text())
    counts = {}
    for name in doc["settings"]:
        cells = [by[name] for by in doc["claims"].values() if name in by]
        flips = sum(
            1
            for cid, by in doc["claims"].items()
            if name in by and by[name].split(" (")[0] != main[cid]
        )
        counts[name] = (flips, len(cells))
    assert counts["queue-1000pkt"] == (17, 34)
    assert counts["loss-0.1x"] == (5, 34)
    assert counts["no-jitter-loss"] == (0, 28) and counts["no-jitter-noloss"] == (8, 28)
    text = " ".join((root / "docs" / "olms.md").read_text().split())
    for quoted in ("17 of its 34 verdicts flip", "five verdicts flip", "none of 28 verdicts flips"):
        assert quoted in text, quoted
    assert "without loss 8 of 28" in text
