"""Rewards of the seed papers, computed from an interval's reward terms.

The environments (``mpsched.envs``) measure each decision interval in the simulator and hand
the figures to a reward function as a :class:`Terms` view: ``t["goodput_mbps"]`` is a float for
a single env and an array (one value per sub-env) for the vector env, so every function here
works on both. Term names (all per interval):

``interval_s``  TI, the interval length · ``goodput_mbps`` G, bytes delivered in order to the
receiving application · ``recv_tput_mbps`` ΣY_i, bytes received on all subflows (duplicates
included) · ``send_tput_mbps`` bytes sent on all subflows · ``ooo_bytes`` O, mean out-of-order
bytes in the receive buffer · ``buffer_bytes`` B, the receive buffer · ``buffer_full_s`` F, time
the buffer was full · ``redundant_mbps`` redundant copies sent · ``energy_j``/``power_w`` device
energy of the used interfaces (MPTCP-RL power model) · ``delay_ms`` mean smoothed RTT ·
``jitter_ms`` mean |Δ srtt| · ``capacity_mbps`` nominal rate of the flow's paths · ``done`` ·
``subflows`` · ``sub_tput_mbps_<i>`` per subflow · ``flow_goodput_mbps_<j>`` and
``flow_active_<j>`` per flow of the scenario.

A user reward is any callable ``fn(terms) -> float`` (or array, for vector envs).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Mapping, Sequence, Union

import numpy as np

__all__ = ["Terms", "REWARDS", "get_reward", "edar", "mptcp_rl", "pdaa3c", "drl_cc", "goodput"]


class Terms:
    """Named view of a row (single env) or of the rows (vector env) of a terms array."""

    __slots__ = ("_data", "_index")

    def __init__(self, data: np.ndarray, index: Mapping[str, int]) -> None:
        self._data = data
        self._index = index

    def __getitem__(self, name: str) -> Any:
        try:
            i = self._index[name]
            # A single env's row gives plain numpy scalars (cheap arithmetic); a batch a column.
            return self._data[i] if self._data.ndim == 1 else self._data[..., i]
        except KeyError:
            raise KeyError(
                f"unknown reward term {name!r}; known: {', '.join(self._index)}"
            ) from None

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Terms)
            and self._index == other._index
            and np.array_equal(self._data, other._data)
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Terms({self.to_dict()!r})"

    def __contains__(self, name: object) -> bool:
        return name in self._index

    def names(self) -> Sequence[str]:
        return list(self._index)

    def prefixed(self, prefix: str) -> np.ndarray:
        """The columns whose names start with ``prefix``, stacked on the last axis."""
        cols = [i for n, i in self._index.items() if n.startswith(prefix)]
        return self._data[..., cols]

    def row(self, i: int) -> "Terms":
        """Sub-env ``i``'s terms (of a vector env's batch)."""
        return Terms(self._data[i], self._index)

    def to_dict(self) -> Dict[str, Any]:
        """Plain ``{name: value}`` (floats for a single env)."""
        return {n: self._data[..., i].tolist() for n, i in self._index.items()}


def _safe_div(num: Any, den: Any) -> Any:
    """num / den, 0 where den <= 0 (scalars stay scalars)."""
    if np.ndim(den) == 0 and np.ndim(num) == 0:
        return float(num) / float(den) if den > 0 else 0.0
    num, den = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    return np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)


def edar(t: Terms, alpha: float = 1.0, beta: float = 0.5) -> Any:
    """EdAR's multi-objective reward (edar.txt, §III-B.3): ``r = V_g − α·V_w − β·V_o`` with
    ``V_g = G_t`` (goodput, Mbit/s), ``V_w = (Σ_i Y_t^i − G_t) / Σ_i Y_t^i`` (share of the
    received traffic that was wasted: redundant copies and duplicates) and
    ``V_o = O_t / B_t + F_t / TI_t`` (mean out-of-order bytes over the receive buffer, plus the
    share of the interval the buffer was full). α = 1, β = 0.5 as in the paper's evaluation.
    """
    g = t["goodput_mbps"]
    y = t["recv_tput_mbps"]
    v_w = np.minimum(np.maximum(_safe_div(y - g, y), 0.0), 1.0)
    v_o = _safe_div(t["ooo_bytes"], t["buffer_bytes"]) + _safe_div(
        t["buffer_full_s"], t["interval_s"]
    )
    return g - alpha * v_w - beta * v_o


def mptcp_rl(
    t: Terms,
    w1: float = 1.0,
    w2: float = 1.0,
    w3: float = 1.0,
    w4: float = 1.0,
    power_ref_w: float = 2.0,
    delay_ref_ms: float = 200.0,
    jitter_ref_ms: float = 10.0,
) -> Any:
    """MPTCP-RL's reward (mptcp-rl.txt, §III "Reward"): ``r = w1·B − w2·E − w3·D + w4/(J + 1)``
    with every weight 1 as in the paper. The paper normalizes B, E, D, J without giving the
    scales; ours: B = goodput / nominal capacity of the flow's paths, E = device power /
    ``power_ref_w`` (2 W ≈ an LTE and a WiFi interface both active, MPTCP-RL's power table),
    D = mean RTT / ``delay_ref_ms``, J = jitter / ``jitter_ref_ms``.
    """
    b = _safe_div(t["goodput_mbps"], t["capacity_mbps"])
    e = np.asarray(t["power_w"], dtype=float) / power_ref_w
    d = np.asarray(t["delay_ms"], dtype=float) / delay_ref_ms
    j = np.asarray(t["jitter_ms"], dtype=float) / jitter_ref_ms
    return w1 * b - w2 * e - w3 * d + w4 / (j + 1.0)


def pdaa3c(t: Terms, floor_mbps: float = 0.01) -> Any:
    """PDAA3C's reward (pdaa3c.txt, §III, "REWARD"): ``r_t = Σ_i U(i, t)``, ``U = log TT_t^i``
    over the connection's subflows, TT the subflow's throughput (Mbit/s, floored at
    ``floor_mbps`` so a stalled subflow costs log(0.01) instead of −∞).
    """
    tt = np.maximum(t.prefixed("sub_tput_mbps_"), floor_mbps)
    n = np.asarray(t["subflows"])[..., None]
    present = np.arange(tt.shape[-1]) < n
    return np.where(present, np.log(tt), 0.0).sum(axis=-1)


def drl_cc(t: Terms, floor_mbps: float = 0.01) -> Any:
    """DRL-CC's reward (drl-cc.txt, §III, "REWARD"): ``r_t = Σ_i U(i, t)`` over the active
    MPTCP and TCP flows of the host, with the paper's utility ``U = log(goodput)`` (Mbit/s,
    floored at ``floor_mbps``).
    """
    g = np.maximum(t.prefixed("flow_goodput_mbps_"), floor_mbps)
    active = t.prefixed("flow_active_") > 0.5
    return np.where(active, np.log(g), 0.0).sum(axis=-1)


def goodput(t: Terms) -> Any:
    """Goodput over the nominal capacity of the flow's paths (0..1): the plainest objective."""
    return _safe_div(t["goodput_mbps"], t["capacity_mbps"])


RewardFn = Callable[[Terms], Any]

#: Built-in rewards by name.
REWARDS: Dict[str, RewardFn] = {
    "edar": edar,
    "mptcp-rl": mptcp_rl,
    "pdaa3c": pdaa3c,
    "drl-cc": drl_cc,
    "goodput": goodput,
}


def get_reward(reward: Union[str, RewardFn], kwargs: Mapping[str, Any] | None = None) -> RewardFn:
    """A reward callable from a name in :data:`REWARDS` (with keyword overrides) or a callable."""
    kwargs = dict(kwargs or {})
    if callable(reward):
        return (lambda t: reward(t, **kwargs)) if kwargs else reward
    try:
        fn = REWARDS[reward]
    except KeyError:
        raise ValueError(
            f"reward: expected one of {', '.join(REWARDS)} or a callable, got {reward!r}"
        ) from None
    return (lambda t: fn(t, **kwargs)) if kwargs else fn
