"""EdAR agent (python/mpsched/agents/edar.py), checkpoints, `mpsched train edar`, and the
Rust inference path (crates/mpsched-policy) used by `--scheduler edar:CHECKPOINT`."""

from __future__ import annotations

import json
import pickle
import shutil
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")

import mpsched  # noqa: E402
from mpsched import _core  # noqa: E402
from mpsched.agents.checkpoint import CheckpointError, save_checkpoint  # noqa: E402
from mpsched.agents.edar import (  # noqa: E402
    Args,
    EdarPolicy,
    Learner,
    build_qnetwork,
    make_env,
    read_transitions,
    split_obs,
    train,
)
from mpsched.envs import ObsLayout  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
HANDOFF = str(REPO / "scenarios" / "edar-handoff.toml")


def _observations(max_paths: int, n: int = 40, duration_s: float = 3.0) -> np.ndarray:
    env = make_env(HANDOFF, Args(max_paths=max_paths, duration_s=duration_s))
    obs, _ = env.reset(seed=3)
    out = [obs]
    for i in range(n - 1):
        obs, _, te, tr, _ = env.step(i % 2)
        out.append(obs)
        if te or tr:
            break
    return np.stack(out).astype(np.float32)


def _three_path_obs(obs2: np.ndarray) -> np.ndarray:
    """2-slot observations rewritten into a 3-slot layout with a copy of subflow 0 in slot 2."""
    l2, l3 = ObsLayout(2, 6), ObsLayout(3, 6)
    out = np.zeros((len(obs2), l3.size), np.float32)
    sub2, conn2, mask2 = l2.subflows(obs2), l2.connection(obs2), l2.path_mask(obs2)
    f3 = out[:, : 6 * l3.frame_len].reshape(len(obs2), 6, l3.frame_len)
    nsf = sub2.shape[-1]
    for i in range(2):
        f3[:, :, i * nsf : (i + 1) * nsf] = sub2[:, :, i]
    f3[:, :, 2 * nsf : 3 * nsf] = sub2[:, :, 0]
    f3[:, :, 3 * nsf :] = conn2
    out[:, 6 * l3.frame_len : 6 * l3.frame_len + 2] = mask2
    out[:, 6 * l3.frame_len + 2] = mask2[:, 0]
    return out


def test_network_shapes_two_and_three_subflows() -> None:
    torch.manual_seed(0)
    q = build_qnetwork()
    obs2 = _observations(2)
    for layout, obs in ((ObsLayout(2, 6), obs2), (ObsLayout(3, 6), _three_path_obs(obs2))):
        sub, conn, mask = split_obs(obs, layout)
        assert sub.shape == (len(obs), layout.max_paths, 6, 6)
        assert conn.shape == (len(obs), 3) and mask.shape == (len(obs), layout.max_paths)
        out = q(torch.from_numpy(sub), torch.from_numpy(conn), torch.from_numpy(mask))
        assert out.shape == (len(obs), 2) and torch.isfinite(out).all()
    # The third subflow changes the representation (LSTM2 takes one more step) ...
    l2, l3 = ObsLayout(2, 6), ObsLayout(3, 6)
    with torch.no_grad():
        q2 = q(*map(torch.from_numpy, split_obs(obs2, l2)))
        q3 = q(*map(torch.from_numpy, split_obs(_three_path_obs(obs2), l3)))
        assert not torch.allclose(q2[5:], q3[5:])
        # ... while empty slots are skipped: 2 subflows in 4 slots = 2 subflows in 2 slots.
        obs4 = _observations(4)
        sub, conn, mask = split_obs(obs4, ObsLayout(4, 6))
        assert mask[-1, 2:].sum() == 0
        full = q(torch.from_numpy(sub), torch.from_numpy(conn), torch.from_numpy(mask))
        cut = q(
            torch.from_numpy(sub[:, :2].copy()),
            torch.from_numpy(conn),
            torch.from_numpy(mask[:, :2].copy()),
        )
        assert torch.allclose(full, cut, atol=1e-6)


