"""Every quantitative claim of DRL-CC's evaluation (Xu et al., JSAC 2019, ``drl-cc.txt``
§IV-B, Figs. 3-9), quoted, with what it compares; :mod:`mpsched.reproduce.drl_cc` fills in our
numbers and :func:`mpsched.reproduce.protocol.judge` the verdicts.

The paper lists its baselines as "LIA, BALIA, OLIA, wVegas" (§IV-A, Scenario 1) and gives
"respectively" four numbers in that order in every scenario; we read the numbers of Scenarios
2-6 and 8 in the same order. Figures without numbers give qualitative claims (``higher``,
``similar``, ``at_least``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Tuple

from .protocol import JAIN_CLOSE

#: The paper's baselines in the order of its "respectively" lists.
BASELINES = ("lia", "balia", "olia", "wvegas")
LABELS = {
    "drl-cc": "DRL-CC",
    "lia": "LIA",
    "balia": "BALIA",
    "olia": "OLIA",
    "wvegas": "wVegas",
    "cubic": "CUBIC (uncoupled)",
    "reno": "Reno (uncoupled)",
}

#: Metrics (see :mod:`mpsched.reproduce.drl_cc`): name → description in the claims table.
METRICS = {
    "doc_goodput": "per-flow goodput, document size / mean download time, mean over the 5 MPTCP flows (Mbit/s)",
    "total_goodput": "total goodput of the MPTCP flows, bytes delivered × 8 / run time (Mbit/s)",
    "flow_goodput": "per-flow goodput of the MPTCP flows, mean over them (Mbit/s)",
    "tcp_goodput": "per-flow goodput of the 5 single-path TCP flows (Reno), mean over them (Mbit/s)",
    "jain": "Jain's index over the MPTCP flows' goodputs",
    "after_goodput": "total goodput of the MPTCP flows over 100-200 s, after link2 went down at 60 s (Mbit/s)",
}


@dataclass(frozen=True)
class Spec:
    """A claim before measurement: which scenario, sweep point (index into the sorted sweep
    values, None without a sweep), metric and variants it needs."""

    id: str
    where: str
    quote: str
    scenario: int
    point: Optional[int]
    metric: str
    kind: str
    paper_value: Optional[float]
    a: str
    b: Optional[str] = None


def _gains(
    prefix: str, where: str, quote: str, scenario: int, point: Optional[int], metric: str,
    values: Tuple[float, float, float, float],
) -> List[Spec]:  # fmt: skip
    return [
        Spec(f"{prefix}-{b}", where, quote, scenario, point, metric, "gain", v, "drl-cc", b)
        for b, v in zip(BASELINES, values)
    ]


def _each(
    prefix: str, where: str, quote: str, scenario: int, point: Optional[int], metric: str,
    kind: str, baselines: Tuple[str, ...] = BASELINES,
) -> List[Spec]:  # fmt: skip
    return [
        Spec(f"{prefix}-{b}", where, quote, scenario, point, metric, kind, None, "drl-cc", b)
        for b in baselines
    ]


S1 = "Fig. 3a, Scenario 1"
Q1 = (
    "when the document size is 8M, DRL-CC outperforms LIA, BALIA, OLIA, wVegas by 313%, 279%, "
    "272%, 198% respectively"
)
Q1ALL = "DRL-CC significantly outperforms all the other methods in terms of goodput"
Q1FULL = (
    "There are 5 MPTCP flows and each of them obtains an average goodput of 3.2Mbps (if "
    "DRL-CC is used), which means that DRL-CC makes full use of all available bandwidth"
)
Q1JAIN = (
    "all the algorithms achieve very good fairness since the corresponding indices are all "
    "close to 1"
)
Q2 = "when the bandwidth is 8Mbps, DRL-CC leads to 325%, 280%, 269% and 181% improvements over the baselines respectively"
Q2LOW = "when the bandwidth is small (i.e. 2Mbps), the goodputs of all the methods are fairly low and almost the same"
Q2UP = "When the bandwidth is increased, DRL-CC leads to sharp improvements on goodput"
Q3 = "when the delay is 400ms, DRL-CC offers 656%, 473%, 489% and 382% improvements over the baselines respectively"
Q3LOW = (
    "when the delay is small (i.e. 50ms), the goodputs of all the methods are fairly high and close"
)
Q4 = "in the case of lossy links with a loss rate of 4%, DRL-CC outperforms these baselines by 468%, 456%, 409% and 319% respectively"
Q5 = "Compared to the baselines, DRL-CC can still achieve 382%, 351%, 336%, 257% improvements on total goodput"
Q6 = "DRL-CC outperforms those baselines by 193%, 178%, 186%, 204% respectively"
Q7FIG = "its total average goodput stabilizes at 8Mbps (maximum possible after the termination)"
Q7TCP = (
    "compared to the best baseline LIA, the per-flow TCP goodput corresponding to the use of "
    "DRL-CC is slightly lower but the corresponding MPTCP goodput is 106% higher"
)
Q7ALL = "DRL-CC offers higher goodputs for both TCP and MPTCP flows than all the other baselines"
Q8 = "DRL-CC still outperforms all the other baseline methods in terms of goodput, by 9.6%, 7.7%, 8.51% and 66.5% on average respectively"


def specs() -> List[Spec]:
    """Every claim, in the paper's order."""
    out: List[Spec] = []
    out += _gains("s1-8mb-gain", S1 + " (8 MB)", Q1, 1, 2, "doc_goodput", (313, 279, 272, 198))
    out += _each("s1-2mb-higher", S1 + " (2 MB)", Q1ALL, 1, 0, "doc_goodput", "higher")
    out += _each("s1-4mb-higher", S1 + " (4 MB)", Q1ALL, 1, 1, "doc_goodput", "higher")
    out.append(
        Spec("s1-8mb-full", S1 + " (8 MB)", Q1FULL, 1, 2, "doc_goodput", "level", 3.2, "drl-cc")
    )
    out += [
        Spec(f"s1-8mb-jain-{v}", "Fig. 3b, Scenario 1 (8 MB)", Q1JAIN, 1, 2, "jain", "at_least", JAIN_CLOSE, v)
        for v in ("drl-cc", *BASELINES)
    ]  # fmt: skip
    s2 = "Fig. 4a, Scenario 2"
    out += _gains(
        "s2-8mbps-gain", s2 + " (8 Mbit/s)", Q2, 2, 2, "doc_goodput", (325, 280, 269, 181)
    )
    out += _each("s2-2mbps-similar", s2 + " (2 Mbit/s)", Q2LOW, 2, 0, "doc_goodput", "similar")
    out += _each("s2-16mbps-higher", s2 + " (16 Mbit/s)", Q2UP, 2, 3, "doc_goodput", "higher")
    s3 = "Fig. 4b, Scenario 3"
    out += _gains("s3-400ms-gain", s3 + " (400 ms)", Q3, 3, 3, "doc_goodput", (656, 473, 489, 382))
    out += _each("s3-50ms-similar", s3 + " (50 ms)", Q3LOW, 3, 0, "doc_goodput", "similar")
    out += _gains(
        "s4-4pct-gain", "Fig. 4c, Scenario 4 (4 %)", Q4, 4, 3, "doc_goodput", (468, 456, 409, 319)
    )
    out += _gains(
        "s5-gain", "Fig. 5, Scenario 5", Q5, 5, None, "total_goodput", (382, 351, 336, 257)
    )
    out += _gains(
        "s6-gain", "Fig. 6, Scenario 6", Q6, 6, None, "total_goodput", (193, 178, 186, 204)
    )
    out.append(
        Spec(
            "s6-after-8mbps",
            "Fig. 7, Scenario 6",
            Q7FIG,
            6,
            None,
            "after_goodput",
            "level",
            8.0,
            "drl-cc",
        )
    )
    s7 = "Fig. 8, Scenario 7"
    out.append(
        Spec("s7-mptcp-gain-lia", s7, Q7TCP, 7, None, "flow_goodput", "gain", 106, "drl-cc", "lia")
    )
    out.append(
        Spec(
            "s7-tcp-similar-lia",
            s7,
            Q7TCP,
            7,
            None,
            "tcp_goodput",
            "similar",
            None,
            "drl-cc",
            "lia",
        )
    )
    rest = ("balia", "olia", "wvegas")
    out += _each("s7-mptcp-higher", s7, Q7ALL, 7, None, "flow_goodput", "higher", rest)
    out += _each("s7-tcp-higher", s7, Q7ALL, 7, None, "tcp_goodput", "higher", rest)
    out += _gains(
        "s8-gain", "Fig. 9, Scenario 8", Q8, 8, None, "flow_goodput", (9.6, 7.7, 8.51, 66.5)
    )
    return out
