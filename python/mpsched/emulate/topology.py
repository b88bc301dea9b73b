"""The emulated network's plumbing: two network namespaces (client, server), the link emulator
process (``mpsched-emu``) holding one TUN device per path in each, addresses per path, policy
routing so each subflow leaves by its own path, and the upstream MPTCP path manager's endpoints
and limits (``ip mptcp``, ip-mptcp(8); kernel side: net/mptcp/pm_netlink.c,
Documentation/networking/mptcp.rst).

Everything is undone on exit, error, SIGINT or SIGTERM: only the processes started here are
signalled, and the namespaces are deleted. A set-up whose namespaces already exist is refused.
"""

import os
import select
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence

#: Addresses: path i has 10.200.i.1 at the client and 10.200.i.2 at the server (/24).
SUBNET = "10.200"
#: TUN devices are named <TUN_PREFIX><path index> in both namespaces.
TUN_PREFIX = "mp"
#: Policy-routing table of path i at the client.
TABLE_BASE = 100
#: Link MTU: the simulator's packets are at most 1500 bytes (IP header included).
MTU = 1500


class TopologyError(RuntimeError):
    """The emulated network could not be set up (one line: what failed)."""


def client_addr(path: int) -> str:
    """The client's address on path ``path``."""
    return f"{SUBNET}.{path}.1"


def server_addr(path: int) -> str:
    """The server's address on path ``path``."""
    return f"{SUBNET}.{path}.2"


def unavailable_reason() -> Optional[str]:
    """Why namespaces and TUN devices cannot be used here, or None."""
    if os.geteuid() != 0:
        return "needs root (network namespaces and TUN devices)"
    if not os.path.exists("/dev/net/tun"):
        return "no /dev/net/tun"
    if shutil.which("ip") is None:
        return "no `ip` command (iproute2)"
    if not Path("/proc/sys/net/mptcp/enabled").exists():
        return "the kernel has no MPTCP (/proc/sys/net/mptcp/enabled)"
    try:
        os.close(os.open("/dev/net/tun", os.O_RDWR))
    except OSError as e:
        return f"cannot open /dev/net/tun: {e.strerror}"
    probe = f"mpsched-probe-{os.getpid()}"
    r = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True, timeout=10)
    if r.returncode != 0:
        return f"cannot create a network namespace: {r.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True, timeout=10)
    return None


def _ip(*args: str, ns: Optional[str] = None) -> None:
    cmd = ["ip"] + (["-n", ns] if ns else []) + list(args)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
    if r.returncode != 0:
        raise TopologyError(f"`{' '.join(cmd)}` failed: {r.stderr.strip()}")


def _sysctl(ns: str, settings: Dict[str, str]) -> None:
    args = [f"{k}={v}" for k, v in settings.items()]
    cmd = ["ip", "netns", "exec", ns, "sysctl", "-q", "-w"] + args
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
    if r.returncode != 0:
        raise TopologyError(f"`{' '.join(cmd)}` failed: {r.stderr.strip()}")


def existing_namespaces() -> List[str]:
    """Names of the named network namespaces (``/run/netns``)."""
    d = Path("/run/netns")
    return sorted(p.name for p in d.iterdir()) if d.is_dir() else []


@dataclass
class MptcpSetup:
    """Upstream MPTCP configuration: the paths of the multipath flows (first: the initial
    subflow's), which are backup, and the receive-buffer cap (``tcp_rmem`` max) if any."""

    paths: Sequence[int] = ()
    backup: Sequence[bool] = ()


