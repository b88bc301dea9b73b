"""DRL-CC agent (python/mpsched/agents/drl_cc.py): training smoke test, the policy file of
/work/notes/drl-cc-format.md and its numpy reference forward pass, determinism, the paper's
hyperparameters, and `mpsched train drl-cc`'s bad input."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")
pytest.importorskip("tensorboard")

from mpsched.agents.checkpoint import CheckpointError  # noqa: E402
from mpsched.agents.drl_cc import (  # noqa: E402
    STATE_FEATURES,
    Args,
    DrlCcPolicy,
    evaluate,
    load_policy,
    make_net,
    reference_act,
    split_obs,
    state_select,
    train,
)
from mpsched.envs import (  # noqa: E402
    FLOW_FEATURES,
    SUBFLOW_FEATURES,
    HostEnv,
    HostLayout,
    host_feature_names,
)

REPO = Path(__file__).resolve().parents[2]
SCENARIO = REPO / "scenarios" / "drl-cc-random.toml"


def _tiny(out: Path, seed: int = 1, n: int = 300) -> Args:
    """A few hundred transitions on 5-s episodes (learning after 100)."""
    return Args(
        out=str(out), seed=seed, total_transitions=n, learning_starts=100, batch_size=32,
        num_envs=2, duration_s=5.0, log_every=50, scenario=str(SCENARIO),
    )  # fmt: skip


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("drlcc") / "run"
    return train(_tiny(out), log=lambda m: None), _tiny(out)


def _real_obs(n: int = 60, seed: int = 4) -> np.ndarray:
    env = HostEnv(SCENARIO, action="cwnd", target="rotate", max_flows=8, max_subflows=2)
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    out = [obs]
    for _ in range(n - 1):
        obs, *_ = env.step(rng.uniform(-1, 1, 2).astype(np.float32))
        out.append(obs)
    return np.stack(out)


def _random_obs(layout: HostLayout, n: int, rng: np.random.Generator) -> np.ndarray:
    """Random features, random running slots (gaps included) and zero or one target."""
    obs = rng.uniform(0.0, 5.0, (n, layout.size)).astype(np.float32)
    off = layout.offsets
    obs[:, off["flow_mask_offset"] : off["flow_mask_offset"] + layout.max_flows] = (
        rng.random((n, layout.max_flows)) < 0.5
    )
    frames = layout.frames(obs)
    frames[..., FLOW_FEATURES.index("target")] = 0.0
    tgt = rng.integers(-1, layout.max_flows, n)
    for i, j in enumerate(tgt):
        if j >= 0:
            frames[i, -1, j, FLOW_FEATURES.index("target")] = 1.0
    return obs


def test_args_defaults_are_the_papers_values() -> None:
    a = Args()
    # §III-C: lr 1e-4 / 1e-3, γ = 0.90, τ = 0.001, 2 × 128 hidden; §III-D: 50,000 samples;
    # §IV-A: two subflows; DDPG [18]: OU θ = 0.15, σ = 0.2.
    assert (a.actor_lr, a.critic_lr, a.gamma, a.tau) == (1e-4, 1e-3, 0.90, 0.001)
    assert tuple(a.hidden_units) == (128, 128)
    assert a.total_transitions >= 50_000 and a.max_subflows == 2
    assert (a.ou_theta, a.ou_sigma) == (0.15, 0.2)
    net = make_net(a, 10)
    assert isinstance(net.repr, torch.nn.LSTM) and net.repr.num_layers == 1
    assert [m.out_features for m in net.actor if isinstance(m, torch.nn.Linear)] == [128, 128, 2]
    assert [m.out_features for m in net.critic if isinstance(m, torch.nn.Linear)] == [128, 128, 1]


def test_state_select_is_b_g_d_v_w_per_subflow_slot() -> None:
    layout = HostLayout(8, 2, 1)
    names = host_feature_names(layout)
    sel = state_select(layout)
    assert [names[k] for k in sel] == [
        f"t0/flow0/sub{i}/{n}" for i in range(2) for n in STATE_FEATURES
    ]
    assert STATE_FEATURES == ("throughput", "goodput", "srtt", "rttvar", "cwnd")


def test_split_obs_reads_running_flows_and_target() -> None:
    layout = HostLayout(8, 2, 1)
    obs = _real_obs(12)
    seq, mask, target = split_obs(obs, layout, state_select(layout))
    assert seq.shape == (12, 8, 10)
    np.testing.assert_array_equal(mask, layout.flow_mask(obs) > 0.5)
    flags = layout.flows(obs)[:, -1, :, FLOW_FEATURES.index("target")]
    for i in range(12):
        assert (target[i] == -1) == (flags[i].max() < 0.5)
        if target[i] >= 0:
            assert flags[i, target[i]] == 1.0 and flags[i, : target[i]].max(initial=0) == 0
    assert mask[:, :5].all() and not mask[:, 5:].any()  # drl-cc-random: 5 flows
    np.testing.assert_array_equal(seq, layout.frames(obs)[:, -1][..., state_select(layout)])
    subs = layout.subflows(obs)[:, -1]
    np.testing.assert_array_equal(seq[:, 2, 5:], subs[:, 2, 1, [6, 7, 0, 1, 3]])


def test_training_smoke_writes_a_loadable_policy(trained) -> None:
    result, args = trained
    assert result.transitions == 300 and result.updates == 200  # one per transition after 100
    assert math.isfinite(result.critic_loss) and math.isfinite(result.actor_loss)
    assert result.episodes >= 1 and all(math.isfinite(r) for r in result.episodic_returns)
    desc, tensors = load_policy(result.policy)
    torch.manual_seed(args.seed)  # the same initial weights as train() drew
    init = make_net(args, 10).state_dict()
    for name in ("repr.weight_ih_l0", "repr.weight_hh_l0", "actor.0.weight", "actor.4.bias"):
        assert not np.allclose(tensors[name], init[name].numpy()), name
    assert not np.allclose(tensors["obs_mean"], 0.0) and np.all(tensors["obs_std"] > 0)
    assert not any(k.startswith("critic.") for k in tensors)
    assert (Path(args.out) / "runs").is_dir()
    assert any((Path(args.out) / "runs").iterdir())


def test_policy_file_follows_the_contract(trained) -> None:
    result, args = trained
    desc = json.loads(Path(result.policy).read_text())
    assert (desc["format"], desc["algorithm"], desc["variant"]) == (
        "mpsched-policy/1",
        "drl_cc",
        "drl-cc",
    )
    net = desc["net"]
    assert net["select"] == state_select(HostLayout(8, 2, 1))
    assert net["normalize"] == {"mean": "obs_mean", "std": "obs_std", "clip": 10.0}
    assert net["lstm"] == {
        "hidden": 64,
        "weight_ih": "repr.weight_ih_l0",
        "weight_hh": "repr.weight_hh_l0",
        "bias_ih": "repr.bias_ih_l0",
        "bias_hh": "repr.bias_hh_l0",
    }
    assert net["actor"] == ["actor.0", "actor.2", "actor.4"]
    assert desc["tensors"]["repr.weight_ih_l0"] == [256, 10]
    assert desc["tensors"]["actor.0.weight"] == [128, 74]
    assert desc["tensors"]["actor.4.weight"] == [2, 128]
    assert desc["obs"] == {
        "env": "host", "action": "cwnd", "target": "rotate", "interval": 100.0,
        "max_flows": 8, "max_subflows": 2, "history": 1, "cwnd_step": 10.0,
        "sender_only": True,
        "features": {"flow": list(FLOW_FEATURES), "subflow": list(SUBFLOW_FEATURES)},
    }  # fmt: skip
    tr = desc["train"]
    assert tr["algorithm"] == "ddpg" and tr["seed"] == 1 and tr["transitions"] == 300
    assert tr["scenario"] == str(SCENARIO)
    assert tr["scenario_sha256"] == hashlib.sha256(SCENARIO.read_bytes()).hexdigest()
    assert tr["command"].startswith("mpsched train drl-cc --scenario ")
    assert "--transitions 300" in tr["command"] and tr["wall_s"] > 0


def test_reference_act_equals_the_torch_actor(trained) -> None:
    result, _ = trained
    desc, tensors = load_policy(result.policy)
    policy = DrlCcPolicy.load(result.policy)
    layout = policy.layout
    rng = np.random.default_rng(7)
    obs = np.concatenate([_real_obs(40), _random_obs(layout, 60, rng)])
    got = policy.act(obs)
    none = 0
    for o, a in zip(obs, got):
        ref = reference_act(desc, tensors, o, layout)
        if ref is None:
            none += 1
            assert np.all(a == 0.0)
        else:
            assert np.max(np.abs(ref - a)) < 1e-5
    assert 0 < none < len(obs)
    assert np.std(got[:, 0]) > 0  # not a constant policy


def test_reference_act_reads_every_running_flow_and_skips_free_slots(trained) -> None:
    result, _ = trained
    desc, tensors = load_policy(result.policy)
    layout = HostLayout(8, 2, 1)
    obs = _real_obs(30)[-1].copy()
    sel = np.asarray(state_select(layout))
    base = reference_act(desc, tensors, obs, layout)
    frames = layout.frames(obs)
    target = int(np.argmax(frames[-1, :, FLOW_FEATURES.index("target")]))
    other = next(j for j in range(5) if j != target)
    changed = obs.copy()
    layout.frames(changed)[-1, other, sel] += 3.0  # another running flow: h changes
    assert np.max(np.abs(reference_act(desc, tensors, changed, layout) - base)) > 1e-6
    free = obs.copy()
    layout.frames(free)[-1, 6, sel] += 3.0  # a free slot: ignored
    np.testing.assert_array_equal(reference_act(desc, tensors, free, layout), base)


def test_same_seed_same_weights(tmp_path: Path) -> None:
    digests = []
    for k, seed in enumerate((3, 3, 4)):
        r = train(_tiny(tmp_path / f"r{k}", seed=seed, n=160), log=lambda m: None)
        digests.append(json.loads(Path(r.policy).read_text())["sha256"])
    assert digests[0] == digests[1] and digests[0] != digests[2]


def test_loader_refuses_non_sender_inputs_and_bad_actor(trained, tmp_path: Path) -> None:
    result, _ = trained
    src = Path(result.policy)
    for field, value, msg in (
        ("select", [8 + SUBFLOW_FEATURES.index("energy_j")], "not seen by the sender"),
        ("actor", ["actor.0", "actor.2"], "expected shape"),
    ):
        desc = json.loads(src.read_text())
        desc["net"][field] = value
        (tmp_path / "p.json").write_text(json.dumps(desc))
        (tmp_path / "p.safetensors").write_bytes(src.with_suffix(".safetensors").read_bytes())
        with pytest.raises(CheckpointError, match=msg):
            load_policy(tmp_path / "p.json")


def test_evaluate_runs_an_episode_with_the_actor(trained) -> None:
    result, _ = trained
    res, ret = evaluate(DrlCcPolicy.load(result.policy), SCENARIO, seed=2, duration_s=2.0)
    flows = res.flows.to_pydict()
    assert flows["cc"] == ["drl-cc"] * 5
    assert all(g > 0 for g in flows["goodput_mbps"]) and math.isfinite(ret)


def test_cli_policy_options_reach_the_policy_file(cli, tmp_path: Path) -> None:
    """--interval-ms, --cwnd-step and --max-flows (the values the paper does not state) reach
    the trained policy's observation spec and its provenance command."""
    out = tmp_path / "p"
    res = cli(
        "train", "drl-cc", "--scenario", str(SCENARIO), "--out", str(out), "--transitions", "40",
        "--num-envs", "1", "--duration", "3", "--interval-ms", "200", "--cwnd-step", "5",
        "--max-flows", "6",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    desc = json.loads((out / "drl-cc.json").read_text())
    assert (desc["obs"]["interval"], desc["obs"]["cwnd_step"], desc["obs"]["max_flows"]) == (
        200.0,
        5.0,
        6,
    )
    cmd = desc["train"]["command"]
    assert "--interval-ms 200.0 --cwnd-step 5.0 --max-flows 6" in cmd


def test_args_and_cli_options_agree() -> None:
    from mpsched.cli.train import DRLCC_OPTIONS

    names = {f.name for f in dataclasses.fields(Args)}
    assert set(DRLCC_OPTIONS) <= names


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--transitions", "0"], "--transitions"),
        (["--scenario", "nope.toml"], "nope.toml"),
    ],
)
def test_cli_bad_argument_is_one_line_exit_2(cli, tmp_path: Path, argv, message) -> None:
    res = cli("train", "drl-cc", "--out", str(tmp_path / "t"), *argv)
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0]
    assert not (tmp_path / "t").exists()


