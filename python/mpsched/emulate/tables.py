"""The kernel run's results in the simulator's tables (``mpsched run``'s columns and types),
so ``compare``, ``plot`` and ``report`` read them. What the kernel does not report (the
simulator's slot statistics, out-of-order bytes, ...) is null, never invented."""

from typing import Any, Dict, List, Optional, Sequence

from ..results import Results, table_from_columns
from .plan import FlowPlan

#: ``TCP_INFINITE_SSTHRESH`` (include/net/tcp.h): no slow-start threshold yet.
INFINITE_SSTHRESH = 0x7FFFFFFF

_F, _I, _S, _B = "float64", "int64", "string", "bool"
FLOW_SCHEMA = {
    "name": _S, "path": _S, "subflows": _I, "cc": _S, "scheduler": _S, "start_s": _F, "size_bytes": _F,
    "completed": _B, "fct_s": _F, "bytes_delivered": _I, "goodput_mbps": _F, "retransmits": _I, "losses": _I,
    "packets_dropped": _I, "rto_count": _I, "fast_recoveries": _I, "srtt_ms": _F, "energy_j": _F, "transfers": _I,
    "mean_transfer_s": _F, "reinjected_bytes": _I, "redundant_bytes": _I, "opportunistic_retransmissions": _I,
    "penalizations": _I, "duplicate_bytes": _I, "mean_ooo_bytes": _F, "rwnd_full_s": _F, "send_blocked_s": _F,
    "slots": _I, "slot_bw_mbps": _F, "slot_srtt_ms": _F,
}  # fmt: skip
SUBFLOW_SCHEMA = {
    "flow": _S, "subflow": _I, "path": _S, "backup": _B, "established": _B, "bytes_sent": _I,
    "bytes_retransmitted": _I, "bytes_acked": _I, "segments_lost": _I, "rto_count": _I, "fast_recoveries": _I,
    "srtt_ms": _F, "min_rtt_ms": _F, "cwnd_bytes": _I, "slots": _I, "slot_bw_mbps": _F, "slot_srtt_ms": _F,
}  # fmt: skip
SERIES_SCHEMA = {
    "time_s": _F, "flow": _S, "subflow": _I, "cwnd_bytes": _I, "ssthresh_bytes": _F, "srtt_ms": _F,
    "rttvar_ms": _F, "rto_ms": _F, "inflight_bytes": _I, "throughput_mbps": _F, "goodput_mbps": _F,
    "flow_goodput_mbps": _F, "ooo_bytes": _I, "rwnd_full_frac": _F, "losses": _I, "retransmits": _I,
    "slots": _I, "slot_bw_mbps": _F, "slot_srtt_ms": _F,
}  # fmt: skip
LINK_SCHEMA = {
    "name": _S, "packets_sent": _I, "bytes_delivered": _I, "packets_dropped_queue": _I,
    "packets_dropped_loss": _I, "packets_dropped_outage": _I, "max_queue_bytes": _I, "utilization": _F,
}  # fmt: skip


def _columns(rows: Sequence[Dict[str, Any]], schema: Dict[str, str]) -> Dict[str, List[Any]]:
    return {k: [r.get(k) for r in rows] for k in schema}


def path_of_addr(addr: str) -> Optional[int]:
    """Path index of a client address 10.200.<path>.1 (topology.client_addr)."""
    parts = addr.split(".")
    return int(parts[2]) if len(parts) == 4 and parts[:2] == ["10", "200"] else None


def _subflow_row(
    flow: str, k: int, path: str, backup: bool, info: Dict[str, int]
) -> Dict[str, Any]:
    mss = info["snd_mss"] or 1
    return {
        "flow": flow, "subflow": k, "path": path, "backup": backup, "established": True,
        "bytes_sent": info["bytes_sent"], "bytes_retransmitted": info["bytes_retrans"],
        "bytes_acked": info["bytes_acked"], "segments_lost": info["total_retrans"], "rto_count": info["total_rto"],
        "srtt_ms": info["rtt_us"] / 1e3, "min_rtt_ms": info["min_rtt_us"] / 1e3, "cwnd_bytes": info["snd_cwnd"] * mss,
    }  # fmt: skip


