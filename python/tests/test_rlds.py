"""RLDS-proxy (mpsched.agents.rlds, shared/specs/rl-baselines.md §4): its state, a tiny
training run, the policy file running in Rust as `policy:PATH` and deciding as PyTorch does, the
shipped `rlds` policy, and `mpsched train rlds`'s bad input (one line, exit 2)."""

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
from mpsched.agents.rlds import (  # noqa: E402
    STATE_FEATURES,
    build_qnetwork,
    make_env,
    masked_argmax,
    state_index,
    train,
)
from mpsched.agents.rlds_args import Args  # noqa: E402
from mpsched.envs import SUBFLOW_FEATURES, ObsLayout  # noqa: E402
from mpsched.scenario import load as load_scenario  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SCENARIO = REPO / "scenarios" / "pdaa3c.toml"


def _tiny(out: Path, seed: int = 1) -> Args:
    """120 transitions on 3-s episodes (30 decisions each), learning after 20."""
    return Args(
        scenario=str(SCENARIO), out=str(out), seed=seed, total_transitions=120, duration_s=3.0,
        learning_starts=20, buffer_size=100, batch_size=8, target_network_frequency=25,
    )  # fmt: skip


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("rlds") / "run"
    return train(_tiny(out), log=lambda m: None), _tiny(out)


def test_args_defaults_are_section_4s_values() -> None:
    a = Args()
    assert (a.learning_rate, a.gamma, a.buffer_size, a.batch_size) == (1e-3, 0.9, 10_000, 32)
    assert (a.start_e, a.end_e, tuple(a.hidden), a.interval_ms) == (1.0, 0.05, (64, 64), 100.0)
    net = build_qnetwork(10, a.hidden, 2)
    assert [m.out_features for m in net if isinstance(m, torch.nn.Linear)] == [64, 64, 2]
    # Training seeds are disjoint from the held-out 1001-1020.
    assert a.first_episode_seed > 1020


def test_state_index_is_the_five_features_of_each_slot_in_the_newest_frame() -> None:
    layout = ObsLayout(2, 3)
    obs = np.arange(layout.size, dtype=np.float32)
    want = layout.subflows(obs)[-1][:, [list(SUBFLOW_FEATURES).index(n) for n in STATE_FEATURES]]
    np.testing.assert_array_equal(obs[state_index(layout)], want.reshape(-1))
    assert state_index(layout).size == 2 * 5


def test_masked_argmax_keeps_to_valid_actions() -> None:
    q = np.array([[3.0, 1.0], [3.0, 1.0], [0.0, 2.0]])
    mask = np.array([[0, 1], [0, 0], [1, 1]])
    np.testing.assert_array_equal(masked_argmax(q, mask), [1, 0, 1])


def test_training_smoke_writes_a_policy_file(trained) -> None:
    result, args = trained
    assert (result.transitions, result.episodes) == (120, 5)
    assert result.updates == 100
    desc = json.loads(result.written["rlds"].read_text())
    assert desc["algorithm"] == "net" and desc["net"]["head"] == {"type": "argmax"}
    obs = desc["obs"]
    assert (obs["action"], obs["interval"], obs["busy"], obs["sender_only"]) == (
        "choose", 100.0, "minrtt", True,
    )  # fmt: skip
    prov = desc["provenance"]
    assert prov["algorithm"] == "rlds-proxy" and prov["train"]["episode_seeds"] == "10000-10004"


def test_same_seed_same_weights(trained, tmp_path: Path) -> None:
    result, _ = trained
    again = train(_tiny(tmp_path / "again"), log=lambda m: None)
    a = Path(str(result.written["rlds"]).replace(".json", ".safetensors")).read_bytes()
    b = Path(str(again.written["rlds"]).replace(".json", ".safetensors")).read_bytes()
    assert a == b


def _short() -> dict:
    """pdaa3c.toml, 3 s, with its random loss: an env episode replays `mpsched run --seed n`
    exactly when reset with ``options={"scenario_seed": n}`` (``reset(seed=n)`` draws the
    episode's scenario seed from n instead, docs/envs.md)."""
    sc = load_scenario(SCENARIO).data
    sc["sim"]["duration_s"] = 3.0
    return sc


def _drive_env(args: Args, net: "_core.Net", seed: int):
    """The env run with the runtime's network deciding (its plain argmax, as `policy:PATH`)."""
    env = make_env(dataclasses.replace(args, scenario=_short()))
    obs, _ = env.reset(options={"scenario_seed": seed})
    trace, done = [], False
    while not done:
        a = int(net.forward(obs[None].astype(np.float32))[0, 0])
        trace.append((obs.copy(), a))
        obs, _, te, tr, _ = env.step(a)
        done = te or tr
    return env.unwrapped.results(), trace


