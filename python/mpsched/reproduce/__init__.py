"""``mpsched reproduce``: reproduce a paper's evaluation with the simulator.

Each paper is a sub-command registered on :data:`app` (``mpsched reproduce olms``).
"""

import typer

app = typer.Typer(
    name="reproduce",
    help="Reproduce a paper's evaluation (figures and a table of our numbers beside the paper's).",
    no_args_is_help=True,
)

from . import drl_cc as _drl_cc  # noqa: E402,F401  (registers `reproduce drl-cc`)
from . import edar as _edar  # noqa: E402,F401  (registers `reproduce edar`)
from . import mptcp_rl as _mptcp_rl  # noqa: E402,F401  (registers `reproduce mptcp-rl`)
from . import olms as _olms  # noqa: E402,F401  (registers `reproduce olms`)
from . import pdaa3c as _pdaa3c  # noqa: E402,F401  (registers `reproduce pdaa3c`)
