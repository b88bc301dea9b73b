"""`mpsched reproduce pdaa3c --sensitivity` (reproduce/pdaa3c_sensitivity.py): each setting
changes exactly the scenario fields it names, the quick pipeline writes both files, bad
`--settings` is bad input, and the committed sweep (docs/reproductions/pdaa3c/sensitivity.*)
is judged against the committed claims and summarised in docs/pdaa3c.md."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, Tuple

import pytest

from mpsched.reproduce import pdaa3c as E
from mpsched.reproduce import pdaa3c_runs as R
from mpsched.reproduce import pdaa3c_sensitivity as S
from mpsched.reproduce import protocol as P

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "docs" / "reproductions" / "pdaa3c"
VERDICTS = (P.REPRODUCED, P.PARTLY, P.NOT_REPRODUCED, P.NOT_MEASURED)
NETWORK_CLAIMS = [s["id"] for s in E._claim_specs()]


def _leaves(x: Any, key: Tuple = ()) -> Dict[Tuple, Any]:
    if isinstance(x, dict):
        return {k: v for name, y in x.items() for k, v in _leaves(y, (*key, name)).items()}
    if isinstance(x, list):
        return {k: v for i, y in enumerate(x) for k, v in _leaves(y, (*key, i)).items()}
    return {key: x}


def _changes(name: str) -> Dict[Tuple, Tuple[Any, Any]]:
    """What setting ``name`` changes in the base setting's scenario copy: {leaf: (old, new)}."""
    from mpsched.matrix import load_scenario

    base = load_scenario(R._common.default_scenario_dir("pdaa3c.toml") / "pdaa3c.toml")
    setting = next(s for s, _, _ in S.SETTINGS if s.name == name)
    a = _leaves(R.scenario_copy(base, R.BASE, False))
    b = _leaves(R.scenario_copy(base, setting, False))
    return {k: (a.get(k), b.get(k)) for k in set(a) | set(b) if a.get(k) != b.get(k) and k != ("sim", "name")}  # fmt: skip


def test_new_settings_change_only_their_field():
    assert _changes("queue-100pkt") == {("paths", i, "queue_packets"): (None, 100) for i in (0, 1)}
    assert _changes("rcvbuf-128k") == {("flows", 0, "rcv_buf_bytes"): (None, 131_072)}
    assert _changes("delay-rtt") == {("paths", 0, "delay_ms"): (30, 15.0), ("paths", 1, "delay_ms"): (60, 30.0)}  # fmt: skip
    assert _changes("mss-1000") == {("flows", 0, "mss"): (None, 1000)}
    assert _changes("loss-1pct") == {("paths", i, "loss", "p"): (0.001, 0.01) for i in (0, 1)}


def test_settings_cover_the_main_runs_and_mss_sets_the_bound():
    main = [s.name for s in R.SETTINGS[1:]]
    assert list(S.NAMES[: len(main)]) == main  # the main run's, reused from its runs
    assert len(set(S.NAMES)) == len(S.NAMES) and R.BASE.name not in S.NAMES
    mss = next(s for s, _, _ in S.SETTINGS if s.name == "mss-1000")
    assert E.bound_mbps(mss) == pytest.approx(15 * 0.999 * 1000 / 1052)
    assert E.bound_mbps(R.BASE) == pytest.approx(15 * 0.999 * 1448 / 1500)


