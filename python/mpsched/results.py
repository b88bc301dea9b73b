"""Simulation results: in-memory tables and their on-disk form.

A run produces one summary (a JSON document), the resolved scenario (TOML text) and five
columnar tables (``flows``, ``subflows``, ``timeseries``, ``links``, ``queues``). :class:`Results` holds them in memory as
pyarrow Tables; :func:`write_results` writes them to a directory atomically::

    out/demo/
      summary.json        the summary, indent=2, sorted keys
      flows.parquet       one row per flow
      subflows.parquet    one row per subflow of every flow
      timeseries.parquet  one row per (sample time, flow, subflow)
      links.parquet       one row per link
      queues.parquet      one row per (sample time, link): the bytes and packets queued
      scenario.toml       the scenario with every default filled in

and, only for a scenario with ``[[udp]]`` flows (see docs/scenarios.md)::

      udp_flows.parquet   one row per UDP flow (packets sent/received/lost, one-way delay)
      probes.parquet      one row per probe of a ``kind = "probe"`` flow (times in ns)

Same results => byte-identical files (fixed Parquet writer options, no timestamps). Parquet
files are written in row groups of :data:`ROW_GROUP_ROWS` rows, one at a time, so a timeseries
streamed to disk as a long run goes (:class:`ParquetStream`) is the same file as the table
written at once.
"""

from __future__ import annotations

import errno
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Union

import pyarrow as pa
import pyarrow.parquet as pq

from ._atomic import atomic_directory

if TYPE_CHECKING:  # pandas is imported only when a DataFrame is asked for
    import pandas as pd

__all__ = [
    "Results",
    "TABLE_NAMES",
    "UDP_TABLE_NAMES",
    "OUTPUT_FILES",
    "UDP_OUTPUT_FILES",
    "table_from_columns",
    "write_results",
    "write_files",
    "check_replaceable",
    "result_files",
    "parquet_bytes",
    "write_parquet",
    "ParquetStream",
    "ROW_GROUP_ROWS",
    "QUEUE_SCHEMA",
]

#: The tables of a run, in output order.
TABLE_NAMES = ("flows", "subflows", "timeseries", "links", "queues")

#: Tables only a scenario with ``[[udp]]`` flows has (``probes``: only with a probe flow).
UDP_TABLE_NAMES = ("udp_flows", "probes")

#: Files written by :func:`write_results`, in the order they are written.
OUTPUT_FILES = (
    "summary.json",
    "flows.parquet",
    "subflows.parquet",
    "timeseries.parquet",
    "links.parquet",
    "queues.parquet",
    "scenario.toml",
)

#: Files :func:`write_results` adds for a scenario with ``[[udp]]`` flows (before scenario.toml).
UDP_OUTPUT_FILES = tuple(f"{name}.parquet" for name in UDP_TABLE_NAMES)

#: What ``mpsched plot`` and ``mpsched report`` add to a results directory: replaced with it.
DERIVED_ENTRIES = ("plots", "report.md", "report.html", "packets.parquet", "packets.pcap")

# Arrow types by the names the core reports in its "schemas" entry.
_ARROW_TYPES: Dict[str, pa.DataType] = {
    "float64": pa.float64(),
    "int64": pa.int64(),
    "bool": pa.bool_(),
    "string": pa.string(),
}

# Parquet writer options, fixed so that equal tables give equal bytes across runs.
_PARQUET_OPTIONS: Dict[str, Any] = {
    "compression": "zstd",
    "compression_level": 3,
    "use_dictionary": True,
    "write_statistics": True,
    "version": "2.6",
    "data_page_version": "1.0",
}

#: Columns of the ``queues`` table (the core's, docs/scenarios.md, Queue occupancy).
QUEUE_SCHEMA = pa.schema(
    [
        ("time_s", pa.float64()),
        ("link", pa.string()),
        ("queue_bytes", pa.int64()),
        ("queue_packets", pa.int64()),
    ]
)