def test_state_is_the_papers_features() -> None:
    obs = _observations(2, n=10)
    layout = ObsLayout(2, 6)
    sub, conn, mask = split_obs(obs, layout)
    raw = layout.subflows(obs)  # [B, H, P, 11]
    from mpsched.envs import CONN_FEATURES, SUBFLOW_FEATURES

    # Subflow 1's RTT series, oldest first, is the srtt column of the frames.
    np.testing.assert_array_equal(sub[:, 1, 0, :], raw[:, :, 1, SUBFLOW_FEATURES.index("srtt")])
    np.testing.assert_array_equal(sub[:, 0, 4, :], raw[:, :, 0, SUBFLOW_FEATURES.index("loss")])
    # M_t = (a_{t-1}, b_t, I_t) of the newest frame; a_{t-1} alternates as the actions did.
    np.testing.assert_array_equal(
        conn[:, 0], layout.connection(obs)[:, -1, CONN_FEATURES.index("prev_mode")]
    )
    assert set(conn[1:, 0].tolist()) == {0.0, 1.0}
    assert (mask[-1] == 1).all()


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("edar") / "run"
    args = Args(
        out=str(out),
        scenario=[HANDOFF],
        duration_s=2.0,
        offline_episodes=2,
        offline_iterations=40,
        steps=60,
        online_iterations=20,
        batch_size=16,
        max_paths=2,
        seed=7,
    )
    written = train(args, log=lambda m: None)
    assert set(written) == {"offline", "edar-p", "edar-o"}
    return out


def test_training_writes_tensorboard_and_checkpoints(trained: Path) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = list((trained / "runs").glob("events.out.tfevents.*"))
    assert len(events) == 1
    acc = EventAccumulator(str(trained / "runs"))
    acc.Reload()
    tags = set(acc.Tags()["scalars"])
    assert {"charts/episodic_return", "charts/SPS", "losses/td_loss", "losses/q_values"} <= tags
    assert len(acc.Scalars("charts/episodic_return")) >= 3  # 2 offline flows + online flows
    meta = json.loads((trained / "edar-o.json").read_text())
    assert (
        meta["variant"] == "edar-o"
        and meta["train"]["gamma"] == 0.6
        and meta["train"]["tau"] == 0.01
    )
    assert meta["train"]["online_steps"] == 60
    # Provenance a retraining must match: the scenario's bytes and the package's version.
    import hashlib

    import mpsched

    assert meta["train"]["scenario_sha256"] == [
        hashlib.sha256(Path(HANDOFF).read_bytes()).hexdigest()
    ]
    assert meta["train"]["mpsched_version"] == mpsched.__version__
    # The offline data reads back for the same layout, with both behaviour policies' actions.
    rep = read_transitions(trained / "offline.parquet", ObsLayout(2, 6))
    assert len(rep) > 20 and rep.obs.shape[1] == ObsLayout(2, 6).size


def test_checkpoint_round_trip_gives_identical_q_values(trained: Path) -> None:
    obs = _observations(2, n=30)
    layout = ObsLayout(2, 6)
    p1 = EdarPolicy.load(trained / "edar-o.json")
    p2 = EdarPolicy.load(trained / "edar-o.safetensors")
    q1, q2 = p1.q_values(obs, layout), p2.q_values(obs, layout)
    np.testing.assert_array_equal(q1, q2)
    # Different weights after online learning than after offline learning only.
    assert not np.array_equal(q1, EdarPolicy.load(trained / "edar-p").q_values(obs, layout))
    # Re-saving the loaded weights gives the same file bytes (deterministic writer).
    tensors = {k: v.numpy() for k, v in p1.qnet.state_dict().items()}
    save_checkpoint(
        trained / "copy",
        tensors,
        {k: v for k, v in p1.desc.items() if k not in ("sha256", "tensors", "weights", "format")},
    )
    assert (trained / "copy.safetensors").read_bytes() == (
        trained / "edar-o.safetensors"
    ).read_bytes()


def test_training_is_deterministic(tmp_path: Path) -> None:
    def run(name: str) -> bytes:
        args = Args(
            out=str(tmp_path / name),
            scenario=[HANDOFF],
            duration_s=1.0,
            offline_episodes=2,
            offline_iterations=10,
            steps=0,
            batch_size=8,
            max_paths=2,
            seed=3,
        )
        train(args, log=lambda m: None)
        return (tmp_path / name / "edar-p.safetensors").read_bytes()

    assert run("a") == run("b")


def _copy(trained: Path, dst: Path) -> Path:
    for suffix in (".json", ".safetensors"):
        shutil.copy(trained / f"edar-o{suffix}", dst / f"ck{suffix}")
    return dst / "ck.json"


