"""`mpsched bench --instructions` / `--against REV`: argument handling and the interleaving
logic (the builds and callgrind runs themselves are exercised by hand, see BENCHMARKS.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mpsched import bench_rev
from mpsched.bench_rev import BenchRevError, format_ratios, interleave, parse_walls


def test_parse_walls_reads_the_bench_example_lines():
    text = (
        "newreno-10m    sim 100.0 s  wall  0.0123 s     8130x real time   108.7 ns/event   9.20 Mevents/s\n"
        "decisions      12 per-packet pauses, built-in 0.1 s\n"
        "flows-1000     sim  20.0 s  wall  0.2500 s       80x real time   331.0 ns/event\n"
        "edar-handoff   sim 100.0 s  wall  0.008112 s    12327x real time    82.9 ns/event\n"
    )
    # 4 decimals: revisions before 2026-11-29's nineteenth pass; 6 since (0.1 ms was 1.2 % of
    # edar-handoff's 8 ms)
    assert parse_walls(text) == {
        "newreno-10m": 0.0123,
        "flows-1000": 0.25,
        "edar-handoff": 0.008112,
    }


def test_interleave_alternates_order_and_reports_fastest_and_pair_ratios():
    calls = []
    times = {"a": iter([2.0, 1.0, 4.0]), "b": iter([3.0, 3.0, 2.0])}

    def run(binary: Path, name: str) -> float:
        calls.append(binary.name)
        return next(times[binary.name])

    rows = interleave(Path("a"), Path("b"), ["x"], 3, run)
    assert calls == ["a", "b", "b", "a", "a", "b"]
    assert rows == [
        {
            "name": "x",
            "ours_s": 1.0,
            "theirs_s": 2.0,
            "ratio": 2.0,
            "median_pair_ratio": 1.5,
            "rounds": 3,
        }
    ]
    assert format_ratios(rows, "abc123") == [
        "x              this tree 1.000000 s  abc123 2.000000 s  abc123/this 2.000x "
        "(median of pairs 1.500x, 3 rounds)"
    ]


def test_interleave_needs_a_round():
    with pytest.raises(BenchRevError, match="rounds"):
        interleave(Path("a"), Path("b"), ["x"], 0, lambda b, n: 1.0)


def test_repo_root_outside_a_checkout_is_an_error(tmp_path):
    with pytest.raises(BenchRevError, match="source checkout"):
        bench_rev.repo_root(tmp_path)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["bench", "--instructions", "--against", "HEAD"], ("choose one of",)),
        (["bench", "--against", "HEAD", "--env"], ("choose one of",)),
        (["bench", "--against", "HEAD", "--rounds", "0"], ("--rounds",)),
        (["bench", "--plain", "newreno-10m"], ("--plain goes with",)),
        # Outside a source checkout (an installed wheel) the wrapper says so instead.
        (["bench", "--against", "no-such-revision-xyz"], ("unknown revision", "source checkout")),
    ],
    ids=["two-modes", "against-and-env", "rounds-zero", "plain-alone", "unknown-revision"],
)
def test_bad_bench_arguments_exit_2_with_one_error_line(cli, args, says):
    proc = cli(*args)
    assert proc.returncode == 2, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert any(s in lines[0] for s in says), lines[0]


def test_each_revision_is_built_as_it_builds_its_product(tmp_path):
    """With its own scripts/pgo.sh a checkout's bench binary is the profile-guided product
    build; before the script existed (or with --plain) it is the plain release build."""
    old, new, target = tmp_path / "old", tmp_path / "new", tmp_path / "target"
    (new / "scripts").mkdir(parents=True)
    (new / "scripts" / "pgo.sh").write_text("")
    old.mkdir()
    cargo = ["cargo", "build", "--release", "-q", "-p", "mpsched-sim", "--example", "bench"]
    plain = target / "release" / "examples" / "bench"
    assert bench_rev.build_command(new, target) == (
        ["bash", str(new / "scripts" / "pgo.sh"), "exec", *cargo],
        target / "pgo" / "build" / "release" / "examples" / "bench",
    )
    assert bench_rev.build_command(new, target, pgo=False) == (cargo, plain)
    assert bench_rev.build_command(old, target) == (cargo, plain)
