"""The ``mpsched`` command line: run scenarios, compare schedulers over seeds, plot and report
results, run benchmarks, collect transitions, train agents, synthesize traces, reproduce papers.

One module per sub-command group (:mod:`~mpsched.cli.run`, :mod:`~mpsched.cli.bench`,
:mod:`~mpsched.cli.collect`, :mod:`~mpsched.cli.results` for compare/plot/report,
:mod:`~mpsched.cli.trace`, :mod:`~mpsched.cli.train`; ``reproduce`` lives in
:mod:`mpsched.reproduce`), the hub :mod:`~mpsched.cli.main` that registers them, and
:mod:`~mpsched.cli.errors`, which they all share.

Exit codes: 0 success; 2 bad input (invalid scenario, unreadable file, bad argument, a missing
optional extra), reported as one ``error: <message>`` line on stderr; 1 any other failure (e.g.
the output directory cannot be written); 130 an interrupted sweep. A failed run never leaves an
output directory behind.

``app`` is loaded on first use, so ``import mpsched.cli.errors`` (what sub-commands and
:mod:`mpsched.reproduce` import) does not build the whole command line.
"""

from typing import Any

__all__ = ["app"]


def __getattr__(name: str) -> Any:
    if name == "app":
        from .main import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
