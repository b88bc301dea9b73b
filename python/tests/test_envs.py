"""Gymnasium environments: API conformance, determinism, observations, vector env, learning."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import mpsched.envs
from mpsched.envs import (
    CONN_FEATURES,
    SUBFLOW_FEATURES,
    EnvConfigError,
    SchedulerEnv,
    SchedulerVectorEnv,
    feature_names,
)

# Two 10 Mbit/s paths; the second one drops 5 % of its packets. Short episodes (5 s).
LOSSY = {
    "sim": {"duration_s": 5.0, "seed": 1},
    "paths": [
        {"name": "good", "rate_mbps": 10.0, "delay_ms": 10.0},
        {
            "name": "lossy",
            "rate_mbps": 10.0,
            "delay_ms": 10.0,
            "loss": {"model": "bernoulli", "p": 0.05},
        },
    ],
    "flows": [{"name": "mp", "paths": ["good", "lossy"], "cc": "cubic"}],
}

# DRL-CC-like host: an MPTCP connection next to a TCP flow on a shared 8 Mbit/s bottleneck.
HOST = {
    "sim": {"duration_s": 3.0, "seed": 1},
    "links": [
        {"name": "bottleneck", "rate_mbps": 8.0, "delay_ms": 50.0},
        {"name": "back", "rate_mbps": 8.0, "delay_ms": 50.0},
        {"name": "side", "rate_mbps": 8.0, "delay_ms": 50.0},
    ],
    "paths": [
        {"name": "p1", "forward": ["bottleneck"], "reverse": ["back"]},
        {"name": "p2", "forward": ["side"], "reverse": ["back"]},
    ],
    "flows": [
        {"name": "mp", "paths": ["p1", "p2"], "cc": "lia"},
        {"name": "tcp", "path": "p1", "cc": "reno"},
    ],
}


def run_actions(env, seed, actions):
    obs, _ = env.reset(seed=seed)
    out = [obs]
    rewards = []
    for a in actions:
        obs, r, te, tr, _ = env.step(a)
        out.append(obs)
        rewards.append(r)
        if te or tr:
            break
    return np.array(out), np.array(rewards)


@pytest.mark.parametrize("action", ["mode", "weights", "select", "choose"])
def test_scheduler_env_passes_check_env(action):
    env = gym.make(
        "mpsched/Scheduler-v0",
        scenario=LOSSY,
        action=action,
        interval=50.0,
        history=3,
        duration_s=2.0,
    )
    check_env(env.unwrapped, skip_render_check=True)


def test_congestion_control_env_passes_check_env():
    env = gym.make("mpsched/CongestionControl-v0", scenario=HOST, interval=100.0, max_flows=4)
    check_env(env.unwrapped, skip_render_check=True)


def test_same_seed_same_trajectory_under_fixed_actions():
    env = SchedulerEnv(
        LOSSY, action="weights", reward="edar", interval=50.0, history=2, max_paths=2
    )
    acts = [np.array([1.0, 0.2 * (i % 5)], np.float32) for i in range(60)]
    o1, r1 = run_actions(env, 11, acts)
    o2, r2 = run_actions(env, 11, acts)
    assert np.array_equal(o1, o2) and np.array_equal(r1, r2)
    o3, _ = run_actions(
        SchedulerEnv(LOSSY, action="weights", interval=50.0, history=2, max_paths=2), 12, acts
    )
    # Another seed draws other losses on the lossy path: the trajectories differ.
    assert not np.array_equal(o1[: len(o3)], o3[: len(o1)])


def test_min_rtt_interval_and_observed_values_match_the_paths():
    # Paths of 10 ms and 40 ms one-way: EdAR's TI is the smaller smoothed RTT (~20 ms + queueing).
    sc = {
        "sim": {"duration_s": 10.0},
        "paths": [
            {"name": "a", "rate_mbps": 10.0, "delay_ms": 10.0},
            {"name": "b", "rate_mbps": 10.0, "delay_ms": 40.0},
        ],
        "flows": [{"name": "mp", "paths": ["a", "b"], "cc": "reno"}],
    }
    env = SchedulerEnv(sc, action="mode", interval="min-rtt", max_paths=3)
    obs, info = env.reset(seed=1)
    delivered, start = 0.0, None
    for k in range(120):
        obs, r, te, tr, info = env.step(0)
        if k == 39:
            start = info["time_s"]
        elif k > 39:
            delivered += info["terms"]["goodput_mbps"] * info["terms"]["interval_s"]
    elapsed = info["time_s"] - start
    lay = env.layout
    sub = lay.subflows(obs)[-1]
    srtt_ms = sub[:, SUBFLOW_FEATURES.index("srtt")] * 100
    assert 20 <= srtt_ms[0] < 60 and 80 <= srtt_ms[1] < 160, srtt_ms
    assert srtt_ms[2] == 0  # the third slot is padding
    assert list(lay.path_mask(obs)) == [1, 1, 0] and list(info["action_mask"]) == [1, 1, 0]
    ti_ms = info["terms"]["interval_s"] * 1000
    assert 20 <= ti_ms <= srtt_ms[0] + 1, (ti_ms, srtt_ms)
    # Both paths saturated: goodput close to 20 Mbit/s once the windows have opened.
    assert 15 < delivered / elapsed <= 20.5


def test_redundant_mode_is_seen_in_the_terms_and_the_edar_reward():
    env = SchedulerEnv(LOSSY, action="mode", reward="edar", interval=100.0)
    env.reset(seed=3)
    normal = [env.step(0) for _ in range(20)][-1]
    env.reset(seed=3)
    redundant = [env.step(1) for _ in range(20)][-1]
    assert normal[4]["terms"]["redundant_mbps"] == 0
    assert redundant[4]["terms"]["redundant_mbps"] > 1
    # Redundant copies arrive twice: V_w > 0 lowers EdAR's reward below G.
    t = redundant[4]["terms"]
    assert t["recv_tput_mbps"] > t["goodput_mbps"] and redundant[1] < t["goodput_mbps"]
    assert CONN_FEATURES.index("prev_mode") >= 0
    conn = env.layout.connection(redundant[0])[-1]
    assert conn[CONN_FEATURES.index("prev_mode")] == 1


def test_initial_mode_redundant_applies_before_the_first_decision():
    # EdAR sends redundantly at connection start (edar.txt §IV-B). Both 10 ms paths join within
    # the first 100 ms interval, so the redundant start changes that interval (the Rust test
    # env_initial_mode checks the copies it sends); the observation says redundant was in force.
    red = SchedulerEnv(LOSSY, action="mode", interval=100.0, initial_mode="redundant")
    normal = SchedulerEnv(LOSSY, action="mode", interval=100.0)
    obs_r, _ = red.reset(seed=3)
    obs_n, _ = normal.reset(seed=3)
    prev = CONN_FEATURES.index("prev_mode")
    assert red.layout.connection(obs_r)[-1][prev] == 1
    assert normal.layout.connection(obs_n)[-1][prev] == 0
    goodput = CONN_FEATURES.index("goodput")
    assert red.layout.connection(obs_r)[-1][goodput] != normal.layout.connection(obs_n)[-1][goodput]
    # After the first answer the initial mode no longer matters: normal means no copies.
    assert red.step(0)[4]["terms"]["redundant_mbps"] == 0


def test_select_action_uses_only_the_selected_path():
    env = SchedulerEnv(LOSSY, action="select", reward="goodput", interval=100.0, max_paths=2)
    env.reset(seed=1)
    for _ in range(20):
        obs, r, te, tr, info = env.step(np.array([1, 0]))
    t = info["terms"]
    assert t["sub_tput_mbps_1"] == 0 and t["sub_tput_mbps_0"] > 5
    # An empty selection falls back to every usable path.
    for _ in range(10):
        obs, r, te, tr, info = env.step(np.array([0, 0]))
    assert info["terms"]["sub_tput_mbps_1"] > 0


def test_episode_ends_terminated_when_the_flow_completes():
    sc = {**LOSSY, "flows": [{"name": "mp", "paths": ["good", "lossy"], "size_bytes": 500_000}]}
    env = SchedulerEnv(sc, action="mode", interval=50.0)
    env.reset(seed=1)
    for _ in range(1000):
        _, _, te, tr, info = env.step(0)
        if te or tr:
            break
    assert te and not tr and info["terms"]["done"] == 1
    assert info["time_s"] < 2.0  # 500 kB over ~20 Mbit/s
    env = SchedulerEnv(LOSSY, action="mode", interval=100.0)
    env.reset(seed=1)
    steps = 0
    while True:
        _, _, te, tr, info = env.step(0)
        steps += 1
        if te or tr:
            break
    # An unlimited flow runs into the 5 s duration: 50 intervals of 100 ms, the first one
    # observed at reset, so 49 steps; the step that reaches 5 s is the last (no empty step after
    # it) and every step's interval is 100 ms long.
    assert tr and not te and steps == 49 and math.isclose(info["time_s"], 5.0)
    assert info["terms"]["interval_s"] == 0.1


def test_congestion_control_env_sets_windows_and_sees_the_host():
    env = gym.make(
        "mpsched/CongestionControl-v0", scenario=HOST, interval=100.0, max_flows=4
    ).unwrapped
    obs, _ = env.reset(seed=1)
    lay = env.layout
    cwnd = SUBFLOW_FEATURES.index("cwnd")
    for k in range(1, 5):
        obs, r, te, tr, info = env.step(np.array([1.0, 1.0, 0, 0], np.float32))
        # +1 × cwnd_step (10 segments) per interval from the initial 10 segments; the window
        # does not move on its own (50 segments stay below the 8 Mbit/s × 100 ms BDP: no loss).
        assert lay.subflows(obs)[-1][0, cwnd] * 100 == pytest.approx(10 + 10 * k, abs=1e-3)
    flows = lay.flows(obs)[-1]
    assert list(lay.flow_mask(obs)) == [1, 1, 0, 0]
    target = mpsched.envs.FLOW_FEATURES.index("target")
    assert flows[0, target] == 1 and flows[1, target] == 0  # the target flag
    # DRL-CC's reward: Σ log(goodput) over the two active flows.
    t = info["terms"]
    expect = math.log(max(t["flow_goodput_mbps_0"], 0.01)) + math.log(
        max(t["flow_goodput_mbps_1"], 0.01)
    )
    assert math.isclose(r, expect, rel_tol=1e-12)


def test_vector_env_matches_single_envs_and_threads_do_not_change_results():
    acts = [np.array([i % 2, (i // 3) % 2, 1, i % 2]) for i in range(120)]
    results = []
    for threads in (1, 2):
        v = SchedulerVectorEnv(LOSSY, num_envs=4, action="mode", interval=100.0, threads=threads)
        obs, _ = v.reset(seed=5)
        traj = [obs]
        rews, ends = [], []
        for a in acts:
            obs, r, te, tr, info = v.step(a)
            traj.append(obs)
            rews.append(r)
            ends.append(te | tr)
        results.append((np.array(traj), np.array(rews), np.array(ends)))
    assert all(np.array_equal(a, b) for a, b in zip(*results))
    traj, rews, ends = results[0]
    # Sub-env 2 equals a single env seeded base + 2 = 7, fed the same actions.
    single = SchedulerEnv(LOSSY, action="mode", interval=100.0)
    o, _ = single.reset(options={"scenario_seed": 7})
    assert np.array_equal(o, traj[0, 2])
    for k in range(49):
        o, r, te, tr, _ = single.step(acts[k][2])
        assert np.array_equal(o, traj[k + 1, 2]) and r == rews[k, 2]
    # 5 s episodes of 100 ms (the first interval observed at reset): step 49 ends each
    # episode, step 50 resets it with reward 0.
    assert ends[48].all() and not ends[:48].any() and not ends[49].any() and (rews[49] == 0).all()


def test_vector_env_reports_a_redrawn_invalid_scenario():
    # delay_ms drawn from [-50, 50]: some episodes' scenarios are invalid. The vector env's
    # autoreset re-draws the scenario inside a worker thread; the error must come out as the
    # one-line ScenarioError (not a panic), naming the field.
    import mpsched

    bad = {
        "sim": {"duration_s": 0.3},
        "paths": [
            {"name": "a", "rate_mbps": 10.0, "delay_ms": {"range": [-50, 50]}},
            {"name": "b", "rate_mbps": 10.0, "delay_ms": 10.0},
        ],
        "flows": [{"name": "mp", "paths": ["a", "b"]}],
    }
    venv = None
    for base in range(50):
        try:
            venv = SchedulerVectorEnv(bad, num_envs=2, threads=2, interval=50.0)
            venv.reset(seed=base)
            break
        except mpsched.ScenarioError:
            venv = None
    assert venv is not None
    with pytest.raises(mpsched.ScenarioError, match=r"delay_ms: expected a number >= 0"):
        for _ in range(500):
            venv.step(np.zeros(2, np.int64))


def test_vector_env_is_a_gymnasium_vector_env():
    v = SchedulerVectorEnv(LOSSY, num_envs=3, action="weights", reward="pdaa3c", interval=100.0)
    assert isinstance(v, gym.vector.VectorEnv)
    obs, info = v.reset(seed=0)
    assert obs.shape == (3, v.single_observation_space.shape[0]) and v.observation_space.contains(
        obs
    )
    obs, r, te, tr, info = v.step(v.action_space.sample())
    assert r.shape == (3,) and te.dtype == bool and info["action_mask"].shape == (3, 4)


def test_feature_names_cover_the_observation():
    env = SchedulerEnv(LOSSY, action="mode", history=3, max_paths=2)
    names = feature_names(env.layout)
    assert len(names) == env.observation_space.shape[0] == len(set(names))
    assert names[0] == "t-2/sub0/srtt" and names[-1] == "mask/path1"


def test_feature_layout_is_the_cores_export():
    """Names, kinds, units and docs come from the core's feature enums, in frame order."""
    from mpsched import _core
    from mpsched.envs import FEATURES, FLOW_FEATURES, INTEGER_FEATURES

    core = [(g, [tuple(f) for f in feats]) for g, feats in _core.obs_features()]
    ours = [
        (g, [(f.name, f.kind, f.unit, f.seen_by, f.doc) for f in feats])
        for g, feats in FEATURES.items()
    ]
    assert ours == core
    assert [g for g, _ in core] == ["subflow", "connection", "flow"]
    assert SUBFLOW_FEATURES == tuple(n for n, *_ in core[0][1])
    assert CONN_FEATURES == tuple(n for n, *_ in core[1][1])
    assert FLOW_FEATURES == tuple(n for n, *_ in core[2][1])
    assert INTEGER_FEATURES == {
        "subflow": (),
        "connection": ("prev_mode",),
        "flow": ("target", "multipath", "subflows"),
    }


