"""`mpsched compare`: seeds syntax, the matrix, the combined dataset, resuming, jobs, backends, errors."""

from __future__ import annotations

import fcntl
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import types
from pathlib import Path
from typing import Dict, List

import pyarrow.parquet as pq
import pytest

import mpsched
from mpsched.dataset import ResultsError, load_results
from mpsched.matrix import MatrixError, build_matrix, format_seeds, parse_names, parse_seeds
from mpsched.sweep import (
    KILL_AFTER_ENV,
    MANIFEST,
    RUN_FILES,
    RUN_KEYS,
    BackendError,
    OutputDirError,
    SweepInterrupted,
    run_sweep,
)

COMBINED = (
    "flows.parquet",
    "subflows.parquet",
    "timeseries.parquet",
    "links.parquet",
    "queues.parquet",
    MANIFEST,
)


def combined_bytes(out: Path) -> Dict[str, bytes]:
    return {name: (out / name).read_bytes() for name in COMBINED}


def assert_one_error_line(proc: subprocess.CompletedProcess, code: int = 2) -> str:
    assert proc.returncode == code, proc
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: "), proc.stderr
    return lines[0]


# --- seeds and names ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, seeds",
    [
        ("7", [7]),
        ("0", [0]),
        ("1-10", list(range(1, 11))),
        ("1,3,5", [1, 3, 5]),
        ("1-3,7", [1, 2, 3, 7]),
        (" 2 , 4-5 ", [2, 4, 5]),
        ("5-5", [5]),
        (str(2**63 - 1), [2**63 - 1]),
    ],
)
def test_parse_seeds(text, seeds):
    assert parse_seeds(text) == seeds
    assert parse_seeds(format_seeds(seeds)) == seeds


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "expected seeds like"),
        ("a", "expected seeds like"),
        ("1-", "expected seeds like"),
        ("-1", "expected seeds like"),
        ("1.5", "expected seeds like"),
        ("1,,2", "expected seeds like"),
        ("1..3", "expected seeds like"),
        ("5-1", "goes down"),
        ("1,1", "given twice"),
        ("1-3,2", "given twice"),
        (str(2**63), "above the largest seed"),
        ("1-1000000", "more than"),
        # Other scripts' digits, which int() reads ("\uff11" is a fullwidth 1): ASCII only.
        ("\uff11", "expected seeds like"),
        ("1-\u0663", "expected seeds like"),
    ],
)
def test_bad_seeds(text, message):
    with pytest.raises(MatrixError, match=message) as info:
        parse_seeds(text)
    assert "\n" not in str(info.value)


def test_format_seeds_is_compact():
    assert format_seeds([1, 2, 3, 7, 9, 10]) == "1-3,7,9-10"


@pytest.mark.parametrize("text", ["", "minrtt,", "minrtt,minrtt", "../x", "a b"])
def test_bad_names(text):
    with pytest.raises(MatrixError, match="--scheduler"):
        parse_names(text, "--scheduler")


# --- the matrix -----------------------------------------------------------------------------


def test_matrix_order_ids_and_overrides(mini_toml):
    m = build_matrix(mini_toml, [1, 2], ["blest", "ecf"], ["olia"])
    assert [r.run_id for r in m.runs] == [
        "blest_olia_seed1",
        "blest_olia_seed2",
        "ecf_olia_seed1",
        "ecf_olia_seed2",
    ]
    first = m.runs[0]
    assert (first.scheduler, first.cc, first.seed) == ("blest", "olia", 1)
    flows = {f["name"]: f for f in first.scenario["flows"]}
    assert flows["mp"]["scheduler"] == "blest"  # multipath flows get the scheduler
    assert "scheduler" not in flows["tcp"]  # single-path flows do not
    assert flows["mp"]["cc"] == flows["tcp"]["cc"] == "olia"  # every flow gets the cc
    assert len({r.scenario_hash for r in m.runs}) == 4


