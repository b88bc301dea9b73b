"""Experiment matrices for ``mpsched compare``: one scenario per (scheduler, cc, sweep point, seed).

:func:`build_matrix` reads a scenario file, applies each scheduler / congestion-control
override, expands parameter sweeps (fields written ``{ range = [lo, hi], steps = N }``, see
:func:`find_sweeps`), checks every variant with the simulator core (so a bad name fails before
anything runs), and returns the runs in a fixed order with a content hash each. The hash covers
everything that determines a run's results (the overridden scenario, the seed and the bytes
of its trace files), so a finished run can be recognised and skipped when a sweep resumes.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from . import _core
from ._core import ScenarioError
from .api import MAX_SEED as _API_MAX_SEED
from .api import run as run_scenario
from .scenario import LoadedScenario, check, load, load_dict

__all__ = [
    "MatrixError",
    "RunSpec",
    "Matrix",
    "MAX_SEED",
    "parse_seed",
    "parse_seeds",
    "format_seeds",
    "parse_names",
    "load_scenario",
    "Sweep",
    "find_sweeps",
    "expand_sweeps",
    "build_matrix",
    "run_labels",
]

#: Largest seed of the command line (`run --seed`, `compare --seeds`): compare stores seeds in
#: an int64 Parquet column, and every seed `run` takes must be one a compare can repeat (the API's
#: bound, re-exported here).
MAX_SEED = _API_MAX_SEED
#: Most seeds one ``--seeds`` value may expand to.
MAX_SEEDS = 100_000

# Scheduler and congestion-control names become parts of run directory names: keep them tame
# (the core decides whether a tame name is a real one).
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9.-]*")
# ASCII digits only: Python's int() also reads other scripts' digits ("１２" is 12).
_SEED_ITEM = re.compile(r"([0-9]+)(?:-([0-9]+))?")

# Fields holding trace file paths, relative to the scenario file's directory.
_TRACE_FIELDS = (("links", ("trace",)), ("paths", ("trace", "trace_reverse")))

# Duration of the check run of each variant: enough for the core to validate everything.
_CHECK_DURATION_S = 0.001

# Fields holding integers (the core's list): swept values are rounded.
_INTEGER_FIELDS = frozenset(_core.integer_fields())
_RANGE_KEYS = frozenset(("range", "steps", "log", "dist", "group"))
# Most runs one scenario's sweeps may expand to (before schedulers, ccs and seeds).
MAX_SWEEP_POINTS = 10_000
# Characters kept in the run directory name of a sweep point.
_UNSAFE = re.compile(r"[^A-Za-z0-9._=+-]")
_GROUP = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


class MatrixError(ScenarioError):
    """Bad input for a compare matrix (axes, scenario file, names); the message is one line.

    A :class:`~mpsched.ScenarioError` (a ValueError): scenario files are read by
    :mod:`mpsched.scenario`, with the same messages as everywhere else."""


@dataclass(frozen=True)
class RunSpec:
    """One run of a matrix.

    Attributes:
        run_id: directory name of the run, e.g. ``blest_seed3`` (the overridden axes, then
            the seed).
        scheduler: the scheduler label: the ``--scheduler`` value, or the scenario's
            multipath schedulers joined by ``+`` (``none`` without multipath flows).
        cc: the congestion-control label: the ``--cc`` value, or the scenario's joined by ``+``.
        seed: the random seed.
        params: the swept parameters' values, e.g. ``path2.delay_ms=40`` (several joined by
            ``, ``); empty without sweeps.
        scenario_hash: SHA-256 of what determines the results (see the module docstring).
        scenario: the scenario dict to run, overrides applied and trace paths absolute.
        scenario_label: in a compare of several scenario files, the label of this run's
            file (:func:`mpsched.multi.scenario_labels`); empty with one file.
        engine: ``"sim"`` (the simulator) or ``"kernel"`` (``mpsched emulate``).
    """

    run_id: str
    scheduler: str
    cc: str
    seed: int
    scenario_hash: str
    scenario: Dict[str, Any]
    params: str = ""
    scenario_label: str = ""
    engine: str = "sim"

    def meta(self) -> Dict[str, Any]:
        """The run's identity as recorded in ``run.json`` and ``compare.json`` (``scenario``
        and ``engine`` only where they are not the defaults, so one-file simulator sweeps
        keep their files)."""
        out: Dict[str, Any] = {
            "run_id": self.run_id,
            "scheduler": self.scheduler,
            "cc": self.cc,
            "params": self.params,
            "seed": self.seed,
            "scenario_hash": self.scenario_hash,
        }
        if self.scenario_label:
            out["scenario"] = self.scenario_label
        if self.engine != "sim":
            out["engine"] = self.engine
        return out


@dataclass(frozen=True)
class Matrix:
    """The runs of a compare sweep, in order: scheduler, then cc, then sweep point, then seed."""

    scenario_path: Path
    scenario_name: str
    schedulers: Optional[Tuple[str, ...]]  # None: as in the scenario
    ccs: Optional[Tuple[str, ...]]
    seeds: Tuple[int, ...]
    runs: Tuple[RunSpec, ...]
    #: the sweep points' labels (``params`` of the runs), in order; empty without sweeps
    params: Tuple[str, ...] = ()
    #: fields the variants give but the core ignores (a rate beside a trace), each once
    warnings: Tuple[str, ...] = ()
    #: several scenario files: (label, path) of each, in order; empty for one file
    scenarios: Tuple[Tuple[str, str], ...] = ()
    #: the engines every run is done with (``sim``, ``kernel``), in order
    engines: Tuple[str, ...] = ("sim",)


def parse_seeds(text: str) -> List[int]:
    """Parse ``--seeds``: ``7``, ``1-10``, ``1,3,5`` or a mix such as ``1-3,7``.

    Raises MatrixError on bad syntax, a descending range, a repeated seed, a seed above
    :data:`MAX_SEED` or more than :data:`MAX_SEEDS` seeds.
    """
    seeds: List[int] = []
    seen = set()
    for item in text.split(","):
        item = item.strip()
        m = _SEED_ITEM.fullmatch(item)
        if not m:
            raise MatrixError(f"--seeds: expected seeds like '7', '1-10' or '1,3,5', got {text!r}")
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) is not None else lo
        if hi < lo:
            raise MatrixError(f"--seeds: range {item!r} goes down (write '{hi}-{lo}')")
        if hi > MAX_SEED:
            raise MatrixError(f"--seeds: seed {hi} is above the largest seed, 2**63 - 1")
        if len(seeds) + hi - lo + 1 > MAX_SEEDS:
            raise MatrixError(f"--seeds: more than {MAX_SEEDS:,} seeds")
        for seed in range(lo, hi + 1):
            if seed in seen:
                raise MatrixError(f"--seeds: seed {seed} is given twice in {text!r}")
            seen.add(seed)
            seeds.append(seed)
    return seeds


def parse_seed(text: str) -> int:
    """Parse ``run --seed``: one seed in ``[0, MAX_SEED]``, ASCII digits (as ``--seeds``)."""
    if not re.fullmatch(r"[0-9]+", text.strip()):
        raise MatrixError(f"--seed: expected a non-negative integer (digits 0-9), got {text!r}")
    seed = int(text)
    if seed > MAX_SEED:
        raise MatrixError(f"--seed: seed {seed} is above the largest seed, 2**63 - 1")
    return seed


def format_seeds(seeds: Sequence[int]) -> str:
    """The inverse of :func:`parse_seeds`, compact: ``[1, 2, 3, 7]`` -> ``"1-3,7"``."""
    parts: List[str] = []
    i = 0
    while i < len(seeds):
        j = i
        while j + 1 < len(seeds) and seeds[j + 1] == seeds[j] + 1:
            j += 1
        parts.append(str(seeds[i]) if i == j else f"{seeds[i]}-{seeds[j]}")
        i = j + 1
    return ",".join(parts)


def parse_names(text: str, option: str) -> List[str]:
    """Parse a comma-separated list of names (``--scheduler``, ``--cc``); no blanks or repeats.

    A name may carry parameters, ``olms:app=bandwidth,l=2`` (docs/algorithms.md): an item that
    is only ``key=value`` continues the parameters of the item before it. The parameters are
    checked by the core's registry here, before any run. ``--scheduler`` also takes trained
    policies, ``edar``, ``edar:CHECKPOINT`` and ``policy:PATH`` (a file path: its policy file
    is checked here too)."""
    prefixes = set(_core.policy_prefixes())
    names: List[str] = []
    for item in (n.strip() for n in text.split(",")):
        previous = names[-1] if names else ""
        continues = ":" in previous and previous.split(":", 1)[0].lower() not in prefixes
        if item and "=" in item and ":" not in item and continues:
            names[-1] = f"{previous},{item}"
        else:
            names.append(item)
    kind = {"--scheduler": "scheduler", "--cc": "cc"}.get(option)
    for name in names:
        if not name:
            raise MatrixError(f"{option}: empty name in {text!r}")
        if (":" in name or name.lower() in prefixes) and kind is not None:
            try:
                _core.algorithm_label(kind, name)
            except _core.ScenarioError as e:
                raise MatrixError(f"{option}: {name!r}: {e}") from None
        elif not _NAME.fullmatch(name):
            raise MatrixError(f"{option}: {name!r} is not a valid name")
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise MatrixError(f"{option}: {repeated[0]!r} is given twice")
    return names


def _safe_label(name: Optional[str]) -> Optional[str]:
    """``name:key=value,...`` as a directory-name part: ``:``, ``,``, ``/`` and blanks made ``-``."""
    return None if name is None else re.sub(r"[:,/\\ ]", "-", name)


def _run_label(scheduler: Optional[str], labels: Dict[str, str]) -> Optional[str]:
    """The run-directory part of a scheduler: itself; for ``name:key=value,...`` the same with
    ``:`` and ``,`` made ``-``; for a policy file (``policy:PATH``, ``edar:PATH``) the prefix
    and the file's stem, made unique with the policy's digest when two files share a stem."""
    if scheduler is None or ":" not in scheduler:
        return scheduler
    if scheduler not in labels:
        prefix, arg = scheduler.split(":", 1)
        if prefix.lower() not in _core.policy_prefixes():
            labels[scheduler] = _safe_label(scheduler)
            return labels[scheduler]
        stem = Path(arg.strip()).name
        for ext in (".json", ".safetensors"):
            stem = stem[: -len(ext)] if stem.endswith(ext) else stem
        safe = "".join(c if c.isalnum() or c in ".-" else "-" for c in stem).strip(".-") or "policy"
        label = f"{prefix.lower()}-{safe}"
        if label in labels.values():
            label = f"{label}-{(_core.policy_digest(scheduler) or '')[:8]}"
        labels[scheduler] = label
    return labels[scheduler]


def _policy_digests(scenario: Mapping[str, Any], source: Path) -> Dict[str, str]:
    """SHA-256 of the trained policies a scenario's flows use as schedulers or congestion
    controllers (for its hash): results of runs with different weights never share a key."""
    out: Dict[str, str] = {}
    for i, flow in enumerate(_flows(scenario)):
        for field in ("scheduler", "cc"):
            name = flow.get(field)
            if not isinstance(name, str):
                continue
            try:
                digest = _core.policy_digest(name)
            except _core.ScenarioError as e:
                raise MatrixError(f"{source}: flows[{i}].{field}: {e}") from None
            if digest is not None:
                out[f"policy:{name}"] = digest
    return out


def _plugin_digests(scenario: Mapping[str, Any]) -> Dict[str, str]:
    """Source digests of the Python schedulers a scenario's flows use (for its hash)."""
    from .plugins import source_digest

    out: Dict[str, str] = {}
    for flow in _flows(scenario):
        name = flow.get("scheduler")
        digest = source_digest(name) if isinstance(name, str) else None
        if digest is not None:
            out[f"plugin:{name}"] = digest
    return out


