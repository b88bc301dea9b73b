"""Property: a shipped scenario with one field replaced by a hostile value (NaN, infinities, -1,
1e-12, 1e300, a value of the wrong type) either runs or raises a one-line ScenarioError that
names a field of the dict; never a panic, another exception or a hang. Fixed seed, 5,000 cases
in well under 30 s (each scenario is cut to at most 0.5 simulated seconds first).
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


def test_hostile_values_in_shipped_scenarios_run_or_name_a_field(monkeypatch):
    # Relative trace paths of the shipped scenarios resolve from their directory.
    monkeypatch.chdir(loader.SCENARIO_DIR)
    started = time.perf_counter()
    outcomes = {"ok": 0, "error": 0}
    for name, where, value, data in _mutants(CASES, seed=24):
        case = f"{name} {where} = {value!r}"
        try:
            mpsched.run(data)
            outcomes["ok"] += 1
        except mpsched.ScenarioError as e:
            message = str(e)
            assert "\n" not in message, case
            assert "internal error" not in message, f"{case}: {message}"
            assert ERROR.match(message), f"{case}: {message}"
            outcomes["error"] += 1
    elapsed = time.perf_counter() - started
    # Both outcomes occur (the property is not vacuous), quickly.
    assert outcomes["ok"] >= 150 and outcomes["error"] >= 3000, outcomes
    assert elapsed < 30, f"{CASES} cases took {elapsed:.1f} s"


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