def test_matrix_without_overrides_labels_from_the_scenario(mini_toml):
    m = build_matrix(mini_toml, None)
    (run,) = m.runs
    assert (run.run_id, run.scheduler, run.cc, run.seed) == ("seed1", "minrtt", "lia+cubic", 1)


WORKLOAD_TOML = """\
[sim]
duration_s = 1.0

[[paths]]
name = "a"
rate_mbps = 10.0
delay_ms = 10.0

[[paths]]
name = "b"
rate_mbps = 5.0
delay_ms = 20.0

[[workloads]]
name = "w"
paths = ["a", "b"]
scheduler = "roundrobin"
cc = "lia"
arrival = "periodic"
start_s = 0.1
period_s = 0.2
max_flows = 3
size = { dist = "fixed", bytes = 20000 }

[[workloads]]
name = "t"
path = "a"
cc = "cubic"
arrival = "periodic"
start_s = 0.2
period_s = 0.5
max_flows = 1
size = { dist = "fixed", bytes = 20000 }
"""


def test_overrides_reach_the_flows_of_workloads(tmp_path):
    """Workloads set the algorithms of the flows they generate: --scheduler (multipath ones)
    and --cc apply to them, and the labels come from their flows (starting after the check
    run's 1 ms does not hide them)."""
    path = tmp_path / "w.toml"
    path.write_text(WORKLOAD_TOML)
    (run,) = build_matrix(path, [1]).runs
    assert (run.scheduler, run.cc) == ("roundrobin", "lia+cubic")
    m = build_matrix(path, [1], ["blest"], ["olia"])
    (run,) = m.runs
    w, t = run.scenario["workloads"]
    assert (w["scheduler"], w["cc"], t["cc"]) == ("blest", "olia", "olia")
    assert "scheduler" not in t
    flows = mpsched.run(run.scenario).flows
    assert flows.column("name").to_pylist() == ["w-0", "w-1", "w-2", "t-0"]
    assert flows.column("scheduler").to_pylist()[:3] == ["blest"] * 3
    assert set(flows.column("cc").to_pylist()) == {"olia"}


def test_run_cli_overrides_the_scheduler_of_workloads(tmp_path, cli):
    """`mpsched run --scheduler` reaches workload-generated flows, as `compare` does (it used to
    look only at `[[flows]]` and refused every workload scenario: README's
    `mpsched run scenarios/mptcp-rl-long.toml --scheduler mptcp-rl` failed)."""
    (tmp_path / "w.toml").write_text(WORKLOAD_TOML)
    done = cli("run", "w.toml", "--scheduler", "blest", "--out", "o")
    assert done.returncode == 0, done.stderr
    flows = pq.read_table(tmp_path / "o" / "flows.parquet")
    assert flows.column("scheduler").to_pylist()[:3] == ["blest"] * 3
    single = tmp_path / "s.toml"
    head, _multipath, tcp = WORKLOAD_TOML.split("[[workloads]]")
    single.write_text(head + "[[workloads]]" + tcp)  # the single-path workload only
    done = cli("run", "s.toml", "--scheduler", "blest", "--out", "p")
    assert done.returncode == 2 and "has no multipath flow" in done.stderr
    assert not (tmp_path / "p").exists()


def test_scheduler_needs_a_multipath_flow(fast_toml):
    with pytest.raises(MatrixError, match="no multipath flow"):
        build_matrix(fast_toml, [1], ["blest"])


def test_unknown_scheduler_is_the_cores_error_naming_the_file(mini_toml):
    with pytest.raises(MatrixError) as info:
        build_matrix(mini_toml, [1], ["nope"])
    message = str(info.value)
    assert message.startswith(f"{mini_toml}: flows[0].scheduler: unknown scheduler")
    assert "\n" not in message


