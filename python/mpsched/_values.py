"""A scenario dict as plain JSON values, checked field by field.

``mpsched.run(dict)`` hands the core JSON text. What JSON cannot hold is dealt with here, where
the field is still known: numpy scalars and arrays become numbers and lists, paths
(:class:`os.PathLike`) become strings, tuples become lists; a non-finite number, a value of any
other type (Decimal, set, bytes, dates...) or a structure nested too deeply is a
:class:`ScenarioError` naming the field (``<dict>: paths[0].delay_ms: ...``).
"""

from __future__ import annotations

import math
import os
from typing import Any

from ._core import ScenarioError

__all__ = ["plain", "MAX_DEPTH"]

#: Deepest nesting of tables and lists a scenario may have (real ones have about 5).
MAX_DEPTH = 32


def _field(parent: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{parent}[{key}]"
    return f"{parent}.{key}" if parent else str(key)


def _number_text(x: float) -> str:
    return "NaN" if math.isnan(x) else ("inf" if x > 0 else "-inf")


def _numpy_plain(value: Any) -> Any:
    """A numpy scalar's Python value, a numpy array's list; ``value`` itself otherwise."""
    if type(value).__module__ != "numpy":
        return value
    if hasattr(value, "tolist"):
        return value.tolist()
    return value


def plain(value: Any, source: str, field: str = "", depth: int = 0) -> Any:
    """``value`` as JSON-ready plain values (see the module's documentation)."""
    where = field or "scenario"
    if depth > MAX_DEPTH:
        raise ScenarioError(f"{source}: {where}: expected at most {MAX_DEPTH} nested levels")
    value = _numpy_plain(value)
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ScenarioError(
                f"{source}: {where}: expected a finite number, got {_number_text(value)}"
            )
        return value
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, dict) or hasattr(value, "keys") and hasattr(value, "items"):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise ScenarioError(
                    f"{source}: {_field(field, repr(k))}: expected a string key, "
                    f"got {type(k).__name__}"
                )
            out[k] = plain(v, source, _field(field, k), depth + 1)
        return out
    if isinstance(value, (list, tuple)):
        return [plain(v, source, _field(field, i), depth + 1) for i, v in enumerate(value)]
    raise ScenarioError(
        f"{source}: {where}: expected a number, string, boolean, list or table, "
        f"got {type(value).__name__} {_short(value)}"
    )


def _short(value: Any) -> str:
    """A short repr (one line, at most 40 characters)."""
    text = " ".join(repr(value).split())
    return text if len(text) <= 40 else text[:37] + "..."
