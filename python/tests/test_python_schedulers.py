"""Schedulers written in Python: registration, name errors, plugin files, results identical to
the Rust built-ins they re-implement, the per-decision view, failures, and use in run/compare."""

from __future__ import annotations

import copy
import json
from typing import Any, Dict, List

import pyarrow.parquet as pq
import pytest
from conftest import REPO

import mpsched
from mpsched import _core
from mpsched.plugins import PluginError, RegistrationError, load_plugin, registered_schedulers

EXAMPLE = REPO / "docs" / "examples" / "python_schedulers.py"
TABLES = ("flows", "subflows", "timeseries", "links")

# Two paths, the fast one lossy and down for 2 s (reinjections), a small receive buffer
# (opportunistic retransmission, penalization), 8 s.
TWO_PATHS: Dict[str, Any] = {
    "sim": {"name": "two-paths", "duration_s": 8.0, "seed": 1, "sample_interval_ms": 500},
    "paths": [
        {
            "name": "fast",
            "rate_mbps": 10.0,
            "delay_ms": 10.0,
            "loss": {"model": "bernoulli", "p": 0.01},
            "schedule": [{"at_s": 3.0, "outage": True}, {"at_s": 5.0, "outage": False}],
        },
        {"name": "slow", "rate_mbps": 5.0, "delay_ms": 40.0},
    ],
    "flows": [
        {
            "name": "mp",
            "paths": ["fast", "slow"],
            "scheduler": "minrtt",
            "cc": "lia",
            "rcv_buf_bytes": 65536,
        },
        {"name": "sized", "paths": ["slow", "fast"], "size_bytes": 400000, "cc": "cubic"},
    ],
}


@pytest.fixture(scope="module", autouse=True)
def example_plugin() -> List[str]:
    """The documented example plugin, loaded once for this module."""
    return load_plugin(EXAMPLE)


def scenario(scheduler: str) -> Dict[str, Any]:
    sc = copy.deepcopy(TWO_PATHS)
    for f in sc["flows"]:
        f["scheduler"] = scheduler
    return sc


def without_label(results: mpsched.Results) -> Dict[str, Any]:
    """The result tables and summary with the scheduler label removed."""
    out: Dict[str, Any] = {}
    for name in TABLES:
        t = getattr(results, name)
        out[name] = t.drop_columns([c for c in t.column_names if c == "scheduler"])
    summary = json.loads(json.dumps(results.summary))
    for f in summary["flows"]:
        f.pop("scheduler", None)
    out["summary"] = summary
    return out


def test_example_plugin_registers_its_schedulers(example_plugin):
    assert example_plugin == ["ect", "py-minrtt", "py-minrtt-rp", "py-rr"]
    assert set(example_plugin) <= set(registered_schedulers())
    assert _core.algorithm_label("scheduler", "PY-RR") == "py-rr"
    # Loading again replaces the registrations (a re-imported module), same names.
    assert load_plugin(EXAMPLE) == example_plugin


@pytest.mark.parametrize(
    "python, builtin",
    [("py-minrtt", "minrtt-norp"), ("py-minrtt-rp", "minrtt"), ("py-rr", "rr")],
)
@pytest.mark.parametrize("seed", [1, 2])
def test_results_identical_to_the_rust_scheduler(python, builtin, seed):
    py_res = mpsched.run(scenario(python), seed=seed)
    rust_res = mpsched.run(scenario(builtin), seed=seed)
    assert py_res.flows.column("scheduler").to_pylist() == [python, python]
    py_tables, rust_tables = without_label(py_res), without_label(rust_res)
    for name in TABLES:
        assert py_tables[name].equals(rust_tables[name]), name
    assert py_tables["summary"] == rust_tables["summary"]
    # The scenario exercises reinjection (the fast path goes down with data in flight).
    assert rust_res.summary["flows"][0]["reinjected_bytes"] > 0
    if builtin == "minrtt":  # and the flag reaches the connection
        assert rust_res.summary["flows"][0]["opportunistic_retransmissions"] > 0


