"""Hostile inputs through the Python API and the CLI (issue "Reliability v2"): a one-line
ScenarioError naming the field (exit code 2 from the CLI), never a traceback, a hang or a
silently wrong run. The core's own checks are tested in crates/mpsched-sim/tests/it/bad_input.rs.
"""

from __future__ import annotations

import datetime
import decimal
import os
import pathlib

import numpy as np
import pytest
from test_cli import assert_one_error_line

import mpsched
from mpsched import _core
from mpsched import scenario as loader

# A scenario with a parameter range (as most shipped ones have).
RANGED = {
    "sim": {"duration_s": 1.0, "seed": 1},
    "paths": [
        {"name": "a", "rate_mbps": 10.0, "delay_ms": 20.0},
        {"name": "b", "rate_mbps": 5.0, "delay_ms": {"range": [30, 40]}},
    ],
    "flows": [{"name": "f", "paths": ["a", "b"], "size_bytes": 100000}],
}


def _ranged() -> dict:
    import copy

    return copy.deepcopy(RANGED)


def _error(scenario) -> str:
    with pytest.raises(mpsched.ScenarioError) as info:
        mpsched.run(scenario)
    message = str(info.value)
    assert "\n" not in message, message
    return message


def test_numpy_scalars_arrays_and_paths_just_work(tmp_path):
    d = _ranged()
    d["paths"][0]["rate_mbps"] = np.float64(10.0)
    d["flows"][0]["size_bytes"] = np.int64(100000)
    d["flows"][0]["paths"] = np.array(["a", "b"])
    d["sim"]["stop_when_done"] = np.bool_(True)
    assert mpsched.run(d).summary == mpsched.run(_ranged()).summary
    trace = tmp_path / "t.down"
    trace.write_text("".join(f"{ms}\n" for ms in range(1, 101)))
    d = _ranged()
    del d["paths"][0]["rate_mbps"]
    d["paths"][0]["trace"] = d["paths"][0]["trace_reverse"] = pathlib.Path(trace)
    assert mpsched.run(d).flows.num_rows == 1


@pytest.mark.parametrize(
    "field, value, expected",
    [
        ("rate_mbps", decimal.Decimal("10"), "got Decimal Decimal('10')"),
        ("rate_mbps", {1, 2}, "got set {1, 2}"),
        ("name", b"a", "got bytes b'a'"),
        ("name", datetime.date(2020, 1, 1), "got date datetime.date(2020, 1, 1)"),
        ("rate_mbps", object, "got type <class 'object'>"),
    ],
)
def test_unsupported_python_values_name_the_field(field, value, expected):
    d = _ranged()
    d["paths"][0][field] = value
    message = _error(d)
    assert message == (
        f"<dict>: paths[0].{field}: expected a number, string, boolean, list or table, {expected}"
    )


def test_dict_errors_name_the_field_not_a_json_column():
    d = _ranged()
    d["paths"][0]["rate_mbps"] = "10"
    assert _error(d) == '<dict>: paths[0].rate_mbps: invalid type: string "10", expected f64'
    del d["paths"][1]["delay_ms"]  # no range: the text is deserialized directly
    assert _error(d) == '<dict>: paths[0].rate_mbps: invalid type: string "10", expected f64'
    for d in (_ranged(), {"paths": [], "flows": []}):  # with a range, and without
        d.pop("sim", None)
        assert _error(d) == "<dict>: scenario: missing field `sim`"


def test_nan_is_an_error_never_a_default_nor_null():
    for where in (("paths", 0, "delay_ms"), ("flows", 0, "size_bytes")):
        d = _ranged()
        d[where[0]][where[1]][where[2]] = float("nan")
        field = f"{where[0]}[{where[1]}].{where[2]}"
        assert _error(d) == f"<dict>: {field}: expected a finite number, got NaN"
    d = _ranged()
    d["paths"][1]["delay_ms"] = {"range": [float("-inf"), 40]}
    assert _error(d) == "<dict>: paths[1].delay_ms.range[0]: expected a finite number, got -inf"


def test_huge_range_bounds_are_an_error_not_a_panic():
    d = _ranged()
    d["paths"][0]["rate_mbps"] = {"range": [-1e308, 1e308]}
    assert _error(d) == (
        "<dict>: paths[0].rate_mbps: expected bounds whose difference is a finite number, "
        "got [-1e308, 1e308]"
    )


def test_deep_nesting_is_a_one_line_error():
    deep: object = 1
    for _ in range(5000):
        deep = [deep]
    d = _ranged()
    d["sim"]["name"] = deep
    assert _error(d).startswith("<dict>: sim.name")
    text = "x = " + "[" * 5000 + "]" * 5000 + "\n"
    with pytest.raises(mpsched.ScenarioError, match=r"^<text>: line 1: "):
        loader.loads(text)
    with pytest.raises(mpsched.ScenarioError, match=r"^<text>: recursion limit exceeded"):
        loader.loads('{"sim": ' + "[" * 100000 + "]" * 100000 + "}", "json")


