"""Run a compare :class:`~mpsched.matrix.Matrix` into an output directory, resumably.

Layout of the output directory::

    DIR/
      compare.json          the matrix: scenario, axes, runs (with hashes), "complete"
      flows.parquet         every run's rows, with run_id, scheduler, cc, seed first
      subflows.parquet      (likewise)
      timeseries.parquet
      links.parquet
      queues.parquet
      runs/<run_id>/        one run: the files of `mpsched run`, plus run.json

Runs are computed by worker processes (or Ray tasks), which return the encoded files; this
process writes each run directory atomically (it appears complete or not at all). A run
whose directory exists with the same scenario hash is not run again, so an interrupted sweep
resumes where it stopped. The combined tables are rebuilt from the run directories in matrix
order, so they are byte-identical however the runs were scheduled or resumed.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import signal
import sys
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import pyarrow as pa
import pyarrow.parquet as pq

from . import __version__, plugins
from ._atomic import atomic_directory, write_file_atomic
from .api import run as run_scenario
from .matrix import Matrix, RunSpec
from .results import (
    OUTPUT_FILES,
    TABLE_NAMES,
    UDP_OUTPUT_FILES,
    UDP_TABLE_NAMES,
    parquet_bytes,
    result_files,
)

__all__ = [
    "MANIFEST",
    "RUNS_DIR",
    "RUN_META",
    "RUN_KEYS",
    "EXTRA_KEYS",
    "json_bytes",
    "extra_keys",
    "BACKENDS",
    "OutputDirError",
    "BackendError",
    "SweepInterrupted",
    "SweepResult",
    "check_output_dir",
    "check_backend",
    "execute_run",
    "run_sweep",
    "default_jobs",
]

MANIFEST = "compare.json"
RUNS_DIR = "runs"
RUN_META = "run.json"
#: Files of one run directory.
RUN_FILES = OUTPUT_FILES + (RUN_META,)
#: Columns identifying the run, first in every combined table (``params``: the swept
#: parameters' values, e.g. ``path2.delay_ms=40``, empty without sweeps).
RUN_KEYS = ("run_id", "scheduler", "cc", "params", "seed")
#: Further key columns, after the run keys, in sweeps that have them: ``scenario`` (the
#: file's label, several scenario files) and ``engine`` (``sim`` or ``kernel``, any sweep
#: with ``--engine`` other than ``sim``).
EXTRA_KEYS = ("scenario", "engine")
#: Columns of the flows table renamed in the combined table (the run keys take their names).
FLOW_RENAMES = {"scheduler": "flow_scheduler", "cc": "flow_cc"}
BACKENDS = ("local", "ray")
_LOCK = ".lock"

#: Runs one kernel-engine run (:meth:`mpsched.kernel_runs.KernelEngine.run`).
KernelRunner = Callable[[RunSpec], Dict[str, bytes]]
#: Called once before running with (runs to run, runs reused), then after each run with its id.
StartCallback = Callable[[int, int], None]
DoneCallback = Callable[[str], None]


class OutputDirError(ValueError):
    """The output directory cannot hold this sweep (one-line message)."""


class BackendError(RuntimeError):
    """The execution backend is unavailable (one-line message)."""


class SweepInterrupted(Exception):
    """The sweep stopped before every run was done; finished runs are kept."""

    def __init__(self, done: int, total: int) -> None:
        super().__init__(f"stopped after {done} of {total} runs")
        self.done = done
        self.total = total


@dataclass
class SweepResult:
    """What a sweep did."""

    out_dir: Path
    total: int
    reused: int
    ran: int
    #: run directories under runs/ that are not part of this matrix (left in place, ignored)
    foreign_runs: List[str] = field(default_factory=list)


def default_jobs() -> int:
    """The number of CPUs this process may use."""
    try:
        return len(os.sched_getaffinity(0))  # type: ignore[attr-defined]
    except (AttributeError, OSError):
        return os.cpu_count() or 1


# --- the output directory -------------------------------------------------------------------


def check_output_dir(out_dir: Path) -> None:
    """Raise OutputDirError unless ``out_dir`` is absent, empty or a compare output directory."""
    if out_dir.name in ("", ".", ".."):
        raise OutputDirError(f"{out_dir}: not a valid output directory name")
    if not out_dir.exists():
        return
    if not out_dir.is_dir():
        raise OutputDirError(f"{out_dir}: exists and is not a directory")
    entries = {p.name for p in out_dir.iterdir()}
    if entries - {_LOCK} and MANIFEST not in entries:
        raise OutputDirError(
            f"{out_dir}: exists and is not a `mpsched compare` output directory (no {MANIFEST})"
        )


@contextmanager
def _locked(out_dir: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``out_dir`` (POSIX): two sweeps must not share a directory."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no locking
        yield
        return
    fd = os.open(out_dir / _LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise OutputDirError(f"{out_dir}: another `mpsched compare` is writing there") from None
        yield
    finally:
        os.close(fd)


def _remove_leftovers(out_dir: Path) -> None:
    """Remove temporary files and directories left by an interrupted sweep."""
    for parent in (out_dir, out_dir / RUNS_DIR):
        if not parent.is_dir():
            continue
        for p in parent.iterdir():
            if p.name.startswith(".") and (".tmp-" in p.name or ".old-" in p.name):
                if p.is_dir() and not p.is_symlink():
                    shutil.rmtree(p, ignore_errors=True)
                else:
                    p.unlink(missing_ok=True)


def json_bytes(doc: Any) -> bytes:
    """``doc`` as the sweep writes JSON files: indent 2, sorted keys, final newline."""
    return (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode("utf-8")


def extra_keys(matrix: Matrix) -> Tuple[str, ...]:
    """The :data:`EXTRA_KEYS` the combined tables of ``matrix`` have."""
    return tuple(
        key
        for key, present in zip(EXTRA_KEYS, (bool(matrix.scenarios), matrix.engines != ("sim",)))
        if present
    )


def _manifest(matrix: Matrix, complete: bool) -> Dict[str, Any]:
    doc = _base_manifest(matrix, complete)
    if matrix.scenarios:
        doc["scenarios"] = [{"label": label, "path": path} for label, path in matrix.scenarios]
    if matrix.engines != ("sim",):
        doc["engines"] = list(matrix.engines)
    return doc


def _base_manifest(matrix: Matrix, complete: bool) -> Dict[str, Any]:
    return {
        "format": "mpsched-compare/1",
        "mpsched_version": __version__,
        "scenario": str(matrix.scenario_path),
        "scenario_name": matrix.scenario_name,
        "schedulers": list(matrix.schedulers) if matrix.schedulers is not None else None,
        "ccs": list(matrix.ccs) if matrix.ccs is not None else None,
        "seeds": list(matrix.seeds),
        "params": list(matrix.params),
        "runs": [spec.meta() for spec in matrix.runs],
        "complete": complete,
    }


def _is_done(run_dir: Path, spec: RunSpec) -> Optional[Dict[str, int]]:
    """The row count of each table of ``run_dir`` if it holds a complete run of ``spec`` (same
    scenario hash, every file present, every Parquet file whole), else None."""
    try:
        meta = json.loads((run_dir / RUN_META).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not (
        isinstance(meta, dict)
        and meta.get("scenario_hash") == spec.scenario_hash
        and all((run_dir / name).is_file() for name in RUN_FILES)
    ):
        return None
    rows: Dict[str, int] = {}
    for name in TABLE_NAMES:
        n = _parquet_rows(run_dir / f"{name}.parquet")
        if n is None:
            return None
        rows[name] = n
    return rows


def _parquet_rows(path: Path) -> Optional[int]:
    """The row count of ``path`` if it is a whole Parquet file: its footer reads (a truncated
    or damaged file's does not, so the run is done again instead of failing the combination of
    every resume); else None. Reads the footer only."""
    try:
        return pq.read_metadata(path).num_rows
    except (OSError, pa.ArrowException):
        return None


def _combined_current(
    out_dir: Path, previous: Optional[bytes], manifest: bytes, rows: List[Dict[str, int]]
) -> bool:
    """The combined tables of ``out_dir`` were written from exactly these runs: the previous
    call finished (its manifest, ``complete``, equals this one's) and every combined table is a
    whole Parquet file with as many rows as its runs' tables together. A resume that ran
    nothing new then keeps them instead of re-reading every run's tables."""
    if previous != manifest:
        return False
    for name in TABLE_NAMES:
        if _parquet_rows(out_dir / f"{name}.parquet") != sum(r[name] for r in rows):
            return False
    return True


def _write_run(runs_dir: Path, spec: RunSpec, files: Dict[str, bytes]) -> None:
    """Write one run directory atomically (replacing a stale one)."""
    with atomic_directory(runs_dir / spec.run_id) as tmp:
        for name in RUN_FILES + tuple(n for n in UDP_OUTPUT_FILES if n in files):
            (tmp / name).write_bytes(files[name])


# --- running --------------------------------------------------------------------------------


def execute_run(spec: RunSpec, plugin_sources: Sequence[Tuple[str, str]] = ()) -> Dict[str, bytes]:
    """Simulate one run and return its files (:data:`RUN_FILES`) as bytes. Runs in a worker,
    which first registers the Python schedulers of ``plugin_sources`` (plugin files, modules:
    :func:`mpsched.plugins.plugin_sources`)."""
    plugins.ensure_loaded(plugin_sources)
    files = result_files(run_scenario(spec.scenario, seed=spec.seed))
    files[RUN_META] = json_bytes(spec.meta())
    return files


def _init_worker(sweep_pid: int) -> None:
    """Worker initializer: Ctrl-C is the parent's to handle (it stops the sweep), and the worker
    dies with its parent (see :func:`_die_with_parent`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent(sweep_pid)


#: prctl(2) option: the signal a process gets when its parent dies (linux/prctl.h).
_PR_SET_PDEATHSIG = 1


def _die_with_parent(sweep_pid: int) -> None:
    """On Linux, end this worker as soon as the sweep process ends, however it ends (SIGKILL
    included): a killed ``compare`` leaves no worker running.

    A spawned worker's parent is the sweep process: prctl PR_SET_PDEATHSIG kills it with its
    parent. A forkserver worker's parent is the fork server, which outlives the sweep process
    while workers run; a daemon thread waits on a pidfd of the sweep process (it becomes
    readable when that process exits) and kills the worker then."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover - no libc prctl
        pass
    try:
        pidfd = os.pidfd_open(sweep_pid)
    except (OSError, AttributeError):  # gone already, or a kernel without pidfds
        pidfd = None
    if pidfd is None:
        if not _alive(sweep_pid):
            os._exit(1)
        return
    import select
    import threading

    def watch() -> None:
        select.select([pidfd], [], [])
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="mpsched-parent-watch", daemon=True).start()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - the pid was reused by another user's process
        return False
    return True


