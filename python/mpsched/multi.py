"""Compare matrices over several scenario files and several engines, as one dataset.

``mpsched compare a.toml b.toml --engine sim,kernel`` builds one matrix per file
(:func:`mpsched.matrix.build_matrix`), labels each file (:func:`scenario_labels`: its stem,
made unique), joins them (:func:`combine`) and repeats every run on each engine
(:func:`with_engines`). Run ids stay those of a one-file simulator sweep, prefixed with the
scenario's label (several files) and suffixed with ``_kernel`` (kernel runs), so a one-file
simulator sweep's runs are reused when the same directory grows an engine.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import itertools
import re
from pathlib import Path
from typing import Any, Dict, List, Mapping, Sequence, Tuple

from .matrix import Matrix, MatrixError, RunSpec

__all__ = [
    "ENGINES",
    "parse_engines",
    "scenario_labels",
    "expand_traces",
    "combine",
    "with_engines",
]

#: The engines a compare can run on: the simulator and the machine's kernel (docs/emulate.md).
ENGINES = ("sim", "kernel")
_UNSAFE = re.compile(r"[^A-Za-z0-9._=+-]")


def parse_engines(text: str, option: str = "--engine") -> Tuple[str, ...]:
    """``sim``, ``kernel`` or ``sim,kernel`` as a tuple; MatrixError (one line) otherwise."""
    names = [n.strip() for n in text.split(",")]
    for name in names:
        if name not in ENGINES:
            raise MatrixError(f"{option}: expected sim, kernel or sim,kernel, got {text!r}")
    if len(set(names)) != len(names):
        raise MatrixError(f"{option}: an engine is given twice in {text!r}")
    return tuple(names)


def scenario_labels(paths: Sequence[Path]) -> List[str]:
    """A stable, unique label per scenario file: its stem; files with the same stem get
    their parent directory's name in front (``a-cell``, ``b-cell``), then a number if that
    is not enough. Characters unsafe in a directory name become ``-``."""
    stems = [_UNSAFE.sub("-", p.stem) or "scenario" for p in paths]
    labels = []
    for path, stem in zip(paths, stems):
        if stems.count(stem) > 1:
            parent = _UNSAFE.sub("-", path.resolve().parent.name)
            stem = f"{parent}-{stem}" if parent else stem
        labels.append(stem)
    seen: Dict[str, int] = {}
    out = []
    for label in labels:
        n = seen.get(label, 0) + 1
        seen[label] = n
        out.append(label if labels.count(label) == 1 else f"{label}-{n}")
    return out


#: Sections and fields holding trace files (a list of them: one scenario per file).
_TRACE_FIELDS = (("links", ("trace",)), ("paths", ("trace", "trace_reverse")))


def _trace_lists(data: Mapping[str, Any], source: Path) -> List[Tuple[Dict[str, Any], str, list]]:
    """(table, field, files) of every trace field given as a list of files."""
    found = []
    for section, fields in _TRACE_FIELDS:
        entries = data.get(section)
        for i, entry in enumerate(entries if isinstance(entries, list) else []):
            for field in fields if isinstance(entry, dict) else ():
                files = entry.get(field)
                if not isinstance(files, list):
                    continue
                where = f"{source}: {section}[{i}].{field}"
                if not files or not all(isinstance(f, str) and f for f in files):
                    raise MatrixError(
                        f"{where}: expected a list of trace file names, got {files!r}"
                    )
                if len(set(files)) != len(files):
                    raise MatrixError(f"{where}: a trace file is given twice")
                found.append((entry, field, files))
    return found


def expand_traces(data: Dict[str, Any], source: Path) -> List[Tuple[str, Dict[str, Any]]]:
    """``trace = ["drive.log", "walk.log"]`` (on a link or path): (label, scenario) per file,
    the label being the file's stem (several lists: every combination, stems joined by
    ``+``); an empty list when no trace field is a list."""
    lists = _trace_lists(data, source)
    out = []
    for combo in itertools.product(*(files for _, _, files in lists)) if lists else []:
        variant = copy.deepcopy(data)
        chosen = _trace_lists(variant, source)
        for (entry, field, _), file in zip(chosen, combo):
            entry[field] = file
        out.append(("+".join(_UNSAFE.sub("-", Path(f).stem) for f in combo), variant))
    return out


def combine(matrices: Sequence[Matrix], labels: Sequence[str]) -> Matrix:
    """One matrix of several files' matrices: each run's id prefixed with its file's label,
    its ``scenario_label`` set; seeds and warnings joined in order."""
    runs = tuple(
        dataclasses.replace(spec, run_id=f"{label}_{spec.run_id}", scenario_label=label)
        for m, label in zip(matrices, labels)
        for spec in m.runs
    )
    first = matrices[0]
    return Matrix(
        scenario_path=first.scenario_path,
        scenario_name=", ".join(labels),
        schedulers=first.schedulers,
        ccs=first.ccs,
        seeds=tuple(dict.fromkeys(s for m in matrices for s in m.seeds)),
        runs=runs,
        params=tuple(dict.fromkeys(p for m in matrices for p in m.params)),
        warnings=tuple(dict.fromkeys(w for m in matrices for w in m.warnings)),
        scenarios=tuple((label, str(m.scenario_path)) for m, label in zip(matrices, labels)),
    )


def _on_engine(spec: RunSpec, engine: str) -> RunSpec:
    if engine == "sim":
        return spec
    digest = hashlib.sha256(f"{spec.scenario_hash}:{engine}".encode()).hexdigest()
    return dataclasses.replace(
        spec, run_id=f"{spec.run_id}_{engine}", engine=engine, scenario_hash=digest
    )


def with_engines(matrix: Matrix, engines: Sequence[str]) -> Matrix:
    """``matrix`` with every run done on each of ``engines`` (in that order, run by run).
    A kernel run's hash is its simulator run's, salted with the engine."""
    runs = tuple(_on_engine(spec, engine) for spec in matrix.runs for engine in engines)
    return dataclasses.replace(matrix, runs=runs, engines=tuple(engines))