def test_policy_runs_in_rust_and_decides_as_pytorch(trained) -> None:
    result, args = trained
    path = result.written["rlds"]
    net = _core.Net(str(path))
    # The torch Q-network on the selected state gives the runtime's (folded) argmax.
    from mpsched.agents.rlds import Learner

    layout = ObsLayout(2, 1)
    res, trace = _drive_env(args, net, seed=1001)
    obs = np.stack([o for o, _ in trace]).astype(np.float32)
    learner = Learner(args, 10, 2)
    from safetensors.numpy import load_file

    tensors = load_file(str(path).replace(".json", ".safetensors"))
    idx = state_index(layout)
    sd = {
        "0.weight": torch.from_numpy(tensors["layers.0.weight"][:, idx]),
        "0.bias": torch.from_numpy(tensors["layers.0.bias"]),
        "2.weight": torch.from_numpy(tensors["layers.2.weight"]),
        "2.bias": torch.from_numpy(tensors["layers.2.bias"]),
        "4.weight": torch.from_numpy(tensors["layers.4.weight"]),
        "4.bias": torch.from_numpy(tensors["layers.4.bias"]),
    }
    learner.q.load_state_dict(sd)
    np.testing.assert_array_equal(
        learner.q_values(obs[:, idx]).argmax(axis=1), [a for _, a in trace]
    )
    # Run by name in Rust: the same simulation as the env driven by the network.
    sc = _short()
    sc["flows"][0]["scheduler"] = f"policy:{path}"
    run = mpsched.run(sc, seed=1001)
    for table in ("timeseries", "subflows"):
        a, b = getattr(run, table).to_pandas(), getattr(res, table).to_pandas()
        cols = [c for c in a.columns if c != "scheduler"]
        assert a[cols].equals(b[cols]), table
    assert run.summary["policies"][0]["decisions"] == len(trace) + 1


def test_shipped_rlds_runs_by_name() -> None:
    shipped = Path(mpsched.__file__).parent / "agents" / "checkpoints" / "rlds-default.json"
    desc = json.loads(shipped.read_text())
    tr = desc["provenance"]["train"]
    defaults = {
        k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(Args()).items()
    }
    assert {k: v for k, v in tr.items() if k in defaults and k not in ("out", "scenario")} == {
        k: v for k, v in defaults.items() if k not in ("out", "scenario")
    }  # trained with today's defaults
    lo, hi = (int(x) for x in tr["episode_seeds"].split("-"))
    assert lo > 1020 or hi < 1001  # disjoint from the held-out seeds
    sc = load_scenario(SCENARIO).data
    sc["sim"]["duration_s"] = 3.0
    sc["flows"][0]["scheduler"] = "rlds"
    run = mpsched.run(sc, seed=1001)
    (row,) = run.summary["policies"]
    assert row["decisions"] == 30 and row["sha256"] == _core.policy_digest("rlds")
    assert run.flows.to_pydict()["goodput_mbps"][0] > 0


def test_cli_trains_a_tiny_policy(cli, tmp_path: Path) -> None:
    res = cli(
        "train", "rlds", "--out", "t", "--duration", "2", "--transitions", "60",
        "--learning-starts", "10", "--batch-size", "8", "--buffer-size", "50",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == f"rlds: {Path('t') / 'rlds.json'}"
    assert (tmp_path / "t" / "rlds.safetensors").is_file()


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--transitions", "0"], "--transitions"),
        (["--scenario", "nope.toml"], "nope.toml"),
        (["--start-e", "2"], "--start-e"),
        (["--start-e", "0.2", "--end-e", "0.5"], "--end-e/--start-e"),
        (["--batch-size", "64", "--buffer-size", "10"], "--batch-size"),
        (["--max-paths", "1"], "max_paths"),
    ],
)
def test_cli_bad_argument_is_one_line_exit_2(cli, tmp_path: Path, argv, message) -> None:
    res = cli("train", "rlds", "--out", str(tmp_path / "t"), *argv)
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], lines
    assert not (tmp_path / "t").exists()


def test_args_and_cli_options_agree() -> None:
    from mpsched.cli.train import RLDS_OPTIONS

    assert set(RLDS_OPTIONS) <= {f.name for f in dataclasses.fields(Args)}


def test_runtime_refuses_a_bad_busy_field(trained, tmp_path: Path) -> None:
    result, _ = trained
    desc = json.loads(result.written["rlds"].read_text())
    desc["obs"]["busy"] = "later"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(desc))
    (tmp_path / "bad.safetensors").write_bytes(
        Path(str(result.written["rlds"]).replace(".json", ".safetensors")).read_bytes()
    )
    sc = _short()
    sc["flows"][0]["scheduler"] = f"policy:{bad}"
    with pytest.raises(
        Exception, match='obs.busy: expected "wait", "minrtt", "next" or "skip", got "later"'
    ):
        mpsched.run(sc, seed=1)
