"""`[[udp]]` flows from Python: `mpsched run` writes the udp_flows and probes tables (and only
for scenarios that have such flows), the API returns them, and `mpsched emulate` refuses them."""

from __future__ import annotations

import json

import pyarrow.parquet as pq

import mpsched
from mpsched.results import OUTPUT_FILES, UDP_OUTPUT_FILES

UDP_TOML = """\
[sim]
name = "udp"
duration_s = 0.95

[[paths]]
name = "p"
rate_mbps = 10.0
delay_ms = 10.0

[[flows]]
name = "tcp"
path = "p"
size_bytes = 20000

[[udp]]
name = "ping"
kind = "probe"
path = "p"
interval_ms = 100
"""

# 84-byte probes at 10 Mbit/s: 67,200 ns on the wire, then 10 ms of propagation.
IDLE_OWD_NS = 10_067_200


def test_run_writes_the_udp_tables(cli, tmp_path):
    scenario = tmp_path / "udp.toml"
    scenario.write_text(
        UDP_TOML.replace('[[flows]]\nname = "tcp"\npath = "p"\nsize_bytes = 20000\n', "")
    )
    proc = cli("run", str(scenario))
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "out" / "udp"
    assert sorted(p.name for p in out.iterdir()) == sorted(OUTPUT_FILES + UDP_OUTPUT_FILES)
    assert "probes.parquet" in proc.stdout
    probes = pq.read_table(out / "probes.parquet")
    assert probes.column_names == [
        "flow", "seq", "send_ns", "arrival_ns", "owd_ns", "echo_ns", "rtt_ns", "lost", "echo_lost",
    ]  # fmt: skip
    assert probes.column("send_ns").to_pylist() == [k * 100_000_000 for k in range(10)]
    assert probes.column("owd_ns").to_pylist() == [IDLE_OWD_NS] * 10
    assert probes.column("rtt_ns").to_pylist() == [2 * IDLE_OWD_NS] * 10
    (row,) = pq.read_table(out / "udp_flows.parquet").to_pylist()
    assert (row["name"], row["kind"], row["packets_sent"], row["packets_lost"]) == (
        "ping",
        "probe",
        10,
        0,
    )
    assert row["owd_p99_ms"] == IDLE_OWD_NS / 1e6
    summary = json.loads((out / "summary.json").read_text())
    assert summary["udp_flows"] == [row] and summary["flows"] == []


def test_api_results_hold_the_udp_tables_next_to_tcp_flows(tmp_path):
    scenario = tmp_path / "udp.toml"
    scenario.write_text(UDP_TOML)
    res = mpsched.run(scenario)
    assert res.flows.num_rows == 1 and res.udp_flows.num_rows == 1
    assert list(res.tables) == [
        "flows",
        "subflows",
        "timeseries",
        "links",
        "queues",
        "udp_flows",
        "probes",
    ]
    # The TCP transfer shares the path: the probes sent while it runs wait behind its packets.
    assert max(res.probes.column("owd_ns").to_pylist()) > IDLE_OWD_NS
    again = mpsched.run(scenario)
    assert again.probes.equals(res.probes) and again.udp_flows.equals(res.udp_flows)


def test_scenarios_without_udp_flows_have_no_udp_tables(fast_toml):
    res = mpsched.run(fast_toml)
    assert res.udp_flows is None and res.probes is None
    assert "udp_flows" not in res.summary


def test_emulate_refuses_udp_flows_naming_the_field(cli, tmp_path):
    scenario = tmp_path / "udp.toml"
    scenario.write_text(UDP_TOML)
    proc = cli("emulate", str(scenario))
    assert proc.returncode == 2, proc
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"error: {scenario}: udp[0].kind: 'probe' flows"
    ), proc.stderr


def test_compare_combines_the_udp_tables_of_its_runs(tmp_path):
    scenario = tmp_path / "udp.toml"
    scenario.write_text(UDP_TOML)
    out = tmp_path / "cmp"
    mpsched.compare(scenario, ccs=["cubic", "reno"], seeds=[1, 2], out=out)
    probes = pq.read_table(out / "probes.parquet")
    assert probes.num_rows == 4 * 10 and probes.column_names[:5] == [
        "run_id", "scheduler", "cc", "params", "seed",
    ]  # fmt: skip
    assert pq.read_table(out / "udp_flows.parquet").num_rows == 4