def test_checkpoint_validation_errors(trained: Path, tmp_path: Path) -> None:
    ck = _copy(trained, tmp_path)
    st = ck.with_suffix(".safetensors")
    meta = json.loads(ck.read_text())

    def err(match: str) -> None:
        with pytest.raises(CheckpointError, match=match) as e:
            EdarPolicy.load(ck)
        assert "\n" not in str(e.value)

    # A wrong shape in the description (network declared bigger than the weights).
    ck.write_text(json.dumps(dict(meta, net=dict(meta["net"], lstm2_units=61))))
    err(
        r"ck\.safetensors: tensor 'lstm2\.weight_ih': expected shape \[244, 120\], got \[240, 120\]"
    )
    # Missing metadata.
    ck.write_text(json.dumps({k: v for k, v in meta.items() if k != "net"}))
    err(r"ck\.json: missing field 'net\.lstm1_units'")
    ck.write_text(json.dumps(dict(meta, algorithm="ppo")))
    err(r"field 'algorithm': expected 'edar'")
    ck.unlink()
    err(r"ck\.json: checkpoint description not found")
    # Weights that do not match the description's digest.
    ck.write_text(json.dumps(meta))
    blob = bytearray(st.read_bytes())
    blob[-1] ^= 0xFF
    st.write_bytes(bytes(blob))
    err(r"weights do not match ck\.json \(field 'sha256'\)")
    # A pickle (torch.save) file in place of the weights is refused before anything is unpickled.
    torch.save({"x": torch.zeros(2)}, st)
    err(r"a pickle or torch\.save file, not safetensors")
    st.write_bytes(pickle.dumps({"x": 1}))
    err(r"a pickle or torch\.save file, not safetensors")
    # The Rust loader refuses it too.
    with pytest.raises(_core.ScenarioError, match="pickle"):
        _core.EdarNet(str(ck))


def test_rust_and_python_inference_agree(trained: Path) -> None:
    for max_paths, obs in (
        (2, _observations(2, n=60)),
        (3, _three_path_obs(_observations(2, n=60))),
    ):
        layout = ObsLayout(max_paths, 6)
        py = EdarPolicy.load(trained / "edar-o.json")
        rs = _core.EdarNet(str(trained / "edar-o.json"))
        q_py = py.q_values(obs, layout)
        q_rs, start = rs.q_values(obs, max_paths)
        np.testing.assert_allclose(q_rs, q_py, rtol=1e-5, atol=1e-5)
        a_rs = np.where(start, 1, q_rs.argmax(1))
        np.testing.assert_array_equal(a_rs, py.act(obs, layout))


def _sha256(*files: Path) -> str:
    import hashlib

    h = hashlib.sha256()
    for f in files:
        h.update(f.read_bytes())
    return h.hexdigest()


def test_run_with_edar_scheduler(trained: Path) -> None:
    import mpsched
    from mpsched.matrix import load_scenario

    sc = load_scenario(Path(HANDOFF))
    sc["sim"]["duration_s"] = 3.0
    sc["flows"][0]["scheduler"] = f"edar:{trained / 'edar-o.json'}"
    r1 = mpsched.run(sc, seed=2)
    r2 = mpsched.run(sc, seed=2)
    assert r1.flows.column("scheduler").to_pylist()[0] == sc["flows"][0]["scheduler"]
    assert r1.flows.equals(r2.flows) and r1.timeseries.equals(r2.timeseries)
    # The decision statistics come back with the results: the count in the summary (with the
    # policy's digest), the wall-clock latency in `decisions` only.
    (row,) = r1.summary["policies"]
    assert row["flow"] == sc["flows"][0]["name"] and row["decisions"] > 10
    assert row["sha256"] == _sha256(trained / "edar-o.json", trained / "edar-o.safetensors")
    assert r1.summary == r2.summary
    stats = r1.decisions[sc["flows"][0]["name"]]
    assert stats["decisions"] == row["decisions"] and 0 < stats["p50_ns"] <= stats["max_ns"]
    # A different policy (always-normal minRTT) gives a different run.
    sc["flows"][0]["scheduler"] = "minrtt"
    assert not mpsched.run(sc, seed=2).timeseries.equals(r1.timeseries)


def test_cli_run_scheduler_edar_and_bad_checkpoint(trained: Path, tmp_path: Path, cli) -> None:
    sc = tmp_path / "short.toml"
    sc.write_text(Path(HANDOFF).read_text().replace("duration_s = 100", "duration_s = 2"))
    res = cli(
        "run",
        str(sc),
        "--scheduler",
        f"edar:{trained / 'edar-o.json'}",
        "--out",
        str(tmp_path / "o"),
    )
    assert res.returncode == 0, res.stderr
    assert "µs per decision" in res.stdout
    assert (tmp_path / "o" / "summary.json").is_file()
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    res = cli("run", str(sc), "--scheduler", f"edar:{bad}", "--out", str(tmp_path / "o2"))
    assert res.returncode == 2
    assert res.stderr.count("\n") == 1 and "missing field 'format'" in res.stderr
    assert not (tmp_path / "o2").exists()


