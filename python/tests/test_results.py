"""write_results: the five files, byte-identical reruns, atomic replacement."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import mpsched
from mpsched import results as results_module
from mpsched.results import OUTPUT_FILES, write_results

PARQUET_FILES = (
    "flows.parquet",
    "subflows.parquet",
    "timeseries.parquet",
    "links.parquet",
    "queues.parquet",
)


def file_bytes(directory: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def test_write_results_writes_the_six_files(fast_dict, tmp_path):
    res = mpsched.run(fast_dict)
    out = mpsched.write_results(res, tmp_path / "out" / "fast")

    assert sorted(p.name for p in out.iterdir()) == sorted(OUTPUT_FILES)
    summary_text = (out / "summary.json").read_text()
    assert summary_text.endswith("}\n")
    assert json.loads(summary_text) == res.summary
    assert summary_text == json.dumps(res.summary, indent=2, sort_keys=True) + "\n"
    for name in ("flows", "subflows", "timeseries", "links", "queues"):
        assert pq.read_table(out / f"{name}.parquet").equals(res.tables[name]), name
    assert res.queues.num_rows > 0
    scenario_text = (out / "scenario.toml").read_text()
    assert scenario_text.rstrip("\n") == res.resolved_toml.rstrip("\n")
    assert scenario_text.endswith("\n")
    # Nothing but the destination is left in the parent: no temporary directories.
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["fast"]


def test_resolved_scenario_is_valid_toml_that_reruns_identically(fast_dict, tmp_path):
    tomllib = pytest.importorskip("tomllib")
    res = mpsched.run(fast_dict)
    tomllib.loads(res.resolved_toml)
    resolved = tmp_path / "resolved.toml"
    resolved.write_text(res.resolved_toml)
    assert mpsched.run(resolved).summary == res.summary


def test_synthetic_trace_scenario_reruns_from_its_written_copy(tmp_path):
    """cellular-synthetic's scenario.toml for seed 18446744073 recorded a derived trace seed
    above 2**63 - 1, and running it again failed ("u64 value was too large"): every recorded
    seed now fits TOML's integers, and a seed past that is refused up front."""
    scenario = Path(__file__).resolve().parents[2] / "scenarios" / "cellular-synthetic.toml"
    res = mpsched.run(scenario, seed=18_446_744_073)
    resolved = tmp_path / "resolved.toml"
    resolved.write_text(res.resolved_toml)
    assert mpsched.run(resolved).summary == res.summary
    with pytest.raises(ValueError, match=r"seed: expected an integer in \[0, 2\*\*63 - 1\]"):
        mpsched.run(scenario, seed=2**63)


def test_same_seed_gives_byte_identical_files(fast_dict, tmp_path):
    a = mpsched.write_results(mpsched.run(fast_dict, seed=3), tmp_path / "a")
    b = mpsched.write_results(mpsched.run(fast_dict, seed=3), tmp_path / "b")
    assert file_bytes(a) == file_bytes(b)


def test_different_seed_with_loss_gives_different_results(fast_dict, tmp_path):
    a = mpsched.write_results(mpsched.run(fast_dict, seed=1), tmp_path / "a")
    b = mpsched.write_results(mpsched.run(fast_dict, seed=2), tmp_path / "b")
    assert (a / "timeseries.parquet").read_bytes() != (b / "timeseries.parquet").read_bytes()
    flows_a = json.loads((a / "summary.json").read_text())["flows"]
    flows_b = json.loads((b / "summary.json").read_text())["flows"]
    assert flows_a != flows_b


def test_earlier_output_is_replaced_whole(fast_dict, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.json").write_text("{}\n")
    (out / "links.parquet").write_bytes(b"stale")
    res = mpsched.run(fast_dict)
    mpsched.write_results(res, out)
    assert sorted(p.name for p in out.iterdir()) == sorted(OUTPUT_FILES)
    assert json.loads((out / "summary.json").read_text()) == res.summary
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


@pytest.mark.parametrize("foreign", ["notes.txt", "subdir"])
def test_directory_with_other_files_is_not_replaced(fast_dict, tmp_path, foreign):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "summary.json").write_text("{}\n")
    if foreign == "subdir":
        (out / foreign).mkdir()
    else:
        (out / foreign).write_text("keep me")
    with pytest.raises(FileExistsError, match=foreign):
        mpsched.write_results(mpsched.run(fast_dict), out)
    assert sorted(p.name for p in out.iterdir()) == sorted(["summary.json", foreign])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine"]


