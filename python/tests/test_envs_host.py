"""`mpsched/Host-v0` and `HostVectorEnv`: one agent for every flow of a host (DRL-CC, MPTCP-RL).
The slot, rotation and action mechanics are tested exactly in the core
(crates/mpsched-sim/tests/it/env_host.rs); these tests cover the Python interface."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import mpsched
from mpsched.envs import EnvConfigError, HostEnv, HostLayout, HostVectorEnv, host_feature_names
from mpsched.envs.host import DEFAULT_HOST_SCENARIO

#: Two 10 Mbit/s paths; two MPTCP flows and a TCP flow from the start, a short MPTCP
#: download from 0.5 s; WiFi/LTE energy with promotion and tail.
HOST = {
    "sim": {"duration_s": 2.0, "seed": 1, "energy_states": True},
    "paths": [
        {"name": "wifi", "interface": "wifi", "rate_mbps": 10, "delay_ms": 10,
         "queue_bytes": 150000},
        {"name": "lte", "interface": "lte", "rate_mbps": 10, "delay_ms": 30,
         "queue_bytes": 150000},
    ],
    "flows": [
        {"name": "mp1", "paths": ["wifi", "lte"]},
        {"name": "mp2", "paths": ["wifi", "lte"]},
        {"name": "tcp", "path": "wifi"},
        {"name": "late", "paths": ["wifi", "lte"], "start_s": 0.5, "size_bytes": 200000},
    ],
}  # fmt: skip

SPACES = [
    ("cwnd", "rotate", gym.spaces.Box, (2,)),
    ("cwnd", "all", gym.spaces.Box, (6, 2)),
    ("weights", "rotate", gym.spaces.Box, (6, 2)),
    ("select", "rotate", gym.spaces.MultiBinary, (6, 2)),
    ("choose", "rotate", gym.spaces.MultiDiscrete, (6,)),
    ("paths", "rotate", gym.spaces.Box, (2,)),
]


@pytest.mark.parametrize("action,target,space,shape", SPACES)
def test_host_env_passes_check_env_for_every_action_space(action, target, space, shape):
    env = gym.make(
        "mpsched/Host-v0", scenario=HOST, action=action, target=target, max_flows=6,
        max_subflows=2,
    ).unwrapped  # fmt: skip
    assert isinstance(env.action_space, space) and env.action_space.shape == shape
    check_env(env, skip_render_check=True)


def test_observation_slices_masks_and_slots():
    """The layout slices observations by flow and subflow; the masks follow the flows (the late
    flow, starting at 0.5 s, holds slot 3 from the boundary before, masked); every element has
    a name."""
    env = HostEnv(HOST, action="select", max_flows=6, max_subflows=2, history=2)
    lay = env.layout
    assert isinstance(lay, HostLayout) and len(host_feature_names(lay)) == lay.size
    obs, info = env.reset(seed=3)
    assert env.slot_flows() == ["mp1", "mp2", "tcp", None, None, None]
    for _ in range(3):
        obs, _, _, _, info = env.step(np.ones((6, 2), np.int8))
    assert info["time_s"] == pytest.approx(0.4)
    assert env.slot_flows() == ["mp1", "mp2", "tcp", "late", None, None]
    assert info["flow_mask"].tolist() == [1, 1, 1, 0, 0, 0]
    assert info["action_mask"].tolist() == [[1, 1], [1, 1], [1, 0], [0, 0], [0, 0], [0, 0]]
    for _ in range(3):
        obs, _, _, _, info = env.step(np.ones((6, 2), np.int8))
    assert info["flow_mask"].tolist() == [1, 1, 1, 1, 0, 0]
    flows, subs = lay.flows(obs), lay.subflows(obs)
    assert flows.shape == (2, 6, len(mpsched.envs.FLOW_FEATURES))
    assert subs.shape == (2, 6, 2, len(mpsched.envs.SUBFLOW_FEATURES))
    f = mpsched.envs.FLOW_FEATURES
    assert flows[-1, :4, f.index("multipath")].tolist() == [1, 1, 0, 1]
    s = mpsched.envs.SUBFLOW_FEATURES
    # Energy per subflow (WiFi/LTE models) and goodput are seen in the newest frame.
    assert (subs[-1, :2, :, s.index("energy_j")] > 0).all()
    assert subs[-1, 2, 1].sum() == 0.0  # TCP has one subflow
    names = host_feature_names(lay)
    k = names.index("t0/flow1/sub1/power_w")
    assert obs[k] == subs[-1, 1, 1, s.index("power_w")]


def test_drl_cc_reward_and_terms_cover_the_running_flows():
    """Default reward for windows: DRL-CC's Σ log goodput over running flows (slot columns)."""
    env = HostEnv(HOST, action="cwnd", max_flows=6, max_subflows=2)
    env.reset(seed=1)
    for _ in range(8):
        _, reward, _, _, info = env.step(np.zeros(2, np.float32))
    t = info["terms"]
    g = np.maximum(t.prefixed("flow_goodput_mbps_"), 0.01)
    active = t.prefixed("flow_active_") > 0.5
    assert active.sum() == 4 == t["flows"]
    assert reward == pytest.approx(np.log(g[active]).sum())
    assert t["goodput_mbps"] == pytest.approx(t.prefixed("flow_goodput_mbps_").sum())
    assert t["capacity_mbps"] == 20.0 and t["energy_j"] > 0