@pytest.mark.parametrize("max_paths, history, max_flows", [(2, 3, 0), (4, 1, 5), (1, 2, 2)])
def test_layout_slices_match_feature_names(max_paths, history, max_flows):
    """Every slice of ObsLayout (offsets from the core) lands on the element feature_names names."""
    from mpsched.envs import FLOW_FEATURES, ObsLayout

    lay = ObsLayout(max_paths, history, max_flows)
    names = np.array(feature_names(lay))
    assert names.shape == (lay.size,)
    idx = np.arange(lay.size)
    for h in range(history):
        tag = f"t{h - history + 1}" if h < history - 1 else "t0"
        sub = lay.subflows(idx)[h]
        for i in range(max_paths):
            assert list(names[sub[i]]) == [f"{tag}/sub{i}/{n}" for n in SUBFLOW_FEATURES]
        assert list(names[lay.connection(idx)[h]]) == [f"{tag}/conn/{n}" for n in CONN_FEATURES]
        fl = lay.flows(idx)[h]
        for j in range(max_flows):
            assert list(names[fl[j]]) == [f"{tag}/flow{j}/{n}" for n in FLOW_FEATURES]
    assert list(names[lay.path_mask(idx)]) == [f"mask/path{i}" for i in range(max_paths)]
    assert list(names[lay.flow_mask(idx)]) == [f"mask/flow{j}" for j in range(max_flows)]


