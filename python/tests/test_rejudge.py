"""The committed reproductions follow the current verdict rule, and ``rejudge`` rewrites a
reproduction's tables by it without touching a number."""

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from mpsched.reproduce import protocol as P
from mpsched.reproduce import rejudge

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = sorted(p for p in (ROOT / "docs" / "reproductions").iterdir() if p.is_dir())


@pytest.mark.parametrize("directory", COMMITTED, ids=[p.name for p in COMMITTED])
def test_committed_verdicts_are_the_current_rules(directory):
    claims, _ = P.load_committed(directory)
    for c in claims.values():
        if c.verdict == P.NOT_MEASURED:
            continue
        again = P.judge(replace(c))
        assert (again.verdict, again.reason) == (c.verdict, c.reason), c.id


def test_rejudge_restores_verdicts_and_keeps_numbers(tmp_path):
    src = ROOT / "docs" / "reproductions" / "mptcp-rl"
    d = tmp_path / "r"
    d.mkdir()
    for name in ("claims.md", "claims.json", "claims-short.md"):
        shutil.copy(src / name, d / name)
    doc = json.loads((d / "claims.json").read_text(encoding="utf-8"))
    target = next(c for c in doc["claims"] if c["id"] == "f6-loss-energy-roundrobin")
    assert target["verdict"] == P.PARTLY and 0 < target["gain"][0] < P.NEGLIGIBLE_GAIN
    target["verdict"], target["reason"] = P.REPRODUCED, "an older rule"
    (d / "claims.json").write_text(json.dumps(doc), encoding="utf-8")
    counts = rejudge.rejudge(d)
    claims = P.check_committed_tables(d)
    assert claims["f6-loss-energy-roundrobin"].verdict == P.PARTLY
    assert "negligible" in claims["f6-loss-energy-roundrobin"].reason
    original, _ = P.load_committed(src)
    assert {k: (c.gain, c.ours_a, c.ours_b) for k, c in claims.items()} == {
        k: (c.gain, c.ours_a, c.ours_b) for k, c in original.items()
    }
    assert counts == json.loads((src / "claims.json").read_text(encoding="utf-8"))["verdicts"]
    assert (d / "claims.md").read_text(encoding="utf-8") == (src / "claims.md").read_text(
        encoding="utf-8"
    )


def test_rejudge_refuses_a_directory_without_claims(tmp_path, capsys):
    assert rejudge.main([str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert str(tmp_path) in err and "claims.json" in err and err.count("\n") == 1