def test_trace_paths_are_resolved_and_hashed_by_content(tmp_path, monkeypatch):
    src = tmp_path / "src"
    (src / "traces").mkdir(parents=True)
    (src / "traces" / "link.trace").write_text("".join(f"{ms}\n" for ms in range(1, 101)))
    (src / "s.toml").write_text(
        "[sim]\nduration_s = 1\n"
        '[[paths]]\nname = "a"\ntrace = "traces/link.trace"\nrate_mbps = 10\ndelay_ms = 10\n'
        '[[paths]]\nname = "b"\nrate_mbps = 10\ndelay_ms = 20\n'
        '[[flows]]\nname = "mp"\npaths = ["a", "b"]\n'
    )
    monkeypatch.chdir(tmp_path)  # not the scenario's directory
    m = build_matrix(Path("src/s.toml"), [1], ["minrtt"])
    trace = m.runs[0].scenario["paths"][0]["trace"]
    assert os.path.isabs(trace) and trace == str(src / "traces" / "link.trace")

    # Moving the directory keeps the hash; changing the trace's bytes changes it.
    shutil.copytree(src, tmp_path / "moved")
    assert (
        build_matrix(Path("moved/s.toml"), [1], ["minrtt"]).runs[0].scenario_hash
        == m.runs[0].scenario_hash
    )
    (tmp_path / "moved" / "traces" / "link.trace").write_text(
        "".join(f"{ms}\n" for ms in range(2, 102))
    )
    assert (
        build_matrix(Path("moved/s.toml"), [1], ["minrtt"]).runs[0].scenario_hash
        != m.runs[0].scenario_hash
    )


# --- the sweep and its dataset --------------------------------------------------------------


def test_small_matrix_writes_one_dataset_with_the_right_rows(mini_toml, tmp_path):
    m = build_matrix(mini_toml, [1, 2], ["minrtt", "blest"])
    out = tmp_path / "cmp"
    result = run_sweep(m, out, jobs=1)
    assert (result.total, result.ran, result.reused) == (4, 4, 0)

    ids = ["minrtt_seed1", "minrtt_seed2", "blest_seed1", "blest_seed2"]
    assert sorted(p.name for p in (out / "runs").iterdir()) == sorted(ids)
    for run_id in ids:
        assert sorted(p.name for p in (out / "runs" / run_id).iterdir()) == sorted(RUN_FILES)

    flows = pq.read_table(out / "flows.parquet")
    assert flows.column_names[: len(RUN_KEYS)] == list(RUN_KEYS)
    assert "flow_scheduler" in flows.column_names and "flow_cc" in flows.column_names
    assert flows.column("run_id").to_pylist() == [i for i in ids for _ in range(2)]
    assert flows.column("name").to_pylist() == ["mp", "tcp"] * 4
    assert flows.column("scheduler").to_pylist() == ["minrtt"] * 4 + ["blest"] * 4
    assert flows.column("seed").to_pylist() == [1, 1, 2, 2] * 2
    assert set(flows.column("cc").to_pylist()) == {"lia+cubic"}
    assert flows.column("flow_scheduler").to_pylist()[4] == "blest"

    # Each run's rows are those of a direct run with the same settings.
    direct = mpsched.run(m.runs[3].scenario, seed=2)
    assert (
        flows.column("goodput_mbps").to_pylist()[6:8]
        == direct.flows.column("goodput_mbps").to_pylist()
    )
    for name in ("subflows", "timeseries", "links"):
        table = pq.read_table(out / f"{name}.parquet")
        assert table.column_names[: len(RUN_KEYS)] == list(RUN_KEYS)
        assert table.num_rows == 4 * direct.tables[name].num_rows, name

    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["complete"] is True
    assert [r["run_id"] for r in manifest["runs"]] == ids
    assert manifest["seeds"] == [1, 2] and manifest["schedulers"] == ["minrtt", "blest"]
    assert manifest["ccs"] is None


