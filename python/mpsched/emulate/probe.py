"""Accuracy probes of the emulated links, run inside a namespace (``ip netns exec NS python
probe.py ...``; a plain script): an ICMP echo ``ping`` (raw socket, RFC 792) and a
constant-rate UDP sender and receiver. Each prints one JSON line."""

import argparse
import json
import os
import socket
import struct
import sys
import time


def _checksum(data: bytes) -> int:
    """The Internet checksum (RFC 1071)."""
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    s = (s >> 16) + (s & 0xFFFF)
    s += s >> 16
    return ~s & 0xFFFF


def ping(dst: str, count: int, interval: float) -> dict:
    """RTTs (ms) of ``count`` ICMP echo requests, one every ``interval`` seconds."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    sock.settimeout(1.0)
    ident = os.getpid() & 0xFFFF
    rtts = []
    for seq in range(count):
        head = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
        payload = b"mpsched" + b"\0" * 49
        pkt = struct.pack("!BBHHH", 8, 0, _checksum(head + payload), ident, seq) + payload
        sent = time.perf_counter()
        sock.sendto(pkt, (dst, 0))
        while True:
            try:
                data = sock.recv(2048)
            except socket.timeout:
                break
            ihl = (data[0] & 0x0F) * 4
            typ, _, _, rid, rseq = struct.unpack("!BBHHH", data[ihl : ihl + 8])
            if typ == 0 and rid == ident and rseq == seq:
                rtts.append((time.perf_counter() - sent) * 1e3)
                break
        time.sleep(max(0.0, sent + interval - time.perf_counter()))
    return {"rtts_ms": rtts}


def udp_send(dst: str, port: int, rate_bps: float, payload: int, seconds: float) -> dict:
    """Sends ``payload``-byte datagrams at ``rate_bps`` (IP bytes) for ``seconds``."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    gap = (payload + 28) * 8 / rate_bps
    start = time.perf_counter()
    n = 0
    data = b"\0" * payload
    while time.perf_counter() - start < seconds:
        due = start + n * gap
        wait = due - time.perf_counter()
        if wait > 0:
            time.sleep(wait)
        try:
            sock.sendto(data, (dst, port))
        except OSError:
            pass
        n += 1
    return {"sent": n}


def udp_recv(port: int, seconds: float) -> dict:
    """IP size and kernel arrival times (``SO_TIMESTAMPNS``, s after the first) of the
    datagrams received: times taken where the packets left the emulator, whatever this
    process's scheduling."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    sock.bind(("0.0.0.0", port))
    print(json.dumps({"ready": True}), flush=True)
    sock.settimeout(seconds)
    times = []
    size = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            data, anc, _, _ = sock.recvmsg(65536, 64)
        except socket.timeout:
            break
        t = next(
            (
                _timespec(d)
                for lvl, typ, d in anc
                if lvl == socket.SOL_SOCKET and typ == SO_TIMESTAMPNS
            ),
            None,
        )
        if t is None:
            continue
        times.append(t)
        size = len(data) + 28
    return {"ip_bytes": size, "times": [t - times[0] for t in times]}


#: ``SO_TIMESTAMPNS`` / ``SCM_TIMESTAMPNS`` (include/uapi/asm-generic/socket.h).
SO_TIMESTAMPNS = 35


def _timespec(d: bytes) -> float:
    sec, nsec = struct.unpack("=qq", d[:16])
    return sec + nsec / 1e9


def rate_bps(times: list, ip_bytes: int) -> float:
    """Received rate: the least-squares slope of the arrival times against the packet index
    (a few late deliveries move it little, unlike first-to-last)."""
    n = len(times)
    mx, my = (n - 1) / 2, sum(times) / n
    slope = sum((i - mx) * (t - my) for i, t in enumerate(times)) / sum(
        (i - mx) ** 2 for i in range(n)
    )
    return ip_bytes * 8 / slope


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("what", choices=["ping", "udp-send", "udp-recv"])
    p.add_argument("--dst", default="")
    p.add_argument("--port", type=int, default=6000)
    p.add_argument("--count", type=int, default=20)
    p.add_argument("--interval", type=float, default=0.05)
    p.add_argument("--rate-bps", type=float, default=0.0)
    p.add_argument("--payload", type=int, default=1472)
    p.add_argument("--seconds", type=float, default=2.0)
    a = p.parse_args()
    if a.what == "ping":
        r = ping(a.dst, a.count, a.interval)
    elif a.what == "udp-send":
        r = udp_send(a.dst, a.port, a.rate_bps, a.payload, a.seconds)
    else:
        r = udp_recv(a.port, a.seconds)
    print(json.dumps(r), flush=True)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # Ctrl-C reaches the whole process group: leave quietly
        sys.exit(130)