def test_integer_features_hold_whole_numbers():
    from mpsched.envs import FLOW_FEATURES, INTEGER_FEATURES

    env = gym.make(
        "mpsched/CongestionControl-v0", scenario=HOST, interval=100.0, max_flows=4
    ).unwrapped
    obs, _ = env.reset(seed=1)
    for _ in range(5):
        obs, *_ = env.step(np.array([0.5, -0.5, 0, 0], np.float32))
    lay = env.layout
    for n in INTEGER_FEATURES["flow"]:
        v = lay.flows(obs)[..., FLOW_FEATURES.index(n)]
        assert np.array_equal(v, np.round(v))
    for n in INTEGER_FEATURES["connection"]:
        v = lay.connection(obs)[..., CONN_FEATURES.index(n)]
        assert np.array_equal(v, np.round(v))


def test_docs_feature_table_is_the_cores_export():
    """docs/envs.md's observation table lists exactly the exported features."""
    from pathlib import Path

    from mpsched.envs import FEATURES

    doc = (Path(__file__).resolve().parents[2] / "docs" / "envs.md").read_text()
    table = doc.split("<!-- obs-features:begin -->\n")[1].split("<!-- obs-features:end -->")[0]
    rows = [r.strip("|").split(" | ") for r in table.strip().splitlines()[2:]]
    want = [
        [g, str(i), f"`{f.name}`", f.kind, f.unit, f.seen_by, f.doc]
        for g, feats in FEATURES.items()
        for i, f in enumerate(feats)
    ]
    assert [[c.strip() for c in r] for r in rows] == want


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"action": "fly"}, "action: expected one of"),
        ({"flow": "nope"}, "flow: no flow named 'nope'"),
        ({"max_paths": 1}, "max_paths: flow 'mp' has 2 paths"),
        ({"interval": -5}, "interval: expected a period"),
        ({"history": 0}, "history: expected an integer"),
        ({"initial_mode": "both"}, "initial_mode: expected"),
        ({"action": "weights", "initial_mode": "redundant"}, "initial_mode: only with action"),
    ],
)
def test_bad_options_are_one_line_errors(kwargs, message):
    with pytest.raises(EnvConfigError, match=message):
        SchedulerEnv(LOSSY, **kwargs)