def test_interrupted_sweep_resumes_to_byte_identical_results(mini_toml, tmp_path):
    m = build_matrix(mini_toml, [1, 2, 3], ["minrtt", "ecf"])
    whole = tmp_path / "whole"
    run_sweep(m, whole, jobs=1)

    out = tmp_path / "resumed"
    with pytest.raises(SweepInterrupted):
        run_sweep(m, out, jobs=1, _stop_after=2)
    assert len(list((out / "runs").iterdir())) == 2
    assert json.loads((out / MANIFEST).read_text())["complete"] is False
    assert not (out / "flows.parquet").exists()
    with pytest.raises(ResultsError, match="incomplete"):
        load_results(out)

    started: List[tuple] = []
    result = run_sweep(m, out, jobs=2, on_start=lambda todo, reused: started.append((todo, reused)))
    assert started == [(4, 2)]
    assert (result.ran, result.reused) == (4, 2)
    assert combined_bytes(out) == combined_bytes(whole)

    # Once complete, nothing is run again.
    again = run_sweep(m, out, jobs=2)
    assert (again.ran, again.reused) == (0, 6)
    assert combined_bytes(out) == combined_bytes(whole)


def test_leftovers_of_a_killed_sweep_are_cleaned_up(mini_toml, tmp_path):
    m = build_matrix(mini_toml, [1, 2], ["minrtt"])
    out = tmp_path / "cmp"
    with pytest.raises(SweepInterrupted):
        run_sweep(m, out, jobs=1, _stop_after=1)
    # What a kill in the middle of writing leaves: hidden temporary entries.
    (out / "runs" / ".minrtt_seed2.tmp-0000").mkdir()
    (out / "runs" / ".minrtt_seed2.tmp-0000" / "summary.json").write_text("{")
    (out / ".flows.parquet.tmp-0000").write_bytes(b"partial")
    run_sweep(m, out, jobs=1)
    assert sorted(p.name for p in (out / "runs").iterdir()) == ["minrtt_seed1", "minrtt_seed2"]
    assert not list(out.glob(".*.tmp-*"))


def test_jobs_1_and_jobs_2_give_identical_datasets(mini_toml, tmp_path):
    m = build_matrix(mini_toml, [1, 2], ["minrtt", "blest"])
    run_sweep(m, tmp_path / "j1", jobs=1)
    run_sweep(m, tmp_path / "j2", jobs=2)
    assert combined_bytes(tmp_path / "j1") == combined_bytes(tmp_path / "j2")
    for run_id in ("minrtt_seed1", "blest_seed2"):
        for name in RUN_FILES:
            a = (tmp_path / "j1" / "runs" / run_id / name).read_bytes()
            assert a == (tmp_path / "j2" / "runs" / run_id / name).read_bytes(), (run_id, name)


def test_changed_scenario_reruns_stale_runs(mini_toml, tmp_path):
    out = tmp_path / "cmp"
    run_sweep(build_matrix(mini_toml, [1, 2], ["minrtt"]), out, jobs=1)
    mini_toml.write_text(mini_toml.read_text().replace("duration_s = 2.0", "duration_s = 1.5"))
    result = run_sweep(build_matrix(mini_toml, [1, 2], ["minrtt"]), out, jobs=1)
    assert (result.ran, result.reused) == (2, 0)
    summary = json.loads((out / "runs" / "minrtt_seed1" / "summary.json").read_text())
    assert summary["duration_s"] == 1.5


def test_fewer_seeds_later_leaves_the_other_runs_out(mini_toml, tmp_path):
    out = tmp_path / "cmp"
    run_sweep(build_matrix(mini_toml, [1, 2], ["minrtt"]), out, jobs=1)
    result = run_sweep(build_matrix(mini_toml, [1], ["minrtt"]), out, jobs=1)
    assert (result.ran, result.reused, result.foreign_runs) == (0, 1, ["minrtt_seed2"])
    assert set(pq.read_table(out / "flows.parquet").column("run_id").to_pylist()) == {
        "minrtt_seed1"
    }


