"""Packet trace (--trace-packets) and pcap export: exact rows at exact times, drop reasons
that agree with the link counters, outputs unchanged when tracing is off, and tshark's
decoding of the exported pcap (installed from the distribution by scripts/ensure-tshark.sh)."""

import subprocess
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import mpsched
from mpsched import _core
from mpsched.api import run_to_dir
from mpsched.pcap import PcapError, write_pcap

REPO = Path(__file__).resolve().parents[2]

# 10 and 5 Mbit/s, 10 and 20 ms one-way: the handshake's times are exact sums of
# serialization (52-byte SYN / SYN-ACK: 41.6 us at 10 Mbit/s) and propagation.
TWO_PATHS = """
[sim]
name = "two"
duration_s = 5.0
seed = 1

[[paths]]
name = "wifi"
rate_mbps = 10.0
delay_ms = 10.0

[[paths]]
name = "lte"
rate_mbps = 5.0
delay_ms = 20.0
loss = { model = "bernoulli", p = 0.02 }

[[flows]]
name = "mp"
paths = ["wifi", "lte"]
scheduler = "roundrobin"
cc = "lia"
size_bytes = 200000
"""


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("trace") / "run"
    scenario = d.parent / "two.toml"
    scenario.write_text(TWO_PATHS)
    run_to_dir(str(scenario), d, trace_packets=["all"], pcap=True)
    return d


def rows(run_dir):
    return pq.read_table(run_dir / "packets.parquet").to_pylist()


def test_handshake_rows_exact(run_dir):
    r = rows(run_dir)
    got = [
        (x["t_ns"], x["event"], x["subflow"], x["to_server"], x["flags"], x["seq"], x["ack"])
        for x in r[:6]
    ]
    assert got == [
        (0, "send", 0, True, 1, 0, 0),  # MP_CAPABLE SYN
        (10_041_600, "arrive", 0, True, 1, 0, 0),  # 10 ms + 52 B at 10 Mbit/s
        (10_041_600, "send", 0, False, 3, 0, 1),  # SYN-ACK
        (20_083_200, "arrive", 0, False, 3, 0, 1),
        (20_083_200, "send", 1, True, 1 | 8, 0, 0),  # MP_JOIN SYN on the second path
        (20_083_200, "send", 0, True, 2, 1, 1),  # the third ACK
    ]
    first_data = r[6]
    # 1,448 less the 24-byte DSS option of a linux-profile multipath segment.
    assert (first_data["len"], first_data["dsn"], first_data["seq"]) == (1424, 0, 1)
    assert (first_data["scheduler"], first_data["reason"]) == ("roundrobin", "new")
    assert r[0]["flow"] == "mp" and r[0]["path"] == 0 and r[4]["path"] == 1


def test_drops_match_link_counters(run_dir):
    r = rows(run_dir)
    links = pq.read_table(run_dir / "links.parquet").to_pylist()
    drops = [x for x in r if x["event"] == "drop"]
    assert drops, "the lossy path drops packets"
    assert sum(x["drop_reason"] == "random_loss" for x in drops) == sum(
        lk["packets_dropped_loss"] for lk in links
    )
    assert sum(x["drop_reason"] == "queue_full" for x in drops) == sum(
        lk["packets_dropped_queue"] for lk in links
    )
    assert all(x["link"] is not None for x in drops)
    assert all(x["link"] is None and x["drop_reason"] == "" for x in r if x["event"] != "drop")


def test_data_sends_cover_the_transfer(run_dir):
    r = rows(run_dir)
    data = [
        x for x in r if x["to_server"] and x["len"] > 0 and x["event"] in ("send", "retransmit")
    ]
    covered = sorted({(x["dsn"], x["dsn"] + x["len"]) for x in data})
    end = 0
    for a, b in covered:
        assert a <= end
        end = max(end, b)
    assert end == 200_000
    new = sum(x["len"] for x in data if x["reason"] == "new")
    assert new == 200_000
    retx = [x for x in data if x["event"] == "retransmit"]
    assert retx and all(x["reason"] == "retransmission" for x in retx)


def test_outputs_identical_with_tracing_off(tmp_path, run_dir):
    scenario = tmp_path / "two.toml"
    scenario.write_text(TWO_PATHS)
    run_to_dir(str(scenario), tmp_path / "off")
    for name in mpsched.results.OUTPUT_FILES:
        assert (tmp_path / "off" / name).read_bytes() == (run_dir / name).read_bytes(), name
    assert not (tmp_path / "off" / "packets.parquet").exists()


