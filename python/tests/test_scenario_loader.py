"""The one scenario loader (mpsched.scenario): the same bad input gives the same one-line message
through every entry point (mpsched.run, Simulation, compare's matrix, the envs, reproduce, and
the commands run, compare and collect)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Callable, Dict

import pytest
from conftest import MINI_TOML

import mpsched
from mpsched import scenario as loader
from mpsched.envs import SchedulerEnv
from mpsched.matrix import MatrixError, build_matrix, load_scenario
from mpsched.reproduce import olms_runs

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

MINI_DICT = tomllib.loads(MINI_TOML)


def _write(tmp: Path, name: str, text: str) -> Path:
    path = tmp / name
    path.write_text(text)
    return path


def _bad_inputs(tmp: Path) -> Dict[str, Path]:
    """Bad scenario files by case; all named ``olms-app1.*`` so reproduce can be pointed at
    the TOML ones."""
    cases = {}
    for case, (name, text) in {
        "missing": ("missing/olms-app1.toml", None),
        "bad-toml": ("bad-toml/olms-app1.toml", "[sim\nduration_s = 1\n"),
        "bad-json": ("bad-json/olms-app1.json", '{"sim": {'),
        "toml-in-upper-json": ("upper/olms-app1.JSON", MINI_TOML),
        "unknown-field": (
            "unknown/olms-app1.toml",
            MINI_TOML.replace("[sim]\n", "[sim]\ncolour = 1\n"),
        ),
        "not-utf8": ("latin/olms-app1.toml", None),
    }.items():
        path = tmp / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if text is not None:
            path.write_text(text)
        cases[case] = path
    (tmp / "latin" / "olms-app1.toml").write_bytes(b"[sim]\nname = '\xe9'\n")
    directory = tmp / "dir" / "olms-app1.toml"
    directory.mkdir(parents=True)
    cases["directory"] = directory
    return cases


def _message(fn: Callable[[Path], object], path: Path) -> str:
    with pytest.raises(mpsched.ScenarioError) as info:
        fn(path)
    message = str(info.value)
    assert "\n" not in message
    return message


PYTHON_ENTRY_POINTS: Dict[str, Callable[[Path], object]] = {
    "run": lambda p: mpsched.run(p),
    "Simulation": lambda p: mpsched.Simulation(p),
    "build_matrix": lambda p: build_matrix(p, [1]),
    "SchedulerEnv": lambda p: SchedulerEnv(p),
    "str path": lambda p: mpsched.run(str(p)),
}

EXPECTED = {
    "missing": "{p}: cannot read scenario file: No such file or directory",
    "directory": "{p}: cannot read scenario file: Is a directory",
    "bad-toml": "{p}: line 1: unclosed table, expected `]`",
    "bad-json": "{p}: EOF while parsing an object at line 1 column 9",
    "toml-in-upper-json": "{p}: expected value at line 1 column 2",
    "unknown-field": "{p}: line 2: unknown field `colour`, expected one of `name`, ",
    "not-utf8": "{p}: not a UTF-8 text file",
}


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_every_python_entry_point_gives_the_same_message(tmp_path, case):
    path = _bad_inputs(tmp_path)[case]
    messages = {name: _message(fn, path) for name, fn in PYTHON_ENTRY_POINTS.items()}
    assert messages["build_matrix"].startswith(EXPECTED[case].format(p=path)), messages
    assert len(set(messages.values())) == 1, messages


def test_errors_are_scenario_errors_and_unreadable_files_oserrors(tmp_path):
    bad = _bad_inputs(tmp_path)
    with pytest.raises(FileNotFoundError):
        mpsched.run(bad["missing"])
    with pytest.raises(IsADirectoryError):
        mpsched.Simulation(bad["directory"])
    with pytest.raises(MatrixError):  # the matrix's own error type, also a ScenarioError
        build_matrix(bad["bad-toml"])
    assert issubclass(MatrixError, mpsched.ScenarioError)
    with pytest.raises(TypeError):
        loader.load(42)  # type: ignore[arg-type]


@pytest.mark.parametrize("case", ["missing", "directory", "bad-toml", "not-utf8"])
def test_reproduce_reads_its_scenarios_with_the_loader(tmp_path, case):
    path = _bad_inputs(tmp_path)[case]
    direct = _message(mpsched.run, path)
    case = olms_runs.cases()[0]
    assert case.base == "olms-app1"
    via_reproduce = _message(
        lambda p: olms_runs.variant_scenario(case, "loss", "olms", p.parent), path
    )
    assert via_reproduce == direct


@pytest.mark.parametrize("suffix", [".json", ".JSON", ".Json"])
def test_json_suffix_in_any_case_is_json(tmp_path, suffix):
    path = _write(tmp_path, f"mini{suffix}", json.dumps(MINI_DICT))
    assert loader.scenario_format(path) == "json"
    assert loader.load(path).data == MINI_DICT == load_scenario(path)
    expected = mpsched.run(MINI_DICT).summary
    assert mpsched.run(path).summary == expected
    assert mpsched.Simulation(path).results().summary is not None
    assert len(build_matrix(path, [1, 2]).runs) == 2
    SchedulerEnv(path).reset(seed=1)


def test_loads_parses_text_with_the_same_messages(tmp_path):
    assert loader.loads(MINI_TOML).data == MINI_DICT
    assert loader.loads(json.dumps(MINI_DICT), "json").data == MINI_DICT
    with pytest.raises(mpsched.ScenarioError, match=r"^<text>: line 1: unclosed table"):
        loader.loads("[sim\n")
    with pytest.raises(mpsched.ScenarioError, match=r"^x: expected a table of \[sim\]"):
        loader.loads("[1, 2]", "json", source="x")
    with pytest.raises(mpsched.ScenarioError, match=r'fmt: expected "toml" or "json"'):
        loader.loads("", "yaml")


def test_a_dict_is_copied_and_named_dict(fast_dict):
    loaded = loader.load(fast_dict)
    assert loaded.source == "<dict>" and loaded.fmt == "json" and loaded.path is None
    loaded.data["sim"]["name"] = "changed"
    assert fast_dict["sim"]["name"] == "fast"
    with pytest.raises(
        mpsched.ScenarioError,
        match=r"^<dict>: sim\.when: expected a number, string, boolean, list or table, got object",
    ):
        loader.load({"sim": {"when": object()}})


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_commands_print_the_loaders_message(tmp_path, monkeypatch, case):
    """`mpsched run`, `compare` and `collect` in-process (CliRunner; test_cli.py covers the
    real subprocess): ``error: <the loader's message>``, exit code 2."""
    from typer.testing import CliRunner

    from mpsched.cli import app

    path = _bad_inputs(tmp_path)[case]
    monkeypatch.chdir(tmp_path)
    rel = os.path.relpath(path, tmp_path)
    want = "error: " + _message(mpsched.run, Path(rel))
    for args in (["run", rel], ["compare", rel, "--seeds", "1"], ["collect", rel, "-e", "1"]):
        result = CliRunner().invoke(app, args)
        assert (result.exit_code, result.stderr.strip()) == (2, want), args