def _by_path(subflows: Sequence[Dict[str, Any]]) -> Dict[int, Dict[str, Any]]:
    """The samples' subflows keyed by path (a path's subflow, re-created, keeps its key)."""
    out = {}
    for s in subflows:
        p = path_of_addr(s.get("addr", ""))
        if p is not None:
            out[p] = s
    return out


def _series_rows(desc: Dict, p: FlowPlan, run: Dict, sample_s: float) -> List[Dict[str, Any]]:
    rows: List[Dict[str, Any]] = []
    prev: Dict[int, Dict[str, int]] = {}
    recv = run.get("server", {}).get("samples", [])
    for sample in run.get("client", {}).get("samples", []):
        k_recv = int(round(sample["t"] / sample_s)) - 1
        got = (
            recv[k_recv] - (recv[k_recv - 1] if k_recv > 0 else 0)
            if 0 <= k_recv < len(recv)
            else None
        )
        flow_gp = got * 8 / sample_s / 1e6 if got is not None else None
        for path, s in sorted(_by_path(sample["subflows"]).items()):
            if path not in p.paths:
                continue
            mss = s["snd_mss"] or 1
            before = prev.get(path, {"bytes_sent": 0, "bytes_acked": 0})
            ssth = s["snd_ssthresh"]
            rows.append({
                "time_s": sample["t"], "flow": p.name, "subflow": p.paths.index(path), "cwnd_bytes": s["snd_cwnd"] * mss,
                "ssthresh_bytes": None if ssth >= INFINITE_SSTHRESH else float(ssth * mss),
                "srtt_ms": s["rtt_us"] / 1e3, "rttvar_ms": s["rttvar_us"] / 1e3, "rto_ms": s["rto_us"] / 1e3,
                "inflight_bytes": s["unacked"] * mss,
                "throughput_mbps": (s["bytes_sent"] - before["bytes_sent"]) * 8 / sample_s / 1e6,
                "goodput_mbps": (s["bytes_acked"] - before["bytes_acked"]) * 8 / sample_s / 1e6,
                "flow_goodput_mbps": flow_gp, "losses": s["total_retrans"], "retransmits": s["total_retrans"],
            })  # fmt: skip
            prev[path] = s
    return rows


def _last_subflows(run: Dict) -> Dict[int, Dict[str, Any]]:
    """Per path, the subflow's last reading (the final one, or the last sample that had it)."""
    last: Dict[int, Dict[str, Any]] = {}
    client = run.get("client", {})
    for sample in client.get("samples", []):
        last.update(_by_path(sample["subflows"]))
    last.update(_by_path(client.get("final", [])))
    return last


def _flow_row(
    desc: Dict, p: FlowPlan, run: Dict, end_s: float, sub_rows: List[Dict], drops: Dict[str, int]
) -> Dict[str, Any]:
    names = [desc["paths"][i]["name"] for i in p.paths]
    backup = desc["flows"][p.index]["backup"]
    last = _last_subflows(run)
    subs = [
        _subflow_row(p.name, k, names[k], backup[k], last[path])
        for k, path in enumerate(p.paths)
        if path in last
    ]
    sub_rows.extend(subs)
    server = run.get("server", {})
    delivered = int(server.get("bytes", 0))
    done = server.get("done_s")
    stop = done if done is not None else (min(p.stop_s, end_s) if p.stop_s is not None else end_s)
    active = stop - p.start_s
    srtts = [s["srtt_ms"] for s in subs]
    return {
        "name": p.name, "path": "+".join(names), "subflows": len(p.paths), "cc": p.cc_label,
        "scheduler": p.scheduler, "start_s": p.start_s, "size_bytes": float(p.size) if p.size else None,
        "completed": done is not None, "fct_s": done - p.start_s if done is not None else None,
        "bytes_delivered": delivered, "goodput_mbps": delivered * 8 / active / 1e6 if active > 0 else 0.0,
        "retransmits": sum(s["segments_lost"] for s in subs), "losses": sum(s["segments_lost"] for s in subs),
        "rto_count": sum(s["rto_count"] for s in subs), "srtt_ms": min(srtts) if srtts else None,  # the simulator's: the smallest subflow srtt
        "energy_j": 0.0, "transfers": int(done is not None),
        "mean_transfer_s": done - p.start_s if done is not None else None,
        "reinjected_bytes": (run.get("client", {}).get("mptcp") or {}).get("bytes_retrans"),
        "packets_dropped": drops.get(str(p.port), 0),
    }  # fmt: skip