def test_hol_events_reach_the_scheduler():
    """With opportunistic retransmission on, the connection tells the scheduler each time it
    runs its penalization step (Rust `Scheduler::on_hol_event`); the choices stay minRTT's."""
    events: List[float] = []

    @mpsched.scheduler("t-hol", opportunistic_retransmission=True)
    class Hol:
        def get_send(self, view):
            return view.min_rtt()

        def on_hol_event(self) -> None:
            events.append(1.0)

    try:
        res = mpsched.run(scenario("t-hol"), seed=1)
    finally:
        mpsched.unregister_scheduler("t-hol")
    assert res.summary["flows"][0]["penalizations"] > 0 and len(events) > 0
    assert without_label(res)["flows"].equals(
        without_label(mpsched.run(scenario("minrtt"), seed=1))["flows"]
    )


def test_registration_by_decorator_class_and_function():
    calls: List[int] = []

    @mpsched.scheduler("t-first")
    def first(view):
        calls.append(len(view.subflows))
        return view.min_rtt()

    @mpsched.scheduler("t-seeded")
    class Seeded:
        seeds: List[int] = []

        def seed(self, seed: int) -> None:
            Seeded.seeds.append(seed)

        def get_send(self, view):
            return view.min_rtt()

    try:
        assert first.__name__ == "first" and Seeded.__name__ == "Seeded", "returned unchanged"
        res = mpsched.run(scenario("t-first"), seed=1)
        assert calls and set(calls) == {2}
        assert res.summary["flows"][0]["scheduler"] == "t-first"
        mpsched.run(scenario("t-seeded"), seed=1)
        assert len(Seeded.seeds) == 2 and all(isinstance(s, int) for s in Seeded.seeds)
        assert Seeded.seeds[0] != Seeded.seeds[1], "one seed per flow, derived from the scenario's"
    finally:
        assert mpsched.unregister_scheduler("t-first")
        assert mpsched.unregister_scheduler("t-seeded")
    assert not mpsched.unregister_scheduler("t-first")
    with pytest.raises(mpsched.ScenarioError, match='unknown scheduler "t-first"'):
        mpsched.run(scenario("t-first"))


@pytest.mark.parametrize("name", ["minrtt", "rr", "minrtt-norp", "blest"])
def test_builtin_names_cannot_be_taken(name):
    with pytest.raises(RegistrationError) as e:
        mpsched.register_scheduler(name, lambda view: 0)
    assert str(e.value) == f'"{name}" is the name of a built-in scheduler; choose another name'


@pytest.mark.parametrize("name", ["", "Ect", "a:b", "a,b", "2x"])
def test_invalid_names(name):
    with pytest.raises(RegistrationError, match="expected a name of lower-case letters"):
        mpsched.register_scheduler(name, lambda view: 0)


def test_not_a_scheduler():
    class NoMethod:
        pass

    with pytest.raises(RegistrationError, match="expected a class with a get_send"):
        mpsched.register_scheduler("t-bad", NoMethod)
    with pytest.raises(RegistrationError, match="expected a class or a function"):
        mpsched.register_scheduler("t-bad", 3)  # type: ignore[arg-type]


def test_plugin_takes_no_parameters():
    with pytest.raises(mpsched.ScenarioError, match="x: py-rr takes no parameters"):
        mpsched.run(scenario("py-rr:x=1"))


def test_the_view_carries_what_a_rust_scheduler_sees():
    seen: List[Dict[str, Any]] = []

    @mpsched.scheduler("t-view")
    def look(view):
        if len(seen) < 400:
            seen.append(
                {
                    "view": (view.seg_len, view.reinjection, view.unsent, view.send_window),
                    "now_s": view.now_s,
                    "conn": view.conn,
                    "subflows": [
                        (s.index, s.usable, s.available, s.backup, s.space, s.carried, s.queued)
                        + (s.srtt_ms, s.rttvar_ms, s.cwnd, s.pipe, s.outstanding, s.state)
                        for s in view.subflows
                    ],
                }
            )
        return view.min_rtt()

    try:
        rust = mpsched.run(scenario("minrtt-norp"), seed=1)
        py = mpsched.run(scenario("t-view"), seed=1)
    finally:
        mpsched.unregister_scheduler("t-view")
    assert without_label(py)["flows"].equals(without_label(rust)["flows"])
    first = seen[0]
    # The payload of a full segment: 1,448 less the DSS option (linux profile, multipath).
    assert first["view"][0] == 1424 and first["view"][1] is False
    assert set(first["conn"]) >= {"bytes_written", "bytes_sent_new", "data_acked"}
    for s in first["subflows"]:
        (
            index,
            usable,
            available,
            backup,
            space,
            carried,
            queued,
            srtt,
            rttvar,
            cwnd,
            pipe,
            out,
            st,
        ) = s
        assert isinstance(space, int) and isinstance(cwnd, int) and isinstance(srtt, float)
        assert available <= usable and not backup and not carried
        assert space == max(cwnd - pipe, 0) or not usable
    assert any(s[1] for v in seen for s in v["subflows"])
    assert sorted(v["now_s"] for v in seen) == [v["now_s"] for v in seen], "in time order"


