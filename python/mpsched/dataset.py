"""Load a results directory — one ``mpsched run`` or a ``mpsched compare`` sweep — for plots and reports.

Both kinds load into the same :class:`Dataset`: pandas tables with the run keys (``run_id``,
``scheduler``, ``cc``, ``params``, ``seed``) and a ``variant`` label first. A single run is a dataset
with one variant and one seed.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Tuple

import pyarrow.parquet as pq

from .matrix import run_labels
from .sweep import EXTRA_KEYS, FLOW_RENAMES, MANIFEST, RUN_KEYS, RUNS_DIR

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ResultsError", "Dataset", "load_results", "FAIRNESS_COLUMNS"]

# The tables plots and reports use (links are not needed).
_TABLES = ("flows", "subflows", "timeseries")

#: Columns of :attr:`Dataset.fairness`, from each run summary's ``fairness`` (docs/scenarios.md,
#: Outputs): Jain's index of the flows' goodputs over the MPTCP flows and over all flows, and
#: the number of flows in each (an undefined index is NaN).
FAIRNESS_COLUMNS = ("jain_mptcp", "mptcp_flows", "jain_all", "all_flows")


class ResultsError(ValueError):
    """The directory is not a readable results directory (one-line message)."""


@dataclass(frozen=True)
class Dataset:
    """The runs of a results directory.

    Attributes:
        path: the directory.
        kind: ``"run"`` (``mpsched run`` output) or ``"compare"`` (``mpsched compare`` output).
        scenario: the scenario name.
        flows, subflows, timeseries: the tables, each starting with ``run_id``, ``scheduler``,
            ``cc``, ``params``, ``seed`` and ``variant``. In ``flows`` the flow's own scheduler
            and cc columns are ``flow_scheduler`` and ``flow_cc``.
        variants: the variant labels in matrix order: the axes that vary among scheduler, cc
            and swept parameters (``params``), joined by `` / ``; the scheduler if none does.
        seeds: the seeds, in matrix order.
        fairness: one row per run (the same keys first, then :data:`FAIRNESS_COLUMNS`) from
            the run summaries' ``fairness``; None when not loaded (a dataset built by hand).
        scenarios: a compare of several scenario files: their labels, in order (the tables
            then have a ``scenario`` column; :meth:`for_scenario` cuts one out); else empty.
        engines: the engines of the runs (``sim``, ``kernel``); with both, the tables have an
            ``engine`` column and each variant ends in `` / sim`` or `` / kernel``.
    """

    path: Path
    kind: str
    scenario: str
    flows: "pd.DataFrame"
    subflows: "pd.DataFrame"
    timeseries: "pd.DataFrame"
    variants: Tuple[str, ...]
    seeds: Tuple[int, ...]
    fairness: Optional["pd.DataFrame"] = None
    scenarios: Tuple[str, ...] = ()
    engines: Tuple[str, ...] = ("sim",)

    def for_scenario(self, label: str) -> "Dataset":
        """The runs of the scenario ``label`` (one of :attr:`scenarios`), as a dataset of
        one scenario named ``label``."""

        def keep(frame: Optional["pd.DataFrame"]) -> Optional["pd.DataFrame"]:
            return None if frame is None else frame[frame["scenario"] == label]

        flows = keep(self.flows)
        assert flows is not None
        present = set(flows["variant"])
        return dataclasses.replace(
            self,
            scenario=label,
            flows=flows,
            subflows=keep(self.subflows),
            timeseries=keep(self.timeseries),
            fairness=keep(self.fairness),
            variants=tuple(v for v in self.variants if v in present),
            seeds=tuple(dict.fromkeys(int(s) for s in flows["seed"])),
            scenarios=(),
        )

    def parts(self) -> List[Tuple[str, "Dataset"]]:
        """``(label, dataset)`` per scenario that has runs (``--variants`` may leave none);
        ``[("", self)]`` for one scenario."""
        if not self.scenarios:
            return [("", self)]
        parts = [(label, self.for_scenario(label)) for label in self.scenarios]
        return [(label, part) for label, part in parts if part.variants]  # all left out: none

    @property
    def runs(self) -> int:
        """Number of runs."""
        return int(self.flows["run_id"].nunique())

    def first_seed_runs(self) -> Dict[str, str]:
        """For each variant, the run_id of its run with the first seed (for per-run figures)."""
        first = self.flows.drop_duplicates("variant")
        return dict(zip(first["variant"], first["run_id"]))


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ResultsError(f"{path}: {e.strerror or e}") from None
    except ValueError as e:
        raise ResultsError(f"{path}: not valid JSON ({e})") from None


def _read_table(path: Path) -> "pd.DataFrame":
    try:
        return pq.read_table(path).to_pandas()
    except FileNotFoundError:
        raise ResultsError(f"{path}: missing") from None
    except OSError as e:  # pyarrow reports unreadable or corrupt files as OSError/ArrowInvalid
        raise ResultsError(f"{path}: cannot read ({e})") from None
    except Exception as e:  # noqa: BLE001 - pyarrow.ArrowInvalid and friends
        raise ResultsError(f"{path}: not a Parquet file ({type(e).__name__})") from None


def _fairness_values(summary: Any) -> Dict[str, float]:
    """:data:`FAIRNESS_COLUMNS` of a run summary (NaN where missing, null, or in results written
    before the summary had ``fairness``)."""
    fair = summary.get("fairness") if isinstance(summary, dict) else None
    fair = fair if isinstance(fair, dict) else {}
    out = {}
    for column in FAIRNESS_COLUMNS:
        value = fair.get(column)
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        out[column] = float(value) if ok else math.nan
    return out


def _fairness_frame(
    keys: List[Mapping[str, Any]], summaries: List[Any], extra: Sequence[str] = ()
) -> "pd.DataFrame":
    """One row per run: its keys (run keys, variant, the ``extra`` keys), then
    :data:`FAIRNESS_COLUMNS`."""
    import pandas as pd

    rows = [dict(k, **_fairness_values(s)) for k, s in zip(keys, summaries)]
    columns = list(RUN_KEYS) + ["variant"] + list(extra) + list(FAIRNESS_COLUMNS)
    return pd.DataFrame(rows, columns=columns)


def _variant_labels(schedulers: List[str], ccs: List[str], params: List[str]) -> List[str]:
    """One label per run: the axes that vary (scheduler, cc, swept parameters), or the scheduler."""
    axes = [axis for axis in (schedulers, ccs, params) if len(set(axis)) > 1]
    if not axes:
        return list(schedulers)
    return [" / ".join(values) for values in zip(*axes)]


def _scenario_variant_labels(runs: List[Dict[str, Any]]) -> List[str]:
    """:func:`_variant_labels` of each scenario's runs (several scenario files: the axes that
    vary within a file), in run order."""
    labels = [""] * len(runs)
    groups: Dict[str, List[int]] = {}
    for i, r in enumerate(runs):
        groups.setdefault(str(r.get("scenario", "")), []).append(i)
    for indices in groups.values():
        rows = [runs[i] for i in indices]
        found = _variant_labels(
            [r["scheduler"] for r in rows],
            [r["cc"] for r in rows],
            [r.get("params", "") for r in rows],
        )
        for i, label in zip(indices, found):
            labels[i] = label
    return labels


def _add_variant(frame: "pd.DataFrame", variant_of_run: Dict[str, str]) -> "pd.DataFrame":
    frame = frame.copy()
    if "params" not in frame.columns:  # a sweep written before parameter sweeps existed
        frame.insert(RUN_KEYS.index("params"), "params", "")
    frame.insert(len(RUN_KEYS), "variant", frame["run_id"].map(variant_of_run))
    return frame


def _load_compare(path: Path) -> Dataset:
    manifest = _read_json(path / MANIFEST)
    runs = manifest.get("runs") if isinstance(manifest, dict) else None
    if not isinstance(runs, list) or not all(isinstance(r, dict) for r in runs):
        raise ResultsError(f"{path / MANIFEST}: not a compare manifest")
    if not manifest.get("complete"):
        raise ResultsError(
            f"{path}: the sweep is incomplete; run the same `mpsched compare` again to finish it"
        )
    labels = _scenario_variant_labels(runs)
    engines = tuple(dict.fromkeys(str(r.get("engine", "sim")) for r in runs))
    if len(engines) > 1:
        labels = [f"{label} / {r.get('engine', 'sim')}" for label, r in zip(labels, runs)]
    scenarios = manifest.get("scenarios") or []
    extra = [k for k in EXTRA_KEYS if any(k in r for r in runs)]
    variant_of_run = {r["run_id"]: label for r, label in zip(runs, labels)}
    tables = {
        name: _add_variant(_read_table(path / f"{name}.parquet"), variant_of_run)
        for name in _TABLES
    }
    keys = [
        {
            **{k: r.get(k, "") for k in RUN_KEYS},
            "seed": int(r["seed"]),
            "variant": label,
            **{k: str(r.get(k, "sim" if k == "engine" else "")) for k in extra},
        }
        for r, label in zip(runs, labels)
    ]
    summaries = [_read_json(path / RUNS_DIR / str(r["run_id"]) / "summary.json") for r in runs]
    return Dataset(
        path=path,
        kind="compare",
        scenario=str(manifest.get("scenario_name", path.name)),
        variants=tuple(dict.fromkeys(labels)),
        seeds=tuple(dict.fromkeys(int(r["seed"]) for r in runs)),
        fairness=_fairness_frame(keys, summaries, extra),
        scenarios=tuple(str(sc.get("label", "")) for sc in scenarios if isinstance(sc, dict)),
        engines=engines,
        **tables,
    )


def _load_run(path: Path) -> Dataset:
    summary = _read_json(path / "summary.json")
    if not isinstance(summary, dict):
        raise ResultsError(f"{path / 'summary.json'}: not a run summary")
    frames = {name: _read_table(path / f"{name}.parquet") for name in _TABLES}
    flows = frames["flows"]
    try:  # the resolved scenario tells which flows are multipath
        scenario: Dict[str, Any] = tomllib.loads(
            (path / "scenario.toml").read_text(encoding="utf-8")
        )
    except (OSError, ValueError):
        scenario = {
            "flows": [
                {"name": n, "paths": []} for n, k in zip(flows["name"], flows["subflows"]) if k > 1
            ]
        }
    scheduler, cc = run_labels(
        scenario, list(flows["name"]), list(flows["scheduler"]), list(flows["cc"])
    )
    seed = int(summary.get("seed", 0))
    keys = {
        "run_id": path.name,
        "scheduler": scheduler,
        "cc": cc,
        "params": "",
        "seed": seed,
        "variant": scheduler,
    }
    tables = {}
    for name, frame in frames.items():
        if name == "flows":
            frame = frame.rename(columns=FLOW_RENAMES)
        for i, (column, value) in enumerate(keys.items()):
            frame.insert(i, column, value)
        tables[name] = frame
    return Dataset(
        path=path,
        kind="run",
        scenario=str(summary.get("scenario", path.name)),
        variants=(scheduler,),
        seeds=(seed,),
        fairness=_fairness_frame([keys], [summary]),
        **tables,
    )


def load_results(path: Path) -> Dataset:
    """Load a ``mpsched run`` or ``mpsched compare`` output directory.

    Raises ResultsError (one line) if ``path`` is missing, not a results directory, an
    unfinished sweep, or holds unreadable files.
    """
    if not path.exists():
        raise ResultsError(f"{path}: no such directory")
    if not path.is_dir():
        raise ResultsError(f"{path}: not a directory")
    if (path / MANIFEST).is_file():
        return _load_compare(path)
    if (path / "summary.json").is_file():
        return _load_run(path)
    raise ResultsError(
        f"{path}: not a results directory (expected the output of `mpsched run` or `mpsched compare`)"
    )
