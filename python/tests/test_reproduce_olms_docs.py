"""The committed OLMS claims table (docs/reproductions/olms/, written by `mpsched reproduce olms`
on the held-out seeds) and the documents that quote it; the pinned acceptance results."""

import json
import re
from pathlib import Path

import pytest

from mpsched.reproduce import olms_claims as C
from mpsched.reproduce import protocol as P

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "docs" / "reproductions" / "olms"


# --- the committed claims table and the docs that quote it ---------------------------------


def _committed():
    return P.load_committed(COMMITTED)


def test_committed_claims_md_and_json_agree():
    claims = P.check_committed_tables(COMMITTED)
    assert list(claims) == [s.id for s in C.specs()]
    for c in claims.values():
        for side in (c.ours_a, c.ours_b):
            assert side is None or side.n in (0, 20) or c.extra["metric_key"] == "fct_s"


def _olms_sections():
    """The OLMS text of each document: docs/olms.md, BENCHMARKS.md's OLMS reproduction section,
    the README's reproduction paragraph."""
    bench = (ROOT / "BENCHMARKS.md").read_text(encoding="utf-8")
    bench = bench.split("### OLMS reproduction", 1)[1].split("\n## ", 1)[0]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    return {
        "docs/olms.md": (ROOT / "docs" / "olms.md").read_text(encoding="utf-8"),
        "BENCHMARKS.md": bench,
        "README.md": readme,
    }


def test_docs_quote_the_committed_table():
    """docs/olms.md holds claims-short.md verbatim; it, the README and BENCHMARKS.md quote the
    verdict counts of claims.json; no document calls the model faithful or keeps the old
    seeds-1-5 table."""
    claims, _ = _committed()
    sections = _olms_sections()
    assert (COMMITTED / "claims-short.md").read_text(encoding="utf-8") in sections["docs/olms.md"]
    n = {
        v: sum(c.verdict == v for c in claims.values())
        for v in (P.REPRODUCED, P.PARTLY, P.NOT_REPRODUCED, P.NOT_MEASURED)
    }
    line = (
        f"{n[P.REPRODUCED]} of {len(claims)} OLMS claims reproduced, {n[P.PARTLY]} partly, "
        f"{n[P.NOT_REPRODUCED]} not, {n[P.NOT_MEASURED]} not measured"
    )
    for name, text in sections.items():
        assert line in text, name
        assert "faithful model" not in text and "seeds 1–5" not in text, name


def test_docs_numbers_are_the_claims_tables():
    """Every 'x ± y %' the OLMS docs quote is a cell of claims-short.md."""
    short = (COMMITTED / "claims-short.md").read_text(encoding="utf-8")
    cells = set(re.findall(r"[+-]\d+\.\d ± \d+\.\d %", short))
    for name, text in _olms_sections().items():
        for said in re.findall(r"[+-]\d+\.\d ± \d+\.\d %", text.replace(short, "")):
            assert said in cells, (name, said)