def test_deeply_dotted_keys_are_a_quick_one_line_error(cli, tmp_path):
    # Python's tomllib is quadratic in a dotted key's depth: 100,000 levels took minutes and
    # gigabytes before the core's parser (with its nesting limit) saw the text first.
    text = "# edar\n" + "a." * 100_000 + "b = 1\n"
    with pytest.raises(mpsched.ScenarioError, match=r"^<text>: recursion limit$"):
        loader.loads(text)
    path = tmp_path / "s.toml"
    path.write_text(text)
    assert assert_one_error_line(cli("run", str(path))) == f"error: {path}: recursion limit"


def test_a_core_panic_is_a_one_line_scenario_error():
    with pytest.raises(mpsched.ScenarioError) as info:
        _core._panic_for_test("s.toml", "attempt to divide\nby zero")
    message = str(info.value)
    assert message.startswith("s.toml: the simulator failed on this scenario (internal error at ")
    assert message.endswith(": attempt to divide by zero; please report it)")


BASE_TOML = """\
[sim]
duration_s = 1.0

[[paths]]
name = "a"
rate_mbps = 10.0
delay_ms = 20.0

[[paths]]
name = "b"
rate_mbps = 5.0
delay_ms = { range = [30, 40] }

[[flows]]
name = "f"
paths = ["a", "b"]
size_bytes = 100000
"""


@pytest.mark.parametrize(
    "old, new, expected",
    [
        (
            "rate_mbps = 10.0",
            "rate_mbps = { range = [-1e308, 1e308] }",
            "line 6: paths[0].rate_mbps: expected bounds whose difference is a finite number",
        ),
        (
            "size_bytes = 100000",
            "size_bytes = nan",
            "line 17: flows[0].size_bytes: expected a finite",
        ),
        ("rate_mbps = 5.0", 'rate_mbps = "10"', "line 11: paths[1].rate_mbps: invalid type"),
        ("delay_ms = 20.0", 'trace = "/dev/zero"', "paths[0].trace: cannot read trace file"),
        ("delay_ms = 20.0", "delay_ms = 1e14", "paths[0].delay_ms: expected at most 1e12 ms"),
    ],
)
def test_cli_run_prints_one_line_and_exits_2(cli, tmp_path, old, new, expected):
    path = tmp_path / "s.toml"
    path.write_text(BASE_TOML.replace(old, new, 1))
    line = assert_one_error_line(cli("run", str(path)))
    assert line.startswith(f"error: {path}: {expected}"), line
    assert not (tmp_path / "out").exists()


def test_trace_synth_refuses_tiny_dwell_times(cli, tmp_path):
    line = assert_one_error_line(
        cli("trace", "synth", "--mean-mbps", "10", "--dwell-s", "1e-9", "-o", "t.down")
    )
    assert line == "error: --dwell-s: expected at least 1e-6 s (1 µs), got 1e-9"
    assert not (tmp_path / "t.down").exists()


@pytest.fixture
def edar_scenario() -> str:
    return str(loader.shipped_scenario("edar-setting-1"))


@pytest.mark.parametrize(
    "args, expected",
    [
        (["--reward", "bogus"], "error: --reward: expected one of edar, mptcp-rl"),
        (["--interval", "1e-9"], "error: --interval: expected `min-rtt` or a period of at least"),
        (["--interval", "nan"], "error: --interval: expected `min-rtt` or a period of at least"),
        (["--out", "."], "error: --out: . is a directory, expected a file name"),
        (["--out", "/proc/none/c.parquet"], "error: --out: cannot write /proc/none/c.parquet"),
    ],
)
def test_collect_checks_its_options_before_any_episode(
    cli, tmp_path, edar_scenario, args, expected
):
    pytest.importorskip("gymnasium")
    line = assert_one_error_line(cli("collect", edar_scenario, "-e", "1", *args))
    assert line.startswith(expected), line
    assert sorted(os.listdir(tmp_path)) == []


def test_a_deeply_nested_checkpoint_is_a_one_line_error(tmp_path):
    pytest.importorskip("safetensors")
    from mpsched.agents.checkpoint import CheckpointError, load_checkpoint

    (tmp_path / "c.json").write_text('{"format": ' + "[" * 100000 + "]" * 100000 + "}")
    (tmp_path / "c.safetensors").write_bytes(b"")
    with pytest.raises(
        CheckpointError, match=r"c\.json: not a checkpoint description \(JSON nested"
    ):
        load_checkpoint(tmp_path / "c.json", "edar", lambda d, p: {})


def test_compare_refuses_a_sweep_whose_bounds_overflow(cli, tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(
        BASE_TOML.replace("rate_mbps = 10.0", "rate_mbps = { range = [-1e308, 1e308], steps = 3 }")
    )
    line = assert_one_error_line(cli("compare", str(path), "--seeds", "1"))
    assert line == (
        f"error: {path}: paths[0].rate_mbps: expected bounds whose difference is a finite "
        "number, got [-1e+308, 1e+308]"
    )
