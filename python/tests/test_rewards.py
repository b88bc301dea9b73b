"""The seed papers' rewards on hand-computed intervals."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mpsched.rewards import REWARDS, Terms, drl_cc, edar, get_reward, goodput, mptcp_rl, pdaa3c

NAMES = [
    "interval_s",
    "goodput_mbps",
    "recv_tput_mbps",
    "send_tput_mbps",
    "ooo_bytes",
    "buffer_bytes",
    "buffer_full_s",
    "redundant_mbps",
    "energy_j",
    "power_w",
    "delay_ms",
    "jitter_ms",
    "capacity_mbps",
    "done",
    "subflows",
    "sub_tput_mbps_0",
    "sub_tput_mbps_1",
    "sub_tput_mbps_2",
    "flow_goodput_mbps_0",
    "flow_goodput_mbps_1",
    "flow_goodput_mbps_2",
    "flow_active_0",
    "flow_active_1",
    "flow_active_2",
]
INDEX = {n: i for i, n in enumerate(NAMES)}


def terms(**values: float) -> Terms:
    row = np.zeros(len(NAMES))
    for k, v in values.items():
        row[INDEX[k]] = v
    return Terms(row, INDEX)


# One 50 ms interval: 12 Mbit/s delivered, 16 Mbit/s received over the subflows (4 of them
# copies), 32 KiB out of order on average in a 128 KiB buffer, full for 10 ms.
EXAMPLE = dict(
    interval_s=0.05,
    goodput_mbps=12.0,
    recv_tput_mbps=16.0,
    ooo_bytes=32768.0,
    buffer_bytes=131072.0,
    buffer_full_s=0.01,
    power_w=1.5,
    delay_ms=80.0,
    jitter_ms=5.0,
    capacity_mbps=20.0,
    subflows=2,
    sub_tput_mbps_0=10.0,
    sub_tput_mbps_1=6.0,
    flow_goodput_mbps_0=12.0,
    flow_goodput_mbps_1=3.0,
    flow_active_0=1,
    flow_active_1=1,
)


def test_edar_reward_by_hand():
    # V_g = 12; V_w = (16 - 12) / 16 = 0.25; V_o = 32768/131072 + 0.01/0.05 = 0.25 + 0.2 = 0.45.
    # r = 12 - 1 * 0.25 - 0.5 * 0.45 = 11.525.
    assert edar(terms(**EXAMPLE)) == pytest.approx(11.525)
    assert edar(terms(**EXAMPLE), alpha=2, beta=0) == pytest.approx(11.5)
    # Nothing received: no waste term (0/0), just the HoL terms.
    assert edar(terms(interval_s=0.05, buffer_bytes=1000.0, ooo_bytes=500.0)) == pytest.approx(
        -0.25
    )


def test_mptcp_rl_reward_by_hand():
    # B = 12/20 = 0.6; E = 1.5/2 = 0.75; D = 80/200 = 0.4; J = 5/10 = 0.5 -> 1/(1.5).
    expect = 0.6 - 0.75 - 0.4 + 1 / 1.5
    assert mptcp_rl(terms(**EXAMPLE)) == pytest.approx(expect)
    assert mptcp_rl(terms(**EXAMPLE), w2=0.0) == pytest.approx(expect + 0.75)


def test_pdaa3c_reward_by_hand():
    # Σ log TT over the two subflows: log 10 + log 6; the third slot is padding.
    assert pdaa3c(terms(**EXAMPLE)) == pytest.approx(math.log(10) + math.log(6))
    # A stalled subflow costs log(0.01).
    stalled = dict(EXAMPLE, sub_tput_mbps_1=0.0)
    assert pdaa3c(terms(**stalled)) == pytest.approx(math.log(10) + math.log(0.01))


def test_drl_cc_reward_by_hand():
    # Σ log goodput over active flows: log 12 + log 3 (flow 2 inactive).
    assert drl_cc(terms(**EXAMPLE)) == pytest.approx(math.log(12) + math.log(3))


def test_goodput_reward_and_registry():
    assert goodput(terms(**EXAMPLE)) == pytest.approx(0.6)
    assert set(REWARDS) == {"edar", "mptcp-rl", "pdaa3c", "drl-cc", "goodput"}
    assert get_reward("edar", {"beta": 0})(terms(**EXAMPLE)) == pytest.approx(11.75)
    with pytest.raises(ValueError, match="reward: expected one of"):
        get_reward("nope")


def test_rewards_work_on_batches_like_on_single_rows():
    row = terms(**EXAMPLE)._data
    other = terms(**dict(EXAMPLE, goodput_mbps=4.0, recv_tput_mbps=0.0))._data
    batch = Terms(np.stack([row, other]), INDEX)
    for name, fn in REWARDS.items():
        got = fn(batch)
        single = [fn(Terms(row, INDEX)), fn(Terms(other, INDEX))]
        assert np.allclose(got, single), name
