"""``mpsched.compare``: a compare sweep from Python, its combined tables as pandas DataFrames.

The same matrix (:func:`mpsched.matrix.build_matrix`) and the same sweep
(:func:`mpsched.sweep.run_sweep`) as ``mpsched compare``: with ``out=`` the directory it
writes is byte-identical to the command line's (``mpsched compare`` is a thin layer over
:func:`prepare` and :func:`execute`); without ``out=`` the runs go to a temporary directory
that is removed once the tables are read::

    import mpsched

    cmp = mpsched.compare("scenarios/edar-handoff.toml", schedulers=["minrtt", "blest"],
                          seeds=range(1, 4))
    cmp.summary                      # one row per variant and flow: means and 95 % CIs
    cmp.flows.groupby("variant")["goodput_mbps"].mean()
    cmp.timeseries, cmp.subflows, cmp.links

Bad arguments raise :class:`mpsched.matrix.MatrixError` (a :class:`mpsched.ScenarioError`,
so a ValueError) with a one-line message; an unusable output directory
:class:`mpsched.sweep.OutputDirError`, an unavailable backend :class:`mpsched.sweep.BackendError`.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import pyarrow.parquet as pq

from ._core import ScenarioError
from .dataset import Dataset, load_results
from .kernel_runs import check_matrix, find_kernel_engine
from .matrix import MAX_SEED, Matrix, MatrixError, build_matrix, parse_names, parse_seeds
from .multi import combine, expand_traces, parse_engines, scenario_labels, with_engines
from .scenario import load_dict
from .stats import SummaryRow, summarize
from .sweep import (
    RUN_KEYS,
    BackendError,
    DoneCallback,
    StartCallback,
    SweepResult,
    check_backend,
    check_output_dir,
    run_sweep,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Comparison", "compare", "prepare", "execute", "summary_frame"]

PathLike = Union[str, "os.PathLike[str]"]
#: ``"minrtt,blest"`` (as on the command line) or ``["minrtt", "blest"]``.
Names = Union[str, Sequence[str]]
#: ``7``, ``"1-10"`` (as on the command line), or any iterable of seeds (``range(1, 11)``).
Seeds = Union[int, str, Iterable[int]]


@dataclass(frozen=True)
class Comparison:
    """The results of :func:`compare`.

    Attributes:
        flows, subflows, timeseries, links: the combined tables of every run (the
            ``*.parquet`` files of the output directory) as DataFrames: the run keys
            ``run_id``, ``scheduler``, ``cc``, ``params``, ``seed`` first, then ``variant``
            (the axes that vary, joined by `` / ``), then the columns of ``mpsched run``
            (docs/scenarios.md, Outputs); ``scenario`` (several scenario files) and
            ``engine`` (``engines`` other than ``"sim"``) follow ``variant`` where present. In
            ``flows`` the flow's own scheduler and cc are ``flow_scheduler`` and ``flow_cc``.
        summary: one row per variant and flow: means over seeds with the half-widths of
            their 95 % confidence intervals (``*_ci``), the table ``mpsched compare`` prints
            (several scenario files: a ``scenario`` column first, each scenario's rows in turn).
        variants, seeds: in matrix order.
        dataset: the same tables as :func:`mpsched.dataset.load_results` gives, for
            :func:`mpsched.plot.render` and :func:`mpsched.report.write_report` (those two
            read the run directories too, for outage shading and the report's file: without
            ``out=`` they are gone, and the figures are drawn without shading).
        sweep: what the sweep did (runs run and reused).
        out_dir: where the dataset was written, None without ``out=``.
    """

    flows: "pd.DataFrame"
    subflows: "pd.DataFrame"
    timeseries: "pd.DataFrame"
    links: "pd.DataFrame"
    summary: "pd.DataFrame"
    variants: tuple
    seeds: tuple
    dataset: Dataset
    sweep: SweepResult
    out_dir: Optional[Path]

    def plot(
        self,
        out_dir: PathLike,
        formats: Sequence[str] = ("png",),
        variants: Optional[Sequence[str]] = None,
        smooth_s: float = 0.0,
    ) -> List[Path]:
        """Draw the figures of ``mpsched plot`` into ``out_dir`` (needs the ``plot`` extra);
        ``variants``: only these, in this order; ``smooth_s``: a moving average over that many
        seconds for the time series. Returns the files written (docs/figures.md)."""
        from . import plot
        from .figures import select_variants

        ds = self.dataset if variants is None else select_variants(self.dataset, list(variants))
        formats = plot.parse_formats(",".join(formats))
        return plot.render(ds, Path(out_dir), formats, options=plot.PlotOptions(smooth_s=smooth_s))


def _names(value: Optional[Names], option: str, argument: str) -> Optional[List[str]]:
    """``value`` checked as ``--scheduler`` / ``--cc`` are, messages naming ``argument``."""
    if value is None:
        return None
    if isinstance(value, str):
        text = value
    elif isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        if not value:
            raise MatrixError(f"{argument}: expected at least one name, got an empty list")
        names: List[str] = []
        for item in value:
            names += _names(item, option, argument) or []
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise MatrixError(f"{argument}: {repeated[0]!r} is given twice")
        return names
    else:
        raise MatrixError(
            f"{argument}: expected a name, a comma-separated string or a list of names, "
            f"got {value!r}"
        )
    try:
        return parse_names(text, option)
    except MatrixError as e:
        raise MatrixError(f"{argument}{str(e)[len(option) :]}") from None


def _seeds(value: Optional[Seeds], argument: str = "seeds") -> Optional[List[int]]:
    """``value`` as a list of seeds, checked as ``--seeds`` is."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            return parse_seeds(value)
        except MatrixError as e:
            raise MatrixError(f"{argument}{str(e)[len('--seeds') :]}") from None
    items = [value] if isinstance(value, int) and not isinstance(value, bool) else value
    try:
        seeds = list(items)  # type: ignore[arg-type]
    except TypeError:
        raise MatrixError(
            f"{argument}: expected an integer, a string like '1-10' or a list of integers, got {value!r}"
        ) from None
    if not seeds:
        raise MatrixError(f"{argument}: expected at least one seed, got none")
    for seed in seeds:
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
            raise MatrixError(f"{argument}: expected integers in [0, 2**63 - 1], got {seed!r}")
    repeated = sorted({s for s in seeds if seeds.count(s) > 1})
    if repeated:
        raise MatrixError(f"{argument}: seed {repeated[0]} is given twice")
    return seeds


def _scenario_path(scenario: object) -> Path:
    if isinstance(scenario, (str, os.PathLike)):
        return Path(scenario)
    raise MatrixError(
        f"scenario: expected the path of a scenario file, got {type(scenario).__name__} "
        "(a dict scenario: write it to a .toml or .json file first)"
    )


def _scenario_paths(scenario: object) -> List[Path]:
    """One path, or the paths of a non-empty list of scenario files."""
    if isinstance(scenario, (list, tuple)):
        if not scenario:
            raise MatrixError("scenario: expected a scenario file or a non-empty list of them")
        paths = [_scenario_path(s) for s in scenario]
        resolved = [p.resolve() for p in paths]
        for i, p in enumerate(resolved):
            if p in resolved[:i]:
                raise MatrixError(f"scenario: {paths[i]} is given twice")
        return paths
    return [_scenario_path(scenario)]


def _scenario_units(paths: List[Path]) -> List[Tuple[str, Path, Optional[Dict[str, Any]]]]:
    """(label, file, scenario or None for the file's own) of each scenario to compare: each
    file, or one per trace of a file whose trace field is a list of files (labelled with the
    trace's stem, after the file's label when there are several files)."""
    units: List[Tuple[str, Path, Optional[Dict[str, Any]]]] = []
    for label, path in zip(scenario_labels(paths), paths):
        try:
            data = load_dict(path)
        except ScenarioError as e:
            raise MatrixError(str(e)) from None
        traces = expand_traces(data, path)
        for trace, variant in traces:
            units.append((f"{label}-{trace}" if len(paths) > 1 else trace, path, variant))
        if not traces:
            units.append((label, path, None))
    labels = [u[0] for u in units]
    seen: Dict[str, int] = {}
    for i, label in enumerate(labels):  # two traces of the same stem: numbered
        if labels.count(label) > 1:
            seen[label] = seen.get(label, 0) + 1
            units[i] = (f"{label}-{seen[label]}", units[i][1], units[i][2])
    return units


def _engines(value: Optional[Names], cli: bool) -> Tuple[str, ...]:
    option = "--engine" if cli else "engines"
    if value is None:
        return ("sim",)
    text = value if isinstance(value, str) else ",".join(str(v) for v in value)
    return parse_engines(text, option)


def prepare(
    scenario: Union[PathLike, Sequence[PathLike]],
    schedulers: Optional[Names] = None,
    ccs: Optional[Names] = None,
    seeds: Optional[Seeds] = None,
    *,
    engines: Optional[Names] = None,
    emulator: Optional[str] = None,
    cli: bool = False,
) -> Matrix:
    """The checked matrix of one scenario file or several (arguments as :func:`compare`'s).

    ``cli``: messages name the command line's options (``--scheduler``, ``--cc``,
    ``--seeds``, ``--engine``) instead of the arguments (``schedulers``, ``ccs``, ``seeds``,
    ``engines``). With the kernel engine, the machine is checked first
    (:class:`mpsched.kernel_runs.KernelUnavailable`), then every variant
    (:func:`mpsched.kernel_runs.check_matrix`)."""
    paths = _scenario_paths(scenario)
    names = ("--scheduler", "--cc", "--seeds") if cli else ("schedulers", "ccs", "seeds")
    seed_list = _seeds(seeds, names[2])
    scheduler_list = _names(schedulers, "--scheduler", names[0])
    cc_list = _names(ccs, "--cc", names[1])
    engine_list = _engines(engines, cli)
    kernel = None
    if "kernel" in engine_list:
        kernel = find_kernel_engine(emulator, "--engine" if cli else "engines")
    units = _scenario_units(paths)
    try:
        matrices = [build_matrix(p, seed_list, scheduler_list, cc_list, d) for _, p, d in units]
    except MatrixError as e:  # the matrix's messages name the command line's options
        message = str(e)
        if not cli and message.startswith("--scheduler:"):
            raise MatrixError(f"schedulers:{message[len('--scheduler:') :]}") from None
        raise
    if len(units) == 1 and units[0][2] is None:
        matrix = matrices[0]
    else:
        matrix = combine(matrices, [label for label, _, _ in units])
    if engine_list != ("sim",):
        matrix = with_engines(matrix, engine_list)
    if kernel is not None:
        check_matrix(matrix, kernel, "--engine" if cli else "engines")
    return matrix


def _check_jobs(jobs: Optional[int]) -> None:
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise MatrixError(f"jobs: expected an integer >= 1, got {jobs!r}")


def execute(
    matrix: Matrix,
    out_dir: Path,
    *,
    backend: str = "local",
    jobs: Optional[int] = None,
    on_start: Optional[StartCallback] = None,
    on_done: Optional[DoneCallback] = None,
    emulator: Optional[str] = None,
) -> SweepResult:
    """Run ``matrix`` into ``out_dir`` (resuming it): :func:`mpsched.sweep.run_sweep`; its
    kernel-engine runs with the ``mpsched-emu`` binary ``emulator`` (default: found as
    ``mpsched emulate`` finds it)."""
    _check_jobs(jobs)
    kernel = None
    if any(spec.engine == "kernel" for spec in matrix.runs):
        kernel = find_kernel_engine(emulator).run
    return run_sweep(
        matrix,
        out_dir,
        backend=backend,
        jobs=jobs,
        on_start=on_start,
        on_done=on_done,
        kernel=kernel,
    )


def summary_frame(ds: Dataset) -> "pd.DataFrame":
    """The per-variant, per-flow summary of ``ds`` (:func:`mpsched.stats.summarize`) as a
    DataFrame, one column per :class:`~mpsched.stats.SummaryRow` field; with several
    scenarios, a ``scenario`` column first and each scenario's rows in turn."""
    import pandas as pd

    fields = [f.name for f in dataclasses.fields(SummaryRow)]
    if not ds.scenarios:
        rows = [dataclasses.asdict(r) for r in summarize(ds.flows, ds.variants, ds.fairness)]
        return pd.DataFrame(rows, columns=fields)
    rows = [
        {"scenario": label, **dataclasses.asdict(r)}
        for label in ds.scenarios
        for part in [ds.for_scenario(label)]
        for r in summarize(part.flows, part.variants, part.fairness)
    ]
    return pd.DataFrame(rows, columns=["scenario"] + fields)


def _load(out_dir: Path, sweep: SweepResult, keep_path: bool) -> Comparison:
    ds = load_results(out_dir)
    links = pq.read_table(out_dir / "links.parquet").to_pandas()
    variant_of_run = dict(zip(ds.flows["run_id"], ds.flows["variant"]))
    links.insert(len(RUN_KEYS), "variant", links["run_id"].map(variant_of_run))
    return Comparison(
        flows=ds.flows,
        subflows=ds.subflows,
        timeseries=ds.timeseries,
        links=links,
        summary=summary_frame(ds),
        variants=ds.variants,
        seeds=ds.seeds,
        dataset=ds,
        sweep=sweep,
        out_dir=out_dir if keep_path else None,
    )


def compare(
    scenario: Union[PathLike, Sequence[PathLike]],
    schedulers: Optional[Names] = None,
    ccs: Optional[Names] = None,
    seeds: Optional[Seeds] = None,
    jobs: Optional[int] = None,
    out: Optional[PathLike] = None,
    backend: str = "local",
    engines: Optional[Names] = None,
    emulator: Optional[str] = None,
) -> Comparison:
    """Run ``scenario`` for every scheduler × cc × sweep point × seed, as ``mpsched compare``.

    Args:
        scenario: a scenario file (TOML, or JSON if the name ends in ``.json``); fields written
            ``{ range = [lo, hi], steps = N }`` are swept (docs/scenarios.md). A list of files:
            one dataset of all of them, with a ``scenario`` column (each file's label: its
            stem, made unique with its directory's name when two stems are equal) after
            ``seed`` in every table and first in ``summary``.
        schedulers: scheduler names applied to every multipath flow, ``["minrtt", "blest"]``
            or ``"minrtt,blest"``; parameters as ``"olms:app=bandwidth,l=2"``; None: as in
            the scenario.
        ccs: congestion controls applied to every flow, likewise.
        seeds: ``7``, ``"1-10"``, ``range(1, 11)`` or a list; None: the scenario's seed.
        jobs: runs in parallel (default: the number of CPUs).
        out: write the dataset there (the files of ``mpsched compare --out``, byte for byte;
            finished runs already there are kept, as on the command line). None: a temporary
            directory, removed before returning.
        backend: ``"local"`` (a process pool) or ``"ray"``.
        engines: ``"sim"`` (default), ``"kernel"`` or ``"sim,kernel"`` (or a list): each run
            is done on each engine (the kernel engine is ``mpsched emulate``: root, network
            namespaces and TUN devices, real time); the tables get an ``engine`` column and
            each variant ends in `` / sim`` or `` / kernel`` with both.
        emulator: the ``mpsched-emu`` binary for the kernel engine (default: found as
            ``mpsched emulate`` finds it).

    Raises:
        mpsched.matrix.MatrixError: a bad argument or scenario (one line).
        mpsched.sweep.OutputDirError, mpsched.sweep.BackendError: see the module docstring.
        mpsched.SchedulerError: a Python scheduler failed in a run.
    """
    try:
        check_backend(backend)
    except BackendError as e:  # the sweep's messages name the command line's option
        raise BackendError(str(e).replace("--backend", "backend", 1)) from None
    _check_jobs(jobs)
    matrix = prepare(scenario, schedulers, ccs, seeds, engines=engines, emulator=emulator)

    def run(out_dir: Path) -> SweepResult:
        return execute(matrix, out_dir, backend=backend, jobs=jobs, emulator=emulator)

    if out is not None:
        out_dir = Path(out)
        check_output_dir(out_dir)
        return _load(out_dir, run(out_dir), True)
    with tempfile.TemporaryDirectory(prefix="mpsched-compare-") as tmp:
        out_dir = Path(tmp) / "compare"
        return _load(out_dir, run(out_dir), False)