def load_scenario(path: Path) -> Dict[str, Any]:
    """Read a scenario file into a dict (:func:`mpsched.scenario.load_dict`; raises its
    ScenarioError)."""
    return load_dict(path)


@dataclass(frozen=True)
class Sweep:
    """A swept field: ``{ range = [lo, hi], steps = N }`` (``log = true``: log spacing).

    Attributes:
        where: the keys and list indices leading to the field, e.g. ``("paths", 1, "delay_ms")``.
        field: the field as in error messages, e.g. ``paths[1].delay_ms``.
        label: the field as in run labels: from the nearest named table, e.g. ``path2.delay_ms``.
        values: the N values, evenly spaced (or log-spaced) with inclusive ends; rounded for
            integer fields.
        group: sweeps with the same ``group = "name"`` move together (one axis, labelled
            ``name=<value of the first>``) instead of forming a cartesian product.
    """

    where: Tuple[Any, ...]
    field: str
    label: str
    values: Tuple[Any, ...]
    group: Optional[str] = None


def _field_name(where: Sequence[Any]) -> str:
    out = ""
    for step in where:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else str(step))
    return out


def _parse_sweep(table: Mapping[str, Any], field: str, source: Path) -> Optional[List[float]]:
    """The values of a range table if it is a sweep (has ``steps``), None for a random range.

    The checks match the core's (ranges.rs), which reports the malformed random ranges.
    """

    def bad(what: str) -> MatrixError:
        return MatrixError(f"{source}: {field}: {what}")

    if "steps" not in table:
        return None
    unknown = sorted(set(table) - _RANGE_KEYS)
    if unknown:
        raise bad(
            f"unknown key `{unknown[0]}` in a range, expected `range`, `steps`, `log`, `dist` or `group`"
        )
    group = table.get("group")
    if group is not None and not (isinstance(group, str) and _GROUP.fullmatch(group)):
        raise bad(f"group: expected a name (letters, digits, '.', '_', '-'), got {group!r}")
    bounds = table.get("range")
    if not (
        isinstance(bounds, list)
        and len(bounds) == 2
        and all(
            isinstance(b, (int, float)) and not isinstance(b, bool) and math.isfinite(b)
            for b in bounds
        )
    ):
        raise bad(f"expected `range = [lo, hi]` with two numbers, got {bounds!r}")
    lo, hi = float(bounds[0]), float(bounds[1])
    if lo > hi:
        raise bad(f"expected lo <= hi in `range = [lo, hi]`, got [{bounds[0]}, {bounds[1]}]")
    if not math.isfinite(hi - lo):
        raise bad(
            "expected bounds whose difference is a finite number, "
            f"got [{bounds[0]:g}, {bounds[1]:g}]"
        )
    steps = table["steps"]
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise bad(f"steps: expected an integer >= 1, got {steps!r}")
    log = table.get("log", False)
    if not isinstance(log, bool):
        raise bad(f"log: expected true or false, got {log!r}")
    if "dist" in table:
        raise bad(
            "`dist` is for random values (a range without `steps`); a sweep takes `log = true`"
        )
    if log and lo <= 0:
        raise bad(f"log spacing needs lo > 0, got [{bounds[0]}, {bounds[1]}]")
    if steps > MAX_SWEEP_POINTS:
        raise bad(f"steps: expected at most {MAX_SWEEP_POINTS}, got {steps}")
    if steps == 1:
        return [lo]
    values = []
    for i in range(steps):
        f = i / (steps - 1)
        values.append(
            math.exp(math.log(lo) + f * (math.log(hi) - math.log(lo)))
            if log
            else lo + f * (hi - lo)
        )
    return values