#: Rows per Parquet row group (pyarrow's default for ``write_table``).
ROW_GROUP_ROWS = 1024 * 1024

Columns = Mapping[str, Sequence[Any]]


def _infer_type(name: str, values: Sequence[Any]) -> pa.DataType:
    """Arrow type of one column of Python values: bool, int64, float64 or string."""
    kinds = {type(v) for v in values if v is not None}
    if not kinds:
        return pa.float64()
    if kinds == {bool}:
        return pa.bool_()
    if kinds <= {int}:
        return pa.int64()
    if kinds <= {int, float}:
        return pa.float64()
    if kinds == {str}:
        return pa.string()
    found = ", ".join(sorted(k.__name__ for k in kinds))
    raise TypeError(f"column {name!r}: expected bool, int, float or str values, got {found}")


def _column_to_array(name: str, values: Sequence[Any], type_name: Optional[str] = None) -> pa.Array:
    """One column (a list, or a numpy array) as an Arrow array of a fixed type."""
    if type_name is not None:
        return pa.array(values, type=_ARROW_TYPES[type_name])
    dtype = getattr(values, "dtype", None)
    if dtype is not None:  # numpy: numeric kinds map directly, anything else via Python values
        numeric = {"b": pa.bool_(), "i": pa.int64(), "u": pa.int64(), "f": pa.float64()}
        if dtype.kind in numeric:
            return pa.array(values, type=numeric[dtype.kind])
        values = values.tolist()
    return pa.array(values, type=_infer_type(name, values))


def table_from_columns(columns: Columns, schema: Optional[Mapping[str, str]] = None) -> pa.Table:
    """Build a pyarrow Table from a columnar dict, keeping the dict's column order.

    ``schema`` maps column names to "float64", "int64", "bool" or "string" (the core reports
    it, so an all-null column keeps its type). Without it: integers become int64, floats
    float64, strings string, booleans bool; ``None`` is null; ints mixed with floats float64.
    """
    schema = schema or {}
    lengths = {name: len(values) for name, values in columns.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"columns have different lengths: {lengths}")
    arrays = [_column_to_array(name, values, schema.get(name)) for name, values in columns.items()]
    return pa.Table.from_arrays(arrays, names=list(columns))


