"""Property: a shipped scenario with one field replaced by a hostile value (NaN, infinities, -1,
1e-12, 1e300, a value of the wrong type) either runs or raises a one-line ScenarioError that
names a field of the dict; never a panic, another exception or a hang. Fixed seed, 5,000 cases
in well under 30 s (each scenario is cut to at most 0.5 simulated seconds first).

Then random scenario dicts (not mutated files): see "random scenario dicts" below. Both
properties take `--fuzz-inputs N` for a longer run (`make fuzz`).
"""

from __future__ import annotations

import copy
import random
import re
import sys
import time
from typing import Any, Iterator, List, Tuple

import pytest

import mpsched
from mpsched import scenario as loader

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

HOSTILE: List[Any] = [
    float("nan"),
    float("inf"),
    float("-inf"),
    -1,
    1e-12,
    1e300,
    "x",
    [1],
    {"a": 1},
    True,
    2**64,
]

#: ``<dict>: paths[1].loss.p: ...``: the source, then a field path of the dict.
ERROR = re.compile(r"^<dict>: [a-z_]+(\[\d+\]|\.[A-Za-z_0-9]+)*: \S")

CASES = 5000
#: Seconds one case may take (a valid case simulates at most 0.5 s).
CASE_SECONDS = 5.0


def _leaves(value: Any, path: Tuple[Any, ...] = ()) -> Iterator[Tuple[Any, ...]]:
    """Every key and list index of ``value`` (tables and lists included), depth first."""
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, child in items:
        yield path + (key,)
        if isinstance(child, (dict, list)):
            yield from _leaves(child, path + (key,))