def find_sweeps(scenario: Mapping[str, Any], source: Path) -> List[Sweep]:
    """The swept fields of ``scenario``, in document order. Raises MatrixError if one is malformed."""
    found: List[Sweep] = []

    def walk(node: Any, where: Tuple[Any, ...], label: Tuple[str, ...]) -> None:
        if isinstance(node, dict):
            if "range" in node:
                field = _field_name(where)
                values = _parse_sweep(node, field, source)
                if values is not None:
                    if field == "sim.seed":
                        raise MatrixError(
                            f"{source}: sim.seed: the seed cannot be a range (use --seeds)"
                        )
                    key = where[-1] if where else ""
                    typed = tuple(int(round(v)) if key in _INTEGER_FIELDS else v for v in values)
                    found.append(Sweep(where, field, ".".join(label), typed, node.get("group")))
                return
            for k, v in node.items():
                walk(v, where + (k,), label + (str(k),))
        elif isinstance(node, list):
            for i, v in enumerate(node):
                name = v.get("name") if isinstance(v, dict) else None
                walk(
                    v,
                    where + (i,),
                    (name,) if isinstance(name, str) else label[:-1] + (f"{label[-1]}[{i}]",),
                )

    walk(scenario, (), ())
    total = 1
    for axis in _axes(found):
        total *= len(axis[0].values)
        for sw in axis[1:]:
            if len(sw.values) != len(axis[0].values):
                raise MatrixError(
                    f"{source}: {sw.field}: steps: expected {len(axis[0].values)} like "
                    f"{axis[0].field} (same group {sw.group!r}), got {len(sw.values)}"
                )
    if total > MAX_SWEEP_POINTS:
        raise MatrixError(
            f"{source}: the sweeps expand to {total:,} runs per seed, more than {MAX_SWEEP_POINTS:,}"
        )
    return found


