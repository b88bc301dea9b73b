"""The CLI package's layering: sub-command modules never import the hub, and `mpsched train
edar`'s options are EdAR's Args (same fields, defaults and docs)."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import typer

from mpsched.agents.edar_args import Args
from mpsched.cli import app
from mpsched.cli.train import EDAR_OPTIONS, args_defaults, field_docs


def _edar_params():
    group = typer.main.get_command(app)
    command = group.commands["train"].commands["edar"]
    return {p.name: p for p in command.params if p.name != "help"}


def test_train_edar_defaults_are_args_defaults():
    params = _edar_params()
    defaults = args_defaults(Args)
    assert set(params) == set(EDAR_OPTIONS)
    for name, param in params.items():
        default = list(param.default) if param.multiple else param.default
        assert default == defaults[name], name
    assert params["steps"].default == Args().steps == 0
    assert list(params["scenario"].default) == Args().scenario


def test_train_edar_help_is_the_field_doc():
    docs = field_docs(Args)
    assert set(docs) == {f.name for f in dataclasses.fields(Args)}
    steps = _edar_params()["steps"]
    assert (
        steps.help
        == "Online learning: environment steps (TIs) of Algorithm 2; 0 trains EdAR-p only."
    )
    assert steps.opts == ["--steps"]
    assert _edar_params()["duration_s"].opts == ["--duration"]


def test_sub_command_modules_do_not_import_the_hub():
    modules = [
        "mpsched.cli.errors",
        "mpsched.cli.run",
        "mpsched.cli.bench",
        "mpsched.cli.collect",
        "mpsched.cli.results",
        "mpsched.cli.compare",
        "mpsched.cli.trace",
        "mpsched.cli.train",
        "mpsched.reproduce",
        "mpsched.reproduce.edar",
        "mpsched.reproduce.olms",
    ]
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}:\n"
        "    importlib.import_module(m)\n"
        "print('mpsched.cli.main' in sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"
