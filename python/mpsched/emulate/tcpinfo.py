"""Reading the kernel's per-connection counters: ``TCP_INFO`` (``struct tcp_info``,
include/uapi/linux/tcp.h, filled by ``tcp_get_info``) and, for an MPTCP socket, the
per-subflow ``tcp_info`` and addresses (``MPTCP_TCPINFO`` / ``MPTCP_SUBFLOW_ADDRS``,
include/uapi/linux/mptcp.h, ``mptcp_getsockopt_subflow_info`` in net/mptcp/sockopt.c).
"""

import socket
import struct
from typing import Dict, List, Tuple

#: ``SOL_MPTCP`` and its options (include/linux/socket.h, include/uapi/linux/mptcp.h).
SOL_MPTCP = 284
MPTCP_INFO = 1
MPTCP_TCPINFO = 2
MPTCP_SUBFLOW_ADDRS = 3
#: ``IPPROTO_MPTCP`` (include/uapi/linux/in.h).
IPPROTO_MPTCP = 262

#: Bytes of ``struct tcp_info`` read (through ``tcpi_total_rto_time``, kernel >= 6.7).
TCP_INFO_LEN = 248
#: ``struct mptcp_subflow_data``: the header of the subflow arrays (4 x u32, aligned to 8).
_SUBFLOW_DATA = struct.Struct("=IIII")
#: ``struct mptcp_subflow_addrs``: two ``sockaddr_storage`` (local, remote).
_ADDRS_LEN = 256

# (name, struct format, offset) of the fields used.
_FIELDS: Tuple[Tuple[str, str, int], ...] = (
    ("state", "B", 0),
    ("ca_state", "B", 1),
    ("rto_us", "I", 8),
    ("snd_mss", "I", 16),
    ("unacked", "I", 24),
    ("lost", "I", 32),
    ("retrans", "I", 36),
    ("rtt_us", "I", 68),
    ("rttvar_us", "I", 72),
    ("snd_ssthresh", "I", 76),
    ("snd_cwnd", "I", 80),
    ("total_retrans", "I", 100),
    ("bytes_acked", "Q", 120),
    ("bytes_received", "Q", 128),
    ("notsent_bytes", "I", 144),
    ("min_rtt_us", "I", 148),
    ("delivery_rate", "Q", 160),
    ("bytes_sent", "Q", 200),
    ("bytes_retrans", "Q", 208),
    ("total_rto", "H", 240),
    ("total_rto_recoveries", "H", 242),
)


def parse_tcp_info(raw: bytes) -> Dict[str, int]:
    """The fields of one ``struct tcp_info`` (missing trailing fields read as 0)."""
    raw = raw.ljust(TCP_INFO_LEN, b"\0")
    return {name: struct.unpack_from("=" + fmt, raw, off)[0] for name, fmt, off in _FIELDS}


def tcp_info(sock: socket.socket) -> Dict[str, int]:
    """``TCP_INFO`` of a TCP socket."""
    return parse_tcp_info(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_LEN))


def _subflow_array(sock: socket.socket, opt: int, elem: int, max_subflows: int) -> List[bytes]:
    head = _SUBFLOW_DATA.pack(_SUBFLOW_DATA.size, 0, 0, elem)
    buf = head + b"\0" * (elem * max_subflows)
    raw = _getsockopt_in(sock, opt, buf)
    _, num, size_kernel, _ = _SUBFLOW_DATA.unpack_from(raw, 0)
    step = elem
    n = min(num, (len(raw) - _SUBFLOW_DATA.size) // step)
    base = _SUBFLOW_DATA.size
    return [raw[base + i * step : base + (i + 1) * step] for i in range(n)]


def _getsockopt_in(sock: socket.socket, opt: int, buf: bytes) -> bytes:
    """``getsockopt`` with an input buffer (the kernel reads the header the caller filled in):
    Python's ``getsockopt(level, opt, buflen)`` passes a zeroed buffer, so go through ctypes."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    cbuf = ctypes.create_string_buffer(buf, len(buf))
    size = ctypes.c_uint32(len(buf))
    r = libc.getsockopt(sock.fileno(), SOL_MPTCP, opt, cbuf, ctypes.byref(size))
    if r != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"getsockopt(SOL_MPTCP, {opt})")
    return cbuf.raw[: size.value]


def _ipv4(sa: bytes) -> str:
    """The address of a ``sockaddr_in`` (family, port, address)."""
    return socket.inet_ntoa(sa[4:8])


def mptcp_subflows(sock: socket.socket, max_subflows: int = 8) -> List[Tuple[str, Dict[str, int]]]:
    """Per subflow of an MPTCP socket: (local IPv4 address, its ``tcp_info``), in the order
    the kernel lists them (both options walk ``mptcp_for_each_subflow``)."""
    infos = _subflow_array(sock, MPTCP_TCPINFO, TCP_INFO_LEN, max_subflows)
    addrs = _subflow_array(sock, MPTCP_SUBFLOW_ADDRS, _ADDRS_LEN, max_subflows)
    return [(_ipv4(a[:16]), parse_tcp_info(i)) for a, i in zip(addrs, infos)]


#: ``struct mptcp_info`` fields used (offsets of the kernel >= 6.5 layout: the counters follow
#: ``mptcpi_csum_enabled``; ``mptcp_diag_fill_info`` in net/mptcp/sockopt.c fills them).
_MPTCP_FIELDS: Tuple[Tuple[str, str, int], ...] = (
    ("subflows", "B", 0),
    ("retransmits", "I", 44),
    ("bytes_retrans", "Q", 48),
    ("bytes_sent", "Q", 56),
    ("bytes_received", "Q", 64),
    ("bytes_acked", "Q", 72),
)
MPTCP_INFO_LEN = 80


def mptcp_info(sock: socket.socket) -> Dict[str, int]:
    """``MPTCP_INFO`` of an MPTCP socket (connection-level counters; a shorter answer from an
    older kernel reads as zeros)."""
    raw = sock.getsockopt(SOL_MPTCP, MPTCP_INFO, MPTCP_INFO_LEN).ljust(MPTCP_INFO_LEN, b"\0")
    return {name: struct.unpack_from("=" + fmt, raw, off)[0] for name, fmt, off in _MPTCP_FIELDS}