def _format_value(value: Any) -> str:
    return str(value) if isinstance(value, int) else format(value, ".6g")


def _axes(sweeps: Sequence[Sweep]) -> List[List[Sweep]]:
    """The sweeps as axes: one per ungrouped sweep, one per group (in order of appearance)."""
    axes: List[List[Sweep]] = []
    by_group: Dict[str, List[Sweep]] = {}
    for sw in sweeps:
        if sw.group is None:
            axes.append([sw])
        elif sw.group in by_group:
            by_group[sw.group].append(sw)
        else:
            by_group[sw.group] = [sw]
            axes.append(by_group[sw.group])
    return axes


def _sweep_points(sweeps: Sequence[Sweep]) -> List[Tuple[str, str, List[Tuple[Sweep, Any]]]]:
    """(label, run-id part, [(sweep, value)]) of each point of the axes' cartesian product."""
    axes = _axes(sweeps)
    points = []
    for combo in itertools.product(*(range(len(axis[0].values)) for axis in axes)):
        pairs = [(sw, sw.values[i]) for axis, i in zip(axes, combo) for sw in axis]
        parts = [
            f"{axis[0].group or axis[0].label}={_format_value(axis[0].values[i])}"
            for axis, i in zip(axes, combo)
        ]
        points.append((", ".join(parts), "_".join(_UNSAFE.sub("-", p) for p in parts), pairs))
    return points