def test_quick_sweep_writes_both_files(tmp_path):
    """Two settings (one of the main run's, one new), 2 seeds, 5 s, through the CLI."""
    from typer.testing import CliRunner

    from mpsched.cli import app

    out = tmp_path / "s"
    argv = ["reproduce", "pdaa3c", "--quick", "--sensitivity", "--settings", "rcvbuf-128k,loss-0"]
    res = CliRunner().invoke(app, [*argv, "--out", str(out)])
    assert res.exit_code == 0, res.output
    copy = json.loads((out / "sensitivity/scenarios/pdaa3c-rcvbuf-128k.json").read_text())
    assert copy["flows"][0]["rcv_buf_bytes"] == 131_072
    assert all(p["loss"]["p"] == 0 for p in json.loads((out / "scenarios/pdaa3c-loss-0.json").read_text())["paths"])  # fmt: skip
    for d in ("sensitivity/runs/rcvbuf-128k", "runs/loss-0"):
        for sched in R.SCHEDULERS:
            assert len(list((out / d / "runs").glob(f"{sched}_seed*/summary.json"))) == 2, (
                d,
                sched,
            )
    doc = json.loads((out / "sensitivity.json").read_text())
    assert doc["quick"] and doc["seeds"] == [1001, 1002] and doc["reference"] == S.REFERENCE
    assert list(doc["settings"]) == ["loss-0", "rcvbuf-128k"]  # the module's order
    assert list(doc["claims"]) == NETWORK_CLAIMS
    assert [d["value"] for d in doc["not_swept"]] == [v for v, _ in S.NOT_SWEPT]
    _check_doc(doc, runs=2 * len(R.SCHEDULERS))
    md = (out / "sensitivity.md").read_text()
    assert "QUICK RUN" in md and "Not swept:" in md and "| `rcvbuf-128k` |" in md
    assert "NOT the sensitivity sweep" in res.output


def _check_doc(doc: Dict[str, Any], runs: int = 0) -> None:
    """Each setting judged every network claim by the rule; flips counted against the
    committed claims."""
    reference = {c["id"]: c["verdict"] for c in json.loads((COMMITTED / "claims.json").read_text())["claims"]}  # fmt: skip
    for name, s in doc["settings"].items():
        assert s["claims"] == len(NETWORK_CLAIMS) and sum(s["verdicts"].values()) == s["claims"]
        assert set(s["verdicts"]) <= set(VERDICTS) and set(s["bound_frac"]) == set(R.SCHEDULERS)
        if runs:
            assert s["runs_new"] + s["runs_reused"] == runs
        flipped = [c for c, row in doc["claims"].items() if row[name].split(" (")[0] != reference[c]]  # fmt: skip
        assert s["flipped"] == flipped and s["flips"] == len(flipped), name
    for cid, row in doc["claims"].items():
        assert row["reference"] == reference[cid]
        assert all(row[n].split(" (")[0] in VERDICTS for n in doc["settings"])


@pytest.mark.parametrize("value", ["nope", "rcvbuf-128k,queue", ","])
def test_unknown_setting_is_bad_input(tmp_path, value):
    from typer.testing import CliRunner

    from mpsched.cli import app
    from mpsched.cli.errors import EXIT_BAD_INPUT

    argv = ["reproduce", "pdaa3c", "--sensitivity", "--settings", value]
    res = CliRunner().invoke(app, [*argv, "--out", str(tmp_path / "x")])
    assert res.exit_code == EXIT_BAD_INPUT
    (line,) = res.output.strip().splitlines()
    assert line.startswith("error: --settings: ") and all(n in line for n in S.NAMES)
    assert not (tmp_path / "x").exists()


def test_committed_sweep_is_the_full_one_against_the_committed_claims():
    doc = json.loads((COMMITTED / "sensitivity.json").read_text(encoding="utf-8"))
    assert not doc["quick"] and doc["seeds"] == list(P.HELD_OUT)
    assert doc["reference"] == S.REFERENCE and list(doc["settings"]) == list(S.NAMES)
    assert list(doc["claims"]) == NETWORK_CLAIMS
    assert [d["value"] for d in doc["not_swept"]] == [v for v, _ in S.NOT_SWEPT]
    _check_doc(doc, runs=len(P.HELD_OUT) * len(R.SCHEDULERS))
    md = (COMMITTED / "sensitivity.md").read_text(encoding="utf-8")
    assert "QUICK RUN" not in md and all(f"| `{n}` |" in md for n in S.NAMES)


def test_docs_summarise_the_flips_per_setting():
    """docs/pdaa3c.md names each setting with its flip count and the flipped claims."""
    doc = json.loads((COMMITTED / "sensitivity.json").read_text(encoding="utf-8"))
    docs = (ROOT / "docs" / "pdaa3c.md").read_text(encoding="utf-8")
    for name, s in doc["settings"].items():
        flipped = ", ".join(s["flipped"]) or "—"
        assert f"| `{name}` | {s['flips']} | {flipped} |" in docs, name