def test_a_failing_scheduler_raises_scheduler_error():
    @mpsched.scheduler("t-raises")
    def boom(view):
        return 1 // 0

    @mpsched.scheduler("t-bad-index")
    def bad_index(view):
        return 7

    try:
        with pytest.raises(mpsched.SchedulerError) as e:
            mpsched.run(scenario("t-raises"))
        assert str(e.value) == (
            'scheduler "t-raises": get_send: ZeroDivisionError: integer division or modulo by zero'
        )
        assert isinstance(e.value.__cause__, ZeroDivisionError)
        with pytest.raises(
            mpsched.SchedulerError, match="returned 7, expected a subflow index below 2"
        ):
            mpsched.run(scenario("t-bad-index"))
        # The failure was reported once: the next run is clean.
        mpsched.run(scenario("py-rr"))
    finally:
        mpsched.unregister_scheduler("t-raises")
        mpsched.unregister_scheduler("t-bad-index")


def test_simulation_api_runs_python_schedulers():
    sim = mpsched.Simulation(scenario("py-rr"), seed=1)
    assert sim.advance() == ("finished", None)
    assert without_label(sim.results())["flows"].equals(
        without_label(mpsched.run(scenario("rr"), seed=1))["flows"]
    )


# --- plugin files and the command line ------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        (None, "expected a Python file defining a scheduler, found no such file"),
        ("def f(:\n", "line 1: invalid Python: invalid syntax"),
        (
            "import mpsched\n",
            'expected a scheduler registered with @mpsched.scheduler("NAME"), found none',
        ),
        ("raise RuntimeError('no\\nway')\n", "RuntimeError: no way"),
        (
            "import mpsched\n@mpsched.scheduler('minrtt')\ndef f(view):\n    return 0\n",
            '"minrtt" is the name of a built-in scheduler; choose another name',
        ),
    ],
)
def test_bad_plugin_files(tmp_path, cli, mini_toml, text, expected):
    plugin = tmp_path / "bad.py"
    if text is not None:
        plugin.write_text(text)
    with pytest.raises(PluginError) as e:
        load_plugin(plugin)
    assert str(e.value) == f"{plugin}: {expected}"
    for command in ("run", "compare"):
        proc = cli(command, str(mini_toml), "--plugin", "bad.py", "--scheduler", "minrtt")
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr == f"error: --plugin bad.py: {expected}\n"


def test_run_with_a_plugin(tmp_path, cli, mini_toml):
    proc = cli("run", str(mini_toml), "--plugin", str(EXAMPLE), "--scheduler", "ect", "-o", "out")
    assert proc.returncode == 0, proc.stderr
    flows = pq.read_table(tmp_path / "out" / "flows.parquet")
    assert flows.column("scheduler").to_pylist()[0] == "ect"
    proc = cli("run", str(mini_toml), "--scheduler", "ect", "-o", "out2")
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and 'unknown scheduler "ect"' in proc.stderr


def test_compare_mixes_python_and_rust_schedulers(tmp_path, cli, mini_toml):
    proc = cli(
        "compare",
        str(mini_toml),
        "--plugin",
        str(EXAMPLE),
        "--scheduler",
        "py-rr,rr,ect",
        "--seeds",
        "1-2",
        "--jobs",
        "2",
        "-o",
        "cmp",
    )
    assert proc.returncode == 0, proc.stderr
    flows = pq.read_table(tmp_path / "cmp" / "flows.parquet").to_pylist()
    by = {}
    for row in flows:
        by.setdefault(row["scheduler"], []).append(row)
    assert sorted(by) == ["ect", "py-rr", "rr"]
    drop = {"run_id", "scheduler", "flow_scheduler"}
    for py_row, rust_row in zip(by["py-rr"], by["rr"]):
        if py_row["name"] == "mp":  # the multipath flow (the other one is plain TCP)
            assert (py_row["flow_scheduler"], rust_row["flow_scheduler"]) == ("py-rr", "rr")
        assert {k: v for k, v in py_row.items() if k not in drop} == {
            k: v for k, v in rust_row.items() if k not in drop
        }
    proc = cli("report", "cmp")
    assert proc.returncode == 0, proc.stderr
    report = (tmp_path / "cmp" / "report.md").read_text()
    assert "py-rr" in report and "ect" in report