def test_bad_scenario_is_the_cores_error():
    bad = {**LOSSY, "paths": [{"name": "good", "rate_mbps": -1.0, "delay_ms": 10.0}]}
    env = SchedulerEnv({**bad, "flows": [{"name": "mp", "paths": ["good"]}]}, action="mode")
    with pytest.raises(mpsched.ScenarioError, match="rate"):
        env.reset(seed=0)


# Head-of-line blocking: LOSSY with 20 % loss and a 64 KiB shared receive buffer. Segments on the
# lossy path hold the small buffer while they are recovered, so using that path at all costs
# goodput: the good path alone delivers ~1.4x what minRTT over both does (the env's fallback, with
# opportunistic retransmission) and ~2.8x round-robin. Avoiding the lossy path is optimal here.
#: A receive buffer holding 64 KB of payload under the linux profile (158/256 of its bytes:
#: the kernel's measured scaling_ratio, docs/fidelity.md).
RCV_BUF_64K_PAYLOAD = 106184

HOL_LOSSY = {
    **LOSSY,
    "paths": [
        LOSSY["paths"][0],
        {**LOSSY["paths"][1], "loss": {"model": "bernoulli", "p": 0.2}},
    ],
    "flows": [{**LOSSY["flows"][0], "rcv_buf_bytes": RCV_BUF_64K_PAYLOAD}],
}


