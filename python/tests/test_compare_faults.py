"""Faults around a ``compare`` sweep: a damaged finished run is redone on resume, and the
workers die with a killed parent."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Set

import pytest
from test_compare import combined_bytes

from mpsched.matrix import build_matrix
from mpsched.sweep import RUNS_DIR, run_sweep


def test_a_truncated_parquet_of_a_finished_run_is_redone_on_resume(mini_toml, tmp_path):
    m = build_matrix(mini_toml, [1, 2], ["minrtt", "blest"])
    whole = tmp_path / "whole"
    run_sweep(m, whole, jobs=1)
    out = tmp_path / "damaged"
    run_sweep(m, out, jobs=1)
    flows = out / RUNS_DIR / "blest_seed1" / "flows.parquet"
    flows.write_bytes(flows.read_bytes()[: flows.stat().st_size // 2])
    again = run_sweep(m, out, jobs=1)
    assert (again.ran, again.reused) == (1, 3)
    assert combined_bytes(out) == combined_bytes(whole)


def test_a_resume_with_nothing_new_keeps_current_combined_tables(mini_toml, tmp_path, monkeypatch):
    """Nothing to run and the combined tables match the runs: they are not rebuilt (no run
    table is read); a truncated combined table, or one whose row count differs from its runs',
    is rebuilt."""
    import mpsched.sweep as sweep

    m = build_matrix(mini_toml, [1, 2], ["minrtt", "blest"])
    out = tmp_path / "out"
    run_sweep(m, out, jobs=1)
    want = combined_bytes(out)
    other = tmp_path / "other"
    run_sweep(build_matrix(mini_toml, [1], ["minrtt"]), other, jobs=1)
    calls = []
    real = sweep.combine_runs
    monkeypatch.setattr(sweep, "combine_runs", lambda o, mm: (calls.append(o), real(o, mm)))
    again = run_sweep(m, out, jobs=1)
    assert (again.ran, again.reused, calls) == (0, 4, [])
    assert combined_bytes(out) == want
    table = out / "timeseries.parquet"
    table.write_bytes(table.read_bytes()[: table.stat().st_size // 2])
    run_sweep(m, out, jobs=1)
    assert len(calls) == 1 and combined_bytes(out) == want
    # A combined table of other runs (the row counts differ): rebuilt.
    (out / "flows.parquet").write_bytes((other / "flows.parquet").read_bytes())
    run_sweep(m, out, jobs=1)
    assert len(calls) == 2 and combined_bytes(out) == want


# Runs of a few seconds each, so that workers are busy when the parent is killed.
SLOW_TOML = """\
[sim]
duration_s = 120.0
stop_when_done = false

[[paths]]
name = "a"
rate_mbps = 200.0
delay_ms = 5.0

[[paths]]
name = "b"
rate_mbps = 200.0
delay_ms = 10.0

[[flows]]
name = "mp"
paths = ["a", "b"]
"""


def _descendants(root: int) -> Set[int]:
    """Live (not zombie) processes below ``root``, from /proc."""
    parent = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z":
            parent[int(entry)] = int(fields[1])
    found, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, ppid in parent.items() if ppid in frontier} - found
        found |= frontier
    return found


def _alive(pids: Set[int]) -> Set[int]:
    out = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            out.add(pid)
    return out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="parent-death signal is Linux's")
def test_killing_compare_kills_its_workers(tmp_path):
    scenario = tmp_path / "slow.toml"
    scenario.write_text(SLOW_TOML)
    cmd = [sys.executable, "-m", "mpsched", "compare", str(scenario), "--seeds", "1-4"]
    proc = subprocess.Popen(
        [*cmd, "--jobs", "2", "--out", "cmp"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    workers: Set[int] = set()
    try:
        deadline = time.monotonic() + 60
        # The fork server and two workers.
        while len(workers) < 3 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
            workers = _descendants(proc.pid)
        assert len(workers) >= 3, "the sweep's workers did not start"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        deadline = time.monotonic() + 15
        while _alive(workers) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _alive(workers), f"workers still running after their parent died: {workers}"
    finally:
        for pid in _alive(workers):
            os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
