"""ReLeS (mpsched.agents.reles, shared/specs/rl-baselines.md §3): its state and reward, a
tiny training run, the policy file running in Rust as `policy:PATH` and deciding as PyTorch
does, the shipped `reles` policy, and bad input (one line, exit 2)."""

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
from mpsched.agents.reles import (  # noqa: E402
    STATE_FEATURES,
    Learner,
    make_env,
    reward,
    state_index,
    train,
    weights_of,
)
from mpsched.agents.reles_args import Args  # noqa: E402
from mpsched.envs import SUBFLOW_FEATURES, ObsLayout  # noqa: E402
from mpsched.reproduce import protocol as P  # noqa: E402
from mpsched.scenario import load as load_scenario  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
MEDIA = REPO / "scenarios" / "mptcp-rl-media.toml"
PATHS = REPO / "scenarios" / "mptcp-rl-paths.toml"


def _tiny(out: Path, seed: int = 1) -> Args:
    """120 transitions of 100 ms on 2-s episodes of both training scenarios, learning after 20."""
    return Args(
        scenario=f"{MEDIA},{PATHS}", out=str(out), seed=seed, total_transitions=120,
        duration_s=2.0, interval_ms=100.0, learning_starts=20, buffer_size=100, batch_size=8,
        lstm_hidden=8, hidden=8,
    )  # fmt: skip


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("reles") / "run"
    return train(_tiny(out), log=lambda m: None), _tiny(out)


def test_args_defaults_and_seeds() -> None:
    a = Args()
    assert (a.k, a.max_paths, a.gamma, a.tau, a.batch_size) == (8, 4, 0.99, 0.001, 64)
    assert a.first_episode_seed > 1020  # disjoint from the held-out 1001-1020


def test_state_index_is_five_features_of_each_slot_of_each_frame() -> None:
    layout = ObsLayout(2, 3)
    obs = np.arange(layout.size, dtype=np.float32)
    feat = [list(SUBFLOW_FEATURES).index(n) for n in STATE_FEATURES]
    want = layout.subflows(obs)[:, :, feat]  # [3 frames, 2 slots, 5]
    np.testing.assert_array_equal(obs[state_index(layout)], want.reshape(-1))
    assert state_index(layout).size == 3 * 2 * 5


def test_reward_is_throughput_minus_weighted_rtt_minus_loss() -> None:
    layout = ObsLayout(2, 2)
    obs = np.zeros(layout.size, np.float32)
    sub = layout.subflows(np.arange(layout.size))[-1]
    names = list(SUBFLOW_FEATURES)
    for i, (g, rtt, loss) in enumerate([(1.0, 0.5, 0.0), (3.0, 1.5, 0.25)]):
        obs[sub[i, names.index("throughput")]] = g
        obs[sub[i, names.index("srtt")]] = rtt
        obs[sub[i, names.index("loss")]] = loss
    # G = 4; Σ RTT_i G_i / G = (0.5 + 4.5) / 4 = 1.25; Σ loss_i G_i = 0.75.
    assert reward(obs, layout, alpha=2.0, beta=4.0) == pytest.approx(4.0 - 2.5 - 3.0)
    assert reward(np.zeros_like(obs), layout, 1.0, 1.0) == 0.0


def test_weights_map_actions_onto_low_to_one() -> None:
    np.testing.assert_allclose(weights_of(np.array([-1.0, 0.0, 1.0, 3.0]), 0.1), [0.1, 0.55, 1, 1])


def test_training_smoke_writes_a_policy_file(trained) -> None:
    result, args = trained
    assert result.transitions == 120 and result.updates == 100
    desc = json.loads(result.written["reles"].read_text())
    net = desc["net"]
    assert [layer["type"] for layer in net["layers"]] == [
        "linear",
        "lstm",
        "linear",
        "relu",
        "linear",
    ]
    assert net["head"] == {"type": "tanh", "low": [0.1] * 4, "high": [1.0] * 4}
    obs = desc["obs"]
    assert (obs["action"], obs["interval"], obs["busy"], obs["history"]) == (
        "weights",
        100.0,
        "skip",
        8,
    )
    prov = desc["provenance"]
    assert prov["algorithm"] == "reles" and prov["train"]["episode_seeds"].startswith("300000-")


def test_same_seed_same_weights(trained, tmp_path: Path) -> None:
    result, _ = trained
    again = train(_tiny(tmp_path / "again"), log=lambda m: None)
    a = Path(str(result.written["reles"]).replace(".json", ".safetensors")).read_bytes()
    b = Path(str(again.written["reles"]).replace(".json", ".safetensors")).read_bytes()
    assert a == b


def _learner_from_file(path: Path, args: Args) -> Learner:
    """A Learner whose LSTM, hidden layer and μ are the policy file's."""
    from safetensors.numpy import load_file

    t = load_file(str(path).replace(".json", ".safetensors"))
    learner = Learner(args, args.k, args.max_paths * len(STATE_FEATURES))
    sd = learner.q.state_dict()
    for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
        sd[f"lstm.{n}_l0"] = torch.from_numpy(t[f"layers.1.{n}"])
    sd["fc.weight"], sd["fc.bias"] = (
        torch.from_numpy(t["layers.2.weight"]),
        torch.from_numpy(t["layers.2.bias"]),
    )
    sd["mu.weight"], sd["mu.bias"] = (
        torch.from_numpy(t["layers.4.weight"]),
        torch.from_numpy(t["layers.4.bias"]),
    )
    learner.q.load_state_dict(sd)
    return learner


