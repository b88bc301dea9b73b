"""``mpsched emulate``: one scenario on the machine's own TCP/MPTCP through the emulated links.
Set-up (topology.py), flows as real sockets (agent.py), then the simulator's tables (tables.py).
"""

import json
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional

from ..results import Results
from . import plan as planning
from . import tables
from .topology import MptcpSetup, Topology, client_addr, server_addr

AGENT = str(Path(__file__).with_name("agent.py"))
#: Seconds after the scenario's end within which every agent must have finished.
GRACE_S = 5.0
#: A run whose 99th-percentile departure lateness exceeds this (µs) is flagged.
DEFAULT_MAX_LATENESS_US = 500.0


@dataclass
class EmulateOptions:
    """Settings of one emulation run."""

    emulator: str
    seed: Optional[int] = None
    prefix: str = "mpsched"
    max_lateness_us: float = DEFAULT_MAX_LATENESS_US
    cc: Optional[str] = None
    kernel_scheduler: bool = False


def _agent_cmd(
    role: str, p: planning.FlowPlan, t0: float, end_s: float, sample_s: float, out: Path
) -> List[str]:
    cmd = [
        sys.executable,
        AGENT,
        role,
        "--port",
        str(p.port),
        "--t0",
        repr(t0),
        "--end",
        repr(end_s),
    ]
    cmd += ["--sample", repr(sample_s), "--out", str(out)]
    if p.mptcp:
        cmd.append("--mptcp")
    if p.size:
        cmd += ["--size", str(p.size)]
    if role == "client":
        first = p.paths[0]
        cmd += [
            "--src",
            client_addr(first),
            "--dst",
            server_addr(first),
            "--cc",
            p.cc,
            "--start",
            repr(p.start_s),
        ]
        if p.stop_s is not None:
            cmd += ["--stop", repr(p.stop_s)]
    return cmd


def _mptcp_setup(desc: Dict[str, Any], plans: List[planning.FlowPlan]) -> MptcpSetup:
    for p in plans:
        if p.mptcp:
            return MptcpSetup(paths=p.paths, backup=desc["flows"][p.index]["backup"])
    return MptcpSetup()


def _run_flows(
    topo: Topology, plans: List[planning.FlowPlan], end_s: float, sample_s: float, work: Path
) -> List[Dict]:
    """Starts the servers, the clock, then the clients; waits for all of them."""
    servers = [work / f"server-{p.index}.json" for p in plans]
    # The servers need t0, which the clock's start fixes: announce it a little ahead.
    t0 = time.monotonic() + 1.0
    procs = []
    for p, out in zip(plans, servers):
        cmd = _agent_cmd("server", p, t0, end_s, sample_s, out)
        procs.append(topo.spawn(cmd, ns=topo.server_ns, stdout=subprocess.PIPE))
    for pr in procs:
        _wait_listening(pr)
    time.sleep(max(0.0, t0 - time.monotonic()))
    topo.go()
    clients = []
    for p in plans:
        out = work / f"client-{p.index}.json"
        procs.append(
            topo.spawn(_agent_cmd("client", p, t0, end_s, sample_s, out), ns=topo.client_ns)
        )
        clients.append(out)
    deadline = t0 + end_s + GRACE_S
    for pr in procs:
        pr.wait(timeout=max(0.1, deadline - time.monotonic()))
    return [{"server": _load(s), "client": _load(c)} for s, c in zip(servers, clients)]


def _wait_listening(pr: Any) -> None:
    line = pr.stdout.readline().decode().strip()
    if line != "listening":
        raise RuntimeError(f"a flow's server did not start: {line or 'no answer'}")


def _load(path: Path) -> Dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def emulate(scenario: Path, opts: EmulateOptions) -> Results:
    """Runs ``scenario`` on the kernel; raises :class:`planning.UnsupportedError` (before any
    set-up) for a field the kernel engine cannot honour."""
    desc = planning.describe(opts.emulator, scenario, opts.seed)
    plans = planning.check_flows(desc, scenario, opts.cc, opts.kernel_scheduler)
    server_sysctl = planning.rcv_buf_sysctl(desc)
    end_s = desc["duration_ns"] / 1e9
    sample_s = desc["sample_ns"] / 1e9
    with tempfile.TemporaryDirectory(prefix="mpsched-emu-") as tmp:
        work = Path(tmp)
        stats_path = work / "emulator.json"
        topo = Topology(
            emulator=opts.emulator,
            scenario=str(scenario),
            n_paths=len(desc["paths"]),
            stats_path=str(stats_path),
            prefix=opts.prefix,
            seed=opts.seed,
            mptcp=_mptcp_setup(desc, plans),
            server_sysctl=server_sysctl,
            max_run_s=end_s + GRACE_S,
        )
        with topo:
            flows = _run_flows(topo, plans, end_s, sample_s, work)
            topo.finish_emulator()
            emu_stats = _load(stats_path)
    kernel = {
        "release": platform.release(),
        "mptcp_scheduler": planning._kernel_list("/proc/sys/net/mptcp/scheduler"),
    }
    return tables.build(desc, plans, flows, emu_stats, kernel, opts.max_lateness_us)