def test_unknown_flow_is_an_error(tmp_path):
    scenario = tmp_path / "two.toml"
    scenario.write_text(TWO_PATHS)
    with pytest.raises(_core.ScenarioError, match=r'no flow named "nope" \(flows: mp; or "all"\)'):
        run_to_dir(str(scenario), tmp_path / "x", trace_packets=["nope"])


def test_export_refuses_a_run_without_trace(tmp_path):
    with pytest.raises(PcapError, match="no packet trace"):
        write_pcap(tmp_path / "packets.parquet", tmp_path / "x.pcap")


def test_snaplen_truncates_records(tmp_path, run_dir):
    n = write_pcap(run_dir / "packets.parquet", tmp_path / "s.pcap", snaplen=96)
    data = (tmp_path / "s.pcap").read_bytes()
    assert data[:4] == bytes.fromhex("4d3cb2a1")  # nanosecond pcap, little-endian
    assert int.from_bytes(data[20:24], "little") == 101  # LINKTYPE_RAW
    off, count = 24, 0
    while off < len(data):
        incl, orig = (
            int.from_bytes(data[off + 8 : off + 12], "little"),
            int.from_bytes(data[off + 12 : off + 16], "little"),
        )
        assert incl == min(96, orig)
        off, count = off + 16 + incl, count + 1
    assert count == n == sum(x["event"] in ("send", "retransmit") for x in rows(run_dir))


def tshark():
    p = subprocess.run([str(REPO / "scripts" / "ensure-tshark.sh")], capture_output=True, text=True)
    if p.returncode != 0:
        pytest.skip(f"tshark unavailable: {p.stderr.strip()}")
    return p.stdout.strip().splitlines()[-1]


def fields(pcap, *names):
    cmd = [tshark(), "-r", str(pcap), "-o", "mptcp.analyze_mappings:TRUE", "-T", "fields"]
    for n in names:
        cmd += ["-e", n]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return [line.split("\t") for line in out.splitlines()]


def test_tshark_decodes_the_mptcp_connection(run_dir):
    pcap = run_dir / "packets.pcap"
    got = fields(
        pcap,
        "tcp.stream",
        "mptcp.stream",
        "tcp.len",
        "tcp.options.mptcp.subtype",
        "mptcp.dss.dsn",
        "_ws.malformed",
    )
    r = [x for x in rows(run_dir) if x["event"] in ("send", "retransmit")]
    assert len(got) == len(r)
    assert not any(g[5] for g in got), "no malformed packet"
    # One TCP stream per subflow, both in MPTCP connection 0 (MP_JOIN's token matched).
    assert {g[0] for g in got} == {"0", "1"}
    assert {g[1] for g in got if g[1]} == {"0"}
    subtypes = {int(s) for g in got for s in g[3].split(",") if s}
    assert {0, 1, 2} <= subtypes  # MP_CAPABLE, MP_JOIN, DSS
    # Data segments per subflow: as many as the trace's client sends with payload.
    for sf in (0, 1):
        want = sum(1 for x in r if x["to_server"] and x["len"] > 0 and x["subflow"] == sf)
        assert (
            sum(1 for g in got if g[0] == str(sf) and int(g[2]) > 0 and g[3].startswith("2"))
            == want
        )
    # Relative DSNs (first data byte = 1) cover the 200 kB transferred.
    spans = sorted({(int(g[4]), int(g[4]) + int(g[2])) for g in got if g[4] and int(g[2]) > 0})
    end = 1
    for a, b in spans:
        assert a <= end
        end = max(end, b)
    assert end == 200_001


def test_tshark_reports_no_errors(run_dir):
    out = subprocess.run(
        [tshark(), "-r", str(run_dir / "packets.pcap"), "-q", "-z", "expert,error"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "Errors" not in out and "Malformed" not in out


def test_cli_export_pcap(tmp_path, run_dir):
    from typer.testing import CliRunner

    from mpsched.cli.main import app

    res = CliRunner().invoke(
        app, ["export", "pcap", str(run_dir), "--out", str(tmp_path / "x.pcap")]
    )
    assert res.exit_code == 0, res.output
    assert (tmp_path / "x.pcap").read_bytes() == (run_dir / "packets.pcap").read_bytes()
