"""``mpsched.run``: simulate a scenario in memory."""

from __future__ import annotations

import os
from typing import Any, Mapping, Optional, Union

from . import _core
from .results import Results
from .scenario import load

__all__ = ["run", "Scenario", "MAX_SEED"]

#: Seeds are unsigned 64-bit integers.
MAX_SEED = 2**64 - 1

#: A scenario file path (TOML, or JSON if it ends in ``.json``), or the scenario as a dict.
Scenario = Union[str, "os.PathLike[str]", Mapping[str, Any]]


def run(scenario: Scenario, seed: Optional[int] = None) -> Results:
    """Simulate ``scenario`` and return its :class:`~mpsched.Results`.

    Args:
        scenario: a path to a scenario file (TOML, or JSON if the name ends in ``.json``), or
            the scenario itself as a dict with the same structure as the TOML file
            (``{"sim": {...}, "links": [...], "paths": [...], "flows": [...]}``).
            See docs/scenarios.md for the format.
        seed: overrides ``[sim].seed`` when given.

    Raises:
        mpsched.ScenarioError: the scenario is invalid (syntax, unknown or missing field, bad
            value, unreadable trace file). The message is one line,
            ``"<source>: <field or line>: <what was expected>"``, where ``source`` is the path,
            or ``"<dict>"`` for a dict.
            A file that cannot be read raises a ScenarioError that is also the OSError
            (e.g. ``FileNotFoundError``); see :mod:`mpsched.scenario`.
        TypeError: ``scenario`` is neither a path nor a dict.

    A dict's numpy scalars and arrays are taken as numbers and lists, its paths
    (:class:`os.PathLike`) as strings; any other value JSON cannot hold (Decimal, set, bytes,
    dates, NaN) is a ScenarioError naming the field. An internal failure of the simulator is a
    ScenarioError too (one line, "internal error ...; please report it").
        mpsched.SchedulerError: a scheduler written in Python raised (or answered something
            other than a subflow index or None); the original exception is its ``__cause__``
            (docs/python-schedulers.md).

    Nothing is written to disk; use :func:`mpsched.write_results` for that. Same scenario,
    seed and build => identical results.
    """
    if seed is not None and (
        isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED
    ):
        raise ValueError(f"seed: expected an integer in [0, 2**64 - 1], got {seed!r}")
    loaded = load(scenario)
    try:
        return Results.from_core(_core.run_scenario(loaded.text, loaded.source, loaded.fmt, seed))
    except BaseException as e:
        # The core catches its panics; one that still escapes (a BaseException) is reported
        # like them, never as a traceback.
        if type(e).__name__ != "PanicException":
            raise
        what = " ".join(str(e).split())
        raise _core.ScenarioError(
            f"{loaded.source}: the simulator failed on this scenario "
            f"(internal error: {what}; please report it)"
        ) from None