def test_online_learning_from_a_checkpoint(trained: Path, tmp_path: Path) -> None:
    """``--init edar-p.json``: EdAR-o adapting online to a new network, starting from EdAR-p's
    weights (no offline phase); the result differs from the start and records where it began."""
    out = tmp_path / "o"
    args = Args(
        out=str(out),
        scenario=[HANDOFF],
        duration_s=2.0,
        steps=40,
        online_iterations=10,
        batch_size=16,
        max_paths=2,
        seed=3,
        init=str(trained / "edar-p.json"),
    )
    written = train(args, log=lambda m: None)
    assert set(written) == {"edar-o"} and not (out / "edar-p.json").exists()
    meta = json.loads((out / "edar-o.json").read_text())
    assert (
        meta["train"]["init"] == str(trained / "edar-p.json")
        and meta["train"]["online_steps"] == 40
    )
    obs = _observations(2, n=10)
    layout = ObsLayout(2, 6)
    q0 = EdarPolicy.load(trained / "edar-p.json").q_values(obs, layout)
    q1 = EdarPolicy.load(out / "edar-o.json").q_values(obs, layout)
    assert not np.allclose(q0, q1)
    with pytest.raises(CheckpointError):
        train(
            Args(
                out=str(tmp_path / "bad"),
                scenario=[HANDOFF],
                steps=10,
                init=str(tmp_path / "none.json"),
            ),
            log=lambda m: None,
        )
    assert not (tmp_path / "bad").exists()


def test_compare_with_trained_policies(trained: Path, tmp_path: Path) -> None:
    """``--scheduler edar:PATH`` in compare: safe run directories, distinct labels for two
    checkpoints with the same file name, and the weights in the scenario hash."""
    from mpsched.matrix import MatrixError, build_matrix, parse_names

    sc = tmp_path / "short.toml"
    sc.write_text(Path(HANDOFF).read_text().replace("duration_s = 100", "duration_s = 1"))
    other = tmp_path / "other"
    other.mkdir()
    for ext in (".json", ".safetensors"):
        shutil.copy(trained / f"edar-p{ext}", other / f"edar-o{ext}")
    names = parse_names(
        f"edar,edar:{trained / 'edar-o.json'},edar:{other / 'edar-o.json'},minrtt", "--scheduler"
    )
    m = build_matrix(sc, [1], names, None)
    ids = [r.run_id for r in m.runs]
    assert ids[0] == "edar_seed1" and ids[1] == "edar-edar-o_seed1" and ids[3] == "minrtt_seed1"
    assert ids[2].startswith("edar-edar-o-") and len(set(ids)) == 4
    assert all("/" not in i and ":" not in i for i in ids)
    assert [r.scheduler for r in m.runs] == names
    # Same scenario, different weights: different hashes (resume must not reuse results).
    assert len({r.scenario_hash for r in m.runs}) == 4
    with pytest.raises(MatrixError, match="no_such.json"):
        parse_names(f"edar:{tmp_path / 'no_such.json'}", "--scheduler")
    # Not a policy prefix: `name:...` is an algorithm with parameters, checked by the core.
    with pytest.raises(MatrixError, match=r"'blest:x.json': \"x.json\": expected key=value"):
        parse_names("blest:x.json", "--scheduler")
    with pytest.raises(MatrixError, match='unknown congestion control "edar"'):
        parse_names("edar:x", "--cc")
    # A scenario file naming a missing checkpoint: one line naming the file and the field.
    bad = tmp_path / "bad.toml"
    bad.write_text(
        sc.read_text().replace(
            'scheduler = "minrtt"', f'scheduler = "edar:{tmp_path / "gone.json"}"'
        )
    )
    with pytest.raises(MatrixError, match=r"bad.toml: flows\[0\].scheduler: .*gone.json"):
        build_matrix(bad, [1], None, None)