def _pool_context() -> multiprocessing.context.BaseContext:
    """forkserver where available (no fork of a threaded parent), else spawn."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["mpsched.sweep"])
        return ctx
    return multiprocessing.get_context("spawn")


def _run_local(specs: Sequence[RunSpec], jobs: int) -> Iterator[Tuple[RunSpec, Dict[str, bytes]]]:
    """Yield (spec, files) as runs finish: in this process with one job, else in a pool.

    Python schedulers reach the workers as the files or modules that registered them; one
    defined in ``__main__`` cannot, so then every run stays in this process."""
    if jobs <= 1 or len(specs) <= 1 or not plugins.shippable():
        for spec in specs:
            yield spec, execute_run(spec)
        return
    sources = plugins.plugin_sources()
    pool = ProcessPoolExecutor(
        max_workers=min(jobs, len(specs)),
        mp_context=_pool_context(),
        initializer=_init_worker,
        initargs=(os.getpid(),),
    )
    try:
        pending: Dict[Future, RunSpec] = {pool.submit(execute_run, s, sources): s for s in specs}
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                yield pending.pop(fut), fut.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def check_backend(backend: str) -> None:
    """Raise BackendError if ``backend`` is unknown or unavailable."""
    if backend not in BACKENDS:
        raise BackendError(f"--backend: expected one of {', '.join(BACKENDS)}, got {backend!r}")
    if backend == "ray":
        _import_ray()


def _import_ray() -> Any:
    """The ``ray`` module, or BackendError if it is not installed (it is no dependency)."""
    try:
        import ray
    except ImportError:
        raise BackendError(
            "--backend ray: ray is not installed (pip install 'mpsched[ray]')"
        ) from None
    return ray


def _run_ray(
    specs: Sequence[RunSpec], jobs: Optional[int]
) -> Iterator[Tuple[RunSpec, Dict[str, bytes]]]:
    """Yield (spec, files) as Ray tasks finish. Connects to ``RAY_ADDRESS`` if set, else starts Ray."""
    ray = _import_ray()
    started = not ray.is_initialized()
    if started:
        if jobs is not None and "RAY_ADDRESS" not in os.environ:
            ray.init(num_cpus=jobs)
        else:
            ray.init()
    task = ray.remote(num_cpus=1)(execute_run)
    sources = plugins.plugin_sources()
    pending = {task.remote(spec, sources): spec for spec in specs}
    try:
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                yield pending.pop(ref), ray.get(ref)
    finally:
        for ref in pending:
            try:
                ray.cancel(ref)
            except Exception:  # noqa: BLE001 - best effort: the task may have finished
                pass
        if started:
            ray.shutdown()


def _results(
    todo: Sequence[RunSpec], backend: str, jobs: Optional[int], kernel: Optional[KernelRunner]
) -> Iterator[Tuple[RunSpec, Dict[str, bytes]]]:
    """(spec, files) of every run of ``todo``: the simulator's on ``backend``, then the
    kernel engine's one by one (real time, one emulated network)."""
    sim = [s for s in todo if s.engine == "sim"]
    others = [s for s in todo if s.engine != "sim"]
    if others and kernel is None:
        raise BackendError("--engine kernel: no kernel engine was given to run the kernel runs")
    if sim:
        runs = (
            _run_ray(sim, jobs)
            if backend == "ray"
            else _run_local(sim, jobs if jobs is not None else default_jobs())
        )
        try:
            yield from runs
        finally:
            runs.close()
    for spec in others:
        assert kernel is not None
        yield spec, kernel(spec)


