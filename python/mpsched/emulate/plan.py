"""What of a scenario the kernel engine can run, checked before anything is set up: each
unsupported field is a one-line error naming it (exit 2)."""

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import tomllib


class UnsupportedError(ValueError):
    """A scenario field the kernel engine cannot honour (one line, naming the field)."""


#: Congestion controllers by scenario label → kernel name (tcp_available_congestion_control).
KERNEL_CC = {"reno": "reno", "newreno": "reno", "cubic": "cubic", "bbr": "bbr"}


def describe(emulator: str, scenario: Path, seed: Optional[int]) -> Dict[str, Any]:
    """The resolved scenario as the emulator sees it (``mpsched-emu --describe``)."""
    cmd = [emulator, "--describe", "--scenario", str(scenario)] + (
        ["--seed", str(seed)] if seed is not None else []
    )
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise ValueError(r.stderr.strip().removeprefix("mpsched-emu: "))
    return json.loads(r.stdout)


def _kernel_list(path: str) -> List[str]:
    try:
        return Path(path).read_text().split()
    except OSError:
        return []


def _explicit_schedulers(scenario: Path) -> Dict[str, str]:
    """Flow name → scheduler written in the file (a flow without one gets the kernel's)."""
    try:
        raw = tomllib.loads(scenario.read_text())
    except (OSError, tomllib.TOMLDecodeError):
        return {}
    return {f.get("name", ""): f["scheduler"] for f in raw.get("flows", []) if "scheduler" in f}


def check_udp(scenario: Path) -> None:
    """:class:`UnsupportedError` naming the first ``[[udp]]`` flow: constant-bit-rate, on/off
    and probe flows run in the simulator only (read from the file, so the check needs neither
    the emulator nor the kernel)."""
    try:
        raw = tomllib.loads(scenario.read_text())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return  # reported when the scenario is resolved
    udp = raw.get("udp")
    if isinstance(udp, list) and udp:
        kind = udp[0].get("kind") if isinstance(udp[0], dict) else None
        raise UnsupportedError(
            f"udp[0].kind: {kind!r} flows (UDP sources and probes) need the simulator "
            "(`mpsched run`); the kernel engine runs TCP and MPTCP flows only"
        )


@dataclass
class FlowPlan:
    """One flow as real sockets."""

    index: int
    name: str
    paths: List[int]
    mptcp: bool
    cc: str
    cc_label: str
    scheduler: str
    start_s: float
    stop_s: Optional[float]
    size: Optional[int]
    port: int


def check_flows(
    desc: Dict[str, Any],
    scenario: Path,
    cc_override: Optional[str] = None,
    kernel_scheduler: bool = False,
) -> List[FlowPlan]:
    """The flows as sockets, or :class:`UnsupportedError` naming the first field that is not
    possible with the machine's kernel. ``cc_override`` replaces every flow's congestion
    control; ``kernel_scheduler`` gives every multipath flow the kernel's scheduler whatever
    the file says."""
    check_udp(scenario)
    available_cc = _kernel_list("/proc/sys/net/ipv4/tcp_available_congestion_control") or [
        "reno",
        "cubic",
    ]
    sched = (_kernel_list("/proc/sys/net/mptcp/scheduler") or ["default"])[0]
    available_sched = _kernel_list("/proc/sys/net/mptcp/available_schedulers") or [sched]
    explicit = _explicit_schedulers(scenario)
    plans = []
    mp_paths: Optional[Sequence[int]] = None
    for i, f in enumerate(desc["flows"]):
        field = f"flows[{i}]"
        if cc_override is not None:
            f = dict(f, cc=cc_override)
        cc = KERNEL_CC.get(f["cc"])
        if cc is None or (cc != "reno" and cc not in available_cc and cc != "bbr"):
            raise UnsupportedError(
                f"{field}.cc: {f['cc']!r} is not a kernel congestion control here (kernel: "
                f"{', '.join(available_cc)}; `--cc` overrides)"
            )
        if f["app"]["kind"] != "greedy":
            raise UnsupportedError(
                f"{field}.app: only bulk or sized transfers run on the kernel engine, not {f['app']['kind']}"
            )
        if f["repeat"] > 1:
            raise UnsupportedError(
                f"{field}.repeat: repeated transfers are not supported by the kernel engine"
            )
        if f["decision"]:
            raise UnsupportedError(
                f"{field}.decision_interval: per-interval decisions need the simulator"
            )
        mptcp = len(f["paths"]) > 1
        scheduler = f["scheduler"]
        if mptcp:
            want = None if kernel_scheduler else explicit.get(f["name"])
            if want is not None and want not in available_sched:
                raise UnsupportedError(
                    f"{field}.scheduler: the kernel has no MPTCP scheduler {want!r} (available: "
                    f"{', '.join(available_sched)}; `--kernel-scheduler` uses the kernel's)"
                )
            scheduler = f"kernel-{want or sched}"
            if mp_paths is not None and list(mp_paths) != list(f["paths"]):
                raise UnsupportedError(
                    f"{field}.paths: every multipath flow must use the same paths (the kernel's endpoints are per host)"
                )
            mp_paths = f["paths"]
        stop = f["stop_ns"] / 1e9 if f["stop_ns"] is not None else None
        plans.append(
            FlowPlan(
                i,
                f["name"],
                list(f["paths"]),
                mptcp,
                cc,
                f["cc"],
                scheduler,
                f["start_ns"] / 1e9,
                stop,
                f["size"],
                5000 + i,
            )
        )
    for j, e in enumerate(desc["events"]):
        if e["kind"] in ("backup", "active"):
            raise UnsupportedError(
                f"events[{j}].kind: {e['kind']!r} events are not supported by the kernel engine"
            )
    return plans


def rcv_buf_sysctl(desc: Dict[str, Any]) -> Dict[str, str]:
    """A receive buffer other than the default caps ``tcp_rmem``'s maximum in the server's
    namespace (auto-tuning stays on, as in ``tcp_rcv_space_adjust``); flows must agree."""
    bufs = {f["rcv_buf"] for f in desc["flows"]}
    if len(bufs) > 1:
        raise UnsupportedError(
            "flows[].rcv_buf: every flow must have the same receive buffer on the kernel engine"
        )
    buf = bufs.pop() if bufs else desc["default_rcv_buf"]
    if buf == desc["default_rcv_buf"]:
        return {}
    return {"net.ipv4.tcp_rmem": f"4096 {min(131072, buf)} {buf}"}
