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
    (line,) = res.output.strip().splitlines()  # one line, whatever the terminal's width
    assert line.startswith("error: --settings: ") and "queue-1000pkt" in line
    assert not (tmp_path / "x").exists()


def test_retraining_setting_runs_its_own_policy_against_the_main_baselines(tmp_path):
    """A setting with training arguments trains a policy with that value (quick: 200
    transitions), runs it as `drl-cc:PATH` in its own directory, and takes the baselines'
    runs from the main run in --out (run there when missing); a second call reuses both."""
    from rich.console import Console

    s = S.Setting("t", ("drl-cc-scenario-8",), "test", train=(("interval_ms", 200.0),))
    claims = S.run_setting(s, tmp_path, [1001], jobs=1, quick=True, console=Console(quiet=True))
    policy = json.loads((tmp_path / "sensitivity/t/policy/drl-cc.json").read_text())
    assert policy["obs"]["interval"] == 200.0
    assert "--interval-ms 200.0" in policy["train"]["command"]
    sc = json.loads((tmp_path / "sensitivity/t/scenarios/drl-cc-scenario-8.json").read_text())
    assert (tmp_path / "runs/drl-cc-scenario-8/flows.parquet").is_file()  # the main baselines
    import pyarrow.parquet as pq

    own = set(pq.read_table(tmp_path / "sensitivity/t/runs/drl-cc-scenario-8/flows.parquet").column("cc").to_pylist())  # fmt: skip
    main = set(pq.read_table(tmp_path / "runs/drl-cc-scenario-8/flows.parquet").column("cc").to_pylist())  # fmt: skip
    assert own == {f"drl-cc:{tmp_path / 'sensitivity/t/policy/drl-cc.json'}"}
    assert main == {c for c in R.CCS if c != "drl-cc"}
    assert sc["sim"]["name"] == "drl-cc-scenario-8"
    assert claims and all(c.id.startswith("s8-") for c in claims)
    assert all(c.ours_a.n == 1 and c.ours_b.n == 1 for c in claims)  # DRL-CC and a baseline
    again = S.run_setting(s, tmp_path, [1001], jobs=1, quick=True, console=Console(quiet=True))
    assert [(c.id, c.ours_a.mean, c.ours_b.mean) for c in again] == [
        (c.id, c.ours_a.mean, c.ours_b.mean) for c in claims
    ]