@pytest.mark.parametrize("ppo_seed", [1, 2, 3, 4, 5, 6])
def test_ppo_learns_to_avoid_the_lossy_path(ppo_seed):
    """6,000 PPO steps on `select` learn to keep (almost) everything off the lossy path when
    using it is costly (head-of-line blocking in a small receive buffer): the share of data
    received there falls from round-robin's ~13 % (and the fallback minRTT's ~4 %) below 2 %, and
    the goodput beats both; evaluated on episode seeds not trained on. PPO seeds 1-6, fixed.
    Of seeds 1-10, 9 hold, and which one misses moves whenever the observation changes: seed 8
    before the energy and jitter features, seed 7 until the env's first interval and mask were
    aligned with the sender-side recorder (policy runtime), seed 2 then (2.15 % on the lossy
    path), seed 6 since the linux profile's calibration (4.04 %: the fallback's own share; seeds
    1-5 and 7-10 passed). The 9-in-10 rate held until the linux profile took the kernel's DSS
    option and receive-buffer share (2026-11-28; the buffer here was raised to hold the same 64 KB
    of payload): since then 7 of 10 hold — seed 1 (19.43 Mbit/s, 1.197x the fallback against
    1.2x), seed 6 (2.85 %) and seed 10 (4.2 % on the lossy path) miss. With the per-subflow
    windows (2026-11-28) seed 1 holds again and seed 5 misses (19.04 Mbit/s, 1.172x; seeds 7-10
    not re-run). Since the one-event links (2026-11-29: equal-time events reordered) 8 of 10
    hold, seeds 1-6 among them (seed 5 1.357x the fallback, 0.13 % on the lossy path; seed 6
    1.237x, 0.46 %); seed 7 learns the fallback's own policy (1.000x, 3.66 %) and seed 10 misses
    (1.022x, 2.65 %). Missing seeds of 1-6 are kept in the set and marked, not swapped for seeds
    that pass."""
    torch = pytest.importorskip("torch")
    from stable_baselines3 import PPO

    torch.set_num_threads(1)

    def make():
        return gym.make(
            "mpsched/Scheduler-v0",
            scenario=HOL_LOSSY,
            action="select",
            reward="goodput",
            interval=100.0,
            max_paths=2,
        )

    def evaluate(policy):
        """Mean episode reward and the lossy path's share of the received bytes."""
        env = make()
        total, per_path = 0.0, np.zeros(2)
        for s in (100, 101, 102):
            obs, _ = env.reset(seed=s)
            done = False
            while not done:
                obs, r, te, tr, info = env.step(policy(obs))
                total += r
                per_path += [info["terms"]["sub_tput_mbps_0"], info["terms"]["sub_tput_mbps_1"]]
                done = te or tr
        return total / 3, per_path[1] / per_path.sum()

    round_robin, rr_share = evaluate(lambda o: np.array([1, 1]))
    fallback, fb_share = evaluate(lambda o: np.array([0, 0]))
    assert rr_share > 0.1 and fb_share > 0.03  # both use the lossy path
    model = PPO(
        "MlpPolicy",
        make(),
        n_steps=256,
        batch_size=64,
        n_epochs=4,
        learning_rate=3e-3,
        seed=ppo_seed,
        verbose=0,
    )
    model.learn(6000)
    learned, share = evaluate(lambda o: model.predict(o, deterministic=True)[0])
    assert share < 0.02, (share, rr_share, fb_share)
    assert learned > 1.2 * fallback and learned > 1.5 * round_robin, (
        learned,
        fallback,
        round_robin,
    )


