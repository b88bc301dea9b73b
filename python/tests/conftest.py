"""Shared fixtures: small, fast scenarios (a few simulated seconds) and a CLI runner."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List

import pytest

REPO = Path(__file__).resolve().parents[2]

# The same scenario as TOML text and as a dict. Two flows on one lossy path, 3 s.
FAST_TOML = """\
[sim]
name = "fast"
duration_s = 3.0
seed = 1

[[paths]]
name = "p"
rate_mbps = 10.0
delay_ms = 10.0
loss = { model = "bernoulli", p = 0.01 }

[[flows]]
name = "bulk"
path = "p"
cc = "newreno"

[[flows]]
name = "sized"
path = "p"
size_bytes = 200000
cc = "cubic"
"""

FAST_DICT: Dict[str, Any] = {
    "sim": {"name": "fast", "duration_s": 3.0, "seed": 1},
    "paths": [
        {
            "name": "p",
            "rate_mbps": 10.0,
            "delay_ms": 10.0,
            "loss": {"model": "bernoulli", "p": 0.01},
        }
    ],
    "flows": [
        {"name": "bulk", "path": "p", "cc": "newreno"},
        {"name": "sized", "path": "p", "size_bytes": 200000, "cc": "cubic"},
    ],
}


@pytest.fixture(autouse=True, scope="session")
def _sb3_logs_in_a_temporary_directory(tmp_path_factory: pytest.TempPathFactory):
    """stable-baselines3 makes an empty log directory in the system's temporary directory
    (``/tmp/SB3-<time>``) for every ``learn()``, unless ``SB3_LOGDIR`` names one: keep the
    tests' in pytest's own temporary directory instead of leaving ~40 behind per run."""
    import os

    before = os.environ.get("SB3_LOGDIR")
    os.environ["SB3_LOGDIR"] = str(tmp_path_factory.mktemp("sb3-logs"))
    yield
    if before is None:
        os.environ.pop("SB3_LOGDIR", None)
    else:
        os.environ["SB3_LOGDIR"] = before


@pytest.fixture
def fast_dict() -> Dict[str, Any]:
    """A fresh copy of the fast scenario as a dict (tests may modify it)."""
    return copy.deepcopy(FAST_DICT)


@pytest.fixture
def fast_toml(tmp_path: Path) -> Path:
    """The fast scenario written to ``<tmp>/fast.toml``."""
    path = tmp_path / "fast.toml"
    path.write_text(FAST_TOML)
    return path


@pytest.fixture
def cli(tmp_path: Path) -> Callable[..., subprocess.CompletedProcess]:
    """Run ``python -m mpsched ARGS...`` in ``tmp_path``; return the completed process."""

    def run(*args: str) -> subprocess.CompletedProcess:
        cmd: List[str] = [sys.executable, "-m", "mpsched", *args]
        return subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=120)

    return run


# A short multipath scenario for compare / plot / report tests: a two-path MPTCP flow next to
# a sized single-path TCP transfer, lossy enough that seeds differ. 2 s, ~10 ms per run.
MINI_TOML = """\
[sim]
name = "mini"
duration_s = 2.0
sample_interval_ms = 200

[[paths]]
name = "a"
rate_mbps = 10.0
delay_ms = 10.0
loss = { model = "bernoulli", p = 0.01 }

[[paths]]
name = "b"
rate_mbps = 5.0
delay_ms = 30.0
loss = { model = "bernoulli", p = 0.01 }

[[flows]]
name = "mp"
paths = ["a", "b"]
scheduler = "minrtt"
cc = "lia"

[[flows]]
name = "tcp"
path = "a"
size_bytes = 300000
cc = "cubic"
"""


@pytest.fixture
def mini_toml(tmp_path: Path) -> Path:
    """The mini multipath scenario written to ``<tmp>/mini.toml``."""
    path = tmp_path / "mini.toml"
    path.write_text(MINI_TOML)
    return path


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--fuzz-inputs",
        type=int,
        default=None,
        help="Cases of the random-scenario property tests (test_fuzz_scenarios.py): the long "
        "run of `make fuzz` (default: the short run's count).",
    )
