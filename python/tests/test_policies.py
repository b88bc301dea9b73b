"""The generic policy runtime (`_core.Net`, crates/mpsched-policy/src/net.rs) agrees with
PyTorch within 1e-5 on recorded observations for every layer type and head, and rejects bad
files with one-line errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from mpsched import _core  # noqa: E402
from mpsched.policies import export, reference_forward  # noqa: E402

N_IN = 12


def nets():
    """One small network per layer type (fixed seeds), each ending in a linear layer."""
    torch.manual_seed(7)
    return {
        "mlp-relu": nn.Sequential(nn.Linear(N_IN, 32), nn.ReLU(), nn.Linear(32, 4)),
        "mlp-tanh": nn.Sequential(nn.Linear(N_IN, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 3)),
        "sigmoid-elu-leaky": nn.Sequential(
            nn.Linear(N_IN, 16), nn.Sigmoid(), nn.Linear(16, 16), nn.ELU(), nn.Linear(16, 8),
            nn.LeakyReLU(0.2), nn.Linear(8, 2),
        ),
        "layer-norm": nn.Sequential(nn.Linear(N_IN, 24), nn.LayerNorm(24), nn.ReLU(), nn.Linear(24, 5)),
        "lstm": nn.Sequential(nn.LSTM(4, 16, batch_first=True), nn.Linear(16, 2)),
        "gru": nn.Sequential(nn.GRU(3, 8), nn.Tanh(), nn.Linear(8, 3)),
        "no-bias": nn.Sequential(nn.Linear(N_IN, 8, bias=False), nn.Flatten(), nn.Linear(8, 2)),
    }  # fmt: skip


def observations(n=64, seed=3):
    return (np.random.default_rng(seed).standard_normal((n, N_IN)) * 3.0).astype(np.float32)


@pytest.mark.parametrize("name", list(nets()))
def test_rust_forward_equals_pytorch_for_each_layer_type(tmp_path, name):
    net = nets()[name]
    js, _ = export(net, tmp_path / name, input_size=N_IN)
    obs = observations()
    ours = _core.Net(str(js)).forward(obs)
    ref = reference_forward(net, obs)
    assert ours.shape == ref.shape
    assert np.abs(ours - ref).max() <= 1e-5, np.abs(ours - ref).max()


def test_heads_argmax_softmax_and_tanh(tmp_path):
    net = nets()["mlp-tanh"]
    obs = observations()
    logits = reference_forward(net, obs)
    js, _ = export(net, tmp_path / "a", input_size=N_IN, head="argmax")
    assert np.array_equal(_core.Net(str(js)).forward(obs)[:, 0], logits.argmax(axis=1))
    js, _ = export(net, tmp_path / "s", input_size=N_IN, head="softmax")
    probs = torch.softmax(torch.as_tensor(logits), dim=1).numpy()
    assert np.abs(_core.Net(str(js)).forward(obs) - probs).max() <= 1e-6
    low, high = [-1.0, 0.0, 2.0], [1.0, 5.0, 3.0]
    js, _ = export(net, tmp_path / "t", input_size=N_IN, head="tanh", low=low, high=high)
    want = np.array(low) + (np.tanh(logits) + 1) / 2 * (np.array(high) - np.array(low))
    assert np.abs(_core.Net(str(js)).forward(obs) - want).max() <= 1e-5


def test_observation_normalization(tmp_path):
    net = nets()["mlp-relu"]
    rng = np.random.default_rng(1)
    mean, std = rng.standard_normal(N_IN), rng.uniform(0.5, 2.0, N_IN)
    js, _ = export(net, tmp_path / "n", input_size=N_IN, normalize=(mean, std, 2.0))
    obs = observations()
    normed = np.clip((obs - mean.astype(np.float32)) / std.astype(np.float32), -2.0, 2.0)
    ref = reference_forward(net, normed.astype(np.float32))
    assert np.abs(_core.Net(str(js)).forward(obs) - ref).max() <= 1e-5


def test_bad_files_are_one_line_errors(tmp_path):
    net = nets()["mlp-relu"]
    js, st = export(net, tmp_path / "p", input_size=N_IN)
    desc = json.loads(js.read_text())

    def broken(edit, match):
        d = json.loads(json.dumps(desc))
        edit(d)
        js.write_text(json.dumps(d))
        with pytest.raises(Exception, match=match) as e:
            _core.Net(str(js))
        assert "\n" not in str(e.value)

    broken(lambda d: d["net"]["input"].update(size=11), r"layers\[0\].weight: expected 11 inputs")
    broken(
        lambda d: d["net"]["layers"][1].update(type="swish"), r"layers\[1\].type: expected one of"
    )
    broken(lambda d: d["net"]["layers"][0].update(weight="nope"), r'no tensor "nope"')
    broken(
        lambda d: d["net"]["head"].update(type="tanh", low=[0]), r"net.head.low: expected 4 finite"
    )
    broken(lambda d: d["net"]["layers"].pop(), r'unexpected tensor "layers.2.')
    with pytest.raises(ValueError, match="obs: expected 12 values per row"):
        js.write_text(json.dumps(desc))
        _core.Net(str(js)).forward(np.zeros((1, 5), np.float32))


def toy_env(space):
    """A one-step env with a Box observation of N_IN values and the named action space (SB3
    builds its networks from the spaces; the dynamics do not matter here)."""
    import gymnasium as gym

    action = {
        "discrete": gym.spaces.Discrete(3),
        "multibinary": gym.spaces.MultiBinary(4),
        "multidiscrete": gym.spaces.MultiDiscrete([3, 2, 4]),
        "box": gym.spaces.Box(np.array([-1.0, 0.0]), np.array([2.0, 0.5]), dtype=np.float32),
    }[space]

    class Toy(gym.Env):
        observation_space = gym.spaces.Box(-5.0, 5.0, (N_IN,), np.float32)
        action_space = action

        def reset(self, *, seed=None, options=None):
            return np.zeros(N_IN, np.float32), {}

        def step(self, a):
            return np.zeros(N_IN, np.float32), 0.0, True, False, {}

    return Toy()


SB3_CASES = [
    ("PPO", "discrete"),
    ("PPO", "multibinary"),
    ("PPO", "multidiscrete"),
    ("PPO", "box"),
    ("A2C", "discrete"),
    ("DQN", "discrete"),
    ("SAC", "box"),
    ("TD3", "box"),
]


@pytest.mark.parametrize("algo,space", SB3_CASES)
def test_sb3_actors_decide_as_predict(tmp_path, algo, space):
    """An exported SB3 actor gives `model.predict(obs, deterministic=True)`'s actions (exactly
    for discrete, binary and multi-discrete actions; within 1e-5 for continuous ones)."""
    sb3 = pytest.importorskip("stable_baselines3")

    from mpsched.policies import export_sb3

    model = getattr(sb3, algo)("MlpPolicy", toy_env(space), seed=3, device="cpu")
    # Random weights: training is not what this checks.
    js, _ = export_sb3(model, tmp_path / "p")
    obs = observations(n=200)
    ours = _core.Net(str(js)).forward(obs)
    want, _ = model.predict(obs, deterministic=True)
    want = np.asarray(want, np.float32).reshape(len(obs), -1)
    if space == "box":
        assert np.abs(ours - want).max() <= 1e-5
    else:
        assert np.array_equal(ours, want), (ours[:3], want[:3])
    desc = json.loads(js.read_text())
    assert desc["provenance"]["algorithm"] == algo.lower()


@pytest.mark.parametrize(
    "algo,space",
    [
        ("PPO", "discrete"),
        ("DQN", "discrete"),
        ("SAC", "box"),
        ("TD3", "box"),
        ("PPO", "multidiscrete"),
    ],
)
def test_export_sb3_zip_reads_no_pickle_and_decides_as_predict(tmp_path, algo, space, monkeypatch):
    """`mpsched export sb3 MODEL.zip` rebuilds the actor from the zip's tensors and plain JSON
    fields only (cloudpickle is never called) and decides as the model's `predict`."""
    sb3 = pytest.importorskip("stable_baselines3")
    from typer.testing import CliRunner

    from mpsched.cli.main import app

    model = getattr(sb3, algo)("MlpPolicy", toy_env(space), seed=4, device="cpu")
    model.save(tmp_path / "model.zip")
    import cloudpickle

    def refuse(*a, **k):
        raise AssertionError("cloudpickle must not be used")

    monkeypatch.setattr(cloudpickle, "loads", refuse)
    res = CliRunner().invoke(
        app, ["export", "sb3", str(tmp_path / "model.zip"), "--out", str(tmp_path / "p")]
    )
    assert res.exit_code == 0, res.output
    obs = observations(n=100)
    ours = _core.Net(str(tmp_path / "p.json")).forward(obs)
    want = np.asarray(model.predict(obs, deterministic=True)[0], np.float32).reshape(len(obs), -1)
    assert np.abs(ours - want).max() <= 1e-5


def test_export_sb3_bad_zip_is_one_line(tmp_path):
    from typer.testing import CliRunner

    from mpsched.cli.main import app

    (tmp_path / "x.zip").write_bytes(b"not a zip")
    res = CliRunner().invoke(
        app, ["export", "sb3", str(tmp_path / "x.zip"), "--out", str(tmp_path / "p")]
    )
    assert res.exit_code == 2 and "not a stable-baselines3 zip" in res.output
    assert not (tmp_path / "p.json").exists()
