"""`mpsched reproduce mptcp-rl --sensitivity` (reproduce/mptcp_rl_sensitivity.py): each setting
changes exactly the scenario fields it names, the quick pipeline writes both files, bad
`--settings` is bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, Tuple

import pytest

from mpsched.reproduce import mptcp_rl_runs as R
from mpsched.reproduce import mptcp_rl_sensitivity as S
from mpsched.reproduce import protocol as P

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
VERDICTS = (P.REPRODUCED, P.PARTLY, P.NOT_REPRODUCED, P.NOT_MEASURED)
LOSS_1_5 = {"model": "bernoulli", "p": {"range": [0.01, 0.05], "dist": "loguniform"}}


def _leaves(x: Any, key: Tuple = ()) -> Dict[Tuple, Any]:
    """Every leaf of a scenario, by its key path (list entries by index)."""
    if isinstance(x, dict):
        return {k: v for name, y in x.items() for k, v in _leaves(y, (*key, name)).items()}
    if isinstance(x, list):
        return {k: v for i, y in enumerate(x) for k, v in _leaves(y, (*key, i)).items()}
    return {key: x}


def _edit(name: str):
    return next(s for s in S.SETTINGS if s.name == name).edit


def _changes(figure: str, setting: str) -> Tuple[Dict[str, Any], Dict[Tuple, Tuple[Any, Any]]]:
    """The main run's copy of ``figure`` and what the setting changes in it: {leaf: (old, new)}
    (None: absent)."""
    main = R.figure_scenario(figure, SCENARIOS, False)
    a = _leaves(main)
    b = _leaves(R.figure_scenario(figure, SCENARIOS, False, _edit(setting)))
    return main, {k: (a.get(k), b.get(k)) for k in set(a) | set(b) if a.get(k) != b.get(k)}


def _conn_key(sc: Dict[str, Any], i: int) -> Tuple:
    n = len(sc.get("workloads", []))
    return ("workloads", i) if i < n else ("flows", i - n)


@pytest.mark.parametrize("figure", R.FIGURES)
def test_wlan_loss_settings_change_only_the_wlan_paths_initial_loss(figure):
    main, none = _changes(figure, "wlan-loss-0")
    wifi = [i for i, p in enumerate(main["paths"]) if p["interface"] == "wifi"]
    assert wifi and all(main["paths"][i]["loss"]["p"]["range"] == [0.001, 0.01] for i in wifi)
    assert none == {
        ("paths", i, *k): (v, None)
        for i in wifi
        for k, v in _leaves(main["paths"][i]["loss"], ("loss",)).items()
    }
    _, high = _changes(figure, "wlan-loss-1-5pct")
    assert high == {
        ("paths", i, "loss", "p", "range", j): (r, [0.01, 0.05][j])
        for i in wifi
        for j, r in enumerate(main["paths"][i]["loss"]["p"]["range"])
    }
    if figure == "fig6-loss":  # the paper's stated 8 % from 10 s on stays
        after = R.figure_scenario(figure, SCENARIOS, False, _edit("wlan-loss-0"))
        assert after["paths"][0]["schedule"] == main["paths"][0]["schedule"]
        assert after["paths"][0]["schedule"][0]["loss"]["p"] == 0.08
        assert "loss" not in after["paths"][0]
    sc = R.figure_scenario(figure, SCENARIOS, False, _edit("wlan-loss-1-5pct"))
    assert [p["loss"] for p in sc["paths"] if p["interface"] == "wifi"] == [LOSS_1_5] * len(wifi)


@pytest.mark.parametrize("figure", R.FIGURES)
def test_queue_rcvbuf_and_cc_settings_change_only_their_field(figure):
    main, queue = _changes(figure, "queue-100pkt")
    assert all("queue_bytes" not in p and "queue_packets" not in p for p in main["paths"])
    assert queue == {("paths", i, "queue_packets"): (None, 100) for i in range(len(main["paths"]))}
    conns = list(S.connections(main))
    assert conns and all("rcv_buf_bytes" not in c and c["cc"] == "lia" for c in conns)
    _, buf = _changes(figure, "rcvbuf-128k")
    assert buf == {(*_conn_key(main, i), "rcv_buf_bytes"): (None, 131_072) for i in range(len(conns))}  # fmt: skip
    _, cc = _changes(figure, "cc-olia")
    assert cc == {(*_conn_key(main, i), "cc"): ("lia", "olia") for i in range(len(conns))}


def test_quick_sweep_writes_both_files(tmp_path):
    """Two settings, the single 10 kB flow, 2 seeds, through the CLI: the scenario copies carry
    the setting; sensitivity.json has a row per claim of the figure with a verdict by the rule
    per setting, the flips counted against the reference; sensitivity.md says the same."""
    from typer.testing import CliRunner

    from mpsched.cli import app

    out = tmp_path / "s"
    argv = ["reproduce", "mptcp-rl", "--quick", "--sensitivity", "--figures", "single"]
    res = CliRunner().invoke(app, [*argv, "--settings", "rcvbuf-128k,wlan-loss-0", "--out", str(out)])  # fmt: skip
    assert res.exit_code == 0, res.output
    copy = lambda s: json.loads((out / f"sensitivity/{s}/scenarios/single.json").read_text())  # noqa: E731
    assert copy("rcvbuf-128k")["workloads"][0]["rcv_buf_bytes"] == 131_072
    assert all("loss" not in p for p in copy("wlan-loss-0")["paths"])
    for s in ("rcvbuf-128k", "wlan-loss-0"):
        for sched in R.SCHEDULERS:
            assert len(list((out / f"sensitivity/{s}/runs/single/{sched}/runs").glob("*/summary.json"))) == 2  # fmt: skip
    doc = json.loads((out / "sensitivity.json").read_text())
    assert doc["quick"] and doc["seeds"] == [1001, 1002] and doc["figures"] == ["single"]
    assert doc["reference"] == "the committed reproduction"
    assert list(doc["settings"]) == ["wlan-loss-0", "rcvbuf-128k"]  # the module's order
    assert list(doc["claims"]) == ["single-emptcp-rr", "single-emptcp-level", "single-rr-level"]
    assert [d["value"] for d in doc["not_swept"]] == [v for v, _ in S.NOT_SWEPT]
    committed = json.loads((Path(S.__file__).parents[3] / "docs/reproductions/mptcp-rl/claims.json").read_text())  # fmt: skip
    reference = {c["id"]: c["verdict"] for c in committed["claims"]}
    for name, s in doc["settings"].items():
        assert s["claims"] == 3 and s["runs_new"] == 2 * len(R.SCHEDULERS)
        assert sum(s["verdicts"].values()) == 3 and set(s["verdicts"]) <= set(VERDICTS)
        flipped = [c for c, row in doc["claims"].items() if row[name].split(" (")[0] != reference[c]]  # fmt: skip
        assert s["flipped"] == flipped and s["flips"] == len(flipped)
    for cid, row in doc["claims"].items():
        assert row["reference"] == reference[cid]
        assert all(row[n].split(" (")[0] in VERDICTS for n in doc["settings"])
    md = (out / "sensitivity.md").read_text()
    assert "QUICK RUN" in md and "Not swept:" in md
    assert "| `wlan-loss-0` |" in md and "| `rcvbuf-128k` |" in md
    rows = [ln for ln in md.splitlines() if ln.startswith("| single-")]
    assert [r.split(" | ")[0][2:] for r in rows] == list(doc["claims"])
    assert "NOT the sensitivity sweep" in res.output


@pytest.mark.parametrize("value", ["nope", "wlan-loss-0,queue", ","])
def test_unknown_setting_is_bad_input(tmp_path, value):
    from typer.testing import CliRunner

    from mpsched.cli import app
    from mpsched.cli.errors import EXIT_BAD_INPUT

    argv = ["reproduce", "mptcp-rl", "--sensitivity", "--settings", value]
    res = CliRunner().invoke(app, [*argv, "--out", str(tmp_path / "x")])
    assert res.exit_code == EXIT_BAD_INPUT
    (line,) = res.output.strip().splitlines()
    assert line.startswith("error: --settings: ") and all(n in line for n in S.NAMES)
    assert not (tmp_path / "x").exists()
