"""One endpoint of an emulated flow, run inside its network namespace by ``mpsched emulate``
(``ip netns exec NS python agent.py ...``; a plain script so it starts without importing the
mpsched package). The server receives and counts bytes per sample interval; the client sends
(bulk or ``--size`` bytes) and samples its socket's ``TCP_INFO`` (per subflow for MPTCP).
Both stop at ``--t0 + --end`` (a ``CLOCK_MONOTONIC`` time shared by every namespace) and write
one JSON file.
"""

import argparse
import json
import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import tcpinfo  # noqa: E402

CHUNK = 256 * 1024


def _socket(mptcp: bool) -> socket.socket:
    proto = tcpinfo.IPPROTO_MPTCP if mptcp else socket.IPPROTO_TCP
    return socket.socket(socket.AF_INET, socket.SOCK_STREAM, proto)


def serve(a: argparse.Namespace) -> dict:
    """Accepts one connection and counts what arrives, per sample interval."""
    lsock = _socket(a.mptcp)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind(("0.0.0.0", a.port))
    lsock.listen(1)
    print("listening", flush=True)
    end = a.t0 + a.end
    lsock.settimeout(max(0.1, end - time.monotonic()))
    got, done_at, samples = 0, None, []
    try:
        conn, _ = lsock.accept()
    except (socket.timeout, OSError):
        return {"bytes": 0, "done_s": None, "samples": []}
    buf = bytearray(CHUNK)
    next_sample = a.t0 + a.sample
    while True:
        now = time.monotonic()
        while now >= next_sample and next_sample <= end + 1e-9:
            samples.append(got)
            next_sample += a.sample
        if now >= end:
            break
        conn.settimeout(max(0.001, min(next_sample, end) - now))
        try:
            n = conn.recv_into(buf)
        except socket.timeout:
            continue
        except OSError:
            break
        if n == 0:
            break
        got += n
        if a.size and done_at is None and got >= a.size:
            done_at = time.monotonic() - a.t0
    conn.close()
    return {"bytes": got, "done_s": done_at, "samples": samples}


def _sample(sock: socket.socket, mptcp: bool, src: str) -> list:
    try:
        if mptcp:
            return [{"addr": addr, **info} for addr, info in tcpinfo.mptcp_subflows(sock)]
        return [{"addr": src, **tcpinfo.tcp_info(sock)}]
    except OSError:
        return []


def _send(sock: socket.socket, size: int, end: float, state: dict) -> None:
    data = b"\0" * CHUNK
    sock.settimeout(0.05)
    while time.monotonic() < end and not state["stop"] and (not size or state["sent"] < size):
        want = CHUNK if not size else min(CHUNK, size - state["sent"])
        try:
            state["sent"] += sock.send(data[:want])
        except socket.timeout:
            continue
        except OSError as e:
            if not state["stop"]:
                state["error"] = str(e)
            return


def client(a: argparse.Namespace) -> dict:
    """Connects at ``--start``, sends, and samples the socket until the end."""
    end = a.t0 + (a.stop if a.stop is not None else a.end)
    time.sleep(max(0.0, a.t0 + a.start - time.monotonic()))
    sock = _socket(a.mptcp)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, a.cc.encode())
    sock.bind((a.src, 0))
    sock.settimeout(max(0.1, end - time.monotonic()))
    state = {"sent": 0, "error": None, "stop": False}
    try:
        sock.connect((a.dst, a.port))
    except OSError as e:
        return {"sent": 0, "error": f"connect: {e}", "samples": []}
    sender = threading.Thread(target=_send, args=(sock, a.size, end, state), daemon=True)
    sender.start()
    samples = []
    k = int((time.monotonic() - a.t0) / a.sample) + 1
    while True:
        t = a.t0 + k * a.sample
        if t > end + 1e-9:
            break
        time.sleep(max(0.0, t - time.monotonic()))
        samples.append({"t": k * a.sample, "subflows": _sample(sock, a.mptcp, a.src)})
        k += 1
    final = _sample(sock, a.mptcp, a.src)
    try:
        conn = tcpinfo.mptcp_info(sock) if a.mptcp else None
    except OSError:
        conn = None
    state["stop"] = True
    sender.join(timeout=1.0)
    sock.close()
    return {
        "sent": state["sent"],
        "error": state["error"],
        "samples": samples,
        "final": final,
        "mptcp": conn,
    }


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("role", choices=["server", "client"])
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--mptcp", action="store_true")
    p.add_argument("--t0", type=float, required=True)
    p.add_argument("--end", type=float, required=True)
    p.add_argument("--sample", type=float, required=True)
    p.add_argument("--size", type=int, default=0)
    p.add_argument("--out", required=True)
    p.add_argument("--src", default="0.0.0.0")
    p.add_argument("--dst", default="")
    p.add_argument("--cc", default="cubic")
    p.add_argument("--start", type=float, default=0.0)
    p.add_argument("--stop", type=float, default=None)
    a = p.parse_args()
    result = serve(a) if a.role == "server" else client(a)
    with open(a.out, "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # Ctrl-C reaches the whole process group: leave quietly
        sys.exit(130)