def _set(scenario: Dict[str, Any], where: Sequence[Any], value: Any) -> None:
    node: Any = scenario
    for step in where[:-1]:
        node = node[step]
    node[where[-1]] = value


def expand_sweeps(scenario: Mapping[str, Any], source: Path) -> List[Tuple[str, Dict[str, Any]]]:
    """``(params label, scenario)`` for each sweep point of ``scenario``, in matrix order.

    A scenario without sweeps gives one ``("", copy)``. Raises MatrixError for a malformed sweep.
    """
    out = []
    for label, _, pairs in _sweep_points(find_sweeps(scenario, source)):
        variant = copy.deepcopy(dict(scenario))
        for sweep, value in pairs:
            _set(variant, sweep.where, value)
        out.append((label, variant))
    return out


def _tables(scenario: Mapping[str, Any], section: str) -> List[Dict[str, Any]]:
    """The scenario's tables of ``section`` (malformed entries are left for the core to report)."""
    entries = scenario.get(section)
    return [f for f in entries if isinstance(f, dict)] if isinstance(entries, list) else []


def _flows(scenario: Mapping[str, Any]) -> List[Dict[str, Any]]:
    """The scenario's flow tables and its workloads' (a ``[[workloads]]`` entry gives the
    scheduler and cc of every flow it generates)."""
    return _tables(scenario, "flows") + _tables(scenario, "workloads")


def _generated_by(name: Any, workload: Mapping[str, Any]) -> bool:
    """Whether flow ``name`` is one a workload generated (``<workload>-<i>``)."""
    prefix = f"{workload.get('name')}-"
    return isinstance(name, str) and name.startswith(prefix) and name[len(prefix) :].isdigit()


def _is_multipath(flow: Mapping[str, Any]) -> bool:
    return "paths" in flow


def check_scheduler_applies(scenario: Mapping[str, Any], scenario_path: Path) -> None:
    """MatrixError unless a ``--scheduler`` override has a multipath flow or workload to apply to."""
    if not any(_is_multipath(f) for f in _flows(scenario)):
        raise MatrixError(
            f"--scheduler: {scenario_path} has no multipath flow (a flow or workload with 'paths') "
            "for a scheduler to apply to"
        )


