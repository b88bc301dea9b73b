"""`compare --engine sim,kernel`: the engine dimension of a compare dataset (run ids, hashes,
tables, variants, the side-by-side table), the refusals, and a real 5 s run on both engines
(skipped with the reason where the kernel engine is unavailable)."""

from __future__ import annotations

import dataclasses
import io
import sys
from pathlib import Path
from typing import Dict

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import MINI_TOML

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

import mpsched
from mpsched.cli.emulate import find_emulator
from mpsched.dataset import load_results
from mpsched.emulate.topology import unavailable_reason
from mpsched.kernel_runs import toml_text
from mpsched.matrix import MatrixError, RunSpec, build_matrix
from mpsched.multi import parse_engines, with_engines
from mpsched.report import engine_table, html_report, markdown_report, summary_table
from mpsched.results import parquet_bytes
from mpsched.stats import summarize
from mpsched.sweep import RUN_META, execute_run, json_bytes, run_sweep

EMU = find_emulator(None)
_WHY = unavailable_reason() or (
    None if EMU else "no mpsched-emu binary (cargo build --release -p mpsched-emu)"
)
needs_kernel = pytest.mark.skipif(_WHY is not None, reason=f"kernel engine unavailable: {_WHY}")

ONE_FLOW = """
[sim]
name = "one"
duration_s = 5
[[paths]]
name = "p"
rate_mbps = 10
delay_ms = 10
[[flows]]
name = "f"
path = "p"
cc = "cubic"
"""


def test_parse_engines():
    assert parse_engines("sim") == ("sim",)
    assert parse_engines("sim, kernel") == ("sim", "kernel")
    with pytest.raises(
        MatrixError, match=r"^--engine: expected sim, kernel or sim,kernel, got 'ns3'$"
    ):
        parse_engines("ns3")
    with pytest.raises(MatrixError, match="given twice"):
        parse_engines("sim,sim")


def test_kernel_runs_follow_their_simulator_runs_with_their_own_id_and_hash(tmp_path):
    (tmp_path / "mini.toml").write_text(MINI_TOML)
    matrix = build_matrix(tmp_path / "mini.toml", [1, 2], ["minrtt"])
    both = with_engines(matrix, ["sim", "kernel"])
    assert [s.run_id for s in both.runs] == [
        "minrtt_seed1", "minrtt_seed1_kernel", "minrtt_seed2", "minrtt_seed2_kernel",
    ]  # fmt: skip
    sim, kernel = both.runs[0], both.runs[1]
    assert sim == matrix.runs[0]  # simulator runs are the one-engine sweep's: reused
    assert kernel.engine == "kernel" and kernel.scenario_hash != sim.scenario_hash
    assert kernel.meta()["engine"] == "kernel" and "engine" not in sim.meta()


def test_toml_text_reads_back_as_the_scenario(tmp_path):
    (tmp_path / "mini.toml").write_text(MINI_TOML)
    spec = build_matrix(tmp_path / "mini.toml", [1], ["minrtt"]).runs[0]
    scenario = dict(spec.scenario, odd={"a key": [1.5, float("inf"), True, 'q"uote']})
    assert tomllib.loads(toml_text(scenario)) == scenario


def _fake_kernel(spec: RunSpec) -> Dict[str, bytes]:
    """A "kernel" run: the simulator's, every goodput times 0.9."""
    files = execute_run(dataclasses.replace(spec, engine="sim"))
    flows = pq.read_table(io.BytesIO(files["flows.parquet"]))
    i = flows.column_names.index("goodput_mbps")
    scaled = pa.array([g * 0.9 for g in flows.column(i).to_pylist()], pa.float64())
    files["flows.parquet"] = parquet_bytes(flows.set_column(i, "goodput_mbps", scaled))
    files[RUN_META] = json_bytes(spec.meta())
    return files


@pytest.fixture(scope="module")
def engines_ds(tmp_path_factory):
    root = tmp_path_factory.mktemp("engines")
    (root / "mini.toml").write_text(MINI_TOML)
    matrix = with_engines(
        build_matrix(root / "mini.toml", [1, 2], ["minrtt", "redundant"]), ["sim", "kernel"]
    )
    run_sweep(matrix, root / "cmp", jobs=1, kernel=_fake_kernel)
    return load_results(root / "cmp")