def test_failed_write_leaves_nothing_behind(fast_dict, tmp_path, monkeypatch):
    res = mpsched.run(fast_dict)
    real_write_parquet = results_module.write_parquet

    def failing_write_parquet(table, where):
        if str(where).endswith("timeseries.parquet"):
            raise OSError(28, "No space left on device")
        return real_write_parquet(table, where)

    monkeypatch.setattr(results_module, "write_parquet", failing_write_parquet)

    # A new directory, two levels of parents to create: none of it may remain.
    with pytest.raises(OSError):
        mpsched.write_results(res, tmp_path / "a" / "b" / "out")
    assert list(tmp_path.iterdir()) == []

    # An existing directory keeps its old contents.
    old = tmp_path / "old"
    old.mkdir()
    (old / "summary.json").write_text("{}\n")
    with pytest.raises(OSError):
        mpsched.write_results(res, old)
    assert [p.name for p in tmp_path.iterdir()] == ["old"]
    assert file_bytes(old) == {"summary.json": b"{}\n"}


def test_destination_that_is_a_file_is_refused(fast_dict, tmp_path):
    target = tmp_path / "out"
    target.write_text("not a directory")
    with pytest.raises(NotADirectoryError):
        mpsched.write_results(mpsched.run(fast_dict), target)
    assert target.read_text() == "not a directory"


def test_resolved_scenario_with_relative_trace_reruns_from_elsewhere(tmp_path):
    """Trace paths are relative to the scenario file; the resolved copy makes them absolute."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "link.trace").write_text("".join(f"{ms}\n" for ms in range(1, 101)))
    (src / "s.toml").write_text(
        "[sim]\nduration_s = 2\n"
        '[[links]]\nname = "down"\ntrace = "link.trace"\ndelay_ms = 10\n'
        '[[links]]\nname = "up"\nrate_mbps = 10\ndelay_ms = 10\n'
        '[[paths]]\nname = "p"\nforward = ["down"]\nreverse = ["up"]\n'
        '[[flows]]\nname = "f"\npath = "p"\n'
    )
    res = mpsched.run(src / "s.toml")
    out = write_results(res, tmp_path / "out")
    again = mpsched.run(out / "scenario.toml")
    assert again.summary["flows"] == res.summary["flows"]
    assert again.summary["flows"][0]["bytes_delivered"] > 0


def test_streamed_run_writes_the_same_files_in_pieces(fast_toml, tmp_path, monkeypatch):
    """``run_to_dir`` (what ``mpsched run`` does) gives the files of ``write_results(run())``
    byte for byte, with the timeseries arriving in many pieces across several row groups."""
    monkeypatch.setattr(results_module, "ROW_GROUP_ROWS", 37)
    whole = mpsched.write_results(mpsched.run(fast_toml), tmp_path / "whole")
    pieces = []
    streamed = mpsched.api.run_streaming(fast_toml, pieces.append, chunk_rows=10)
    assert len([p for p in pieces if p.num_rows]) >= 3
    assert all(p.num_rows <= 10 + 4 for p in pieces)  # one sample's rows may overshoot
    progress = []
    real_run_streaming = mpsched.api.run_streaming

    def small_chunks(*args, **kwargs):
        return real_run_streaming(*args, chunk_rows=10, **kwargs)

    monkeypatch.setattr(mpsched.api, "run_streaming", small_chunks)
    res = mpsched.api.run_to_dir(
        fast_toml, tmp_path / "streamed", progress=lambda *a: progress.append(a)
    )
    assert file_bytes(tmp_path / "streamed") == file_bytes(whole)
    assert pq.ParquetFile(whole / "timeseries.parquet").metadata.num_row_groups >= 2
    assert res.summary == streamed.summary and res.timeseries.num_rows == 0
    # progress: simulated time never decreases and stays within the scenario's duration.
    times = [now for now, end, _ in progress]
    assert times == sorted(times) and all(0 <= now <= end for now, end, _ in progress)


def test_failed_streamed_run_leaves_nothing_behind(fast_toml, tmp_path):
    """A failure while the timeseries is being written (here: the caller's progress callback
    raising mid-run) removes the half-written directory; an existing one keeps its contents."""

    def disk_full(*_):
        raise OSError(28, "No space left on device")

    old = tmp_path / "old"
    old.mkdir()
    (old / "summary.json").write_text("{}\n")
    with pytest.raises(OSError, match="No space"):
        mpsched.api.run_to_dir(fast_toml, old, progress=disk_full)
    assert [p.name for p in tmp_path.iterdir()] == ["fast.toml", "old"]
    assert file_bytes(old) == {"summary.json": b"{}\n"}