def test_compare_with_a_scheduler_defined_in_main_runs_in_process(mini_toml, tmp_path):
    """A scheduler that no worker could import: the sweep stays in this process."""
    from mpsched.matrix import build_matrix
    from mpsched.sweep import run_sweep

    def make(view):
        return view.min_rtt()

    make.__module__ = "__main__"
    mpsched.register_scheduler("t-main", make)
    try:
        matrix = build_matrix(mini_toml, [1, 2], ["t-main", "minrtt-norp"], None)
        result = run_sweep(matrix, tmp_path / "cmp", jobs=2)
        assert result.ran == 4
    finally:
        mpsched.unregister_scheduler("t-main")


def test_the_documented_examples_run(monkeypatch):
    """Every Python block of docs/python-schedulers.md, in order, in one namespace."""
    import re

    text = (REPO / "docs" / "python-schedulers.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) == 3
    monkeypatch.chdir(REPO)
    namespace: Dict[str, Any] = {}
    try:
        for block in blocks:
            exec(compile(block, "docs/python-schedulers.md", "exec"), namespace)
    finally:
        mpsched.unregister_scheduler("lowest-rtt")
    assert namespace["decisions"] > 1000
    load_plugin(EXAMPLE)  # the documentation re-loaded it: keep this module's sources


def test_compare_redoes_runs_when_the_plugin_changes(tmp_path, mini_toml):
    """A finished run is reused while its scheduler's file is unchanged, redone after an edit."""
    from mpsched.matrix import build_matrix
    from mpsched.sweep import run_sweep

    plugin = tmp_path / "mine.py"
    plugin.write_text(
        "import mpsched\n@mpsched.scheduler('t-edit')\ndef f(view):\n    return view.min_rtt()\n"
    )
    load_plugin(plugin)
    try:
        out = tmp_path / "cmp"
        sweep = lambda: run_sweep(build_matrix(mini_toml, [1], ["t-edit", "rr"], None), out, jobs=1)  # noqa: E731
        assert (sweep().ran, sweep().ran) == (2, 0)
        plugin.write_text(plugin.read_text() + "# edited\n")
        assert sweep().ran == 1, "only the Python scheduler's run is redone"
    finally:
        mpsched.unregister_scheduler("t-edit")


def test_algorithms_lists_plugin_schedulers(cli):
    proc = cli("algorithms", "scheduler", "--json", "--plugin", str(EXAMPLE))
    assert proc.returncode == 0, proc.stderr
    rows = {r["name"]: r for r in json.loads(proc.stdout)["scheduler"]}
    assert {"minrtt", "ect", "py-rr"} <= set(rows)
    assert rows["py-rr"]["doc"].startswith("Available active subflows take turns, one segment each")
    assert rows["py-rr"]["source"] == str(EXAMPLE) and rows["py-rr"]["params"] == []


def test_run_reports_a_failing_scheduler_in_one_line(tmp_path, cli, mini_toml):
    (tmp_path / "boom.py").write_text(
        "import mpsched\n@mpsched.scheduler('boom')\ndef f(view):\n    raise KeyError('x')\n"
    )
    message = "error: scheduler \"boom\": get_send: KeyError: 'x'\n"
    proc = cli("run", str(mini_toml), "--plugin", "boom.py", "--scheduler", "boom", "-o", "out")
    assert (proc.returncode, proc.stderr) == (1, message)
    assert not (tmp_path / "out").exists()
    # From a compare worker process too (the error pickles), and as the only line: the
    # progress line is not printed before it (issue 24: it was, two lines in all).
    proc = cli("compare", str(mini_toml), "--plugin", "boom.py", "--scheduler", "rr,boom")
    assert (proc.returncode, proc.stderr) == (1, message)