@dataclass(frozen=True)
class Results:
    """The outcome of one simulation run.

    Attributes:
        summary: the run summary: ``scenario``, ``seed``, ``profile``, ``duration_s``,
            ``end_s``, ``flows`` (list of per-flow dicts), ``links`` (list of per-link dicts),
            ``fairness`` (Jain's index of the flows' goodputs: ``jain_mptcp`` over the
            multipath flows, ``jain_all`` over every flow, None when undefined) and ``stats``
            (``events``, ``packets``, ``sim_seconds``).
        resolved_toml: the scenario as TOML text, every default filled in.
        flows: one row per flow (goodput, bytes delivered, flow completion time, HoL figures...).
        subflows: one row per subflow of every flow (path, bytes sent, losses, RTT...).
        timeseries: one row per sample (``sample_interval_ms``) per flow and subflow.
        links: one row per link (packets sent, drops, utilization, queue occupancy, ...).
        queues: one row per sample per link: ``time_s``, ``link``, ``queue_bytes``,
            ``queue_packets`` (the packets waiting, not the one being serialized); an empty
            table (:data:`QUEUE_SCHEMA`) for results that have none (the kernel engine's).
        udp_flows: one row per ``[[udp]]`` flow (None without such flows).
        probes: one row per probe sent by a ``kind = "probe"`` flow (None without one).
        decisions: per flow scheduled by a trained policy (``edar``, ``policy:PATH``), its
            decisions and their wall-clock latency in Rust: ``decisions``, ``mean_ns``,
            ``p50_ns``, ``p99_ns``, ``max_ns``. Wall time differs between runs, so it is not
            written to the results directory (the summary's ``policies`` holds the
            deterministic part: label, SHA-256 of the policy files, decision count).

    The tables are pyarrow Tables; :meth:`to_pandas` converts them to DataFrames.
    """

    summary: Dict[str, Any]
    resolved_toml: str
    flows: pa.Table
    subflows: pa.Table
    timeseries: pa.Table
    links: pa.Table
    queues: pa.Table = field(default_factory=lambda: QUEUE_SCHEMA.empty_table())
    decisions: Dict[str, Dict[str, float]] = field(default_factory=dict, compare=False)
    udp_flows: Optional[pa.Table] = None
    probes: Optional[pa.Table] = None

    @classmethod
    def from_core(cls, raw: Mapping[str, Any]) -> "Results":
        """Build Results from the dict returned by ``mpsched._core.run_scenario``."""
        schemas = raw.get("schemas", {})
        tables = {name: table_from_columns(raw[name], schemas.get(name)) for name in TABLE_NAMES}
        for name in UDP_TABLE_NAMES:
            if name in raw:
                tables[name] = table_from_columns(raw[name], schemas.get(name))
        decisions = {k: dict(v) for k, v in dict(raw.get("decisions", {})).items()}
        return cls(
            summary=json.loads(raw["summary"]),
            resolved_toml=raw["resolved"],
            decisions=decisions,
            **tables,
        )

    @property
    def tables(self) -> Dict[str, pa.Table]:
        """The tables by name, in :data:`TABLE_NAMES` order, then the UDP tables the run has."""
        names = TABLE_NAMES + tuple(n for n in UDP_TABLE_NAMES if getattr(self, n) is not None)
        return {name: getattr(self, name) for name in names}

    def to_pandas(self) -> Dict[str, "pd.DataFrame"]:
        """The tables as pandas DataFrames, keyed like :attr:`tables`."""
        return {name: table.to_pandas() for name, table in self.tables.items()}

    def summary_json(self) -> str:
        """The summary as it is written to ``summary.json``: indent 2, sorted keys, final newline."""
        return json.dumps(self.summary, indent=2, sort_keys=True) + "\n"


def parquet_bytes(table: pa.Table) -> bytes:
    """``table`` encoded as a Parquet file with the fixed writer options (equal tables, equal bytes)."""
    sink = pa.BufferOutputStream()
    write_parquet(table, sink)
    return sink.getvalue().to_pybytes()


def write_parquet(table: pa.Table, where: Any) -> None:
    """Write ``table`` to ``where`` (a path or a pyarrow sink) with the fixed writer options,
    in row groups of :data:`ROW_GROUP_ROWS` rows however the table is chunked in memory."""
    stream = ParquetStream(where)
    stream.add(table)
    stream.close()


class ParquetStream:
    """A Parquet file written as its rows arrive (a long run's timeseries, chunk by chunk).

    Rows are buffered until a row group of :data:`ROW_GROUP_ROWS` rows is full, then written;
    :meth:`close` writes the rest. Memory holds at most one row group; the file is the same
    bytes as the whole table given to :func:`write_parquet`, however the rows were split.
    """

    def __init__(self, where: Any) -> None:
        self._where = where
        self._writer: Optional[pq.ParquetWriter] = None
        self._pending: List[pa.Table] = []
        self._buffered = 0
        self.rows = 0

    def add(self, table: pa.Table) -> None:
        """Append ``table``'s rows (same schema as the first table added)."""
        if self._writer is None and not self._pending:
            self._writer = pq.ParquetWriter(self._where, table.schema, **_PARQUET_OPTIONS)
        if table.num_rows == 0:
            if not self._pending:
                self._pending.append(table)  # an empty table still gives the file its schema
            return
        self._pending.append(table)
        self._buffered += table.num_rows
        self.rows += table.num_rows
        while self._buffered >= ROW_GROUP_ROWS:
            self._write(ROW_GROUP_ROWS)

    def _write(self, n: int) -> None:
        merged = pa.concat_tables(self._pending)
        assert self._writer is not None
        self._writer.write_table(merged.slice(0, n).combine_chunks(), row_group_size=ROW_GROUP_ROWS)
        rest = merged.slice(n)
        self._pending, self._buffered = ([rest] if rest.num_rows else []), rest.num_rows

    def close(self) -> None:
        """Write the buffered rows (an empty table if none came at all) and close the file."""
        if self._writer is None:
            raise ValueError("no table was added: the file has no schema")
        if self._buffered or self.rows == 0:
            self._write(self._buffered)
        self._writer.close()


