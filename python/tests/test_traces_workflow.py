"""Real-trace workflow: `compare` says when every seed gave identical results, and the core's
warnings (fields it ignores) reach stderr once."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from mpsched.stats import seed_identical_variants


def _trace(tmp_path: Path) -> Path:
    path = tmp_path / "t.down"
    # One opportunity per ms with a 100 ms hole: where the run starts matters.
    path.write_text("".join(f"{t}\n" for t in range(1, 301) if not 100 <= t < 200))
    return path


def _scenario(tmp_path: Path, extra: str) -> Path:
    path = tmp_path / "tr.toml"
    path.write_text(
        f"""[sim]
name = "tr"
duration_s = 1.0
[[paths]]
name = "lte"
delay_ms = 20
trace = "{_trace(tmp_path)}"
trace_reverse = "{_trace(tmp_path)}"
{extra}
[[flows]]
name = "f"
path = "lte"
"""
    )
    return path


def test_seed_identical_variants_finds_variants_whose_seeds_agree():
    flows = pd.DataFrame(
        {
            "run_id": ["a1", "a2", "b1", "b2", "c1"],
            "seed": [1, 2, 1, 2, 1],
            "variant": ["a", "a", "b", "b", "c"],
            "goodput_mbps": [3.0, 3.0, 3.0, 3.5, 1.0],
        }
    )
    # c has one seed: nothing to say.
    assert seed_identical_variants(flows, ["a", "b", "c"]) == ["a"]


def test_compare_says_when_every_seed_is_identical_and_random_offsets_fix_it(cli, tmp_path):
    scenario = _scenario(tmp_path, "")
    proc = cli("compare", str(scenario), "--seeds", "1-3", "--jobs", "1", "--out", "same")
    assert proc.returncode == 0, proc.stderr
    assert "Every seed gave identical results for every variant" in proc.stdout
    assert "warning" not in proc.stderr
    scenario = _scenario(tmp_path, 'trace_offset_s = "random"')
    proc = cli("compare", str(scenario), "--seeds", "1-3", "--jobs", "1", "--out", "random")
    assert proc.returncode == 0, proc.stderr
    assert "identical results" not in proc.stdout


def test_an_ignored_rate_is_a_warning_once(cli, tmp_path):
    scenario = _scenario(tmp_path, "rate_mbps = 10")
    expected = f"warning: {scenario}: paths[0].rate_mbps: ignored: both directions follow a trace (`trace`, `trace_reverse`)"
    proc = cli("compare", str(scenario), "--seeds", "1-3", "--jobs", "1", "--out", "cmp")
    assert proc.returncode == 0, proc.stderr
    assert [line for line in proc.stderr.splitlines() if line.startswith("warning")] == [expected]
    proc = cli("run", str(scenario), "--out", "one")
    assert proc.returncode == 0, proc.stderr
    assert [line for line in proc.stderr.splitlines() if line.startswith("warning")] == [expected]