def lateness_flag(emu: Dict[str, Any], max_p99_us: float) -> Optional[str]:
    """Why the run's timing is not trusted (p99 lateness above the threshold), or None."""
    lat = emu.get("lateness", {})
    p99 = lat.get("p99_us")
    if p99 is None:
        return "the emulator wrote no counters"
    if p99 > max_p99_us:
        return f"p99 departure lateness {p99:.0f} us > {max_p99_us:.0f} us"
    return None


def build(
    desc: Dict, plans: List[FlowPlan], runs: List[Dict], emu: Dict, kernel: Dict, max_p99_us: float
) -> Results:
    """The run's :class:`Results` (summary with an ``emulation`` section, the four tables)."""
    end_s = desc["duration_ns"] / 1e9
    sample_s = desc["sample_ns"] / 1e9
    sub_rows: List[Dict] = []
    drops = emu.get("data_drops_by_port", {})
    flow_rows = [_flow_row(desc, p, r, end_s, sub_rows, drops) for p, r in zip(plans, runs)]
    series = [row for p, r in zip(plans, runs) for row in _series_rows(desc, p, r, sample_s)]
    links = emu.get("links", [])
    flag = lateness_flag(emu, max_p99_us)
    errors = [
        f"{p.name}: {r['client']['error']}"
        for p, r in zip(plans, runs)
        if r.get("client", {}).get("error")
    ]
    summary = {
        "scenario": desc["name"], "seed": desc["seed"], "profile": desc["profile"], "engine": "kernel",
        "duration_s": end_s, "end_s": end_s, "flows": flow_rows, "subflows": sub_rows, "links": links,
        "interfaces": [], "fairness": _fairness(flow_rows), "stats": {"events": 0, "packets": 0, "sim_seconds": end_s},
        "emulation": {
            "kernel": kernel, "lateness": emu.get("lateness"), "flagged": flag is not None, "flag": flag,
            "max_p99_lateness_us": max_p99_us, "sched_fifo": emu.get("sched_fifo"),
            "max_packet_bytes": emu.get("max_packet_bytes"), "packets_read": emu.get("packets_read"),
            "write_errors": emu.get("write_errors"), "ran_s": emu.get("ran_s"), "flow_errors": errors,
            "mptcp_info": {p.name: r.get("client", {}).get("mptcp") for p, r in zip(plans, runs) if p.mptcp},
        },
    }  # fmt: skip
    return Results(
        summary=summary,
        resolved_toml=desc["resolved_toml"],
        flows=table_from_columns(_columns(flow_rows, FLOW_SCHEMA), FLOW_SCHEMA),
        subflows=table_from_columns(_columns(sub_rows, SUBFLOW_SCHEMA), SUBFLOW_SCHEMA),
        timeseries=table_from_columns(_columns(series, SERIES_SCHEMA), SERIES_SCHEMA),
        links=table_from_columns(_columns(links, LINK_SCHEMA), LINK_SCHEMA),
    )


def _fairness(rows: List[Dict]) -> Dict[str, Any]:
    """Jain's index of the goodputs (as the simulator's summary)."""

    def jain(xs: List[float]) -> Optional[float]:
        s2 = sum(x * x for x in xs)
        return (sum(xs) ** 2) / (len(xs) * s2) if xs and s2 > 0 else None

    mp = [r["goodput_mbps"] for r in rows if r["subflows"] > 1]
    return {
        "all_flows": len(rows), "jain_all": jain([r["goodput_mbps"] for r in rows]),
        "jain_mptcp": jain(mp), "metric": "goodput_mbps", "mptcp_flows": len(mp),
    }  # fmt: skip
