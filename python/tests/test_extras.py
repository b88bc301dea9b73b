"""Optional extras: `import mpsched`, `mpsched run` and `compare` work without matplotlib,
gymnasium and torch; commands that need them say which extra to install in one line (exit 2).
The modules are blocked in a subprocess (``sys.modules[name] = None`` makes importing fail)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest

from mpsched import _core

BLOCKED = ("matplotlib", "gymnasium", "torch", "ray")

SHIM = (
    "import sys\n"
    f"for name in {BLOCKED!r}:\n"
    "    sys.modules[name] = None\n"
    "sys.argv[0] = 'mpsched'\n"
    "import mpsched\n"
    "from mpsched.cli import app\n"
    "app(prog_name='mpsched')\n"
)


def _cli_without_extras(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    cmd: List[str] = [sys.executable, "-c", SHIM, *args]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=120)


def test_run_and_compare_work_without_the_extras(tmp_path, fast_toml, mini_toml):
    proc = _cli_without_extras(tmp_path, "run", str(fast_toml), "--out", "r")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "r" / "summary.json").is_file()
    proc = _cli_without_extras(tmp_path, "compare", str(mini_toml), "--seeds", "1", "-o", "c")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "c" / "compare.json").is_file()


@pytest.mark.parametrize(
    "args, message",
    [
        (["plot", "r"], "error: mpsched plot needs matplotlib: pip install 'mpsched[plot]'"),
        (["report", "r"], "error: mpsched report needs matplotlib: pip install 'mpsched[plot]'"),
        (["collect", "FAST"], "error: mpsched collect needs gymnasium: pip install 'mpsched[rl]'"),
        (
            ["train", "edar", "--scenario", "FAST"],
            "error: mpsched train needs gymnasium: pip install 'mpsched[rl]'",
        ),
        (
            ["train", "drl-cc", "--scenario", "FAST"],
            "error: mpsched train needs gymnasium: pip install 'mpsched[rl]'",
        ),
        (
            ["train", "rlds", "--scenario", "FAST"],
            "error: mpsched train needs gymnasium: pip install 'mpsched[rl]'",
        ),
        (
            ["bench", "--env"],
            "error: mpsched bench --env needs gymnasium: pip install 'mpsched[rl]'",
        ),
        (
            ["reproduce", "olms", "--quick"],
            "error: mpsched reproduce olms needs matplotlib: pip install 'mpsched[plot]'",
        ),
        (
            ["reproduce", "edar", "--quick"],
            "error: mpsched reproduce edar needs matplotlib: pip install 'mpsched[plot]'",
        ),
        (
            ["compare", "FAST", "--backend", "ray"],
            "error: --backend ray: ray is not installed (pip install 'mpsched[ray]')",
        ),
    ],
)
def test_commands_name_the_missing_extra(tmp_path, fast_toml, args, message):
    proc = _cli_without_extras(tmp_path, *[str(fast_toml) if a == "FAST" else a for a in args])
    assert (proc.returncode, proc.stderr.strip()) == (2, message), proc.stderr


def test_trained_policy_schedulers_need_no_extra(tmp_path, fast_toml):
    """`--scheduler edar` runs the policy in Rust: no torch, no gymnasium."""
    fast_toml.write_text(
        fast_toml.read_text().replace('path = "p"\ncc = "newreno"', 'paths = ["p"]\ncc = "lia"')
    )
    proc = _cli_without_extras(tmp_path, "run", str(fast_toml), "--scheduler", "edar", "-o", "e")
    assert proc.returncode == 0, proc.stderr
    assert "decisions in Rust" in proc.stdout


def test_core_stub_covers_every_export():
    stub = Path(_core.__file__).with_name("_core.pyi")
    if not stub.is_file():  # an in-tree build: the stub sits beside the sources
        stub = Path(__file__).resolve().parents[1] / "mpsched" / "_core.pyi"
    tree = ast.parse(stub.read_text())
    stubbed = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    exported = {name for name in dir(_core) if not name.startswith("_")}
    assert exported <= stubbed, sorted(exported - stubbed)
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    for name, node in classes.items():
        if issubclass(getattr(_core, name), BaseException):  # ScenarioError, SchedulerError
            continue
        members = {m.name for m in node.body if isinstance(m, ast.FunctionDef)}
        public = {m for m in dir(getattr(_core, name)) if not m.startswith("_")}
        assert public <= members, (name, sorted(public - members))
    assert (stub.parent / "py.typed").is_file()
