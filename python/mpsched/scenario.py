"""The one scenario loader: every entry point that takes a scenario (``mpsched.run``,
:class:`~mpsched.Simulation`, the envs, ``compare``'s matrix, ``reproduce``) reads it here, so
the same bad input gives the same error wherever it comes in.

A scenario is a path (TOML, or JSON when the name ends in ``.json``, in any case), a dict with
the structure of the TOML file (numpy scalars and paths are taken as numbers and strings; see
:mod:`mpsched._values`), or text (:func:`loads`). Errors are :class:`ScenarioError` with a
one-line message ``"<source>: <field or line>: <what>"``; ``source`` is the path as given,
``<dict>`` or ``<text>``. Syntax errors and field errors are the simulator core's own messages
(the ones ``mpsched run`` prints), also where a Python layer parses the file itself.

A file that cannot be read raises a :class:`ScenarioFileError`: a ScenarioError that is also the
:class:`OSError` subclass the read raised (``FileNotFoundError``, ``IsADirectoryError``...).
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Mapping, Optional, Type, Union

from . import _core
from ._core import ScenarioError
from ._values import plain

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

__all__ = [
    "ScenarioLike",
    "ScenarioError",
    "ScenarioFileError",
    "LoadedScenario",
    "scenario_format",
    "load",
    "loads",
    "load_dict",
    "check",
    "SCENARIO_DIR",
    "shipped_scenario",
]

#: The example scenarios, inside the package so that an installed wheel has them (the
#: repository's ``scenarios/`` is a symbolic link to this directory).
SCENARIO_DIR = Path(__file__).resolve().parent / "scenarios"

#: A scenario file path or the scenario as a dict.
ScenarioLike = Union[str, "os.PathLike[str]", Mapping[str, Any]]


class ScenarioFileError(ScenarioError, OSError):
    """A scenario file that cannot be read: a ScenarioError and an OSError at once."""

    def __init__(self, message: str, cause: OSError) -> None:
        OSError.__init__(self, cause.errno, cause.strerror, cause.filename)
        self.message = message

    def __str__(self) -> str:
        return self.message


_FILE_ERRORS: Dict[Type[OSError], Type[ScenarioFileError]] = {}


def _file_error(path: Path, cause: OSError) -> ScenarioFileError:
    """``<path>: cannot read scenario file: <reason>``, of a class that is also ``type(cause)``
    (so ``except FileNotFoundError`` keeps working)."""
    kind = type(cause)
    if kind not in _FILE_ERRORS:
        name = f"Scenario{kind.__name__}"
        _FILE_ERRORS[kind] = type(name, (ScenarioFileError, kind), {"__module__": __name__})
    message = f"{path}: cannot read scenario file: {cause.strerror or cause}"
    return _FILE_ERRORS[kind](message, cause)


@dataclass(frozen=True)
class LoadedScenario:
    """A scenario read and parsed.

    Attributes:
        data: the scenario as a dict (a fresh copy, free to edit).
        source: the name errors use: the path as given, ``<dict>`` or ``<text>``.
        text: the text the core reads (the file's own text; JSON for a dict).
        fmt: ``"toml"`` or ``"json"``.
        base_dir: the directory relative trace paths are resolved from.
        path: the file, None for a dict or text.
    """

    data: Dict[str, Any]
    source: str
    text: str
    fmt: str
    base_dir: Path
    path: Optional[Path] = None


def scenario_format(path: Union[str, "os.PathLike[str]"]) -> str:
    """``"json"`` for a name ending in ``.json`` (any case), else ``"toml"``."""
    return "json" if Path(path).suffix.lower() == ".json" else "toml"


def _core_syntax_error(text: str, source: str, fmt: str) -> Optional[str]:
    """The core's message for ``text``, if the core rejects it."""
    try:
        _core.Sim(text, source, fmt, None)
    except ScenarioError as e:
        return str(e)
    return None


def loads(
    text: str, fmt: str = "toml", source: str = "<text>", base_dir: Optional[Path] = None
) -> LoadedScenario:
    """Parses scenario ``text`` (``fmt``: ``"toml"`` or ``"json"``)."""
    if fmt not in ("toml", "json"):
        raise ScenarioError(f'{source}: fmt: expected "toml" or "json", got {fmt!r}')
    # The core's parsers first: they bound the nesting (tomllib takes minutes and gigabytes on
    # dotted keys 100,000 deep) and give the message `mpsched run` prints.
    _core.check_syntax(text, source, fmt)
    try:
        data = json.loads(text) if fmt == "json" else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError, RecursionError) as e:
        # The core's message (the one `mpsched run` prints), with a line number.
        what = "nested too deeply" if isinstance(e, RecursionError) else e
        raise ScenarioError(_core_syntax_error(text, source, fmt) or f"{source}: {what}") from None
    if not isinstance(data, dict):
        raise ScenarioError(f"{source}: expected a table of [sim], [[paths]], [[flows]]...")
    try:
        data = plain(data, source)
    except ScenarioError as e:  # TOML dates and times, NaN: the core's message has the line
        core = _core_syntax_error(text, source, fmt) if fmt == "toml" else None
        raise ScenarioError(core or str(e)) from None
    base = base_dir if base_dir is not None else Path(".")
    return LoadedScenario(data=data, source=source, text=text, fmt=fmt, base_dir=base)