def apply_overrides(
    scenario: Mapping[str, Any], scheduler: Optional[str], cc: Optional[str]
) -> Dict[str, Any]:
    """A copy of ``scenario`` with ``scheduler`` on every multipath flow and ``cc`` on every flow
    (workloads included: they set their flows' algorithms)."""
    out = copy.deepcopy(dict(scenario))
    for flow in _flows(out):
        if scheduler is not None and _is_multipath(flow):
            flow["scheduler"] = scheduler
        if cc is not None:
            flow["cc"] = cc
    return out


def _trace_refs(scenario: Mapping[str, Any]) -> Iterable[Tuple[Dict[str, Any], str]]:
    """(table, field) for every trace path given in the scenario."""
    for section, fields in _TRACE_FIELDS:
        entries = scenario.get(section)
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, dict):
                for field in fields:
                    if isinstance(entry.get(field), str):
                        yield entry, field


def resolve_trace_paths(scenario: Mapping[str, Any], base_dir: Path) -> Dict[str, Any]:
    """A copy of ``scenario`` with relative trace paths made absolute against ``base_dir``.

    A dict scenario's traces are resolved against the current directory; a file's against its
    own directory: this keeps the file's meaning when it is run as a dict.
    """
    out = copy.deepcopy(dict(scenario))
    base = os.path.abspath(base_dir)
    for entry, field in _trace_refs(out):
        entry[field] = os.path.join(base, entry[field])
    return out


def _trace_digests(scenario: Mapping[str, Any], base_dir: Path) -> Dict[str, Optional[str]]:
    """SHA-256 of each trace file, keyed by the path as written (None if unreadable)."""
    digests: Dict[str, Optional[str]] = {}
    for entry, field in _trace_refs(scenario):
        written = entry[field]
        try:
            digests[written] = hashlib.sha256((base_dir / written).read_bytes()).hexdigest()
        except OSError:
            digests[written] = None  # the core's check reports the missing file
    return digests


def scenario_hash(
    scenario: Mapping[str, Any], seed: int, traces: Mapping[str, Optional[str]]
) -> str:
    """SHA-256 of a run's inputs: the scenario (trace paths as written), the seed, the traces."""
    doc = {"scenario": scenario, "seed": seed, "traces": traces}
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _join_unique(values: Iterable[str]) -> str:
    return "+".join(dict.fromkeys(values))


def run_labels(
    scenario: Mapping[str, Any], names: Sequence[str], schedulers: Sequence[str], ccs: Sequence[str]
) -> Tuple[str, str]:
    """(scheduler label, cc label) of a run from its scenario and its flows table's columns.

    The scheduler label joins the schedulers of the multipath flows (those of multipath
    workloads included; ``none`` if there are none); the cc label joins every flow's
    congestion control. Repeats are dropped.
    """
    multipath = {f.get("name") for f in _tables(scenario, "flows") if _is_multipath(f)}
    generators = [w for w in _tables(scenario, "workloads") if _is_multipath(w)]

    def is_multipath(name: str) -> bool:
        return name in multipath or any(_generated_by(name, w) for w in generators)

    scheduler = _join_unique(s for n, s in zip(names, schedulers) if is_multipath(n)) or "none"
    return scheduler, _join_unique(ccs) or "none"


def _check_variant(
    scenario: Dict[str, Any], loaded: LoadedScenario, warnings: Optional[Dict[str, None]] = None
) -> Tuple[str, str]:
    """Validate ``scenario`` with a very short run; return its (scheduler, cc) labels. The
    core's warnings (fields it ignores) are added to ``warnings``, naming the file.

    A variant the core rejects is reported with the core's message on the file as written
    when the file itself is at fault (as ``mpsched run`` would report it), else with the
    variant's message naming the file."""
    probe = copy.deepcopy(scenario)
    sim = probe.get("sim")
    if isinstance(sim, dict) and isinstance(sim.get("duration_s"), (int, float)):
        # Workloads generate their flows until the end of the real run, not of the probe.
        for workload in _tables(probe, "workloads"):
            workload.setdefault("stop_s", sim["duration_s"])
        sim["duration_s"] = min(sim["duration_s"], _CHECK_DURATION_S)
    try:
        results = run_scenario(probe)
        flows = results.flows
    except ScenarioError as e:
        try:
            check(loaded)
        except ScenarioError as file_error:
            raise MatrixError(str(file_error)) from None
        message = str(e)
        if message.startswith("<dict>"):
            message = f"{loaded.source}{message[len('<dict>') :]}"
        raise MatrixError(message) from None
    for warning in results.summary.get("warnings", []) if warnings is not None else []:
        text = str(warning)
        warnings[
            f"{loaded.source}{text[len('<dict>') :]}" if text.startswith("<dict>") else text
        ] = None
    return run_labels(
        scenario,
        flows.column("name").to_pylist(),
        flows.column("scheduler").to_pylist(),
        flows.column("cc").to_pylist(),
    )