def test_single_and_vector_host_envs_agree_and_threads_do_not_matter():
    acts = [np.full((2,), a, np.float32) for a in (1.0, -1.0, 0.5, 0.0, 1.0)]

    def single(seed):
        env = HostEnv(HOST, action="cwnd", max_flows=6, max_subflows=2)
        out = [env.reset(options={"scenario_seed": seed})[0]]
        out += [env.step(a)[0] for a in acts]
        return np.stack(out)

    def vector(threads):
        venv = HostVectorEnv(HOST, num_envs=3, action="cwnd", max_flows=6, max_subflows=2,
                             threads=threads)  # fmt: skip
        out = [venv.reset(seed=5)[0]]
        out += [venv.step(np.stack([a] * 3))[0] for a in acts]
        return np.stack(out)

    one, two = vector(1), vector(2)
    assert np.array_equal(one, two)
    for i in range(3):
        assert np.array_equal(one[:, i], single(5 + i))


def test_results_name_the_agent_on_the_flows_it_controls():
    """`results(label)` relabels the flows the agent controlled (the MPTCP flows' cc), not TCP."""
    env = HostEnv(HOST, action="cwnd", max_flows=6, max_subflows=2)
    env.reset(seed=1)
    done = False
    while not done:
        _, _, te, tr, _ = env.step(np.zeros(2, np.float32))
        done = te or tr
    res = env.results(label="drl-cc")
    assert dict(zip(res.flows.column("name").to_pylist(), res.flows.column("cc").to_pylist())) == {
        "mp1": "drl-cc", "mp2": "drl-cc", "tcp": "cubic", "late": "drl-cc"
    }  # fmt: skip
    assert res.summary["end_s"] == 2.0


def test_choose_is_one_subflow_per_flow():
    """`choose` (MultiDiscrete: one subflow per flow slot) is `select` with one-hot rows."""

    def run(action, acts):
        env = HostEnv(HOST, action=action, max_flows=6, max_subflows=2)
        env.reset(options={"scenario_seed": 2})
        return np.stack([env.step(a)[0] for a in acts])

    picks = [np.array([k % 2, 1, 0, 1, 0, 0]) for k in range(6)]
    onehot = [np.eye(2, dtype=np.int8)[p] for p in picks]
    assert np.array_equal(run("choose", picks), run("select", onehot))
    with pytest.raises(ValueError, match="subflow slots in 0..1"):
        env = HostEnv(HOST, action="choose", max_flows=6, max_subflows=2)
        env.reset(seed=1)
        env.step(np.full(6, 2))