def _short(flows: int = 3) -> dict:
    """mptcp-rl-media.toml, 2 s, ``flows`` concurrent 1 MB flows."""
    sc = load_scenario(MEDIA).data
    sc["sim"]["duration_s"] = 2.0
    sc["workloads"][0]["max_flows"] = flows
    return sc


def test_rust_inference_matches_pytorch(trained) -> None:
    """The same observations (an env episode driven by the runtime's network): Rust's weights
    equal PyTorch's μ mapped onto [0.1, 1] (float32, to 1e-5)."""
    result, args = trained
    path = result.written["reles"]
    net = _core.Net(str(path))
    env = make_env(args, _short())
    layout = env.unwrapped.layout
    obs, _ = env.reset(options={"scenario_seed": 1001})
    seen, done = [], False
    while not done:
        w = net.forward(obs[None].astype(np.float32))[0]
        seen.append((obs.copy(), w))
        obs, _, te, tr, _ = env.step(w)
        done = te or tr
    assert len(seen) >= 5
    x = np.stack([o for o, _ in seen]).astype(np.float32)[:, state_index(layout)]
    mu = _learner_from_file(path, args).mu(x)
    np.testing.assert_allclose(np.stack([w for _, w in seen]), weights_of(mu, 0.1), atol=1e-5)
    assert np.ptp(np.stack([w for _, w in seen])) > 0  # not a constant policy


def test_policy_runs_by_path_as_the_env_does(trained) -> None:
    """One flow (the env's controlled flow is then the only one): `policy:PATH` in Rust gives
    the same subflow table as the env driven by the runtime's network."""
    result, args = trained
    path = result.written["reles"]
    net = _core.Net(str(path))
    env = make_env(args, _short(flows=1))
    obs, _ = env.reset(options={"scenario_seed": 1001})
    n, done = 0, False
    while not done:
        obs, _, te, tr, _ = env.step(net.forward(obs[None].astype(np.float32))[0])
        n, done = n + 1, te or tr
    res = env.unwrapped.results()
    sc = _short(flows=1)
    sc["workloads"][0]["scheduler"] = f"policy:{path}"
    run = mpsched.run(sc, seed=1001)
    a, b = run.subflows.to_pandas(), res.subflows.to_pandas()
    cols = [c for c in a.columns if c != "scheduler"]
    assert a[cols].equals(b[cols])
    assert run.summary["policies"][0]["decisions"] >= n


def test_shipped_reles_runs_by_name() -> None:
    shipped = Path(mpsched.__file__).parent / "agents" / "checkpoints" / "reles-default.json"
    desc = json.loads(shipped.read_text())
    tr = desc["provenance"]["train"]
    defaults = dataclasses.asdict(Args())
    skip = ("out", "scenario")
    assert {k: tr[k] for k in defaults if k not in skip} == {
        k: v for k, v in defaults.items() if k not in skip
    }  # trained with today's defaults
    lo, hi = (int(x) for x in tr["episode_seeds"].split("-"))
    assert tuple(range(lo, hi + 1)) == P.TRAINING_SEEDS["reles"]
    assert not set(P.TRAINING_SEEDS["reles"]) & set(P.HELD_OUT)
    sc = _short()
    sc["workloads"][0]["scheduler"] = "reles"
    run = mpsched.run(sc, seed=1001)
    rows = run.summary["policies"]
    assert rows and all(r["sha256"] == _core.policy_digest("reles") for r in rows)
    assert all(g > 0 for g in run.flows.to_pydict()["goodput_mbps"])


def test_cli_trains_a_tiny_policy(cli, tmp_path: Path) -> None:
    res = cli(
        "train", "reles", "--out", "t", "--scenario", str(MEDIA), "--duration", "1",
        "--transitions", "30", "--learning-starts", "10", "--batch-size", "4",
        "--buffer-size", "50",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == f"reles: {Path('t') / 'reles.json'}"
    assert (tmp_path / "t" / "reles.safetensors").is_file()


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--transitions", "0"], "--transitions"),
        (["--scenario", "nope.toml"], "nope.toml"),
        (["--batch-size", "64", "--buffer-size", "10"], "--batch-size"),
        (["--weight-low", "1.5"], "--weight-low"),
    ],
)
def test_cli_bad_argument_is_one_line_exit_2(cli, tmp_path: Path, argv, message) -> None:
    res = cli("train", "reles", "--out", str(tmp_path / "t"), *argv)
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], lines
    assert not (tmp_path / "t").exists()


def test_cli_run_with_a_bad_checkpoint_is_one_line_exit_2(cli, mini_toml, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    for name in (f"reles:{bad}", f"policy:{bad}"):
        res = cli("run", str(mini_toml), "--scheduler", name, "--out", str(tmp_path / "o"))
        assert res.returncode == 2, res.stderr
        assert res.stderr.count("\n") == 1 and res.stderr.startswith("error: "), res.stderr
        assert str(bad) in res.stderr, res.stderr
        assert not (tmp_path / "o").exists()
    # A scheduler policy of another kind is refused by `reles:`.
    rlds = Path(mpsched.__file__).parent / "agents" / "checkpoints" / "rlds-default.json"
    res = cli("run", str(mini_toml), "--scheduler", f"reles:{rlds}", "--out", str(tmp_path / "o"))
    assert res.returncode == 2 and "not a ReLeS policy" in res.stderr, res.stderr
    assert res.stderr.count("\n") == 1
    res = cli("run", str(mini_toml), "--scheduler", "reles", "--out", str(tmp_path / "o"))
    assert res.returncode == 0, res.stderr


def test_args_and_cli_options_agree() -> None:
    from mpsched.cli.train import RELES_OPTIONS

    assert set(RELES_OPTIONS) <= {f.name for f in dataclasses.fields(Args)}