# --- combining ------------------------------------------------------------------------------


def _with_run_keys(table: pa.Table, spec: RunSpec, extra: Sequence[str] = ()) -> pa.Table:
    """``table`` with the run's keys (and the ``extra`` keys) as its first columns."""
    n = table.num_rows
    keys = [
        pa.array([spec.run_id] * n, pa.string()),
        pa.array([spec.scheduler] * n, pa.string()),
        pa.array([spec.cc] * n, pa.string()),
        pa.array([spec.params] * n, pa.string()),
        pa.array([spec.seed] * n, pa.int64()),
    ]
    values = {"scenario": spec.scenario_label, "engine": spec.engine}
    keys += [pa.array([values[k]] * n, pa.string()) for k in extra]
    names = list(RUN_KEYS) + list(extra) + table.column_names
    return pa.Table.from_arrays(keys + table.columns, names=names)


def combine_runs(out_dir: Path, matrix: Matrix) -> None:
    """Write the combined tables of every run of ``matrix``, in matrix order."""
    runs_dir = out_dir / RUNS_DIR
    extra = extra_keys(matrix)
    # The UDP tables ([[udp]] flows): from the runs whose scenario has them (several scenarios
    # in one dataset may differ), none when no run has one.
    udp = [
        n
        for n in UDP_TABLE_NAMES
        if any((runs_dir / s.run_id / f"{n}.parquet").is_file() for s in matrix.runs)
    ]
    for name in TABLE_NAMES + tuple(udp):
        parts = []
        for spec in matrix.runs:
            path = runs_dir / spec.run_id / f"{name}.parquet"
            if name in UDP_TABLE_NAMES and not path.is_file():
                continue
            table = pq.read_table(path)
            if name == "flows":
                table = table.rename_columns([FLOW_RENAMES.get(c, c) for c in table.column_names])
            parts.append(_with_run_keys(table, spec, extra))
        combined = pa.concat_tables(parts, promote_options="permissive").combine_chunks()
        write_file_atomic(out_dir / f"{name}.parquet", parquet_bytes(combined))