def result_files(results: Results) -> Dict[str, bytes]:
    """The files of :func:`write_results` as bytes, keyed by name in :data:`OUTPUT_FILES` order.

    Same bytes as the files written to disk; used where runs are computed in one process and
    written by another (``mpsched compare``).
    """
    files = {"summary.json": results.summary_json().encode("utf-8")}
    for name, table in results.tables.items():
        files[f"{name}.parquet"] = parquet_bytes(table)
    files["scenario.toml"] = _scenario_text(results).encode("utf-8")
    return files


def write_results(results: Results, out_dir: Union[str, "os.PathLike[str]"]) -> Path:
    """Write ``results`` to ``out_dir`` (see :data:`OUTPUT_FILES`) and return its path.

    The files are written into a temporary directory next to ``out_dir``, which then replaces
    ``out_dir`` in one rename: readers see the old directory or the complete new one, never a
    partial one. On failure the temporary directory is removed and ``out_dir`` is left as it was.

    An existing ``out_dir`` is replaced only if it holds nothing but output files of an earlier
    run, with their figures and report (:data:`DERIVED_ENTRIES`, replaced along with them);
    anything else raises ``FileExistsError`` (so ``--out .`` cannot wipe a directory).
    """
    out_dir = Path(out_dir)
    check_replaceable(out_dir)
    with atomic_directory(out_dir) as tmp:
        write_files(results, tmp)
    return out_dir


def write_files(results: Results, directory: Path, tables: Sequence[str] = TABLE_NAMES) -> None:
    """Write the summary, the tables named in ``tables`` and the resolved scenario into the
    existing ``directory`` (not atomically: :func:`write_results` calls this in a temporary
    directory)."""
    (directory / "summary.json").write_text(results.summary_json(), encoding="utf-8")
    for name in tables:
        write_parquet(getattr(results, name), str(directory / f"{name}.parquet"))
    for name in UDP_TABLE_NAMES:
        if getattr(results, name) is not None:
            write_parquet(getattr(results, name), str(directory / f"{name}.parquet"))
    (directory / "scenario.toml").write_text(_scenario_text(results), encoding="utf-8")


def _scenario_text(results: Results) -> str:
    """The resolved scenario as ``scenario.toml`` holds it: ending with a newline."""
    text = results.resolved_toml
    return text if text.endswith("\n") else text + "\n"


def check_replaceable(out_dir: Path) -> None:
    """Raise unless ``out_dir`` is absent, empty, or holds only OUTPUT_FILES and DERIVED_ENTRIES."""
    if out_dir.name in ("", ".", ".."):
        raise FileExistsError(errno.EEXIST, "not a valid output directory name", str(out_dir))
    if not out_dir.is_dir() or out_dir.is_symlink():
        return  # absent, a plain file (refused by atomic_directory) or a symlink (replaced itself)
    # Figures and reports count as results only next to a run's summary.
    derived = DERIVED_ENTRIES if (out_dir / "summary.json").is_file() else ()
    foreign = sorted(
        p.name
        for p in out_dir.iterdir()
        if not (p.name in OUTPUT_FILES + UDP_OUTPUT_FILES and not p.is_dir())
        and p.name not in derived
    )
    if foreign:
        shown = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
        raise FileExistsError(
            errno.EEXIST,
            f"exists and holds files that are not mpsched results ({shown})",
            str(out_dir),
        )