def test_ranges_are_redrawn_every_episode_from_the_reset_seed():
    """Domain randomization: path b's delay is a random range, drawn from each episode's seed."""
    sc = {
        "sim": {"duration_s": 2.0},
        "paths": [
            {"name": "a", "rate_mbps": 10.0, "delay_ms": 10.0},
            {"name": "b", "rate_mbps": 10.0, "delay_ms": {"range": [20.0, 200.0]}},
        ],
        "flows": [{"name": "mp", "paths": ["a", "b"], "cc": "reno"}],
    }
    env = SchedulerEnv(sc, action="mode", interval=100.0, max_paths=2)

    def srtt_b(seed=None):
        env.reset(seed=seed)
        for _ in range(15):
            obs, *_ = env.step(0)
        return float(env.layout.subflows(obs)[-1][1, SUBFLOW_FEATURES.index("srtt")])

    first = srtt_b(1)
    assert srtt_b(1) == first  # reproducible
    draws = {round(srtt_b(s), 4) for s in range(2, 8)}
    assert len(draws) >= 5  # other seeds, other delays
    # Without a seed, successive episodes continue the env's seeded sequence: new draws too.
    env.reset(seed=1)
    later = {round(srtt_b(), 4) for _ in range(3)}
    assert len(later) == 3
    # Every draw lies in the range: srtt ≈ 2 × one-way delay (+ queueing), in units of 100 ms.
    assert all(0.4 <= d <= 4.0 + 0.5 for d in draws | later)


