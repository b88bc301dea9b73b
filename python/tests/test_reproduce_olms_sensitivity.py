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
