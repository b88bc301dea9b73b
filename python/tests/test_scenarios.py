"""The scenario library (scenarios/*.toml): every file loads and runs; ranges and sweeps resolve.

Each scenario runs for 2 simulated seconds (its ``duration_s`` overridden through the dict
API), at the first point of its sweeps if it has any; that checks every field against the core
without the papers' full durations.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import mpsched
from mpsched import _core
from mpsched.matrix import (
    MatrixError,
    build_matrix,
    expand_sweeps,
    find_sweeps,
    load_scenario,
    resolve_trace_paths,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
FILES = sorted(SCENARIOS.glob("*.toml"))
SMOKE_S = 2.0


def test_library_is_there():
    names = {p.stem for p in FILES}
    expected = (
        {f"edar-setting-{i}" for i in range(1, 6)}
        | {
            "edar-handoff",
            "edar-fct-delay",
            "edar-fct-loss",
            "mptcp-rl-long",
            "pdaa3c",
            "drl-cc-scenario-1",
        }
        | {f"drl-cc-scenario-{i}" for i in range(2, 9)}
    )
    assert expected <= names, sorted(expected - names)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_scenario_runs_briefly(path: Path):
    scenario = load_scenario(path)
    # Every library file documents its source in a header comment.
    assert path.read_text(encoding="utf-8").startswith("#"), f"{path.name}: no header comment"
    points = expand_sweeps(scenario, path)
    _label, first = points[0]
    # 2 s from the first flow's start (flows of a workload arrive later, drl-cc-scenario-5).
    flows_at_0 = mpsched.Simulation(first).results().flows  # resolved, not run
    start = min(flows_at_0.column("start_s").to_pylist())
    first["sim"]["duration_s"] = min(first["sim"]["duration_s"], start + SMOKE_S)
    results = mpsched.run(first)
    flows = results.flows
    assert flows.num_rows >= 1
    # Something was delivered in 2 s by the first flow to start ...
    assert max(flows.column("bytes_delivered").to_pylist()) > 0
    # ... and the resolved copy has no range left.
    assert "range" not in results.resolved_toml


def test_random_ranges_resolve_per_seed():
    """edar-setting-3 draws path 2's rate from [1, 5] Mbps: reproducible for a seed, other seeds
    give other values, all within bounds."""
    scenario = load_scenario(SCENARIOS / "edar-setting-3.toml")
    scenario["sim"]["duration_s"] = 0.5

    def drawn(seed):
        resolved = tomllib.loads(mpsched.run(scenario, seed=seed).resolved_toml)
        links = {link["name"]: link for link in resolved["links"]}
        return (
            links["path2.fwd"]["rate_mbps"],
            links["path2.fwd"]["delay_ms"],
            resolved["flows"][0]["size_bytes"],
        )

    values = [drawn(seed) for seed in (1, 2, 3)]
    assert drawn(1) == values[0]
    assert len({v[0] for v in values}) == 3
    for rate, delay, size in values:
        assert 1 <= rate <= 5 and 50 <= delay <= 70
        assert isinstance(size, int) and 10_000_000 <= size <= 100_000_000


def test_handoffs_become_schedules():
    """edar-setting-2's handoff process on path 2 expands into its links' schedules: over 400 s
    at one handoff per 40 s on average, about 10 handoffs of four entries each."""
    scenario = load_scenario(SCENARIOS / "edar-setting-2.toml")
    scenario["sim"]["duration_s"] = 0.5
    scenario["handoffs"][0]["stop_s"] = 400  # expanded up to 400 s even though the run is short
    resolved = tomllib.loads(mpsched.run(scenario).resolved_toml)
    links = {link["name"]: link for link in resolved["links"]}
    schedule = links["path2.fwd"]["schedule"]
    assert len(schedule) % 4 == 0 and 4 <= len(schedule) // 4 <= 18, len(schedule)
    assert [e.get("outage") for e in schedule[:4]] == [None, True, False, None]
    assert "schedule" not in links["path1.fwd"]


def test_sweeps_expand_in_compare(tmp_path: Path):
    """edar-fct-delay sweeps path 2's delay over 20..100 ms in 5 steps: five variants labelled
    path2.delay_ms=<value>, in order."""
    m = build_matrix(SCENARIOS / "edar-fct-delay.toml", seeds=[1, 2])
    assert m.params == tuple(f"path2.delay_ms={d}" for d in (20, 40, 60, 80, 100))
    assert [r.params for r in m.runs] == [p for p in m.params for _ in (1, 2)]
    assert m.runs[0].run_id == "path2.delay_ms=20_seed1"
    delays = [r.scenario["paths"][1]["delay_ms"] for r in m.runs[::2]]
    assert delays == [20.0, 40.0, 60.0, 80.0, 100.0]
    assert len({r.scenario_hash for r in m.runs}) == 10
    # The loss sweep is log-spaced from 0.01 % to 3 %.
    loss = find_sweeps(
        load_scenario(SCENARIOS / "edar-fct-loss.toml"), SCENARIOS / "edar-fct-loss.toml"
    )
    assert len(loss) == 1 and loss[0].label == "path2.loss.p"
    assert loss[0].values[0] == pytest.approx(1e-4) and loss[0].values[-1] == pytest.approx(0.03)
    ratios = [b / a for a, b in zip(loss[0].values, loss[0].values[1:])]
    assert ratios == pytest.approx([300**0.2] * 5)
    # Grouped sweeps move together: DRL-CC's two links take the same bandwidth (4 points, not 16).
    drl = expand_sweeps(load_scenario(SCENARIOS / "drl-cc-scenario-2.toml"), SCENARIOS / "x.toml")
    assert [label for label, _ in drl] == [f"bandwidth={b}" for b in (2, 4, 8, 16)]
    assert [(s["paths"][0]["rate_mbps"], s["paths"][1]["rate_mbps"]) for _, s in drl][
        1
    ] == pytest.approx((4, 4))
    # Integer fields are rounded: MPTCP-RL's flow counts 5, 10, ..., 30.
    short = find_sweeps(load_scenario(SCENARIOS / "mptcp-rl-short.toml"), SCENARIOS / "x.toml")
    assert short[0].label == "short.max_flows" and short[0].values == (5, 10, 15, 20, 25, 30)


BASE = {
    "sim": {"duration_s": 0.2},
    "paths": [{"name": "p", "rate_mbps": 10, "delay_ms": {"range": [10, 20], "steps": 3}}],
    "flows": [{"name": "f", "path": "p"}],
}


@pytest.mark.parametrize(
    "table, message",
    [
        (
            {"range": [20, 10], "steps": 3},
            "paths[0].delay_ms: expected lo <= hi in `range = [lo, hi]`, got [20, 10]",
        ),
        (
            {"range": [10, 20], "steps": 0},
            "paths[0].delay_ms: steps: expected an integer >= 1, got 0",
        ),
        (
            {"range": ["a", 20], "steps": 2},
            "paths[0].delay_ms: expected `range = [lo, hi]` with two numbers",
        ),
        (
            {"range": [0, 20], "steps": 2, "log": True},
            "paths[0].delay_ms: log spacing needs lo > 0",
        ),
    ],
)
def test_malformed_sweeps_are_one_line_errors(tmp_path: Path, table, message):
    path = tmp_path / "s.json"
    scenario = {**BASE, "paths": [{**BASE["paths"][0], "delay_ms": table}]}
    path.write_text(__import__("json").dumps(scenario))
    with pytest.raises(MatrixError) as e:
        build_matrix(path)
    text = str(e.value)
    assert "\n" not in text and text.startswith(f"{path}: {message}"), text


def test_run_refuses_a_sweep_and_random_errors_come_from_the_core():
    with pytest.raises(
        _core.ScenarioError,
        match=r"^<dict>: paths\[0\]\.delay_ms: a sweep \(`steps = 3`\) .* use `mpsched compare`",
    ):
        mpsched.run(BASE)
    bad = {**BASE, "paths": [{**BASE["paths"][0], "delay_ms": {"range": [20, 10]}}]}
    with pytest.raises(_core.ScenarioError, match=r"expected lo <= hi"):
        mpsched.run(bad)
    ok = {**BASE, "paths": [{**BASE["paths"][0], "delay_ms": {"range": [10, 20]}}]}
    a = tomllib.loads(mpsched.run(ok, seed=4).resolved_toml)["links"][0]["delay_ms"]
    assert (
        10 <= a <= 20
        and a == tomllib.loads(mpsched.run(ok, seed=4).resolved_toml)["links"][0]["delay_ms"]
    )


def test_trace_synth_cli(cli, tmp_path: Path):
    """`mpsched trace synth` writes a mahimahi trace: parseable by the core, its mean rate near
    --mean-mbps (20 s is ~10 dwell periods of the rate process: a loose ±35 %), the same bytes
    for the same seed, other bytes for another seed."""
    proc = cli(
        "trace",
        "synth",
        "--mean-mbps",
        "12",
        "--duration-s",
        "20",
        "--seed",
        "1",
        "--out",
        "a.trace",
    )
    assert proc.returncode == 0, proc.stderr
    text = (tmp_path / "a.trace").read_text()
    times = [int(line) for line in text.split()]
    assert times == sorted(times) and times[-1] == 20_000
    mean_mbps = len(times) * 1500 * 8 / 20 / 1e6
    assert 12 * 0.65 < mean_mbps < 12 * 1.35, mean_mbps
    # The command writes what the core generates: the same text for the same seed, another
    # for another seed (called in-process: each CLI start costs seconds).
    assert _core.synth_trace(12.0, 20.0, 1, 0.5, 2.0, 0.0, 1.0) == text
    assert _core.synth_trace(12.0, 20.0, 2, 0.5, 2.0, 0.0, 1.0) != text
    # The file drives a link.
    scenario = {
        "sim": {"duration_s": 1},
        "paths": [{"name": "cell", "delay_ms": 20, "trace": "a.trace", "trace_reverse": "a.trace"}],
        "flows": [{"name": "f", "path": "cell"}],
    }
    scenario = resolve_trace_paths(scenario, tmp_path)
    assert mpsched.run(scenario).flows.column("bytes_delivered").to_pylist()[0] > 0
    bad = cli("trace", "synth", "--mean-mbps", "-1", "--out", "d.trace")
    assert (
        bad.returncode == 2
        and bad.stderr.strip() == "error: --mean-mbps: expected a positive number, got -1"
    )
    assert not (tmp_path / "d.trace").exists()


def test_run_cli_refuses_a_sweep(cli, tmp_path: Path):
    path = tmp_path / "sweep.json"
    path.write_text(__import__("json").dumps(BASE))
    proc = cli("run", str(path))
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith(
        f"error: {path}: paths[0].delay_ms: a sweep (`steps = 3`)"
    )
    assert "use `mpsched compare`" in proc.stderr and len(proc.stderr.splitlines()) == 1


def test_swept_compare_groups_by_parameter(tmp_path: Path):
    """A compare over a 3-point delay sweep: the combined tables carry params, the dataset has
    one variant per value, the report's table a parameters column."""
    from mpsched.dataset import load_results
    from mpsched.report import summary_table
    from mpsched.stats import summarize
    from mpsched.sweep import run_sweep

    path = tmp_path / "sweep.json"
    sweep = {
        **BASE,
        "sim": {"duration_s": 3},
        "flows": [{"name": "f", "path": "p", "size_bytes": 100_000}],
    }
    path.write_text(__import__("json").dumps(sweep))
    m = build_matrix(path, seeds=[1, 2])
    run_sweep(m, tmp_path / "out", jobs=1)
    ds = load_results(tmp_path / "out")
    assert ds.variants == ("p.delay_ms=10", "p.delay_ms=15", "p.delay_ms=20")
    assert list(ds.flows["params"]) == [v for v in ds.variants for _ in (1, 2)]
    headers, rows = summary_table(summarize(ds.flows, ds.variants))
    assert headers[:3] == ["scheduler", "cc", "parameters"]
    assert [r[2] for r in rows] == list(ds.variants)
    # Every variant's transfer completed in both seeds; each variant ran its own delay.
    assert [r[headers.index("completed")] for r in rows] == ["2/2"] * 3
    delays = {spec.params: spec.scenario["paths"][0]["delay_ms"] for spec in m.runs}
    assert delays == {"p.delay_ms=10": 10.0, "p.delay_ms=15": 15.0, "p.delay_ms=20": 20.0}