@dataclass
class Topology:
    """Namespaces, emulator and addressing of one emulation run (a context manager)."""

    emulator: str
    scenario: str
    n_paths: int
    stats_path: str
    prefix: str = "mpsched"
    seed: Optional[int] = None
    mptcp: MptcpSetup = field(default_factory=MptcpSetup)
    server_sysctl: Dict[str, str] = field(default_factory=dict)
    max_run_s: float = 600.0
    children: List[subprocess.Popen] = field(default_factory=list)
    created: List[str] = field(default_factory=list)
    emu: Optional[subprocess.Popen] = None
    t0: float = 0.0

    @property
    def client_ns(self) -> str:
        """The client's namespace."""
        return f"{self.prefix}-client"

    @property
    def server_ns(self) -> str:
        """The server's namespace."""
        return f"{self.prefix}-server"

    def __enter__(self) -> "Topology":
        self._old = {s: signal.signal(s, _raise_interrupt) for s in (signal.SIGTERM,)}
        try:
            self._setup()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _setup(self) -> None:
        taken = [n for n in (self.client_ns, self.server_ns) if n in existing_namespaces()]
        if taken:
            raise TopologyError(
                f"network namespace {taken[0]} exists (another emulation running, or left over: "
                f"`ip netns del {taken[0]}`)"
            )
        for ns in (self.client_ns, self.server_ns):
            _ip("netns", "add", ns)
            self.created.append(ns)
            _ip("link", "set", "lo", "up", ns=ns)
            _sysctl(ns, _base_sysctl())
        if self.server_sysctl:
            _sysctl(self.server_ns, self.server_sysctl)
        self._start_emulator()
        for i in range(self.n_paths):
            self._address_path(i)
        self._configure_mptcp()

    def _start_emulator(self) -> None:
        cmd = [self.emulator, "--scenario", self.scenario, "--client-ns", self.client_ns]
        cmd += [
            "--server-ns",
            self.server_ns,
            "--stats",
            self.stats_path,
            "--tun-prefix",
            TUN_PREFIX,
        ]
        cmd += ["--max-run-s", str(self.max_run_s)]
        if self.seed is not None:
            cmd += ["--seed", str(self.seed)]
        self.emu = self.spawn(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        line = _read_line(self.emu, timeout=10.0)
        if line != "ready":
            err = (
                self.emu.stderr.read().decode(errors="replace").strip()
                if self.emu.poll() is not None
                else ""
            )
            raise TopologyError(f"the link emulator did not start: {err or line or 'no answer'}")

    def _address_path(self, i: int) -> None:
        dev = f"{TUN_PREFIX}{i}"
        for ns, addr in ((self.client_ns, client_addr(i)), (self.server_ns, server_addr(i))):
            _ip("link", "set", dev, "mtu", str(MTU), "up", ns=ns)
            _ip("addr", "add", f"{addr}/24", "dev", dev, ns=ns)
        # Source-address policy routing: whatever the destination, a packet from path i's
        # address leaves by path i (the extra subflows go to the server's first address).
        _ip("rule", "add", "from", client_addr(i), "table", str(TABLE_BASE + i), ns=self.client_ns)
        _ip("route", "add", "default", "dev", dev, "table", str(TABLE_BASE + i), ns=self.client_ns)

    def _configure_mptcp(self) -> None:
        """In-kernel path manager: one ``subflow`` endpoint per extra path at the client, which
        then opens a subflow from that address to the server's initial address
        (``mptcp_pm_create_subflow_or_signal_addr``); limits allow them on both sides."""
        paths = list(self.mptcp.paths)
        extra = max(0, len(paths) - 1)
        for ns in (self.client_ns, self.server_ns):
            _ip("mptcp", "endpoint", "flush", ns=ns)
            _ip(
                "mptcp",
                "limits",
                "set",
                "subflows",
                str(min(extra, 8)),
                "add_addr_accepted",
                "0",
                ns=ns,
            )
        for k, p in enumerate(paths[1:], start=1):
            flags = ["subflow"] + (["backup"] if self.mptcp.backup[k] else [])
            _ip(
                "mptcp",
                "endpoint",
                "add",
                client_addr(p),
                "dev",
                f"{TUN_PREFIX}{p}",
                "id",
                str(k),
                *flags,
                ns=self.client_ns,
            )

    def spawn(self, cmd: Sequence[str], ns: Optional[str] = None, **kw: object) -> subprocess.Popen:
        """Starts ``cmd`` (in namespace ``ns``) and records it for cleanup."""
        full = (["ip", "netns", "exec", ns] if ns else []) + list(cmd)
        p = subprocess.Popen(full, **kw)  # type: ignore[call-overload]
        self.children.append(p)
        return p

    def go(self) -> float:
        """Starts the emulated clock; returns its time 0 on ``time.monotonic``."""
        assert self.emu is not None and self.emu.stdin is not None
        self.emu.stdin.write(b"go\n")
        self.emu.stdin.flush()
        self.t0 = time.monotonic()
        return self.t0

    def finish_emulator(self, timeout: float = 10.0) -> None:
        """Lets the emulator write its counters (closing its stdin ends the run) and waits."""
        if self.emu is None or self.emu.poll() is not None:
            return
        if self.emu.stdin is not None:
            self.emu.stdin.close()
        self.emu.wait(timeout=timeout)

    def close(self) -> None:
        """Stops every process started here (SIGTERM, then SIGKILL) and deletes the namespaces."""
        for p in self.children:
            if not _reaped(p):
                p.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 3.0
        for p in self.children:
            if not _reap(p, deadline):
                p.kill()
                _reap(p, time.monotonic() + 10.0)
        self.children.clear()
        for ns in self.created:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=10)
        self.created.clear()
        for s, h in getattr(self, "_old", {}).items():
            signal.signal(s, h)
        self._old = {}


def _base_sysctl() -> Dict[str, str]:
    """Per-namespace settings: IPv4 only, no reverse-path filter (the server answers a subflow
    on the device it came in), MPTCP on, no cached metrics between runs."""
    return {
        "net.ipv6.conf.all.disable_ipv6": "1",
        "net.ipv6.conf.default.disable_ipv6": "1",
        "net.ipv4.conf.all.rp_filter": "0",
        "net.ipv4.conf.default.rp_filter": "0",
        "net.mptcp.enabled": "1",
        "net.ipv4.tcp_no_metrics_save": "1",
    }


def _reaped(p: subprocess.Popen) -> bool:
    """Whether ``p`` has exited, reaping it if so. By ``os.waitpid`` and not ``p.poll()`` /
    ``p.wait()``: the SIGTERM handler raises KeyboardInterrupt wherever the main thread is, and
    one raised inside ``p.wait()`` just after it took ``Popen``'s internal ``_waitpid_lock`` can
    leave that lock held, so that any later ``p.wait()`` blocks for ever (seen once in CI: the
    run never exited and its namespaces stayed)."""
    if p.returncode is not None:
        return True
    try:
        pid, status = os.waitpid(p.pid, os.WNOHANG)
    except ChildProcessError:  # reaped already
        p.returncode = p.returncode if p.returncode is not None else -1
        return True
    if pid == p.pid:
        p.returncode = os.waitstatus_to_exitcode(status)
        return True
    return False


def _reap(p: subprocess.Popen, deadline: float) -> bool:
    """Waits until ``p`` exits or ``deadline`` (monotonic) passes; whether it exited."""
    while not _reaped(p):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)
    return True


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def _read_line(p: subprocess.Popen, timeout: float) -> str:
    """One line of ``p``'s stdout within ``timeout`` seconds ('' if none)."""
    assert p.stdout is not None
    r, _, _ = select.select([p.stdout], [], [], timeout)
    if not r:
        return ""
    return p.stdout.readline().decode(errors="replace").strip()
