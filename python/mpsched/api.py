"""``mpsched.run``: simulate a scenario in memory."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any, Callable, List, Mapping, Optional, Sequence, Union

import pyarrow as pa

from . import _core
from ._atomic import atomic_directory
from .results import ParquetStream, Results, check_replaceable, table_from_columns, write_files
from .scenario import load

__all__ = ["run", "run_streaming", "run_to_dir", "Scenario", "MAX_SEED", "Progress", "OnRows"]

#: ``progress(now_s, end_s, events)``: simulated time, the scenario's duration, events so far.
Progress = Callable[[float, float, int], None]

#: ``on_rows(table)``: timeseries rows sampled since the last call (a pyarrow Table).
OnRows = Callable[[pa.Table], None]

#: Largest seed, everywhere (`run --seed`, `compare --seeds`, `[sim].seed`, a synthetic trace's
#: `seed`): TOML integers are signed 64-bit, and the run's written `scenario.toml` must run again.
MAX_SEED = 2**63 - 1

#: A scenario file path (TOML, or JSON if it ends in ``.json``), or the scenario as a dict.
Scenario = Union[str, "os.PathLike[str]", Mapping[str, Any]]


def run(
    scenario: Scenario, seed: Optional[int] = None, progress: Optional[Progress] = None
) -> Results:
    """Simulate ``scenario`` and return its :class:`~mpsched.Results`.

    Args:
        scenario: a path to a scenario file (TOML, or JSON if the name ends in ``.json``), or
            the scenario itself as a dict with the same structure as the TOML file
            (``{"sim": {...}, "links": [...], "paths": [...], "flows": [...]}``).
            See docs/scenarios.md for the format.
        seed: overrides ``[sim].seed`` when given.
        progress: called about every 0.2 s of wall time as the run goes, with the simulated
            time, the scenario's duration (s) and the events processed so far.

    Raises:
        mpsched.ScenarioError: the scenario is invalid (syntax, unknown or missing field, bad
            value, unreadable trace file). The message is one line,
            ``"<source>: <field or line>: <what was expected>"``, where ``source`` is the path,
            or ``"<dict>"`` for a dict.
            A file that cannot be read raises a ScenarioError that is also the OSError
            (e.g. ``FileNotFoundError``); see :mod:`mpsched.scenario`.
        TypeError: ``scenario`` is neither a path nor a dict.

    A dict's numpy scalars and arrays are taken as numbers and lists, its paths
    (:class:`os.PathLike`) as strings; any other value JSON cannot hold (Decimal, set, bytes,
    dates, NaN) is a ScenarioError naming the field. An internal failure of the simulator is a
    ScenarioError too (one line, "internal error ...; please report it").
        mpsched.SchedulerError: a scheduler written in Python raised (or answered something
            other than a subflow index or None); the original exception is its ``__cause__``
            (docs/python-schedulers.md).

    Nothing is written to disk; use :func:`mpsched.write_results` for that (or
    :func:`run_streaming` for a run whose timeseries is too large to hold). Same scenario,
    seed and build => identical results.
    """
    tables: List[pa.Table] = []

    def on_rows(table: pa.Table) -> None:
        if table.num_rows:
            tables.append(table)

    results = run_streaming(scenario, on_rows, seed=seed, progress=progress)
    # The chunks came as Arrow tables (compact), not as the Python lists of one big dict.
    timeseries = pa.concat_tables([*tables, results.timeseries]) if tables else results.timeseries
    return dataclasses.replace(results, timeseries=timeseries)


def run_streaming(
    scenario: Scenario,
    on_rows: OnRows,
    seed: Optional[int] = None,
    progress: Optional[Progress] = None,
    chunk_rows: int = 65536,
    trace_packets: Optional[Sequence[str]] = None,
    on_packets: Optional[OnRows] = None,
) -> Results:
    """Simulate ``scenario`` as :func:`run` does, handing the timeseries to ``on_rows`` in pieces
    as the run goes (at most about ``chunk_rows`` rows each, more often on a slow run: every
    0.2 s of wall time), so memory does not grow with the run's duration; the returned Results' ``timeseries`` holds only the rows after the last piece.
    Same arguments, errors and results as :func:`run` (whose timeseries is the pieces and that
    remainder, in order). ``mpsched run`` writes the pieces to ``timeseries.parquet`` this way
    (:class:`mpsched.results.ParquetStream`).

    With ``trace_packets`` (flow names, or ``["all"]``) and ``on_packets``, the packet trace of
    those flows comes to ``on_packets`` in pieces too (columns in docs/packet-trace.md); an
    unknown flow name raises ScenarioError.
    """
    if seed is not None and (
        isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED
    ):
        raise ValueError(f"seed: expected an integer in [0, 2**63 - 1], got {seed!r}")
    loaded = load(scenario)

    def on_chunk(
        rows: Mapping[str, Any], types: Mapping[str, str], now_s: float, end_s: float, events: int
    ) -> None:
        on_rows(table_from_columns(rows, types))
        if progress is not None:
            progress(now_s, end_s, events)

    def on_packet_rows(rows: Mapping[str, Any], types: Mapping[str, str]) -> None:
        assert on_packets is not None
        on_packets(table_from_columns(rows, types))

    traced = list(trace_packets) if trace_packets is not None and on_packets is not None else None
    try:
        raw = _core.run_scenario(
            loaded.text,
            loaded.source,
            loaded.fmt,
            seed,
            on_chunk=on_chunk,
            chunk_rows=chunk_rows,
            trace_packets=traced,
            on_packets=on_packet_rows if traced is not None else None,
        )
    except BaseException as e:
        # The core catches its panics; one that still escapes (a BaseException) is reported
        # like them, never as a traceback.
        if type(e).__name__ != "PanicException":
            raise
        what = " ".join(str(e).split())
        raise _core.ScenarioError(
            f"{loaded.source}: the simulator failed on this scenario "
            f"(internal error: {what}; please report it)"
        ) from None
    return Results.from_core(raw)


def run_to_dir(
    scenario: Scenario,
    out_dir: Union[str, "os.PathLike[str]"],
    seed: Optional[int] = None,
    progress: Optional[Progress] = None,
    trace_packets: Optional[Sequence[str]] = None,
    pcap: bool = False,
) -> Results:
    """Simulate ``scenario`` and write its results to ``out_dir`` as the run goes: the same
    files as :func:`mpsched.write_results` of :func:`run`'s results, byte for byte, but the
    timeseries goes to disk in row groups while the simulation runs, so memory stays bounded
    (about one row group, :data:`mpsched.results.ROW_GROUP_ROWS` rows) however long the run.

    Atomic like :func:`~mpsched.write_results`: a failed run (a bad scenario too) leaves
    ``out_dir`` as it was; ``out_dir`` is checked before the run. Returns the Results with an
    empty ``timeseries`` (its rows are in ``out_dir/timeseries.parquet``).

    ``trace_packets`` (flow names, or ``["all"]``) also writes the packet trace of those flows
    to ``out_dir/packets.parquet``, streamed the same way; ``pcap`` then converts it to
    ``out_dir/packets.pcap`` (:func:`mpsched.pcap.write_pcap`).
    """
    out_dir = Path(out_dir)
    check_replaceable(out_dir)
    if pcap and not trace_packets:
        raise ValueError("pcap: needs trace_packets (the flows whose packets to write)")
    with atomic_directory(out_dir) as tmp:
        stream = ParquetStream(str(tmp / "timeseries.parquet"))
        packets = ParquetStream(str(tmp / "packets.parquet")) if trace_packets else None
        results = run_streaming(
            scenario,
            stream.add,
            seed=seed,
            progress=progress,
            trace_packets=trace_packets,
            on_packets=packets.add if packets is not None else None,
        )
        stream.add(results.timeseries)
        stream.close()
        if packets is not None:
            packets.close()
            if pcap:
                from .pcap import write_pcap

                write_pcap(tmp / "packets.parquet", tmp / "packets.pcap")
        write_files(results, tmp, tables=("flows", "subflows", "links", "queues"))
    return dataclasses.replace(results, timeseries=results.timeseries.slice(0, 0))