def test_output_dir_must_be_new_or_a_compare_dir(mini_toml, tmp_path):
    m = build_matrix(mini_toml, [1], ["minrtt"])
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("keep me")
    with pytest.raises(OutputDirError, match="not a `mpsched compare` output directory"):
        run_sweep(m, other, jobs=1)
    assert [p.name for p in other.iterdir()] == ["notes.txt"]
    with pytest.raises(OutputDirError, match="not a directory"):
        run_sweep(m, other / "notes.txt", jobs=1)


def test_two_sweeps_cannot_share_a_directory(mini_toml, tmp_path):
    m = build_matrix(mini_toml, [1], ["minrtt"])
    out = tmp_path / "cmp"
    out.mkdir()
    with open(out / ".lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(OutputDirError, match="another `mpsched compare`"):
            run_sweep(m, out, jobs=1)
    assert not (out / MANIFEST).exists()


# --- the Ray backend ------------------------------------------------------------------------


def fake_ray_module() -> types.ModuleType:
    """Ray's task API (init, remote, wait, get, cancel, shutdown), run eagerly in-process."""
    ray = types.ModuleType("ray")
    state = {"initialized": False, "init_kwargs": None, "shutdown": 0}

    class ObjectRef:
        def __init__(self, value):
            self.value = value

    def remote(*args, **kwargs):
        def wrap(fn):
            return types.SimpleNamespace(remote=lambda *a, **k: ObjectRef(fn(*a, **k)))

        return wrap(args[0]) if args and callable(args[0]) else wrap

    def init(**kwargs):
        state.update(initialized=True, init_kwargs=kwargs)

    def shutdown():
        state.update(initialized=False, shutdown=state["shutdown"] + 1)

    ray.state = state
    ray.is_initialized = lambda: state["initialized"]
    ray.init = init
    ray.shutdown = shutdown
    ray.remote = remote
    ray.wait = lambda refs, num_returns=1: (refs[:num_returns], refs[num_returns:])
    ray.get = lambda ref: ref.value
    ray.cancel = lambda ref: None
    return ray


def test_ray_backend_runs_the_same_matrix(mini_toml, tmp_path, monkeypatch):
    ray = fake_ray_module()
    monkeypatch.setitem(sys.modules, "ray", ray)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    m = build_matrix(mini_toml, [1, 2], ["minrtt", "ecf"])
    run_sweep(m, tmp_path / "local", jobs=1)
    result = run_sweep(m, tmp_path / "ray", backend="ray", jobs=3)
    assert result.ran == 4
    assert ray.state["init_kwargs"] == {"num_cpus": 3} and ray.state["shutdown"] == 1
    assert combined_bytes(tmp_path / "ray") == combined_bytes(tmp_path / "local")


def test_ray_backend_without_ray_writes_nothing(mini_toml, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    m = build_matrix(mini_toml, [1], ["minrtt"])
    with pytest.raises(BackendError, match="ray is not installed"):
        run_sweep(m, tmp_path / "cmp", backend="ray")
    assert not (tmp_path / "cmp").exists()


# --- the command line -----------------------------------------------------------------------


def test_cli_compare_writes_the_dataset_and_a_summary(cli, mini_toml, tmp_path):
    proc = cli(
        "compare",
        str(mini_toml),
        "--scheduler",
        "minrtt,blest",
        "--cc",
        "lia,olia",
        "--seeds",
        "1-2",
        "--jobs",
        "2",
        "--out",
        "cmp",
    )
    assert proc.returncode == 0, proc.stderr
    flows = pq.read_table(tmp_path / "cmp" / "flows.parquet")
    assert flows.num_rows == 2 * 2 * 2 * 2
    assert flows.column("run_id").to_pylist()[0] == "minrtt_lia_seed1"
    for word in ("minrtt", "blest", "olia", "goodput", "8 runs (8 new, 0 reused)"):
        assert word in proc.stdout

    again = cli(
        "compare",
        str(mini_toml),
        "--scheduler",
        "minrtt,blest",
        "--cc",
        "lia,olia",
        "--seeds",
        "1-2",
        "--out",
        "cmp",
    )
    assert again.returncode == 0, again.stderr
    assert "8 runs (0 new, 8 reused)" in again.stdout


def test_cli_compare_default_out_dir(cli, mini_toml, tmp_path):
    proc = cli("compare", str(mini_toml), "--seeds", "3", "--jobs", "1")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "out" / "mini-compare" / "runs" / "seed3" / "run.json").is_file()


def test_cli_compare_killed_and_restarted_completes_identically(cli, mini_toml, tmp_path):
    """A sweep killed (SIGKILL) after its 5th of 16 runs, then run again: the 5 finished runs
    are kept and the result is byte-identical to an uninterrupted sweep. The kill comes from
    the sweep itself at a fixed point (MPSCHED_SWEEP_KILL_AFTER), not from a timed signal."""
    args = [
        "compare",
        str(mini_toml),
        "--scheduler",
        "minrtt,blest,ecf,redundant",
        "--seeds",
        "1-4",
        "--jobs",
        "1",
    ]
    assert cli(*args, "--out", "whole").returncode == 0
    order = [r["run_id"] for r in json.loads((tmp_path / "whole" / MANIFEST).read_text())["runs"]]

    cmd = [sys.executable, "-m", "mpsched", *args, "--out", "killed"]
    env = dict(os.environ, **{KILL_AFTER_ENV: "5"})
    killed = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, timeout=120)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    runs = tmp_path / "killed" / "runs"
    assert sorted(p.name for p in runs.iterdir() if not p.name.startswith(".")) == sorted(order[:5])
    assert json.loads((tmp_path / "killed" / MANIFEST).read_text())["complete"] is False
    assert not (tmp_path / "killed" / "flows.parquet").exists()

    resumed = cli(*args, "--out", "killed")
    assert resumed.returncode == 0, resumed.stderr
    assert "16 runs (11 new, 5 reused)" in resumed.stdout
    assert combined_bytes(tmp_path / "killed") == combined_bytes(tmp_path / "whole")