def _get(value: Any, where: Tuple[Any, ...]) -> Any:
    for key in where:
        value = value[key]
    return value


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _without_sweeps(value: Any) -> Any:
    """``{ range, steps }`` sweeps (for ``compare``) replaced by their first value."""
    if isinstance(value, dict):
        if "range" in value and "steps" in value:
            return value["range"][0]
        return {k: _without_sweeps(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_sweeps(v) for v in value]
    return value


def _shipped() -> List[Tuple[str, dict]]:
    out = []
    for path in sorted(loader.SCENARIO_DIR.glob("*.toml")):
        data = _without_sweeps(tomllib.loads(path.read_text(encoding="utf-8")))
        data["sim"]["duration_s"] = min(data["sim"]["duration_s"], 0.5)
        out.append((path.name, data))
    return out


def _mutants(n: int, seed: int) -> Iterator[Tuple[str, Tuple[Any, ...], Any, dict]]:
    rng = random.Random(seed)
    shipped = _shipped()
    for _ in range(n):
        name, base = rng.choice(shipped)
        data = copy.deepcopy(base)
        leaves = list(_leaves(data))
        numbers = [w for w in leaves if _is_number(_get(data, w))]
        # Mostly numeric fields (where small and huge values may run), sometimes anything.
        where = rng.choice(numbers if numbers and rng.random() < 0.7 else leaves)
        value = rng.choice(HOSTILE)
        _get(data, where[:-1])[where[-1]] = copy.deepcopy(value)
        yield name, where, value, data


def test_hostile_values_in_shipped_scenarios_run_or_name_a_field(monkeypatch, request):
    # Relative trace paths of the shipped scenarios resolve from their directory.
    monkeypatch.chdir(loader.SCENARIO_DIR)
    cases = _fuzz_inputs(request, CASES)
    started = time.perf_counter()
    outcomes = {"ok": 0, "error": 0}
    for name, where, value, data in _mutants(cases, seed=24):
        case = f"{name} {where} = {value!r}"
        case_started = time.perf_counter()
        try:
            mpsched.run(data)
            assert time.perf_counter() - case_started < CASE_SECONDS, case
            outcomes["ok"] += 1
        except mpsched.ScenarioError as e:
            message = str(e)
            assert "\n" not in message, case
            assert "internal error" not in message, f"{case}: {message}"
            assert ERROR.match(message), f"{case}: {message}"
            outcomes["error"] += 1
    elapsed = time.perf_counter() - started
    # Both outcomes occur (the property is not vacuous), quickly.
    assert outcomes["ok"] >= cases * 0.03 and outcomes["error"] >= cases * 0.6, outcomes
    # The short run, quickly (a long run is bounded per case only: it may share the machine).
    assert cases != CASES or elapsed < 30, f"{cases} cases took {elapsed:.1f} s"


@pytest.mark.parametrize(
    "where, value, expected",
    [
        (("paths", 0, "rate_mbps"), 1e-12, "expected at least 1e-6 Mbit/s (1 bit/s), got 1e-12"),
        (("sim", "sample_interval_ms"), 1e-9, "expected a duration of at least 0.001 ms"),
        (("paths", 1, "delay_ms"), float("nan"), "expected a finite number, got NaN"),
        (("flows", 0, "size_bytes"), "10", 'invalid type: string "10", expected u64'),
    ],
)
def test_a_hostile_value_is_named_in_the_error(where, value, expected):
    data = dict(_shipped())["edar-setting-1.toml"]
    _get(data, where[:-1])[where[-1]] = value
    field = where[0] + "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in where[1:])
    with pytest.raises(mpsched.ScenarioError) as info:
        mpsched.run(data)
    assert str(info.value).startswith(f"<dict>: {field}: {expected}"), str(info.value)


# --- random scenario dicts ------------------------------------------------------------------
#
# Property: a scenario dict built at random from the format's sections and fields (each field
# present or not, a plausible value most of the time, else a hostile one of any type: None,
# NaN, huge or negative numbers, strings, lists, dicts, Decimal, bytes, sets, dates, tuples;
# numpy scalars and paths, which must simply work) either runs or raises a one-line
# ScenarioError naming a field, within a time bound per case and a memory bound over the run.
# The short run has DICT_CASES cases; `--fuzz-inputs N` (`make fuzz`) runs N.

DICT_CASES = 1500
#: Growth of the process's peak resident memory over the whole run, bytes.
MEMORY_BOUND = 1 << 30

#: A message naming a field: a field path then ": ", or a field in backquotes (missing,
#: unknown or duplicate field).
DICT_ERROR = re.compile(r"^<dict>: ([a-z_]+(\[\d+\]|\.[A-Za-z_0-9]+)*: \S|.*`[A-Za-z_0-9]+`)")


def _nasty() -> List[Any]:
    import datetime
    from decimal import Decimal
    from pathlib import Path

    import numpy as np

    return [
        None,
        float("nan"),
        float("inf"),
        -1,
        0,
        1e-12,
        1e300,
        2**64,
        -(2**63),
        "x",
        "10",
        "",
        [],
        {},
        [1, "a"],
        {"a": 1},
        True,
        Decimal("1.5"),
        b"x",
        {1, 2},
        Path("p"),
        np.float64(2.5),
        np.int64(3),
        np.array([1.0, 2.0]),
        datetime.date(2020, 1, 1),
        ("t",),
    ]


SCHEDULERS = ["minrtt", "redundant", "blest", "ecf", "roundrobin", "olms", "edar", "EDAR", "nope"]
CCS = ["cubic", "newreno", "lia", "olia", "balia", "wvegas", "bogus"]


class _Gen:
    """Random scenario dicts from one seeded generator."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.nasty = _nasty()
        #: Chance that a value is hostile, drawn per scenario (half of them clean).
        self.hostile = 0.0

    def value(self, plausible: Any) -> Any:
        """``plausible()``, or (with the scenario's chance) a hostile value."""
        if self.rng.random() >= self.hostile:
            return plausible()
        return copy.deepcopy(self.rng.choice(self.nasty))

    def fields(self, spec: dict, often: tuple = ()) -> dict:
        """Each field of ``spec`` (name -> plausible value maker) present half the time, those
        in ``often`` nine times in ten."""
        present = lambda k: self.rng.random() < (0.9 if k in often else 0.3)  # noqa: E731
        return {k: self.value(make) for k, make in spec.items() if present(k)}

    def sim(self) -> dict:
        r = self.rng
        out = self.fields(
            {
                "name": lambda: r.choice(["s", "fuzz", ""]),
                "seed": lambda: r.randrange(0, 2**64),
                "sample_interval_ms": lambda: r.choice([1, 10, 100]),
                "profile": lambda: r.choice(["linux", "ns3", "linux", "bsd"]),
                "stop_when_done": lambda: r.random() < 0.5,
                "energy_states": lambda: r.random() < 0.5,
            }
        )
        if r.random() < 0.98:
            out["duration_s"] = self.value(lambda: r.choice([0.05, 0.2, 0.5]))
        return out

    def path(self, i: int) -> dict:
        r = self.rng
        out = self.fields(
            {
                "rate_mbps": lambda: r.choice([1, 10, 100, 0.5]),
                "delay_ms": lambda: r.choice([0, 1, 20, 100]),
                "queue_bytes": lambda: r.choice([1500, 30000, 10**6]),
                "loss": lambda: {"model": "bernoulli", "p": r.choice([0, 0.01, 0.5])},
                "trace": lambda: {"synthetic": {"mean_mbps": 10, "duration_s": 5, "dwell_s": 1}},
                "interface": lambda: r.choice(["wifi", "lte", "3g", "5g"]),
            },
            often=("rate_mbps", "delay_ms"),
        )
        if r.random() < 0.98:
            out["name"] = self.value(lambda: f"p{i}")
        return out

    def flow(self, i: int, names: List[str]) -> dict:
        r = self.rng
        out = self.fields(
            {
                "scheduler": lambda: r.choice(SCHEDULERS),
                "cc": lambda: r.choice(CCS),
                "backup": lambda: names[-1:],
                "size_bytes": lambda: r.choice([1, 1000, 100_000]),
                "start_s": lambda: r.choice([0, 0.01, 0.1]),
                "stop_s": lambda: r.choice([0.05, 0.3]),
                "mss": lambda: r.choice([536, 1448]),
                "init_cwnd": lambda: r.choice([1, 10]),
                "min_rto_ms": lambda: r.choice([200, 1]),
                "delayed_ack": lambda: r.random() < 0.5,
                "app_rate_mbps": lambda: r.choice([1, 5]),
                "repeat": lambda: r.choice([1, 3]),
                "decision_interval_ms": lambda: r.choice([10, 50]),
            }
        )
        out["name"] = self.value(lambda: f"f{i}")
        if r.random() < 0.5:
            out["path"] = self.value(lambda: r.choice(names))
        else:
            out["paths"] = self.value(lambda: r.sample(names, k=min(len(names), r.randint(1, 2))))
        return out

    def scenario(self) -> dict:
        r = self.rng
        self.hostile = r.choice([0.0, 0.0, 0.02, 0.1, 0.3])
        paths = [self.path(i) for i in range(r.choice([0, 1, 1, 2, 2, 3]))]
        names = [p["name"] for p in paths if isinstance(p.get("name"), str)] or ["nope"]
        data: dict = {"sim": self.sim(), "paths": paths}
        data["flows"] = [self.flow(i, names) for i in range(r.choice([0, 1, 1, 2, 3]))]
        if r.random() < 0.2:
            at = lambda: r.choice([0.01, 0.1])  # noqa: E731
            data["events"] = [{"at_s": self.value(at), "path": r.choice(names), "state": "down"}]
        if r.random() < 0.2:
            rate = lambda: r.choice([10, 100])  # noqa: E731
            wl = {
                "name": "w",
                "paths": names[:1],
                "arrival": "poisson",
                "rate_per_s": self.value(rate),
            }
            data["workloads"] = [wl]
        if r.random() < 0.1:
            data[r.choice(["sim", "paths", "flows", "colour"])] = copy.deepcopy(
                r.choice(self.nasty)
            )
        return data


def _fuzz_inputs(request: pytest.FixtureRequest, default: int) -> int:
    given = request.config.getoption("--fuzz-inputs")
    return default if given is None else given


def test_random_scenario_dicts_run_or_name_a_field(request):
    import resource

    cases = _fuzz_inputs(request, DICT_CASES)
    gen = _Gen(seed=24)
    outcomes: dict = {}
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    for i in range(cases):
        data = gen.scenario()
        case = f"case {i}: {data!r}"
        started = time.perf_counter()
        try:
            mpsched.run(data)
            kind = "ok"
        except mpsched.ScenarioError as e:
            message = str(e)
            assert "\n" not in message and "internal error" not in message, f"{case}: {message}"
            assert DICT_ERROR.match(message), f"{case}: {message}"
            kind = re.sub(r"\d+", "#", message.split(": ")[1])
        took = time.perf_counter() - started
        assert took < CASE_SECONDS, f"{case}: {took:.1f} s"
        outcomes[kind] = outcomes.get(kind, 0) + 1
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - peak_before
    assert grown < MEMORY_BOUND, f"peak memory grew by {grown / 2**20:.0f} MiB"
    errors = sum(n for k, n in outcomes.items() if k != "ok")
    print(
        f"{cases} random dicts: {outcomes.get('ok', 0)} ran, {errors} errors, {len(outcomes)} outcomes"
    )
    # Both outcomes occur, and the errors name many different fields.
    assert outcomes.get("ok", 0) >= cases // 20 and errors >= cases // 4, outcomes
    assert len(outcomes) >= min(30, cases // 20), outcomes