def test_shipped_scenarios_are_found_from_any_directory(tmp_path):
    """The scenarios live in the package (python/mpsched/scenarios, what a wheel installs; the
    repository's scenarios/ links there): reproduce finds them from an unrelated directory."""
    repo_link = Path(__file__).resolve().parents[2] / "scenarios"
    assert repo_link.resolve() == loader.SCENARIO_DIR
    assert (loader.SCENARIO_DIR / "demo.toml").is_file()
    code = (
        "import json, sys\n"
        "from mpsched.reproduce import _common, edar\n"
        "from mpsched.scenario import load, shipped_scenario\n"
        "olms_dir = _common.default_scenario_dir('olms-app1.toml')\n"
        "print(json.dumps([str(edar.default_scenario_dir()), str(olms_dir),\n"
        "    load(shipped_scenario('demo')).data['sim']['name']]))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    edar_dir, olms_dir, demo_name = json.loads(proc.stdout)
    assert Path(edar_dir) == Path(olms_dir) == loader.SCENARIO_DIR
    assert demo_name == loader.load(repo_link / "demo.toml").data["sim"]["name"]
    proc = subprocess.run(
        [sys.executable, "-m", "mpsched", "reproduce", "olms", "--out", "o", "--quick"]
        + ["--only", "bw-40", "--regimes", "noloss", "-j", "1"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "o" / "claims.json").is_file()
    with pytest.raises(mpsched.ScenarioError, match=r"^nope: no such shipped scenario \(shipped: "):
        loader.shipped_scenario("nope")