def test_dataset_has_an_engine_column_and_engine_variants(engines_ds):
    ds = engines_ds
    assert ds.engines == ("sim", "kernel")
    assert ds.variants == (
        "minrtt / sim",
        "minrtt / kernel",
        "redundant / sim",
        "redundant / kernel",
    )
    on_disk = pd.read_parquet(ds.path / "flows.parquet")
    assert list(on_disk.columns[:6]) == ["run_id", "scheduler", "cc", "params", "seed", "engine"]
    assert on_disk.groupby("engine")["run_id"].nunique().to_dict() == {"kernel": 4, "sim": 4}
    assert set(ds.fairness["engine"]) == {"sim", "kernel"}


def test_report_puts_the_engines_side_by_side(engines_ds):
    ds = engines_ds
    headers, cells = engine_table(ds)
    assert headers == ["scheduler", "cc", "flow", "sim", "kernel", "Δ", "Δ (%)"]
    rows = {(c[0], c[2]): c for c in cells}
    assert len(cells) == 4  # 2 schedulers × 2 flows
    flows = ds.flows
    sim = flows[
        (flows["engine"] == "sim") & (flows["scheduler"] == "minrtt") & (flows["name"] == "mp")
    ]
    mean = sim["goodput_mbps"].mean()
    row = rows[("minrtt", "mp")]
    assert row[3:] == [f"{mean:.2f}", f"{0.9 * mean:.2f}", f"{-0.1 * mean:+.2f}", "-10.0"]
    summary_headers, _ = summary_table(summarize(ds.flows, ds.variants, ds.fairness))
    assert summary_headers[:3] == ["scheduler", "cc", "engine"]
    text = markdown_report(ds, [])
    assert "### Simulator and kernel: goodput (Mbit/s)" in text
    assert "| scheduler | cc | flow | sim | kernel | Δ | Δ (%) |" in text
    assert "Engines: sim, kernel." in text
    page = html_report(ds, [])
    assert "<h3>Simulator and kernel: goodput (Mbit/s)</h3>" in page
    assert '<th class="num">Δ (%)</th>' in page


def test_kernel_unavailable_is_one_line_naming_engine(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from mpsched.cli import app
    from mpsched.emulate import topology

    monkeypatch.setattr(topology, "unavailable_reason", lambda: "needs root (test)")
    (tmp_path / "one.toml").write_text(ONE_FLOW)
    with pytest.raises(
        MatrixError, match=r"^engines kernel: cannot emulate here: needs root \(test\)$"
    ):
        mpsched.compare(tmp_path / "one.toml", engines="sim,kernel")
    result = CliRunner().invoke(
        app,
        [
            "compare",
            str(tmp_path / "one.toml"),
            "--engine",
            "sim,kernel",
            "-o",
            str(tmp_path / "o"),
        ],
    )
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        "error: --engine kernel: cannot emulate here: needs root (test)"
    ]
    assert not (tmp_path / "o").exists()


def test_a_bad_engine_is_one_line_exit_2(cli, tmp_path):
    (tmp_path / "one.toml").write_text(ONE_FLOW)
    proc = cli("compare", "one.toml", "--engine", "sim,ns3", "-o", "o")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "error: --engine: expected sim, kernel or sim,kernel, got 'sim,ns3'"
    ]
    assert not (tmp_path / "o").exists()


@needs_kernel
def test_a_variant_the_kernel_cannot_run_is_refused_up_front(cli, tmp_path):
    (tmp_path / "one.toml").write_text(ONE_FLOW)
    proc = cli("compare", "one.toml", "--engine", "sim,kernel", "--cc", "cubic,lia", "-o", "o")
    assert proc.returncode == 2, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("error: --engine kernel: one.toml: flows[0].cc: 'lia' is not a kernel")
    assert not (tmp_path / "o").exists()


@needs_kernel
def test_sim_and_kernel_in_one_dataset_5s(cli, tmp_path):
    (tmp_path / "one.toml").write_text(ONE_FLOW)
    proc = cli("compare", "one.toml", "--engine", "sim,kernel", "-o", "both")
    assert proc.returncode == 0, proc.stderr
    assert "on each engine" in proc.stdout and "Δ" in proc.stdout
    flows = pd.read_parquet(tmp_path / "both" / "flows.parquet")
    assert list(flows["engine"]) == ["sim", "kernel"]
    assert list(flows["run_id"]) == ["seed1", "seed1_kernel"]
    # 10 Mbit/s for 5 s: both engines well above half the link, neither above it.
    assert all(5.0 < g <= 10.0 for g in flows["goodput_mbps"]), flows["goodput_mbps"]
    ds = load_results(tmp_path / "both")
    assert ds.engines == ("sim", "kernel") and len(ds.variants) == 2
    summary = (tmp_path / "both" / "runs" / flows["run_id"].iloc[1] / "summary.json").read_text()
    assert '"emulation"' in summary
    assert Path(tmp_path / "both" / "queues.parquet").is_file()
