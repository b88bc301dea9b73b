"""Compare runs on the kernel engine (``mpsched compare --engine kernel``).

Each kernel run is ``mpsched emulate`` of the run's scenario (overrides applied, written to
a temporary TOML file) with the run's seed: real time, one at a time, in the sweep's own
process (the emulated network is one pair of namespaces). What the kernel cannot run is
refused before anything runs, with the kernel engine's own message
(:func:`mpsched.emulate.plan.check_flows`).
"""

from __future__ import annotations

import json
import math
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Mapping, Optional

from .matrix import Matrix, MatrixError, RunSpec

__all__ = ["KernelEngine", "find_kernel_engine", "check_matrix", "toml_text", "NETNS_PREFIX"]

#: Namespaces of compare's kernel runs: <prefix>-client, <prefix>-server (not `mpsched
#: emulate`'s, so a compare and an emulate can share a machine one after the other safely).
NETNS_PREFIX = "mpsched-cmp"
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


class KernelUnavailable(MatrixError):
    """The kernel engine cannot run here (one line, naming ``--engine``)."""


@dataclass(frozen=True)
class KernelEngine:
    """How kernel runs are done: the ``mpsched-emu`` binary and the namespaces' prefix."""

    emulator: str
    prefix: str = NETNS_PREFIX

    def run(self, spec: RunSpec) -> Dict[str, bytes]:
        """Emulate one run; its files as :func:`mpsched.sweep.execute_run` returns them."""
        from .emulate.engine import EmulateOptions, emulate
        from .results import result_files
        from .sweep import RUN_META, json_bytes

        with tempfile.TemporaryDirectory(prefix="mpsched-cmp-") as tmp:
            path = Path(tmp) / "scenario.toml"
            path.write_text(toml_text(spec.scenario), encoding="utf-8")
            results = emulate(
                path, EmulateOptions(self.emulator, seed=spec.seed, prefix=self.prefix)
            )
        files = result_files(results)
        files[RUN_META] = json_bytes(spec.meta())
        return files


def find_kernel_engine(emulator: Optional[str] = None, option: str = "--engine") -> KernelEngine:
    """The kernel engine of this machine, or :class:`KernelUnavailable` saying why not
    (root, ``/dev/net/tun``, namespaces, MPTCP, the ``mpsched-emu`` binary)."""
    from .cli.emulate import find_emulator
    from .emulate.topology import unavailable_reason

    why = unavailable_reason()
    if why is not None:
        raise KernelUnavailable(f"{option} kernel: cannot emulate here: {why}")
    binary = find_emulator(Path(emulator) if emulator else None)
    if binary is None:
        raise KernelUnavailable(
            f"{option} kernel: no mpsched-emu binary (`cargo build --release -p mpsched-emu`, "
            "or $MPSCHED_EMU)"
        )
    return KernelEngine(binary)


def check_matrix(matrix: Matrix, engine: KernelEngine, option: str = "--engine") -> None:
    """Refuse, before anything runs, a kernel run the kernel engine cannot do (a scheduler
    the kernel lacks, a coupled congestion control, ...): MatrixError with the kernel
    engine's own message, naming the scenario file and ``option``."""
    from .emulate import plan

    sources = dict(matrix.scenarios) or {"": str(matrix.scenario_path)}
    checked = set()
    for spec in matrix.runs:
        key = (spec.scenario_label, spec.scheduler, spec.cc, spec.params)
        if spec.engine != "kernel" or key in checked:
            continue
        checked.add(key)
        source = sources.get(spec.scenario_label, str(matrix.scenario_path))
        with tempfile.TemporaryDirectory(prefix="mpsched-cmp-") as tmp:
            path = Path(tmp) / "scenario.toml"
            path.write_text(toml_text(spec.scenario), encoding="utf-8")
            try:
                desc = plan.describe(engine.emulator, path, spec.seed)
                plan.check_flows(desc, path)
                plan.rcv_buf_sysctl(desc)
            except ValueError as e:  # UnsupportedError, or the emulator's own refusal
                raise MatrixError(f"{option} kernel: {source}: {e}") from None


def _key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else json.dumps(key)


def _value(value: Any) -> str:
    """A TOML value: strings as JSON strings (a subset of TOML's basic strings), tables inline."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return repr(value) if math.isfinite(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    raise MatrixError(f"cannot write {value!r} as TOML")


def toml_text(scenario: Mapping[str, Any]) -> str:
    """``scenario`` (a scenario dict) as TOML: top-level tables as ``[name]``, lists of
    tables as ``[[name]]``, anything deeper inline."""
    lines = []
    sections = []
    for key, value in scenario.items():
        if isinstance(value, Mapping):
            sections.append(f"[{_key(key)}]")
            sections += [f"{_key(k)} = {_value(v)}" for k, v in value.items()]
        elif isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
            for item in value:
                sections.append(f"[[{_key(key)}]]")
                sections += [f"{_key(k)} = {_value(v)}" for k, v in item.items()]
        else:
            lines.append(f"{_key(key)} = {_value(value)}")
    return "\n".join(lines + sections) + "\n"