# --- the sweep ------------------------------------------------------------------------------


#: Testing hook: with ``MPSCHED_SWEEP_KILL_AFTER=N`` in the environment the process kills
#: itself (SIGKILL: no cleanup, no final tables) right after its N-th new run is written, a
#: sweep killed from outside at a known point (tests/test_compare.py).
KILL_AFTER_ENV = "MPSCHED_SWEEP_KILL_AFTER"


def _kill_after() -> Optional[int]:
    value = os.environ.get(KILL_AFTER_ENV, "").strip()
    return int(value) if value else None


def _kill_self() -> None:
    kill = getattr(signal, "SIGKILL", None)
    if kill is not None:
        os.kill(os.getpid(), kill)
    os._exit(137)  # pragma: no cover - platforms without SIGKILL


def run_sweep(
    matrix: Matrix,
    out_dir: Path,
    *,
    backend: str = "local",
    jobs: Optional[int] = None,
    on_start: Optional[StartCallback] = None,
    on_done: Optional[DoneCallback] = None,
    kernel: Optional[KernelRunner] = None,
    _stop_after: Optional[int] = None,
) -> SweepResult:
    """Run every run of ``matrix`` not already in ``out_dir``, then write the combined tables.

    Args:
        matrix: the runs (:func:`mpsched.matrix.build_matrix`).
        out_dir: absent, empty, or the output of an earlier sweep (resumed: finished runs with
            the same scenario hash are kept, others are run).
        backend: ``"local"`` (a process pool) or ``"ray"``.
        jobs: parallel runs; default :func:`default_jobs` (local) or all of Ray's CPUs.
        on_start, on_done: progress callbacks.
        kernel: runs the matrix's kernel-engine runs (needed if it has any): they are done
            one at a time in this process, after the simulator's.
        _stop_after: testing hook: raise SweepInterrupted after this many new runs, as if the
            sweep had been killed.

    Raises:
        OutputDirError: ``out_dir`` is not usable. BackendError: the backend is unavailable.
        SweepInterrupted: stopped early (KeyboardInterrupt is re-raised as is).
    """
    check_backend(backend)  # before anything is written
    check_output_dir(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    runs_dir = out_dir / RUNS_DIR
    with _locked(out_dir):
        _remove_leftovers(out_dir)
        complete = json_bytes(_manifest(matrix, complete=True))
        try:
            previous: Optional[bytes] = (out_dir / MANIFEST).read_bytes()
        except OSError:
            previous = None
        write_file_atomic(out_dir / MANIFEST, json_bytes(_manifest(matrix, complete=False)))
        done = [(s, _is_done(runs_dir / s.run_id, s)) for s in matrix.runs]
        todo = [s for s, rows in done if rows is None]
        reused = len(matrix.runs) - len(todo)
        if on_start is not None:
            on_start(len(todo), reused)
        if todo:
            runs_dir.mkdir(exist_ok=True)
            results = _results(todo, backend, jobs, kernel)
            ran = 0
            kill_after = _kill_after()
            try:
                for spec, files in results:
                    _write_run(runs_dir, spec, files)
                    ran += 1
                    if on_done is not None:
                        on_done(spec.run_id)
                    if ran == kill_after:
                        _kill_self()
                    if _stop_after is not None and ran >= _stop_after and ran < len(todo):
                        raise SweepInterrupted(reused + ran, len(matrix.runs))
            finally:
                results.close()
        rows = [r for _, r in done if r is not None]
        if todo or not _combined_current(out_dir, previous, complete, rows):
            combine_runs(out_dir, matrix)
        write_file_atomic(out_dir / MANIFEST, complete)
    known = {s.run_id for s in matrix.runs}
    foreign = (
        sorted(
            p.name
            for p in runs_dir.iterdir()
            if p.is_dir() and p.name not in known and not p.name.startswith(".")
        )
        if runs_dir.is_dir()
        else []
    )
    return SweepResult(out_dir, len(matrix.runs), reused, len(todo), foreign)
