"""Schedulers written in Python, used by name like the built-ins.

A scheduler is a class (one instance per connection) or a function (stateless), registered
with :func:`scheduler`::

    import mpsched

    @mpsched.scheduler("lowest-rtt")
    def lowest_rtt(view):                 # view: mpsched.SchedView, one segment waits
        ready = [s for s in view.subflows if s.available and not s.backup]
        return min(ready, key=lambda s: s.srtt_ms).index if ready else None

    mpsched.run({... "flows": [{"scheduler": "lowest-rtt", ...}]})

A class has ``get_send(self, view)`` and optionally ``get_retrans(self, view)`` (reinjections;
default: ``get_send``), ``seed(self, seed)`` (called once per connection with a seed derived
from the scenario's, for schedulers that draw random numbers) and ``on_hol_event(self)``
(the receive window blocked new data and the connection ran its penalization step). Each returns a subflow index
(``view.subflows[i].index``) to send the segment on, or ``None`` to wait. The view and every
field are documented in docs/python-schedulers.md.

The command line loads schedulers from files: ``mpsched run|compare --plugin my_sched.py
--scheduler ect,minrtt`` (:func:`load_plugin`). ``mpsched compare`` runs in worker processes:
each loads the same plugin files (or imports the same modules) before its first run.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import runpy
import sys
import types
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, TypeVar, Union

from . import _core

__all__ = [
    "PluginError",
    "RegistrationError",
    "scheduler",
    "register_scheduler",
    "unregister_scheduler",
    "registered_schedulers",
    "load_plugin",
    "plugin_sources",
    "ensure_loaded",
    "source_digest",
    "describe",
]

T = TypeVar("T", bound=Union[type, Callable[..., Any]])

#: Where each registered scheduler came from, so a worker process can register it again:
#: ("file", path) for a plugin file, ("module", name) for an importable module, None otherwise.
_SOURCES: Dict[str, Optional[Tuple[str, str]]] = {}
#: The first paragraph of each registered scheduler's docstring, on one line.
_DOCS: Dict[str, str] = {}
#: Plugin files and modules already loaded in this process.
_LOADED: set = set()
#: The file being loaded by :func:`load_plugin` (its registrations record it as their source).
_LOADING: List[str] = []


class PluginError(ValueError):
    """A plugin file cannot be loaded (one-line message naming the file)."""


class RegistrationError(ValueError):
    """A scheduler cannot be registered: a built-in's name, an invalid name, or not a
    scheduler (one-line message)."""


def register_scheduler(
    name: str,
    impl: Union[type, Callable[..., Any]],
    *,
    opportunistic_retransmission: bool = False,
    redundant: bool = False,
    penalize_all_carriers: bool = False,
) -> None:
    """Register ``impl`` (a class with ``get_send(view)``, or a function ``f(view)``) as ``name``.

    Flags, as the Rust ``Scheduler`` trait's: ``opportunistic_retransmission`` (Linux
    ``mptcp_rcv_buf_optimization``: on for the built-in ``minrtt``, off for ``minrtt-norp``),
    ``redundant`` (every subflow carries every segment; the scheduler is then not asked),
    ``penalize_all_carriers`` (BLEST's variant). Registering a name again replaces the earlier
    scheduler.

    Raises:
        RegistrationError: (a ValueError) ``name`` is a built-in scheduler's name or alias, or
            not a valid name (lower-case letters, digits, ``-``, ``_``, ``.``, starting with a
            letter), or ``impl`` is neither such a class nor a function.
    """
    if inspect.isclass(impl):
        if not callable(getattr(impl, "get_send", None)):
            raise RegistrationError(
                f"scheduler {name!r}: expected a class with a get_send(view) method, "
                f"{impl.__name__} has none"
            )
        make: Callable[[], Any] = impl
    elif callable(impl):
        function = impl

        def make() -> Any:
            return types.SimpleNamespace(get_send=function)
    else:
        raise RegistrationError(f"scheduler {name!r}: expected a class or a function, got {impl!r}")
    try:
        _core.register_scheduler(
            name,
            make,
            redundant=redundant,
            opportunistic_retransmission=opportunistic_retransmission,
            penalize_all_carriers=penalize_all_carriers,
        )
    except ValueError as e:
        raise RegistrationError(str(e)) from None
    _SOURCES[name] = _source_of(impl)
    paragraphs = (inspect.getdoc(impl) or "").strip().split("\n\n")
    _DOCS[name] = " ".join(paragraphs[0].split())


def scheduler(
    name: str,
    *,
    opportunistic_retransmission: bool = False,
    redundant: bool = False,
    penalize_all_carriers: bool = False,
) -> Callable[[T], T]:
    """Decorator form of :func:`register_scheduler`: ``@mpsched.scheduler("ect")`` on a class
    or a function registers it and returns it unchanged."""

    def register(impl: T) -> T:
        register_scheduler(
            name,
            impl,
            opportunistic_retransmission=opportunistic_retransmission,
            redundant=redundant,
            penalize_all_carriers=penalize_all_carriers,
        )
        return impl

    return register


def unregister_scheduler(name: str) -> bool:
    """Remove the Python scheduler ``name``; False if there was none."""
    _SOURCES.pop(name, None)
    _DOCS.pop(name, None)
    return bool(_core.unregister_scheduler(name))


def registered_schedulers() -> List[str]:
    """Names of the registered Python schedulers, sorted."""
    return list(_core.scheduler_plugins())


def _source_of(impl: Any) -> Optional[Tuple[str, str]]:
    if _LOADING:
        return ("file", _LOADING[-1])
    module = getattr(impl, "__module__", None)
    if module and module != "__main__":
        return ("module", module)
    return None


def load_plugin(path: Union[str, Path]) -> List[str]:
    """Run the Python file ``path`` and return the names of the schedulers it registered.

    Raises:
        PluginError: the file cannot be read, raises while it runs (a syntax error, a name
            taken by a built-in), or registers no scheduler. The message is one line,
            ``"<path>: <what was expected>"``.
    """
    path = Path(path)
    text = str(path)
    if not path.is_file():
        raise PluginError(
            f"{text}: expected a Python file defining a scheduler, found no such file"
        )
    _LOADING.append(str(path.resolve()))
    try:
        runpy.run_path(str(path), run_name=f"mpsched_plugin_{path.stem}")
    except SyntaxError as e:
        raise PluginError(f"{text}: line {e.lineno}: invalid Python: {e.msg}") from e
    except RegistrationError as e:
        raise PluginError(f"{text}: {e}") from e
    except Exception as e:  # noqa: BLE001 - any failure of the user's file is bad input
        message = " ".join(str(e).split())
        raise PluginError(f"{text}: {type(e).__name__}: {message}") from e
    finally:
        _LOADING.pop()
    added = sorted(n for n, src in _SOURCES.items() if src == ("file", str(path.resolve())))
    if not added:
        raise PluginError(
            f'{text}: expected a scheduler registered with @mpsched.scheduler("NAME"), found none'
        )
    _LOADED.add(("file", str(path.resolve())))
    return added


def plugin_sources() -> List[Tuple[str, str]]:
    """How a worker process registers the same Python schedulers: the plugin files and modules
    they came from. Schedulers defined in ``__main__`` (a script, a notebook) cannot be sent
    to workers; :func:`shippable` says whether all of them can."""
    return sorted({src for src in _SOURCES.values() if src is not None})


def shippable() -> bool:
    """Every registered Python scheduler can be registered again in a worker process."""
    return all(src is not None for src in _SOURCES.values())


def ensure_loaded(sources: Sequence[Tuple[str, str]]) -> None:
    """Load each plugin file / import each module of ``sources`` once in this process."""
    for kind, ref in sources:
        if (kind, ref) in _LOADED:
            continue
        if kind == "file":
            load_plugin(ref)
        else:
            importlib.import_module(ref)
            _LOADED.add((kind, ref))


def source_digest(name: str) -> Optional[str]:
    """SHA-256 of the file that defines the Python scheduler ``name`` (its plugin file, or its
    module's file); None for any other name or an unknown file. ``compare`` puts it in a run's
    hash, so a run is redone after its scheduler's code changed."""
    source = _SOURCES.get(name.strip().lower())
    if source is None:
        return None
    kind, ref = source
    path = ref if kind == "file" else getattr(sys.modules.get(ref), "__file__", None)
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest() if path else None
    except OSError:
        return None


def describe() -> List[Dict[str, Any]]:
    """The registered Python schedulers as ``mpsched algorithms`` lists them: ``name``,
    ``aliases`` (none), ``params`` (none), ``doc`` (their docstring's first paragraph) and
    ``source`` (the plugin file or module, None if defined in ``__main__``)."""
    out = []
    for name in registered_schedulers():
        source = _SOURCES.get(name)
        out.append(
            {
                "name": name,
                "aliases": [],
                "params": [],
                "doc": _DOCS.get(name, ""),
                "source": source[1] if source else None,
            }
        )
    return out