def test_shipped_default_policy_is_a_default_training() -> None:
    import mpsched

    shipped = Path(mpsched.__file__).parent / "agents" / "checkpoints" / "drl-cc-default.json"
    desc, tensors = load_policy(shipped)
    tr = desc["train"]
    assert (tr["transitions"], tr["seed"], tr["algorithm"]) == (50_000, 1, "ddpg")
    defaults = {
        k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(Args()).items()
    }
    assert {k: v for k, v in tr["args"].items() if k != "out"} == {
        k: v for k, v in defaults.items() if k != "out"
    }  # trained with today's defaults ...
    assert tr["scenario_sha256"] == hashlib.sha256(SCENARIO.read_bytes()).hexdigest()  # ... here
    policy = DrlCcPolicy.load(shipped)
    obs = _real_obs(30, seed=9)
    for o, a in zip(obs, policy.act(obs)):
        ref = reference_act(desc, tensors, o, policy.layout)
        assert ref is not None and np.max(np.abs(ref - a)) < 1e-5


def test_loader_refuses_zero_std_and_bad_clip(trained, tmp_path: Path) -> None:
    from mpsched.agents.checkpoint import save_checkpoint

    result, _ = trained
    desc, tensors = load_policy(result.policy)
    meta = {k: v for k, v in desc.items() if k not in ("format", "weights", "sha256", "tensors")}
    bad = dict(tensors, obs_std=np.where(np.arange(10) == 3, 0.0, tensors["obs_std"]))
    save_checkpoint(tmp_path / "std", bad, meta)
    with pytest.raises(CheckpointError, match="expected every std > 0"):
        load_policy(tmp_path / "std.json")
    meta["net"] = dict(meta["net"], normalize=dict(meta["net"]["normalize"], clip=0.0))
    save_checkpoint(tmp_path / "clip", tensors, meta)
    with pytest.raises(CheckpointError, match="normalize.clip"):
        load_policy(tmp_path / "clip.json")
