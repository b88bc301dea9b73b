"""`mpsched collect`: offline transitions, read back as a replay buffer."""

from __future__ import annotations

import numpy as np
import pytest
from test_envs import LOSSY

from mpsched.collect import CollectError, collect, load_transitions, write_transitions
from mpsched.envs import CONN_FEATURES, SUBFLOW_FEATURES


@pytest.fixture(scope="module")
def redundant_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("collect") / "t.parquet"
    table = collect(
        LOSSY, "always-redundant", 2, seed=4, interval=100.0, history=2, max_paths=2, duration_s=2.0
    )
    write_transitions(table, path)
    return path


def test_transitions_round_trip_as_a_replay_buffer(redundant_file):
    t = load_transitions(redundant_file)
    # 2 episodes × (2 s / 100 ms - 1): the first interval is the reset's observation.
    assert len(t) == 38 and list(np.bincount(t.episode)) == [19, 19]
    frame = 2 * len(SUBFLOW_FEATURES) + len(CONN_FEATURES)
    assert t.obs.shape == (38, 2 * frame + 2) and t.action.shape == (38, 1)
    assert (t.action == 1).all() and t.meta["policy"] == "always-redundant"
    # Within an episode, the next observation is the following row's observation.
    same = t.episode[1:] == t.episode[:-1]
    assert np.array_equal(t.next_obs[:-1][same], t.obs[1:][same])
    # Each episode ends truncated at the scenario's duration.
    assert list(np.flatnonzero(t.truncated)) == [18, 37] and not t.terminated.any()
    # The stored reward is EdAR's, recomputable from the stored terms.
    assert np.allclose(t.relabel("edar").reward, t.reward)
    g = t.relabel("goodput").reward
    assert (g >= 0).all() and (g <= 1.05).all()
    batch = t.sample(8, np.random.default_rng(0))
    assert batch["obs"].shape == (8, t.obs.shape[1])


def test_collect_is_deterministic(tmp_path):
    a = collect(
        LOSSY, "random", 1, seed=9, action="select", interval=100.0, max_paths=2, duration_s=1.0
    )
    b = collect(
        LOSSY, "random", 1, seed=9, action="select", interval=100.0, max_paths=2, duration_s=1.0
    )
    assert a.equals(b)


def test_not_a_transitions_file(tmp_path):
    bad = tmp_path / "x.parquet"
    bad.write_bytes(b"\x80\x04K\x01.")  # a pickle, not Parquet
    with pytest.raises(CollectError, match="not a readable Parquet file"):
        load_transitions(bad)


def test_cli_collect(cli, tmp_path):
    import json

    scen = tmp_path / "lossy.json"
    scen.write_text(json.dumps(LOSSY))
    proc = cli(
        "collect",
        str(scen),
        "--policy",
        "minrtt",
        "--episodes",
        "1",
        "--duration",
        "1",
        "--interval",
        "100",
        "--out",
        str(tmp_path / "o.parquet"),
    )
    assert proc.returncode == 0, proc.stderr
    assert len(load_transitions(tmp_path / "o.parquet")) == 9  # 1 s / 100 ms, minus the reset
    proc = cli("collect", str(scen), "--policy", "always-redundant", "--action", "weights")
    assert (
        proc.returncode == 2
        and proc.stderr.strip()
        == "error: --policy always-redundant: needs --action mode, got weights"
    )
    assert not (tmp_path / "out").exists()
