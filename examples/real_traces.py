"""Real traces (docs/tutorials/real-traces.md): turn a throughput log into a mahimahi trace,
use it for a path, and check what the link delivers.

    python examples/real_traces.py [OUT_DIR]          # default: out/real-traces
"""

import sys
from pathlib import Path

import mpsched

out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("out/real-traces")
out.mkdir(parents=True, exist_ok=True)


def mahimahi_lines(mbps_per_interval, interval_ms):
    """Delivery opportunities (one 1500-byte packet each, time in ms) for a throughput log:
    one value in Mbit/s per ``interval_ms``. Fractions of a packet carry over to the next
    interval, so the trace's mean rate is the log's."""
    lines, carry = [], 0.0
    for i, mbps in enumerate(mbps_per_interval):
        packets = mbps * 1e6 / 8 / 1500 * interval_ms / 1000 + carry
        whole = int(packets)
        carry = packets - whole
        for k in range(whole):
            lines.append(i * interval_ms + (k * interval_ms) // max(whole, 1))
    lines.append(len(mbps_per_interval) * interval_ms)  # the trace loops with this period
    return lines


# A measured LTE log (Mbit/s every 500 ms): a good start, a dip, a 1 s outage, recovery.
log = [8.0, 9.5, 7.0, 6.0, 2.0, 1.0, 0.0, 0.0, 3.0, 6.5, 8.0, 9.0]
trace = out / "lte.mahimahi"
trace.write_text("\n".join(str(t) for t in mahimahi_lines(log, 500)) + "\n")

scenario = out / "traced.toml"
scenario.write_text(
    f"""[sim]
name = "traced"
duration_s = 6.0
sample_interval_ms = 500

[[paths]]
name = "wifi"
rate_mbps = 5.0
delay_ms = 15.0

[[paths]]
name = "lte"
trace = "{trace.name}"      # the data direction; relative to this file's directory
rate_mbps = 10.0             # the ACK direction (a fixed rate; or `trace_reverse`)
delay_ms = 40.0

[[flows]]
name = "mptcp"
paths = ["wifi", "lte"]
cc = "cubic"
"""
)

res = mpsched.run(scenario)
links = res.links.to_pandas()
print(links[["name", "bytes_delivered", "utilization"]].to_string(index=False))
ts = res.timeseries.to_pandas()
lte = ts[ts["subflow"] == 1][["time_s", "goodput_mbps"]]
print(lte.round(2).to_string(index=False))