def test_reproduce_edar_small(trained: Path, tmp_path: Path, cli) -> None:
    """`reproduce edar` end to end on shortened copies of the handoff scenario and setting iv,
    EdAR-o adapted online in each (30 steps here): claims, results, figures."""
    from mpsched.reproduce import protocol as P
    from mpsched.reproduce.edar import reproduce_edar

    scen = tmp_path / "scenarios"
    scen.mkdir()
    (scen / "edar-handoff.toml").write_text(
        Path(HANDOFF).read_text().replace("duration_s = 100", "duration_s = 30")
    )
    s4 = (REPO / "scenarios" / "edar-setting-4.toml").read_text()
    s4 = s4.replace("size_bytes = { range = [10000000, 100000000] }", "size_bytes = 1000000")
    assert "size_bytes = 1000000" in s4
    (scen / "edar-setting-4.toml").write_text(s4)
    out = tmp_path / "rep"
    claims = reproduce_edar(
        out,
        seeds=[1001, 1002],
        checkpoint_p=trained / "edar-p.json",
        checkpoint_o=trained / "edar-o.json",
        groups=["handoff", "settings"],
        baselines=["minrtt-norp", "minrtt"],
        adapt_steps=30,
        scenario_dir=scen,
        cases=["edar-handoff", "edar-setting-4"],
    )
    by_id = {c.id: c for c in claims}
    c = by_id["ho-gain-edar-o-handoff"]
    assert c.verdict != P.NOT_MEASURED and c.ours_a.n == 2 and c.ours_b.n == 2
    assert by_id["s4-o-over-p"].verdict != P.NOT_MEASURED
    assert by_id["ho-edar-o-blest"].verdict == P.NOT_MEASURED  # BLEST did not run
    # EdAR-o learnt online in each network it was evaluated in (30 steps here).
    for case in ("edar-handoff", "edar-setting-4"):
        meta = json.loads((out / "adapted" / case / "edar-o.json").read_text())["train"]
        assert meta["online_steps"] == 30 and meta["init"] == str(
            (trained / "edar-p.json").resolve()
        )
    for fig in ("fig8-handoff-goodput.png", "fig9a-handoff-periods.png", "fig12-settings.png"):
        assert (out / "figures" / fig).stat().st_size > 1000
    res = cli("reproduce", "edar", "--only", "nope", "--out", str(tmp_path / "x"))
    assert res.returncode == 2 and "--only: unknown 'nope'" in res.stderr
    res = cli(
        "reproduce",
        "edar",
        "--edar-p",
        str(tmp_path / "missing.json"),
        "--out",
        str(tmp_path / "x"),
    )
    assert res.returncode == 2 and res.stderr.startswith("error: --edar-p:")
    assert not (tmp_path / "x").exists()


def test_cli_train_rejects_bad_offline_data(tmp_path: Path, cli) -> None:
    bad = tmp_path / "data.parquet"
    bad.write_bytes(b"not parquet")
    res = cli(
        "train",
        "edar",
        "--scenario",
        HANDOFF,
        "--offline-data",
        str(bad),
        "--out",
        str(tmp_path / "t"),
        "--steps",
        "0",
    )
    assert res.returncode == 2
    assert res.stderr.startswith("error: ") and "not a Parquet transitions file" in res.stderr
    assert not (tmp_path / "t").exists()


def test_learner_update_reduces_td_error_on_fixed_batch() -> None:
    """The TD update moves Q(s, a) toward r + γ max Q'(s', ·) (Algorithm 1, l. 19)."""
    torch.manual_seed(1)
    args = Args(max_paths=2, batch_size=32, learning_rate=1e-3)
    layout = ObsLayout(2, 6)
    obs = _observations(2, n=33)
    from mpsched.agents.edar import Replay

    n = len(obs) - 1
    rep = Replay(
        obs[:-1],
        np.arange(n) % 2,
        np.full(n, 5.0),
        obs[1:],
        np.zeros(n, bool),
        np.zeros(n, bool),
        np.zeros(n, np.int32),
        np.zeros((n, 0)),
        [],
    )
    learner = Learner(args, layout)
    rng = np.random.default_rng(0)
    first = learner.update(rep, rng)[0]
    for _ in range(60):
        last = learner.update(rep, rng)[0]
    assert last < first * 0.5


def test_shipped_default_checkpoint_loads_in_python_and_rust() -> None:
    DEFAULT_CHECKPOINT = Path(mpsched.__file__).parent / "agents" / "checkpoints" / "edar-default"
    # `edar` is the checkpoint built into the runtime: the same bytes as the package's files.
    assert _core.policy_digest("edar") == _sha256(
        Path(f"{DEFAULT_CHECKPOINT}.json"), Path(f"{DEFAULT_CHECKPOINT}.safetensors")
    )
    assert _core.policy_digest("minrtt") is None
    py = EdarPolicy.load(DEFAULT_CHECKPOINT)
    assert py.desc["variant"] == "edar-o" and py.history == 6
    obs = _observations(4, n=20)
    q_rs, _ = _core.EdarNet(str(DEFAULT_CHECKPOINT) + ".json").q_values(obs, 4)
    np.testing.assert_allclose(q_rs, py.q_values(obs, ObsLayout(4, 6)), rtol=1e-5, atol=1e-5)
