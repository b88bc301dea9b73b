"""The mpsched command line, run as a subprocess (`python -m mpsched`) in a temp directory."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import mpsched
from mpsched import _core
from mpsched.results import OUTPUT_FILES

SIM = "[sim]\nduration_s = 1.0\n"
PATH = '[[paths]]\nname = "p"\nrate_mbps = 10.0\ndelay_ms = 5.0\n'
FLOW = '[[flows]]\nname = "f"\npath = "p"\n'

BAD_SCENARIOS = {
    "bad-toml": "[sim\nduration_s = ",
    "unknown-field": SIM + "colour = 'blue'\n" + PATH + FLOW,
    "negative-rate": SIM + PATH.replace("10.0", "-10.0") + FLOW,
    "missing-trace": SIM
    + '[[links]]\nname = "up"\ntrace = "no-such-trace.down"\n'
    + '[[links]]\nname = "down"\nrate_mbps = 10.0\n'
    + '[[paths]]\nname = "p"\nforward = ["up"]\nreverse = ["down"]\n'
    + FLOW,
}


def assert_one_error_line(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 2, proc
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: "), proc.stderr
    return lines[0]


def test_run_writes_the_results_to_out_stem(cli, fast_toml, tmp_path):
    proc = cli("run", str(fast_toml))
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "out" / "fast"
    assert sorted(p.name for p in out.iterdir()) == sorted(OUTPUT_FILES)
    for flow in ("bulk", "sized"):
        assert flow in proc.stdout
    assert "out/fast" in proc.stdout
    assert json.loads((out / "summary.json").read_text()) == mpsched.run(fast_toml).summary


def test_run_with_seed_and_out(cli, fast_toml, tmp_path):
    proc = cli("run", str(fast_toml), "--seed", "5")
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "out" / "fast-seed5" / "summary.json").read_text())["seed"] == 5

    proc = cli("run", str(fast_toml), "--seed", "5", "--out", "elsewhere/x")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "elsewhere" / "x" / "summary.json").is_file()


@pytest.mark.parametrize("case", sorted(BAD_SCENARIOS))
def test_bad_scenario_exits_2_with_one_error_line_and_no_output(cli, tmp_path, case):
    scenario = tmp_path / f"{case}.toml"
    scenario.write_text(BAD_SCENARIOS[case])
    proc = cli("run", str(scenario))
    line = assert_one_error_line(proc)
    assert f"{case}.toml" in line
    assert proc.stdout == ""
    assert not (tmp_path / "out").exists()


def test_missing_scenario_file_exits_2(cli, tmp_path):
    line = assert_one_error_line(cli("run", "missing.toml", "--out", "o"))
    assert "missing.toml" in line
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    "args",
    [
        ["run", "x.toml", "--seed", "abc"],
        ["run", "x.toml", "--seed", "-1"],
        ["run", "x.toml", "--seed", str(2**64)],
        ["run", "x.toml", "--seed", str(2**63)],
        ["run", "x.toml", "--seed", "\uff11\uff12"],
        ["run"],
        ["frobnicate"],
        ["bench", "--repeats", "0"],
    ],
    ids=[
        "seed-not-int",
        "seed-negative",
        "seed-too-big",
        "seed-above-compare-range",
        "seed-fullwidth-digits",
        "missing-argument",
        "unknown-command",
        "repeats-zero",
    ],
)
def test_bad_command_line_exits_2_with_one_error_line(cli, fast_toml, tmp_path, args):
    args = [str(fast_toml) if a == "x.toml" else a for a in args]
    assert_one_error_line(cli(*args))
    assert not (tmp_path / "out").exists()


def test_run_and_compare_take_the_same_seed_range(cli, fast_toml, tmp_path):
    """`run --seed` and `compare --seeds` both take [0, 2**63 - 1] (compare stores seeds as
    int64), in ASCII digits: before, run took up to 2**64 - 1, and both read fullwidth digits."""
    top = 2**63 - 1
    proc = cli("run", str(fast_toml), "--seed", str(top), "--out", "top")
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "top" / "summary.json").read_text())["seed"] == top
    for seed in (str(2**63), "\uff11"):
        run_line = assert_one_error_line(cli("run", str(fast_toml), "--seed", seed))
        compare_line = assert_one_error_line(cli("compare", str(fast_toml), "--seeds", seed))
        assert "--seed" in run_line and "--seeds" in compare_line
        expected = "2**63 - 1" if seed.isascii() else "0-9"
        assert expected in run_line, run_line
    assert not (tmp_path / "out").exists()


def test_out_directory_with_other_files_is_refused(cli, fast_toml, tmp_path):
    (tmp_path / "notes.txt").write_text("keep me")
    line = assert_one_error_line(cli("run", str(fast_toml), "--out", "."))
    assert "error: ." in line
    assert (tmp_path / "notes.txt").read_text() == "keep me"


def test_bench_json_runs_one_named_benchmark(cli):
    name = _core.bench_names()[0]
    proc = cli("bench", name, "--json")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert [r["name"] for r in rows] == [name]
    for key in (
        "sim_seconds",
        "wall_seconds",
        "events",
        "packets",
        "events_per_s",
        "packets_per_s",
        "realtime_factor",
        "ns_per_event",
    ):
        assert key in rows[0], key


def test_bench_unknown_name_exits_2(cli):
    line = assert_one_error_line(cli("bench", "no-such-bench"))
    assert "no-such-bench" in line
    for bad in ("flows-0", "flows-x"):
        line = assert_one_error_line(cli("bench", bad))
        assert bad in line and "flows-N" in line


def test_bench_runs_flows_n(cli):
    """``flows-N``: the 1,000-flow benchmark's scenario with N flows (the scaling curve)."""
    proc = cli("bench", "flows-3", "--json")
    assert proc.returncode == 0, proc.stderr
    (row,) = json.loads(proc.stdout)
    assert row["name"] == "flows-3"
    assert row["description"].startswith("3 NewReno flows")
    assert row["packets"] > 0


