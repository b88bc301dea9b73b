"""`mpsched reproduce drl-cc --sensitivity`: the settings' edits, the pipeline, bad input."""

from __future__ import annotations

import json

from mpsched.reproduce import drl_cc_runs as R
from mpsched.reproduce import drl_cc_sensitivity as S
from mpsched.reproduce import protocol as P

SCENARIOS = R._common.default_scenario_dir("drl-cc-scenario-1.toml")


def _setting(name: str) -> S.Setting:
    return next(s for s in S.SETTINGS if s.name == name)


def test_queue_setting_gives_every_link_netems_1000_packets():
    for name in R.SCENARIOS:
        sc = R.scenario_copy(name, SCENARIOS, False)
        _setting("queue-1000pkt").edit(name, sc)
        assert all(p["queue_packets"] == 1000 and "queue_bytes" not in p for p in sc["paths"])


def test_loss_settings_touch_only_scenario_8_links():
    sc = R.scenario_copy("drl-cc-scenario-8", SCENARIOS, False)
    assert all("loss" not in p for p in sc["paths"])  # the main run: no random loss
    _setting("s8-loss-1pct").edit("drl-cc-scenario-8", sc)
    assert [p["loss"] for p in sc["paths"]] == [{"model": "bernoulli", "p": 0.01}] * 2
    assert _setting("s8-loss-0.1pct").scenarios == ("drl-cc-scenario-8",)


def test_quick_sweep_writes_verdicts_per_setting(tmp_path):
    """Two cheap settings through the CLI (2 seeds, 20 s): the scenario copies carry the
    setting, the table has a row per claim of the re-run scenarios with a verdict from the rule,
    the flips count against the reference."""
    from typer.testing import CliRunner

    from mpsched.cli import app

    out = tmp_path / "s"
    args = ["reproduce", "drl-cc", "--quick", "--sensitivity", "--settings"]
    res = CliRunner().invoke(app, [*args, "s7-tcp-cubic,s8-loss-1pct", "--out", str(out)])
    assert res.exit_code == 0, res.output
    sc7 = json.loads(
        (out / "sensitivity/s7-tcp-cubic/scenarios/drl-cc-scenario-7-lia.json").read_text()
    )
    assert {f["cc"] for f in sc7["flows"] if "paths" not in f} == {"cubic"}
    sc8 = json.loads(
        (out / "sensitivity/s8-loss-1pct/scenarios/drl-cc-scenario-8.json").read_text()
    )
    assert {p["loss"]["p"] for p in sc8["paths"]} == {0.01}
    doc = json.loads((out / "sensitivity.json").read_text())
    assert doc["quick"] and doc["seeds"] == [1001, 1002]
    assert list(doc["settings"]) == ["s7-tcp-cubic", "s8-loss-1pct"]
    s7 = [c for c in doc["claims"] if "s7-tcp-cubic" in doc["claims"][c]]
    s8 = [c for c in doc["claims"] if "s8-loss-1pct" in doc["claims"][c]]
    assert s7 and all(c.startswith("s7-") for c in s7)
    assert s8 and all(c.startswith("s8-") for c in s8)
    verdicts = (P.REPRODUCED, P.PARTLY, P.NOT_REPRODUCED, P.NOT_MEASURED)
    for c in s7 + s8:
        row = doc["claims"][c]
        assert row["reference"] in verdicts  # the committed reproduction's
        cell = row.get("s7-tcp-cubic") or row["s8-loss-1pct"]
        assert cell.split(" (")[0] in verdicts
    for name, s in doc["settings"].items():
        cells = [doc["claims"][c][name] for c in doc["claims"] if name in doc["claims"][c]]
        flips = sum(1 for c in doc["claims"] if name in doc["claims"][c]
                    and doc["claims"][c][name].split(" (")[0] != doc["claims"][c]["reference"])  # fmt: skip
        assert s["claims"] == len(cells) and s["flips"] == flips
    md = (out / "sensitivity.md").read_text()
    assert "QUICK RUN" in md and "| `s8-loss-1pct` |" in md


def test_unknown_setting_is_bad_input(tmp_path):
    from typer.testing import CliRunner

    from mpsched.cli import app
    from mpsched.cli.errors import EXIT_BAD_INPUT

    res = CliRunner().invoke(
        app, ["reproduce", "drl-cc", "--settings", "nope", "--out", str(tmp_path / "x")]
    )
    assert res.exit_code == EXIT_BAD_INPUT
    assert "--settings" in res.output and "queue-1000pkt" in res.output
    assert not (tmp_path / "x").exists()
