"""PDAA3C agent (python/mpsched/agents/pdaa3c.py): the Rust subflow quality ranking seen from
Python, tiny trainings with one worker (reproducible) and two worker processes, the exported
policy running in the Rust runtime exactly as the trained actor, the letter's values, and
`mpsched train pdaa3c`'s bad input."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")
pytest.importorskip("tensorboard")

import mpsched  # noqa: E402
from mpsched import _core  # noqa: E402
from mpsched.agents.pdaa3c import (  # noqa: E402
    ActorCritic,
    Args,
    greedy_slots,
    make_envs,
    n_step_returns,
    train,
)
from mpsched.agents.pdaa3c_args import A3C_VALUES, PAPER_VALUES, env_seed_base  # noqa: E402
from mpsched.envs import ObsLayout  # noqa: E402
from mpsched.envs.scheduler import SUBFLOW_FEATURES  # noqa: E402

SCENARIO = Path(mpsched.__file__).parent / "scenarios" / "pdaa3c.toml"


def _tiny(tmp_path: Path, name: str, **kw) -> Args:
    base = dict(
        scenario=str(SCENARIO), out=str(tmp_path / name), workers=1, updates=6,
        envs_per_worker=1, duration_s=1.0, t_max=5, log_every=2,
    )  # fmt: skip
    base.update(kw)
    return Args(**base)


def _weights(out: Path) -> dict:
    from safetensors.numpy import load_file

    return load_file(str(out / "pdaa3c.safetensors"))


def test_quality_ranking_by_hand() -> None:
    """Eq. 4-5 through `_core.pdaa3c_inputs` (units in docs/pdaa3c.md): slot 0 RTT 60 ms,
    8 Mbit/s, 20 segments, 1 % loss: Q = 101 694.917 B/s; slot 1 RTT 100 ms, nothing sent,
    40 segments: ST = 400 000, Q = 0.7·1000/400 000 + 120 000 = 120 000.00175 (ranked first)."""
    layout = ObsLayout(2, 1)
    obs = np.zeros((1, layout.size), np.float32)
    sub = layout.subflows(obs)[0, 0]
    f = {n: i for i, n in enumerate(SUBFLOW_FEATURES)}
    sub[0, [f["srtt"], f["throughput"], f["cwnd"], f["loss"]]] = [0.6, 0.8, 0.2, 0.01]
    sub[1, [f["srtt"], f["cwnd"]]] = [1.0, 0.4]
    layout.path_mask(obs)[:] = 1.0
    x, order, n, q = _core.pdaa3c_inputs(obs, 2, 1)
    # (the observation is float32: 0.6, 0.8, 0.2, 0.4 are rounded, hence the tolerances)
    assert q[0, 0] == pytest.approx(101_694.917, abs=0.05)
    assert q[0, 1] == pytest.approx(120_000.00175, abs=0.01)
    assert order.tolist() == [[1, 0]] and n.tolist() == [2]
    assert x[0, 5] == pytest.approx(120_000.00175 * 8e-7, rel=1e-6)  # rank 0's Q input
    assert x[0, 7 + 2] == pytest.approx(0.2) and x[0, 6] == 1.0 and x[0, 13] == 1.0
    layout.path_mask(obs)[:] = [0.0, 1.0]  # slot 0 unusable: one rank, then -1
    _, order, n, _ = _core.pdaa3c_inputs(obs, 2, 1)
    assert order.tolist() == [[1, -1]] and n.tolist() == [1]


def test_n_step_returns() -> None:
    """Algorithm 1 lines 14-16: R ← r + γR from the bootstrap V, cut at a terminal state."""
    r = np.array([[1.0], [2.0], [3.0]])
    d = np.array([[0.0], [1.0], [0.0]])
    out = n_step_returns(r, d, np.array([10.0]), 0.5)
    assert out[:, 0].tolist() == [1.0 + 0.5 * 2.0, 2.0, 3.0 + 0.5 * 10.0]


def test_one_worker_is_reproducible(tmp_path: Path) -> None:
    a, b = _tiny(tmp_path, "a"), _tiny(tmp_path, "b")
    ra, rb = train(a, log=lambda m: None), train(b, log=lambda m: None)
    assert ra.updates == rb.updates == 6 and ra.env_steps == 30
    wa, wb = _weights(Path(a.out)), _weights(Path(b.out))
    assert all(np.array_equal(wa[k], wb[k]) for k in wa)
    desc = json.loads(ra.policy.read_text())
    assert desc["train"]["workers"] == 1 and desc["train"]["deterministic"] is True
    assert all(s > 1020 for s in desc["train"]["env_seed_bases"])


def test_two_workers_run_in_parallel_processes(tmp_path: Path) -> None:
    args = _tiny(tmp_path, "w2", workers=2, updates=20)
    res = train(args, log=lambda m: None)
    assert res.updates >= 20 and res.env_steps == res.updates * 5
    tr = json.loads(res.policy.read_text())["train"]
    assert (tr["workers"], tr["seed"], tr["deterministic"]) == (2, 1, False)
    assert tr["env_seed_bases"] == [env_seed_base(1, 0), env_seed_base(1, 1)]
    # Both processes stepped their own envs, and their loops overlapped in time.
    (s0, e0, n0), (s1, e1, n1) = tr["worker_loops"]
    assert n0 > 0 and n1 > 0 and n0 + n1 == res.env_steps
    assert s0 < e1 and s1 < e0


def test_exported_policy_acts_in_rust_as_the_actor(tmp_path: Path) -> None:
    """The Rust runtime's choice = the trained actor's greedy choice, on real observations;
    then the policy runs as a scheduler."""
    args = _tiny(tmp_path, "p")
    res = train(args, log=lambda m: None)
    from safetensors.torch import load_file

    model = ActorCritic(args.max_paths, tuple(args.hidden_units))
    model.actor.load_state_dict({k[len("actor.") :]: v for k, v in load_file(
        str(tmp_path / "p" / "pdaa3c.safetensors")).items()})  # fmt: skip
    envs = make_envs(dataclasses.replace(args, envs_per_worker=4), 0)
    obs, _ = envs.reset(seed=77)
    rows = [obs]
    rng = np.random.default_rng(0)
    for _ in range(15):
        obs, *_ = envs.step(rng.integers(0, 2, size=4))
        rows.append(obs)
    obs = np.concatenate(rows)
    policy = _core.Policy(str(res.policy))
    assert policy.act(obs)[:, 0].astype(int).tolist() == greedy_slots(model, obs, args).tolist()
    text = SCENARIO.read_text().replace("duration_s = 70", "duration_s = 3")
    sc = tmp_path / "sc.toml"
    sc.write_text(text.replace('scheduler = "minrtt"', f'scheduler = "policy:{res.policy}"'))
    (row,) = mpsched.run(str(sc), seed=1001).summary["policies"]
    assert row["decisions"] == 30  # one per 100 ms, the last at 3.000 s


def test_paper_and_a3c_values_are_the_defaults() -> None:
    defaults = dataclasses.asdict(Args())
    assert {k: defaults[k] for k in PAPER_VALUES} == PAPER_VALUES
    assert {k: defaults[k] for k in A3C_VALUES} == A3C_VALUES


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--workers", "0"], "--workers"),
        (["--updates", "0"], "--updates"),
        (["--scenario", "nope.toml"], "nope.toml"),
    ],
)
def test_cli_bad_argument_is_one_line_exit_2(cli, tmp_path: Path, argv, message) -> None:
    res = cli("train", "pdaa3c", "--out", str(tmp_path / "t"), *argv)
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0]
    assert not (tmp_path / "t").exists()


def test_shipped_policy_runs_by_name(tmp_path: Path) -> None:
    """`--scheduler pdaa3c`: the shipped checkpoint (one worker, seed 1: reproducible), the
    same network as its file, deciding every 100 ms."""
    shipped = Path(mpsched.__file__).parent / "agents" / "checkpoints" / "pdaa3c-default.json"
    tr = json.loads(shipped.read_text())["train"]
    assert (tr["workers"], tr["seed"], tr["deterministic"], tr["updates"]) == (1, 1, True, 12000)
    assert _core.policy_digest("pdaa3c") == _core.Policy(str(shipped)).sha256
    text = SCENARIO.read_text().replace("duration_s = 70", "duration_s = 2")
    assert 'scheduler = "pdaa3c"' in text
    sc = tmp_path / "sc.toml"
    sc.write_text(text)
    (row,) = mpsched.run(str(sc), seed=1001).summary["policies"]
    assert row["decisions"] == 20


def test_pdaa3c_prefix_refuses_another_network(tmp_path: Path) -> None:
    """`pdaa3c:PATH` must name a PDAA3C policy file; another network type is a one-line error."""
    edar = Path(mpsched.__file__).parent / "agents" / "checkpoints" / "edar-default.json"
    text = SCENARIO.read_text().replace("duration_s = 70", "duration_s = 1")
    sc = tmp_path / "sc.toml"
    sc.write_text(text.replace('scheduler = "pdaa3c"', f'scheduler = "pdaa3c:{edar}"'))
    with pytest.raises(mpsched.ScenarioError, match="not a PDAA3C policy .*: use policy:"):
        mpsched.run(str(sc), seed=1001)


def test_scenario_is_the_letters_setup() -> None:
    """scenarios/pdaa3c.toml: the letter's scheduler (the shipped PDAA3C policy), MPTCP-BBR
    (§3), two subflows of 30 ms and 60 ms, 70 s."""
    from mpsched.matrix import load_scenario

    sc = load_scenario(SCENARIO)
    (flow,) = sc["flows"]
    assert (flow["scheduler"], flow["cc"]) == ("pdaa3c", "bbr")
    assert [p["delay_ms"] for p in sc["paths"]] == [30, 60]
    assert sc["sim"]["duration_s"] == 70


def test_shipped_policy_spills_to_the_next_subflow() -> None:
    """The shipped policy was trained and runs with busy="next" (docs/pdaa3c.md, action
    semantics); the strict reading stays available as --busy wait."""
    shipped = Path(mpsched.__file__).parent / "agents" / "checkpoints" / "pdaa3c-default.json"
    desc = json.loads(shipped.read_text())
    assert desc["obs"]["busy"] == "next" and desc["train"]["args"]["busy"] == "next"
    assert Args().busy == "next"
    for busy in ("next", "wait"):
        envs = make_envs(Args(busy=busy, envs_per_worker=1, duration_s=1.0), 0)
        assert envs.policy_obs.get("busy", "wait") == busy
        envs.close()


#: Held-out seeds of the acceptance test (a subset of 1001-1020, fixed before looking).
ACCEPT_SEEDS = (1001, 1002, 1003, 1004)


def test_acceptance_shipped_policy_vs_round_robin() -> None:
    """Issue 19's acceptance: the shipped policy against round-robin on held-out seeds, 70 s.
    Measured (docs/pdaa3c.md): it does NOT beat round-robin; with BBR and busy="next" both
    links are full under either scheduler and the goodputs are equal (gain 0.0 %, 20 seeds).
    The test pins that honest result: per seed within ±1 % of round-robin's goodput."""
    from mpsched.scenario import load_dict

    sc = load_dict(SCENARIO)
    for seed in ACCEPT_SEEDS:
        g = {}
        for sched in ("pdaa3c", "roundrobin"):
            sc["flows"][0]["scheduler"] = sched
            (row,) = mpsched.run(sc, seed=seed).summary["flows"]
            g[sched] = row["goodput_mbps"]
        assert abs(g["pdaa3c"] / g["roundrobin"] - 1.0) <= 0.01, (seed, g)