def test_version_and_help(cli):
    proc = cli("version")
    assert proc.returncode == 0
    assert mpsched.__version__ in proc.stdout
    for args in (["--help"], ["run", "--help"], ["bench", "--help"]):
        proc = cli(*args)
        assert proc.returncode == 0, args
        assert "Usage" in proc.stdout


def test_console_script_is_installed():
    script = Path(sys.executable).with_name("mpsched")
    if not script.exists():
        pytest.skip("mpsched console script not installed next to this interpreter")
    proc = subprocess.run([str(script), "version"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("mpsched ")


def test_bench_decisions_json(cli):
    """The decision-point overhead bench reports a positive count and a per-decision cost."""
    proc = cli("bench", "--decisions", "--repeats", "1", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["decisions"] > 10_000
    assert data["ns_per_decision"] >= 0


def test_run_progress_bar_only_on_a_terminal():
    """The bar of ``mpsched run`` draws on a terminal once its delay has passed, and writes
    nothing at all to a stream that is not a terminal (logs, pipes)."""
    import io

    from mpsched.cli.progress import RunProgress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    term, pipe = Terminal(), io.StringIO()
    with RunProgress(term, delay_s=0.0) as bar:
        bar(30.0, 60.0, 1_000_000)
    with RunProgress(pipe, delay_s=0.0) as bar:
        bar(30.0, 60.0, 1_000_000)
    assert "30.0 / 60.0 s simulated" in term.getvalue()
    assert pipe.getvalue() == ""
    # Before the delay (a short run): nothing either.
    quiet = Terminal()
    with RunProgress(quiet, delay_s=60.0) as bar:
        bar(30.0, 60.0, 1_000_000)
    assert quiet.getvalue() == ""
