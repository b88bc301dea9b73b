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