@pytest.mark.parametrize(
    "args, expected",
    [
        (["--scheduler", "nope"], 'flows[0].scheduler: unknown scheduler "nope"'),
        (["--cc", "bogus"], 'unknown congestion control "bogus"'),
        (["--seeds", "3-1"], "--seeds: range '3-1' goes down"),
        (["--seeds", "x"], "--seeds: expected seeds like"),
        (["--scheduler", "minrtt,,blest"], "--scheduler: empty name"),
        (["--jobs", "0"], "--jobs"),
        (["--backend", "ray"], "ray is not installed"),
        (["--backend", "spark"], "--backend"),
    ],
)
def test_cli_compare_bad_input_exits_2_with_one_line(cli, mini_toml, tmp_path, args, expected):
    if "ray" in args and importlib.util.find_spec("ray") is not None:
        pytest.skip("ray is installed here")
    line = assert_one_error_line(cli("compare", str(mini_toml), "--out", "cmp", *args))
    assert expected in line, line
    if "nope" in args:
        assert str(mini_toml) in line
    assert not (tmp_path / "cmp").exists()


def test_cli_compare_missing_scenario_and_bad_out_dir(cli, mini_toml, tmp_path):
    line = assert_one_error_line(cli("compare", "missing.toml", "--out", "cmp"))
    assert "missing.toml" in line
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "mine.txt").write_text("x")
    line = assert_one_error_line(cli("compare", str(mini_toml), "--out", "taken"))
    assert "taken" in line and "not a `mpsched compare` output directory" in line
    line = assert_one_error_line(
        cli("compare", str(tmp_path / "taken" / "mine.txt"), "--out", "cmp")
    )
    assert "mine.txt" in line
    assert not (tmp_path / "cmp").exists()


def test_compare_module_does_not_import_plotting():
    """`mpsched compare` stays quick to start: matplotlib is for plot and report only."""
    code = "import sys, mpsched.cli.main; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