def test_import_mpsched_registers_the_envs_with_default_scenarios():
    """`import mpsched` alone registers the ids (no `import mpsched.envs`), and `gym.make`
    without a scenario runs the packaged default (EdAR's handoff; DRL-CC's random host, for
    CongestionControl-v0 and Host-v0)."""
    import subprocess
    import sys

    code = (
        "import gymnasium as gym, mpsched, sys\n"
        "assert 'mpsched.envs' not in sys.modules\n"
        "e = gym.make('mpsched/Scheduler-v0').unwrapped\n"
        "o, _ = e.reset(seed=1)\n"
        "c = gym.make('mpsched/CongestionControl-v0').unwrapped\n"
        "c.reset(seed=1)\n"
        "print(e.flow_name, e._prepared.source.rsplit('/', 1)[-1], c._prepared.source.rsplit('/', 1)[-1])\n"
        "h = gym.make('mpsched/Host-v0').unwrapped\n"
        "h.reset(seed=1)\n"
        "print(*[f for f in h.slot_flows() if f])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    lines = out.stdout.splitlines()
    assert lines[0].split() == ["mptcp", "edar-handoff.toml", "drl-cc-random.toml"]
    assert lines[1].split() == ["mptcp1", "mptcp2", "mptcp3", "mptcp4", "mptcp5"]


def test_workload_scenarios_load_and_control_a_generated_flow():
    """The MPTCP-RL library (flows from `[[workloads]]`, with a sweep) loads in `gym.make`: the
    controlled flow is the first multipath workload's first flow (`short-0`) unless `flow=`
    names a workload or one of its flows; the sweep is a per-episode random draw."""
    env = gym.make(
        "mpsched/Scheduler-v0", scenario="scenarios/mptcp-rl-short.toml", action="select"
    ).unwrapped
    assert env.flow_name == "short-0"
    obs, info = env.reset(seed=1)
    assert info["time_s"] > 0.1  # the first boundary after the workload's first flow starts
    steps, done = 0, False
    while not done:
        obs, r, te, tr, info = env.step(np.array([1, 0, 0, 0]))
        steps += 1
        done = te or tr
    assert te and not tr and steps >= 1  # a sized flow: the episode ends when it completes
    third = SchedulerEnv("scenarios/mptcp-rl-short.toml", action="mode", flow="short-2")
    assert third.flow_name == "short-2"
    third.reset(seed=1)
    with pytest.raises(mpsched.envs.EnvConfigError, match="flow: expected a workload name"):
        SchedulerEnv("scenarios/mptcp-rl-short.toml", flow="long")
    far = SchedulerEnv("scenarios/mptcp-rl-short.toml", action="mode", flow="short-99")
    with pytest.raises(mpsched.ScenarioError, match='no flow "short-99"'):
        far.reset(seed=1)


def test_stable_baselines3_trains_on_the_vector_env():
    """SB3 accepts the fast vector env through `SB3VecEnv`: its checker-free interface works
    (same-step autoreset with `terminal_observation`), and PPO trains for a few hundred steps."""
    pytest.importorskip("stable_baselines3")
    from stable_baselines3 import PPO

    from mpsched.envs.sb3 import SB3VecEnv

    sc = {**LOSSY, "sim": {"duration_s": 1.0, "seed": 1}}
    venv = SB3VecEnv(
        SchedulerVectorEnv(sc, num_envs=4, action="select", interval=100.0, max_paths=2)
    )
    venv.seed(11)
    obs = venv.reset()
    assert obs.shape == (4, venv.observation_space.shape[0])
    ends = 0
    for k in range(30):
        venv.step_async(np.ones((4, 2), np.int64))
        obs, rewards, dones, infos = venv.step_wait()
        for i in np.flatnonzero(dones):
            ends += 1
            # 1 s / 100 ms = 10 intervals, the first one observed at reset: 9 steps an episode.
            assert k in (8, 17, 26) and infos[i]["TimeLimit.truncated"]
            assert not np.array_equal(infos[i]["terminal_observation"], obs[i])
        assert rewards.dtype == np.float32 and infos[0]["terms"]["interval_s"] >= 0.0
    assert ends == 4 * 3  # steps 8, 17, 26 end each sub-env's episode
    model = PPO("MlpPolicy", venv, n_steps=64, batch_size=64, n_epochs=1, seed=1, verbose=0)
    model.learn(300)


def test_an_episode_gives_the_results_of_a_run(tmp_path):
    """`env.results()` is the episode as `mpsched.run` reports a run: an agent that always leaves
    the choice to the fallback (weights all zero, from the start) gives exactly the tables of
    `mpsched.run` with `minrtt`, apart from the scheduler's label; `write_results` writes them
    like any run (so plot and report read them)."""
    import mpsched

    sc = {**LOSSY, "sim": {"duration_s": 1.0, "seed": 1}}
    env = SchedulerEnv(sc, action="weights", interval=100.0, max_paths=2)
    env.reset(options={"scenario_seed": 1})
    done = False
    while not done:
        _, _, te, tr, _ = env.step(np.array([0.0, 0.0]))
        done = te or tr
    res = env.results()
    ref = mpsched.run({**sc, "flows": [{**LOSSY["flows"][0], "scheduler": "minrtt"}]}, seed=1)
    assert isinstance(res, mpsched.Results) and res.summary["end_s"] == 1.0
    assert res.timeseries.equals(ref.timeseries) and res.links.equals(ref.links)
    assert res.flows.drop(["scheduler"]).equals(ref.flows.drop(["scheduler"]))
    assert res.flows.column("scheduler").to_pylist() == ["external:mode=weights,fallback=minrtt"]
    named = env.results(label="my-agent")
    assert named.flows.column("scheduler").to_pylist() == ["my-agent"]
    assert named.summary["flows"][0]["scheduler"] == "my-agent"
    mpsched.write_results(res, tmp_path / "ep")
    assert (tmp_path / "ep" / "summary.json").exists()


def test_choose_is_a_one_hot_select_in_one_and_many_envs():
    """`choose` (Discrete(max_paths), PDAA3C's per-epoch subflow) gives exactly the trajectory of
    `select` with the one-hot row, in the single env and in the vector env."""

    def run(action, act):
        env = SchedulerEnv(LOSSY, action=action, interval=100.0, max_paths=2, duration_s=1.0)
        obs, _ = env.reset(options={"scenario_seed": 2})
        out = [obs]
        for k in range(9):
            obs, *_ = env.step(act(k))
            out.append(obs)
        return np.array(out)

    pick = [0, 1, 1, 0, 0, 1, 0, 1, 1]
    chosen = run("choose", lambda k: pick[k])
    assert np.array_equal(chosen, run("select", lambda k: np.eye(2, dtype=np.int64)[pick[k]]))
    assert not np.array_equal(chosen, run("choose", lambda k: 0))
    v = SchedulerVectorEnv(LOSSY, num_envs=2, action="choose", interval=100.0, max_paths=2)
    v.reset(seed=5)
    obs, *_ = v.step(np.array([1, 0]))
    w = SchedulerVectorEnv(LOSSY, num_envs=2, action="select", interval=100.0, max_paths=2)
    w.reset(seed=5)
    assert np.array_equal(obs, w.step(np.array([[0, 1], [1, 0]]))[0])
    bad = SchedulerEnv(LOSSY, action="choose", max_paths=2)
    bad.reset(seed=1)
    with pytest.raises(ValueError, match="path slot"):
        bad.step(5)


def test_sender_features_exclude_what_only_the_receiver_or_the_simulator_knows():
    """`SENDER_FEATURES` is what a policy running in a real sender can read: not the receiver's
    buffer or delivered bytes, not the simulator's energy model. EdAR's inputs are all in it."""
    from mpsched.agents.edar import CONN_INPUTS, SUBFLOW_INPUTS
    from mpsched.envs import SENDER_FEATURES

    assert {"ooo", "buffer_full", "goodput"}.isdisjoint(SENDER_FEATURES["connection"])
    assert {"energy_j", "power_w"}.isdisjoint(SENDER_FEATURES["subflow"])
    assert "goodput" not in SENDER_FEATURES["flow"] and "send_rate" in SENDER_FEATURES["flow"]
    assert set(SUBFLOW_INPUTS) <= set(SENDER_FEATURES["subflow"])
    assert set(CONN_INPUTS) <= set(SENDER_FEATURES["connection"])
