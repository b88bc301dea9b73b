"""``python -m mpsched``: the same as the ``mpsched`` command."""

from .cli import app

app(prog_name="mpsched")