def test_paths_action_mask_and_preference():
    """`paths` (MPTCP-RL): one value per path slot for every controlled flow. The mask is per
    path slot (usable by a controlled, running flow: LTE once a join completed; slot 2 has no
    path); preferring LTE alone
    moves the MPTCP flows' new data off WiFi (the TCP flow keeps WiFi); NaN and negative values
    count as 0 (no preference: dmptcp's own order)."""
    env = HostEnv(HOST, action="paths", max_flows=6, max_subflows=3)
    _, info = env.reset(seed=1)
    assert info["action_mask"].tolist() == [1, 0, 0], "at 0.1 s no LTE join has completed"
    _, _, _, _, info = env.step(np.ones(3, np.float32))
    assert info["action_mask"].tolist() == [1, 1, 0]
    f = mpsched.envs.SUBFLOW_FEATURES
    thr, share = f.index("throughput"), f.index("prev_share")
    mp = [0, 1]
    assert env.slot_flows()[:3] == ["mp1", "mp2", "tcp"]
    wifi = []
    for _ in range(6):
        obs, _, _, _, info = env.step(np.array([0.0, 1.0, 1.0], np.float32))
        wifi.append(env.layout.subflows(obs)[-1, mp, 0, thr].sum())
    subs = env.layout.subflows(obs)[-1]
    # WiFi carries only retransmissions of what was in flight (a few segments: 0.0116 is one
    # 1448-byte segment per 100 ms; the exact "no new data" is the core's test).
    assert max(wifi[2:]) < 0.05, wifi
    assert (subs[mp, 1, thr] > 0.0).all() and subs[2, 0, thr] > 0.0
    assert subs[mp, :, share].tolist() == [[0.0, 1.0, 0.0]] * 2, "values beyond a flow's paths"
    # No preference: dmptcp uses WiFi again. Per interval the share moves with WiFi's queue,
    # which the tcp flow shares (since the linux profile's calibration mp2 carries nothing on
    # WiFi in the 2nd and 3rd intervals, 0.42 Mbit/s in the 1st), so over the 3 intervals.
    again = np.zeros(len(mp))
    for _ in range(3):
        obs, _, _, _, _ = env.step(np.array([np.nan, -1.0, 1.0], np.float32))
        again += env.layout.subflows(obs)[-1][mp, 0, thr]
    assert (again > 0.0).all(), ("no preference: dmptcp uses WiFi again", again)
    res = env.results(label="mptcp-rl")
    names, scheds = (res.flows.column(c).to_pylist() for c in ("name", "scheduler"))
    assert dict(zip(names, scheds))["mp1"] == "mptcp-rl" != dict(zip(names, scheds))["tcp"]


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"action": "route"}, "action: expected one of cwnd, weights, select, choose, paths"),
        ({"action": "paths", "control": "all"}, "control: expected"),
        ({"target": "some"}, "target: expected one of rotate, all"),
        ({"action": "weights", "control": "all"}, "control: expected"),
        ({"flows": ["mp1", "nope"]}, "flows: no flow or workload named 'nope'"),
        ({"max_subflows": 1}, "max_subflows: "),
        ({"max_flows": 65}, "max_flows: expected an integer in 1..64"),
        ({"interval": 0}, "interval: expected a period in ms >= 0.001"),
        ({"interval": 1e-9}, "interval: expected a period in ms >= 0.001"),
        ({"fallback": "ecf"}, "fallback: expected one of minrtt, minrtt-norp"),
    ],
)
def test_bad_host_options_are_one_line_errors(kwargs, message):
    with pytest.raises(EnvConfigError, match=message) as e:
        HostEnv(HOST, **kwargs)
    assert "\n" not in str(e.value)


def test_default_scenarios_and_workload_hosts():
    """Without a scenario: DRL-CC's random host (5 MPTCP flows × 2 subflows) for windows, and
    MPTCP-RL's short-flow workload (WiFi + LTE) for path choices, whose flows take slots as
    they come."""
    env = gym.make("mpsched/Host-v0").unwrapped
    env.reset(seed=1)
    assert env.slot_flows()[:6] == ["mptcp1", "mptcp2", "mptcp3", "mptcp4", "mptcp5", None]
    assert DEFAULT_HOST_SCENARIO["paths"] == "mptcp-rl-short.toml"
    paths = HostEnv(action="weights", duration_s=2.0)
    paths.reset(seed=1)
    named = [f for f in paths.slot_flows() if f]
    assert len(named) >= 5 and all(f.startswith("short-") for f in named)
    _, _, _, _, info = paths.step(np.ones((32, 4), np.float32))
    assert info["flow_mask"].sum() == len(named)


def test_stable_baselines3_trains_on_the_host_vector_env():
    pytest.importorskip("stable_baselines3")
    from stable_baselines3 import PPO

    from mpsched.envs.sb3 import SB3VecEnv

    venv = SB3VecEnv(
        HostVectorEnv(HOST, num_envs=2, action="cwnd", target="all", max_flows=6,
                      max_subflows=2, duration_s=1.0)
    )  # fmt: skip
    model = PPO("MlpPolicy", venv, n_steps=64, batch_size=64, n_epochs=1, seed=1, verbose=0)
    model.learn(200)


def test_bench_env_measures_the_host_env():
    """`mpsched bench --env` includes DRL-CC's host (5 MPTCP flows × 2 subflows), single and
    vectorised (a few steps here: the measured rates are in BENCHMARKS.md)."""
    from mpsched.bench_env import bench_env

    rows = {r["name"]: r for r in bench_env(steps=64, num_envs=4)}
    for name in (
        "host env (gymnasium.make)",
        "host vector env (1 thread)",
        "host vector env (2 threads)",
    ):
        assert rows[name]["steps"] >= 64 and rows[name]["steps_per_s"] > 0