def _load_file(path: Path, source: str) -> LoadedScenario:
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise _file_error(path, e) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ScenarioError(f"{source}: not a UTF-8 text file") from None
    loaded = loads(text, scenario_format(path), source, path.parent)
    return LoadedScenario(
        data=loaded.data, source=source, text=text, fmt=loaded.fmt, base_dir=path.parent, path=path
    )


def load(scenario: ScenarioLike) -> LoadedScenario:
    """Reads a scenario path or copies a scenario dict. Raises ScenarioError (one line) for an
    unreadable or malformed scenario, TypeError for anything else."""
    if isinstance(scenario, Mapping):
        data = plain(scenario, "<dict>")  # a fresh copy of plain values, or a field's error
        text = json.dumps(data)
        return LoadedScenario(
            data=data, source="<dict>", text=text, fmt="json", base_dir=Path.cwd()
        )
    if isinstance(scenario, (str, os.PathLike)):
        return _load_file(Path(scenario), os.fspath(scenario))
    raise TypeError(f"scenario: expected a path or a dict, got {type(scenario).__name__}")


def load_dict(path: Union[str, "os.PathLike[str]"]) -> Dict[str, Any]:
    """The scenario file at ``path`` as a dict (see :func:`load`)."""
    return load(path).data


def shipped_scenario(name: str) -> Path:
    """The path of a shipped scenario (``"edar-handoff"`` or ``"edar-handoff.toml"``), from any
    working directory. Raises ScenarioError naming the known ones if there is none."""
    path = SCENARIO_DIR / (name if name.endswith((".toml", ".json")) else f"{name}.toml")
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in SCENARIO_DIR.glob("*.toml")))
        raise ScenarioError(f"{name}: no such shipped scenario (shipped: {known})")
    return path


def resolve_default_scenario(scenario: str, default: str) -> Path:
    """A training command's scenario file: the path given, or, for the ``default`` (a path
    relative to a checkout) outside a checkout, the copy shipped with the package
    (ScenarioError if there is none)."""
    p = Path(scenario)
    if p.is_file() or scenario != default:
        return p
    return shipped_scenario(p.name)


def _has_sweep(value: Any) -> bool:
    if isinstance(value, dict):
        if "range" in value and "steps" in value:
            return True
        return any(_has_sweep(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_sweep(v) for v in value)
    return False


def check(loaded: LoadedScenario) -> None:
    """Checks a scenario file as written with the core, raising the core's ScenarioError
    (``mpsched run``'s message, with the file's line numbers).

    Layers that edit a file's scenario before the core sees it call this so that a mistake in
    the file reads the same everywhere. Files the core cannot take as written are not checked:
    sweeps (``compare`` expands them).
    """
    if loaded.path is None or _has_sweep(loaded.data):
        return
    _core.Sim(loaded.text, loaded.source, loaded.fmt, None)
