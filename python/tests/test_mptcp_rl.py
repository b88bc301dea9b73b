"""MPTCP-RL's agent (python/mpsched/agents/mptcp_rl.py): the paper's hyperparameters, the
offline transitions of the traditional schedulers, a smoke training whose policy file runs as
``scheduler = "policy:PATH"``, the same file for the same seed, and the command line's bad
arguments."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Tuple

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")

import mpsched  # noqa: E402
from mpsched import _core  # noqa: E402
from mpsched.agents.mptcp_rl import collect_offline, masked_softmax, train  # noqa: E402
from mpsched.agents.mptcp_rl_args import PAPER_VALUES, Args  # noqa: E402

#: WiFi (lossy) and LTE, four short MPTCP downloads at 0.1 s and one at 0.8 s; 1.5 s.
SCENARIO = {
    "sim": {"duration_s": 1.5, "seed": 1},
    "paths": [
        {"name": "wifi", "interface": "wifi", "rate_mbps": 8.0, "delay_ms": 20.0,
         "loss": {"model": "bernoulli", "p": 0.005}},
        {"name": "lte", "interface": "lte", "rate_mbps": 15.0, "delay_ms": 60.0},
    ],
    "flows": [
        *({"name": f"s{k}", "paths": ["wifi", "lte"], "cc": "lia", "start_s": 0.1,
           "size_bytes": 60_000 * (k + 1)} for k in range(4)),
        {"name": "late", "paths": ["wifi", "lte"], "cc": "lia", "start_s": 0.8,
         "size_bytes": 200_000},
    ],
}  # fmt: skip


def _args(tmp_path: Path, **kw) -> Args:
    base = dict(
        scenario=SCENARIO, out=str(tmp_path / "out"), offline_episodes=1, offline_epochs=3,
        online_steps=24, sync_s=0.8, max_flows=6, max_subflows=2, mix=(),
    )  # fmt: skip
    return Args(**{**base, **kw})


def test_defaults_are_the_papers_values() -> None:
    for name, value in PAPER_VALUES.items():
        assert getattr(Args(), name) == value, name


def test_masked_softmax_blocks_unusable_paths() -> None:
    z = np.array([1.0, 3.0, 2.0], np.float32)
    a = masked_softmax(z, np.array([1, 0, 1]))
    assert a[1] == 0.0 and a.sum() == pytest.approx(1.0) and a[2] > a[0]
    assert masked_softmax(z, np.zeros(3)).tolist() == [0.0, 0.0, 0.0]


def test_offline_transitions_record_each_behaviours_path_usage(tmp_path: Path) -> None:
    """The host runs each traditional scheduler on its own; the label is the next interval's
    share of bytes per path (a distribution where anything was sent)."""
    data = collect_offline(_args(tmp_path))
    n = len(data["obs"])
    assert data["share"].shape == (n, 2) and data["mask"].shape == (n, 2)
    # Episodes end when every flow completed: roundrobin in 12 intervals, minrtt and dmptcp
    # (short flows kept on WiFi) in 11 (14, 14 and 11 before the linux profile's calibration
    # and its DSS option and receive-buffer share, 2026-11-27/28).
    assert np.nonzero(data["done"])[0].tolist() == [11, 22, 33]
    sent = data["share"].sum(-1)
    # Every interval sends something (earlier, 3-4 intervals at the episodes' ends waited for
    # the last ACKs).
    assert np.allclose(sent, 1.0)
    # The first interval: only WiFi's MP_CAPABLE subflow is up (mask), and it carries it all.
    assert data["mask"][[0, 12, 23]].tolist() == [[0.0, 0.0]] * 3
    assert data["share"][[0, 12, 23]].tolist() == [[1.0, 0.0]] * 3
    assert data["mask"][1].tolist() == [1.0, 0.0]


def test_offline_observations_carry_the_previous_intervals_share(tmp_path: Path) -> None:
    """Flow feature ``prev_share`` of a running flow reads the behaviour's path-usage share of
    the previous interval (what the ``paths`` env shows after that action): 0 at an episode's
    first decision, then the label of the transition before (over the paths usable then)."""
    from mpsched.agents.mptcp_rl import _env
    from mpsched.envs.scheduler import SUBFLOW_FEATURES

    args = _args(tmp_path)
    data = collect_offline(args)
    lay = _env(args, SCENARIO).layout
    prev = lay.subflows(data["obs"])[:, -1, :, :, SUBFLOW_FEATURES.index("prev_share")]
    running = lay.flow_mask(data["obs"])
    assert not prev[[0, 12, 23]].any()
    for t in (2, 5, 9, 16):
        label = data["share"][t - 1] * data["mask"][t - 1]
        label = label / label.sum() if label.sum() > 0 else label
        j = np.flatnonzero(running[t])
        assert len(j) > 0 and np.allclose(prev[t, j], label), t
        assert not prev[t, running[t] == 0].any()


def test_training_scenarios_and_offline_seeds_miss_the_held_out_seeds() -> None:
    """The default training cycles through Figs. 3-5's scenarios; no offline env seed is a
    held-out seed of the reproduction protocol (1001-1020)."""
    from mpsched.agents.mptcp_rl import offline_seed, scenarios
    from mpsched.reproduce.protocol import HELD_OUT

    args = Args()
    assert [Path(s).name for s in scenarios(args)] == [
        "mptcp-rl-short.toml", "mptcp-rl-media.toml", "mptcp-rl-paths.toml",
    ]  # fmt: skip
    seeds = {
        offline_seed(args, k, b, e)
        for k in range(3) for b in range(len(args.behaviours))
        for e in range(args.offline_episodes)
    }  # fmt: skip
    assert len(seeds) == 3 * 3 * args.offline_episodes and not seeds & set(HELD_OUT)


def test_smoke_training_writes_a_runtime_policy_deterministically(tmp_path: Path) -> None:
    res = train(_args(tmp_path))
    assert res.updates == 3 and res.online_steps == 24 and res.offline_transitions == 34
    policy = f"policy:{res.written['policy']}"
    flows = [dict(f, scheduler=policy) for f in SCENARIO["flows"]]
    run = mpsched.run({**SCENARIO, "flows": flows}, seed=1)
    (row,) = run.summary["policies"]
    assert row["scheduler"] == policy and len(row["host"]) == 5
    a = _core.Policy(str(res.written["policy"])).act(np.zeros((1, 6 * 36 + 18), np.float32))
    assert a.shape == (1, 2) and a.sum() == pytest.approx(1.0, abs=1e-5)
    again = train(_args(tmp_path, out=str(tmp_path / "again")))
    assert again.written["weights"].read_bytes() == res.written["weights"].read_bytes()


def test_args_and_cli_options_agree() -> None:
    from mpsched.cli.train import MPTCPRL_OPTIONS

    assert set(MPTCPRL_OPTIONS) <= {f.name for f in dataclasses.fields(Args)}


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--online-steps", "0"], "--online-steps"),
        (["--sync", "0"], "--sync"),
        (["--scenario", "nope.toml"], "nope.toml"),
    ],
)
def test_cli_bad_argument_is_one_line_exit_2(cli, tmp_path: Path, argv, message) -> None:
    res = cli("train", "mptcp-rl", "--out", str(tmp_path / "t"), *argv)
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0]


SHIPPED = Path(mpsched.__file__).parent / "agents" / "checkpoints" / "mptcp-rl-default.json"


def test_shipped_policy_runs_by_name(tmp_path: Path) -> None:
    """`--scheduler mptcp-rl`: the shipped policy (trained by `mpsched train mptcp-rl` with the
    defaults, seed 1), the same network as its file, deciding every 100 ms for the host."""
    import json

    desc = json.loads(SHIPPED.read_text())
    tr = desc["provenance"]["train"]
    assert (tr["online_steps"], tr["offline_episodes"], desc["provenance"]["seed"]) == (
        Args().online_steps, Args().offline_episodes, 1,
    )  # fmt: skip
    assert _core.policy_digest("mptcp-rl") == _core.Policy(str(SHIPPED)).sha256
    flows = [dict(f, scheduler="mptcp-rl") for f in SCENARIO["flows"]]
    (row,) = mpsched.run({**SCENARIO, "flows": flows}, seed=1001).summary["policies"]
    assert row["scheduler"] == "mptcp-rl" and row["sha256"] == _core.policy_digest("mptcp-rl")


def _long_flows(scheduler: str, seed: int) -> Tuple[float, float]:
    """Mean FCT (s) and device energy (J) of scenarios/mptcp-rl-long.toml (30 × 15 MB over
    WiFi + LTE) with every flow on ``scheduler``."""
    from mpsched.matrix import load_scenario

    sc = load_scenario(Path(__file__).resolve().parents[2] / "scenarios" / "mptcp-rl-long.toml")
    for w in sc["workloads"]:
        w["scheduler"] = scheduler
    s = mpsched.run(sc, seed=seed).summary
    assert all(f["completed"] for f in s["flows"])
    fct = sum(f["fct_s"] for f in s["flows"]) / len(s["flows"])
    return fct, sum(i["energy_j"] for i in s["interfaces"])


def test_shipped_policy_against_roundrobin_on_30_long_flows() -> None:
    """Issue 18's acceptance test, on held-out seeds 1001-1003 (of the protocol's 1001-1020):
    the shipped policy against Round-Robin in the 30-long-flow scenario (the paper: −45.1 % FCT,
    −44.7 % energy). Measured, not tuned: the policy is **not better** — its mean FCT is
    0.06 % above Round-Robin's and its energy 0.30 % below over these seeds (per seed
    −0.08 %/+0.32 %/−0.05 % FCT, −0.19 %/−0.19 %/−0.51 % energy; before the one-event links of
    2026-11-29, which reorder equal-time events: +0.15 % and +0.06 %); every scheduler fills
    both links here (docs/mptcp-rl.md, "Results"). Pinned: the ratios, and not worse than
    Round-Robin by more than 0.5 % on either metric."""
    rl = [_long_flows("mptcp-rl", s) for s in (1001, 1002, 1003)]
    rr = [_long_flows("roundrobin", s) for s in (1001, 1002, 1003)]
    fct = sum(r[0] for r in rl) / sum(r[0] for r in rr) - 1.0
    energy = sum(r[1] for r in rl) / sum(r[1] for r in rr) - 1.0
    assert fct == pytest.approx(0.0006405, abs=1e-6), fct
    assert energy == pytest.approx(-0.0029763, abs=1e-6), energy
    assert fct < 0.005 and energy < 0.005


def test_mptcp_rl_prefix_refuses_another_policy() -> None:
    """`mptcp-rl:PATH` must name a host path policy; a scheduler policy is a one-line error."""
    edar = SHIPPED.parent / "edar-default.json"
    flows = [dict(f, scheduler=f"mptcp-rl:{edar}") for f in SCENARIO["flows"]]
    with pytest.raises(mpsched.ScenarioError, match="not an MPTCP-RL policy .*: use policy:"):
        mpsched.run({**SCENARIO, "flows": flows}, seed=1)