def build_matrix(
    scenario_path: Path,
    seeds: Optional[Sequence[int]] = None,
    schedulers: Optional[Sequence[str]] = None,
    ccs: Optional[Sequence[str]] = None,
    data: Optional[Dict[str, Any]] = None,
) -> Matrix:
    """The runs of ``scenario_path`` × ``schedulers`` × ``ccs`` × sweep points × ``seeds``, checked by the core.

    ``data``: the scenario to use instead of the file's own (one trace of a file's list of
    traces, :func:`mpsched.multi.expand_traces`); the file's directory still resolves its
    relative paths.

    ``None`` for ``schedulers`` or ``ccs`` keeps the scenario's own, for ``seeds`` runs the
    scenario's ``[sim].seed`` (default 1). Every field written ``{ range = [lo, hi], steps = N }``
    is an axis of N values (the cartesian product of all such fields); its runs carry a
    ``params`` label such as ``path2.delay_ms=40``. Raises MatrixError
    (one line) for an unreadable scenario, an invalid variant (the core's message, naming
    ``scenario_path``) or a scheduler override on a scenario without multipath flows.
    """
    try:
        loaded = load(scenario_path)
    except ScenarioError as e:
        raise MatrixError(str(e)) from None
    scenario = loaded.data if data is None else data
    base_dir = scenario_path.parent
    points = _sweep_points(find_sweeps(scenario, scenario_path))
    if schedulers is not None:
        check_scheduler_applies(scenario, scenario_path)
    sim = scenario.get("sim") if isinstance(scenario.get("sim"), dict) else {}
    name = sim.get("name")
    if seeds is None:
        own = sim.get("seed", 1)
        valid = isinstance(own, int) and not isinstance(own, bool) and 0 <= own <= MAX_SEED
        seeds = [own if valid else 1]
    runs: List[RunSpec] = []
    labels: Dict[str, str] = {}
    warnings: Dict[str, None] = {}
    for scheduler in schedulers if schedulers is not None else [None]:
        for cc in ccs if ccs is not None else [None]:
            overridden = apply_overrides(scenario, scheduler, cc)
            for params, id_part, pairs in points:
                variant = copy.deepcopy(overridden) if pairs else overridden
                for sweep, value in pairs:
                    _set(variant, sweep.where, value)
                traces = _trace_digests(variant, base_dir)
                traces.update(_policy_digests(variant, scenario_path))
                traces.update(_plugin_digests(variant))
                resolved = resolve_trace_paths(variant, base_dir)
                sched_label, cc_label = _check_variant(resolved, loaded, warnings)
                for seed in seeds:
                    parts = [
                        p
                        for p in (_run_label(scheduler, labels), _run_label(cc, labels), id_part)
                        if p
                    ] + [f"seed{seed}"]
                    runs.append(
                        RunSpec(
                            run_id="_".join(parts),
                            scheduler=scheduler if scheduler is not None else sched_label,
                            cc=cc if cc is not None else cc_label,
                            seed=seed,
                            scenario_hash=scenario_hash(variant, seed, traces),
                            scenario=resolved,
                            params=params,
                        )
                    )
    return Matrix(
        scenario_path=scenario_path,
        scenario_name=str(name) if isinstance(name, str) else scenario_path.stem,
        schedulers=tuple(schedulers) if schedulers is not None else None,
        ccs=tuple(ccs) if ccs is not None else None,
        seeds=tuple(seeds),
        runs=tuple(runs),
        params=tuple(label for label, _, pairs in points if pairs),
        warnings=tuple(warnings),
    )
