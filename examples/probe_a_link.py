"""Check a link model with a probe (docs/scenarios.md, `[[udp]]`): a ping every 100 ms over a
10 Mbit/s, 10 ms path, first idle, then behind 12 Mbit/s of constant-bit-rate UDP cross
traffic that overflows the path's queue.

    python examples/probe_a_link.py [OUT_DIR]      # default: out/probe-a-link
"""

import sys
from pathlib import Path

import mpsched


def scenario(cross_mbps: float) -> dict:
    """Five seconds of one path, a probe on it, and CBR cross traffic if ``cross_mbps`` > 0."""
    udp = [{"name": "ping", "kind": "probe", "path": "p", "interval_ms": 100}]
    if cross_mbps > 0:
        udp.append({"name": "cross", "kind": "cbr", "path": "p", "rate_mbps": cross_mbps})
    return {
        "sim": {"name": "probe-a-link", "duration_s": 5},
        # 10 Mbit/s, 10 ms one way, a queue of 50 full-size packets (60 ms at the link rate).
        "paths": [{"name": "p", "rate_mbps": 10, "delay_ms": 10, "queue_packets": 50}],
        "udp": udp,
    }


def main(out: Path) -> None:
    # Idle: every probe's one-way delay is its serialization (84 bytes at 10 Mbit/s: 67.2 µs)
    # plus the propagation delay, to the nanosecond.
    idle = mpsched.run(scenario(0))
    # (The probe sent at the run's last instant is still in flight: its owd_ns is null.)
    owd = {d for d in idle.probes.column("owd_ns").to_pylist() if d is not None}
    print(f"idle link: one-way delays {sorted(owd)} ns (expected {10_000_000 + 67_200})")

    # Behind 12 Mbit/s of cross traffic the queue fills: the probe waits its sojourn (about
    # 50 packets x 1.2 ms = 60 ms), and the cross traffic loses what the link cannot carry
    # (so do probes that find the queue's 50 places taken: `lost`).
    busy = mpsched.run_to_dir(scenario(12), out)
    probes = busy.probes.to_pandas()
    print(probes[["seq", "send_ns", "owd_ns", "rtt_ns", "lost"]].tail(5).to_string(index=False))
    cols = ["name", "packets_sent", "packets_lost", "loss_rate", "received_mbps", "owd_p50_ms"]
    print(busy.udp_flows.to_pandas()[cols].to_string(index=False))
    written = sorted(p.name for p in out.iterdir())
    print(f"wrote {', '.join(written)} in {out}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("out/probe-a-link"))