#: The measured result of the headline claims, pinned (verdict, and the range of our mean gain
#: in percent). Where OLMS beats a baseline as the paper says, the verdict is *reproduced*;
#: where it does not (OLMS with the paper's fallback rule sends as minRTT, RR and BLEST do:
#: gain exactly 0 at the paper's loss rates), the honest result is pinned so that a change that
#: moves it is noticed. The App I pins without loss were updated from the run with the paper's
#: 5 ms jitter (before it: ECF +12.4 %, Peekaboo +18.9 %, minRTT / RR exactly 0), and again
#: from the full re-run on the calibrated linux profile (2026-11-27: the kernel's RTO, RTT
#: sampling and CUBIC rules; before it: ECF -13.1 %, Peekaboo +3.1 %, Linux minRTT about 0,
#: dumbbell FCT against ECF +8.4 % reproduced), and again from the re-run with the linux
#: profile's DSS option and receive-buffer share (2026-11-28: before it, without loss, RR
#: +0.0 %, Linux minRTT -3.3 %, Peekaboo +13.4 % not reproduced; now +2.0 %, +2.1 % and
#: +40.1 % reproduced), and again with per-subflow TCP windows (2026-11-28: without loss, minRTT
#: -1.2 % (was +2.0 %), Peekaboo +32.9 %).
PINNED = {
    **{f"loss-app1-sel-{b}": (P.NOT_REPRODUCED, 0, 0) for b in ("minrtt-norp", "rr")},
    # Linux minRTT: its opportunistic retransmission moves a few segments (≤ 0.1 %)
    "loss-app1-sel-minrtt": (P.NOT_REPRODUCED, -0.1, 0.1),
    # with the jitter, no loss: within a few % of minRTT, RR and ECF; ahead of Peekaboo
    "noloss-app1-sel-minrtt-norp": (P.NOT_REPRODUCED, -3, 3),
    "noloss-app1-sel-rr": (P.NOT_REPRODUCED, 0, 4),
    "noloss-app1-sel-minrtt": (P.NOT_REPRODUCED, 0, 5),
    "loss-app1-regret-minrtt-norp": (P.NOT_REPRODUCED, 0, 0),
    "noloss-app1-sel-ecf": (P.NOT_REPRODUCED, -5, 8),
    "noloss-app1-sel-peekaboo": (P.REPRODUCED, 25, 55),
    "noloss-app2-violation-minrtt-norp": (P.NOT_REPRODUCED, 0, 0),
    "noloss-app2-violation-ecf": (P.REPRODUCED, 40, 70),
    "noloss-app2-violation-peekaboo": (P.REPRODUCED, 40, 70),
    "noloss-app2-regret-ecf": (P.NOT_REPRODUCED, -5000, -100),  # ECF: far less regret
    "loss-dumbbell-fct-minrtt-norp": (P.NOT_REPRODUCED, 0, 0),
    "loss-dumbbell-fct-ecf": (P.NOT_REPRODUCED, -5, 5),
    "loss-dumbbell-fct-peekaboo": (P.REPRODUCED, 2, 25),
}  # fmt: skip


@pytest.mark.parametrize("cid", sorted(PINNED))
def test_pinned_results(cid):
    P.check_pinned(_committed()[0], cid, PINNED[cid])


def test_paper_olms_is_minrtt_per_seed():
    """The reason for the zeros above: per seed, OLMS's selected-path throughput in App I at the
    paper's loss rates is minRTT's (MPQUIC's, without opportunistic retransmission) to the last
    digit shown. (Without loss it was too before the 5 ms jitter; with it, +1.6 %.)"""
    claims, _ = _committed()
    for r in ("loss",):
        c = claims[f"{r}-app1-sel-minrtt-norp"]
        assert c.ours_a.n == c.ours_b.n == 20
        assert c.ours_a.mean == pytest.approx(c.ours_b.mean, rel=1e-12)


def test_keep_from_takes_only_the_cases_not_run_and_marks_changed_ones(tmp_path):
    """`--keep-from`: a (regime, case) complete in this output keeps its new claim; the others
    come from the previous reproduction, with "(before the jitter)" where the case is built on
    the App I scenario (whose jitter is newer than that run)."""
    from mpsched.reproduce import olms_keep as K

    def claim(cid, case, gain, verdict=P.REPRODUCED):
        extra = {"regime": "noloss", "case": case}
        return P.Claim(cid, "olms", "Fig. x", "q", "m", "gain", 5.0, "olms", "rr",
                       gain=(gain, 1.0), verdict=verdict, extra=extra)  # fmt: skip

    old = [claim("a", "app1", 9.0), claim("b", "app2", 8.0), claim("c", "dyn-bw", 7.0)]
    P.write_claims(old, tmp_path, title="t")
    results = {"noloss": {"app2": {"fct_s": {"olms": [1, 0, 20]}}, "app1": {"x": {}}}}
    (tmp_path / "results.json").write_text(json.dumps({"results": results}), encoding="utf-8")
    new = [claim("a", "app1", 1.0), *(claim(c, k, 0.0, P.NOT_MEASURED) for c, k in (("b", "app2"), ("c", "dyn-bw")))]  # fmt: skip
    table = {"noloss": {"app1": {"y": {}}}}
    got, merged = K.keep_previous(new, table, tmp_path, {("noloss", "app1")}, K.changed_cases())
    assert [(c.id, c.gain[0], c.where) for c in got] == [
        ("a", 1.0, "Fig. x"),
        ("b", 8.0, "Fig. x"),
        ("c", 7.0, "Fig. x" + K.STALE),
    ]
    assert merged == {"noloss": {"app1": {"y": {}}, "app2": results["noloss"]["app2"]}}
    assert {
        "app1",
        "size-5mb",
        "size-200mb",
        "size-1500mb",
        "dyn-bw",
        "dyn-rtt",
    } == K.changed_cases()
