"""What every ``mpsched`` command shares for reporting failures: the exit codes, the one-line
``error: <message>`` printer, and the command group that reports usage errors the same way.

Sub-command modules (here and in :mod:`mpsched.reproduce`) import this module, never the CLI
hub (:mod:`mpsched.cli.main`), so each can be imported on its own.
"""

import sys
from typing import Any, NoReturn, Optional, Sequence

import typer
from typer.core import TyperGroup

EXIT_FAILURE = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130

__all__ = [
    "EXIT_FAILURE",
    "EXIT_BAD_INPUT",
    "EXIT_INTERRUPTED",
    "one_line",
    "fail",
    "EXTRAS",
    "missing_extra",
    "fail_missing_extra",
    "require_extra",
    "OneLineErrorGroup",
]

# click's ClickException, found through a class typer exports: typer >= 0.22 vendors click,
# older versions import it, so neither `click` nor `typer._click` is a stable import path.
_ClickException = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


def one_line(message: str) -> str:
    """Collapse a (possibly multi-line) message onto one line."""
    return " ".join(line.strip() for line in str(message).splitlines() if line.strip())


def fail(message: str, code: int = EXIT_BAD_INPUT) -> NoReturn:
    """Print ``error: <message>`` as one line on stderr and exit with ``code``."""
    sys.stderr.write(f"error: {one_line(message)}\n")
    sys.stderr.flush()
    raise typer.Exit(code)


#: Optional modules, by the package extra that installs them (pyproject.toml).
EXTRAS = {
    "matplotlib": "plot",
    "PIL": "plot",
    "gymnasium": "rl",
    "torch": "rl",
    "tensorboard": "rl",
    "safetensors": "rl",
    "ray": "ray",
}


def missing_extra(error: ImportError) -> Optional[str]:
    """The extra whose module ``error`` failed to import, if it is one of :data:`EXTRAS`."""
    name = (error.name or "").split(".")[0]
    return EXTRAS.get(name)


def fail_missing_extra(error: ImportError, what: str) -> NoReturn:
    """``error: <what> needs <module>: pip install 'mpsched[<extra>]'`` (exit code 2) for a
    missing optional module; any other ImportError is re-raised."""
    extra = missing_extra(error)
    if extra is None:
        raise error
    module = (error.name or "").split(".")[0]
    fail(f"{what} needs {module}: pip install 'mpsched[{extra}]'")


def require_extra(modules: Sequence[str], what: str) -> None:
    """Exit with one ``error:`` line (code 2) naming the extra to install when one of
    ``modules`` (keys of :data:`EXTRAS`) cannot be imported; ``what`` says what needs it
    (``mpsched plot``)."""
    import importlib

    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError as e:
            fail_missing_extra(e if e.name else ImportError(str(e), name=name), what)


class OneLineErrorGroup(TyperGroup):
    """Typer's command group, reporting usage errors as one ``error:`` line (exit code 2).

    Typer draws usage errors as a multi-line panel; scripts and the tests want one line.
    """

    def main(self, *args: Any, standalone_mode: bool = True, **kwargs: Any) -> Any:
        if not standalone_mode:
            return super().main(*args, standalone_mode=False, **kwargs)
        try:
            rv = super().main(*args, standalone_mode=False, **kwargs)
        except _ClickException as e:
            if type(e).__name__ == "NoArgsIsHelpError":  # `mpsched` alone: help, then exit 2
                if e.format_message().strip():
                    e.show()
                sys.exit(e.exit_code)
            message = e.format_message()
            ctx = getattr(e, "ctx", None)
            if ctx is not None:
                message += f" (see '{ctx.command_path} --help')"
            sys.stderr.write(f"error: {one_line(message)}\n")
            sys.exit(e.exit_code)
        except typer.Abort:
            sys.stderr.write("error: aborted\n")
            sys.exit(EXIT_FAILURE)
        # Without standalone mode click returns the exit code of typer.Exit, else the
        # command's return value (None for ours).
        sys.exit(rv if isinstance(rv, int) else 0)
