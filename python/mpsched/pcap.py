"""pcap export of a packet trace (``packets.parquet`` of ``mpsched run --trace-packets``).

Every ``send`` and ``retransmit`` row becomes one packet as its sender's interface would have
captured it (the capture point is the sender: drops after it still appear; ``arrive`` rows are
not written). Headers are synthetic but consistent, so Wireshark/tshark decode the MPTCP
connection:

- link type ``LINKTYPE_RAW`` (101, bare IPv4), nanosecond timestamps (magic ``0xa1b23c4d``):
  the trace's integer ns times, exact;
- IPv4: one address pair per path, client ``10.(1 + p // 256).(p % 256).1`` to server
  ``10.(129 + p // 256).(p % 256).1`` for path ``p``; DF set, TTL 64, correct header checksum;
- TCP (RFC 9293): per flow the server port ``5001 + flow_id``, per connection and subflow the
  client port ``32768 + (8 * conn + subflow) % 32768``; sequence numbers are the simulator's
  (SYN at 0, first data byte at 1) plus a per-subflow ISN (a hash of flow, connection, subflow
  and direction), truncated to 32 bits; ACKs likewise in the peer's space; window scale 8
  (RFC 7323 2.3) on SYNs; timestamps (RFC 7323 3) in milliseconds; SACK blocks (RFC 2018) as
  many as fit after the MPTCP option and the timestamps (as Linux ``tcp_established_options``
  does: at most one with a DSS DATA_ACK and timestamps), SACK-permitted on SYNs; correct
  TCP checksum;
- MPTCP (RFC 8684): see :func:`_mptcp_option`.

Payload: zero-filled to the segment's length, or truncated to ``snaplen`` bytes of the packet
(the pcap record's original length keeps the full size).
"""

from __future__ import annotations

import hashlib
import hmac
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Dict, Optional, Tuple, Union

import pyarrow.parquet as pq

__all__ = ["write_pcap", "PcapError"]

# Simulator segment flags (crates/mpsched-transport/src/segment.rs).
SYN, ACK, FIN, MP_JOIN, DATA_FIN, MP_JOIN_ACK, RST, MP_FASTCLOSE = (1 << i for i in range(8))

_WSCALE = 8
_MSS = 1448
_MASK64 = (1 << 64) - 1
_COLUMNS = [
    "t_ns", "event", "flow_id", "conn", "path", "subflow", "to_server", "flags", "seq", "len",
    "ack", "wnd", "n_sack", "sack1_start", "sack1_end", "sack2_start", "sack2_end",
    "sack3_start", "sack3_end", "dsn", "data_ack", "ts_val", "ts_ecr", "mp_key",
]  # fmt: skip


class PcapError(ValueError):
    """The packet trace cannot be exported (a missing file or column)."""


def _h64(*parts: Any) -> int:
    """A deterministic 64-bit value of ``parts`` (ISNs, MP_JOIN random numbers)."""
    d = hashlib.sha256("/".join(map(str, parts)).encode()).digest()
    return int.from_bytes(d[:8], "big")


def _key_hash(key: int) -> bytes:
    return hashlib.sha256(key.to_bytes(8, "big")).digest()


def token(key: int) -> int:
    """RFC 8684 3.2: the token is the most significant 32 bits of SHA-256 of the key."""
    return int.from_bytes(_key_hash(key)[:4], "big")


def idsn(key: int) -> int:
    """RFC 8684 3.1: the initial data sequence number is the least significant 64 bits of
    SHA-256 of the key; the first data byte is IDSN + 1."""
    return int.from_bytes(_key_hash(key)[-8:], "big")


@dataclass
class _Conn:
    """MPTCP state of one connection: the keys seen on its MP_CAPABLE SYN and SYN/ACK."""

    key_c: Optional[int] = None
    key_s: Optional[int] = None
    capable_acked: bool = False
    subflows: Dict[int, "_Subflow"] = field(default_factory=dict)


@dataclass
class _Subflow:
    isn_c: int
    isn_s: int
    rand_c: int
    rand_s: int


def _checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def _addr(path: int, server: bool) -> bytes:
    return bytes([10, (129 if server else 1) + path // 256, path % 256, 1])


def _mp_capable(r: Dict[str, Any], c: _Conn) -> bytes:
    """MP_CAPABLE, RFC 8684 3.1 Figure 4: subtype 0, version 1, flags with H (HMAC-SHA256) set
    and A (checksum) clear. SYN: no key (length 4); SYN/ACK: the server's key (12); the third
    ACK: both keys (20), with the data-level length (22) if it carries data."""
    head = lambda n: struct.pack("!BBBB", 30, n, 0x01, 0x01)  # noqa: E731
    if r["flags"] & SYN and not r["flags"] & ACK:
        return head(4)
    if r["flags"] & SYN:
        return head(12) + struct.pack("!Q", c.key_s or 0)
    keys = struct.pack("!QQ", c.key_c or 0, c.key_s or 0)
    if r["len"]:
        return head(22) + keys + struct.pack("!H", r["len"])
    return head(20) + keys


def _mp_join(r: Dict[str, Any], c: _Conn, sf: _Subflow) -> bytes:
    """MP_JOIN, RFC 8684 3.2 Figures 5-7 (subtype 1, address ID = the subflow's index, B clear):
    SYN: receiver's token and sender's random number (length 12); SYN/ACK: the truncated
    HMAC-SHA256 with key (Key-B + Key-A) over (R-B + R-A) and the random number (16); third
    ACK: the 160 leftmost bits of HMAC-SHA256 with key (Key-A + Key-B) over (R-A + R-B) (24)."""
    aid = r["subflow"]
    ka, kb = (c.key_c or 0).to_bytes(8, "big"), (c.key_s or 0).to_bytes(8, "big")
    ra, rb = sf.rand_c.to_bytes(4, "big"), sf.rand_s.to_bytes(4, "big")
    if r["flags"] & SYN and not r["flags"] & ACK:
        return struct.pack("!BBBBII", 30, 12, 0x10, aid, token(c.key_s or 0), sf.rand_c)
    if r["flags"] & SYN:
        mac = hmac.new(kb + ka, rb + ra, hashlib.sha256).digest()[:8]
        return struct.pack("!BBBB", 30, 16, 0x10, aid) + mac + rb
    mac = hmac.new(ka + kb, ra + rb, hashlib.sha256).digest()[:20]
    return struct.pack("!BBBB", 30, 24, 0x10, 0) + mac


def _dss(r: Dict[str, Any], c: _Conn) -> bytes:
    """DSS, RFC 8684 3.3 Figure 9 (subtype 2; flags F = DATA_FIN 0x10, m = 8-octet DSN 0x08,
    M = mapping present 0x04, a = 8-octet DATA_ACK 0x02, A = DATA_ACK present 0x01; no
    checksum): always an 8-octet DATA_ACK (the peer's IDSN + 1 + the simulator's data_ack);
    on a segment with data, or a DATA_FIN (3.3.3: on a segment without data the subflow
    sequence number is 0 and the data-level length 1), the mapping: the 8-octet DSN (own IDSN +
    1 + the simulator's dsn), the subflow sequence number relative to the ISN (the simulator's
    seq) and the data-level length."""
    client = r["to_server"]
    own, peer = (c.key_c, c.key_s) if client else (c.key_s, c.key_c)
    data_ack = (idsn(peer or 0) + 1 + r["data_ack"]) & _MASK64
    fin = bool(r["flags"] & DATA_FIN)
    if not r["len"] and not fin:
        return struct.pack("!BBBBQ", 30, 12, 0x20, 0x03, data_ack)
    dsn = (idsn(own or 0) + 1 + r["dsn"]) & _MASK64
    ssn, dl = (r["seq"] & 0xFFFFFFFF, r["len"] + fin) if r["len"] else (0, 1)
    flags = 0x0F | (0x10 if fin else 0)
    return struct.pack("!BBBBQQIH", 30, 26, 0x20, flags, data_ack, dsn, ssn, dl)


def _mptcp_option(r: Dict[str, Any], c: _Conn, sf: _Subflow) -> bytes:
    """The MPTCP option of a segment: MP_CAPABLE on the first subflow's handshake (its SYN,
    SYN/ACK and the client's first ACK), MP_JOIN on the other subflows' SYN, SYN/ACK and
    third ACK (repeated until acknowledged, the simulator's MP_JOIN_ACK), MP_FASTCLOSE
    (RFC 8684 3.5, subtype 7, the receiver's key) on a fast-close RST, DSS otherwise."""
    f = r["flags"]
    if f & MP_FASTCLOSE:
        return struct.pack("!BBBBQ", 30, 12, 0x70, 0, r["mp_key"] & _MASK64)
    if f & RST:
        return b""
    if r["subflow"] == 0:
        if f & SYN:
            return _mp_capable(r, c)
        if r["to_server"] and not c.capable_acked:
            c.capable_acked = True
            return _mp_capable(r, c)
        return _dss(r, c)
    if f & SYN or f & MP_JOIN_ACK:
        return _mp_join(r, c, sf)
    return _dss(r, c)


def _tcp_options(r: Dict[str, Any], mptcp: bytes, sf: _Subflow) -> bytes:
    """MSS, SACK-permitted and window scale on SYNs; the MPTCP option; timestamps; SACK blocks
    while they fit in the 40 option bytes; NOP padding to a multiple of 4."""
    opts = b""
    if r["flags"] & SYN:
        opts += struct.pack("!BBH", 2, 4, _MSS) + struct.pack("!BB", 4, 2)
        opts += struct.pack("!BBBB", 1, 3, 3, _WSCALE)
    opts += mptcp
    opts += b"\x01" * (-len(opts) % 4)
    if len(opts) + 12 <= 40:
        tsv, tse = (r["ts_val"] // 1_000_000) & 0xFFFFFFFF, (r["ts_ecr"] // 1_000_000) & 0xFFFFFFFF
        opts += b"\x01\x01" + struct.pack("!BBII", 8, 10, tsv, tse)
    peer_isn = sf.isn_c if not r["to_server"] else sf.isn_s
    blocks = []
    for k in range(1, r["n_sack"] + 1):
        blocks.append(
            (
                (peer_isn + r[f"sack{k}_start"]) & 0xFFFFFFFF,
                (peer_isn + r[f"sack{k}_end"]) & 0xFFFFFFFF,
            )
        )
    while blocks and len(opts) + 2 + 2 + 8 * len(blocks) > 40:
        blocks.pop()
    if blocks:
        opts += b"\x01\x01" + struct.pack("!BB", 5, 2 + 8 * len(blocks))
        opts += b"".join(struct.pack("!II", a, b) for a, b in blocks)
    return opts + b"\x01" * (-len(opts) % 4)


def _tcp_flags(f: int) -> int:
    out = 0x02 if f & SYN else 0
    out |= 0x10 if f & ACK else 0
    out |= 0x01 if f & FIN else 0
    out |= 0x04 if f & RST else 0
    return out


class _Writer:
    """Turns trace rows into pcap records (state: connections' keys, subflows' ISNs, IP IDs)."""

    def __init__(self, out: BinaryIO, snaplen: Optional[int]) -> None:
        self.out = out
        self.snaplen = snaplen
        self.conns: Dict[Tuple[int, int], _Conn] = {}
        self.ip_id: Dict[Tuple[int, bool], int] = {}
        self.packets = 0
        out.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, snaplen or 262144, 101))

    def _state(self, r: Dict[str, Any]) -> Tuple[_Conn, _Subflow]:
        c = self.conns.setdefault((r["flow_id"], r["conn"]), _Conn())
        k = r["subflow"]
        if k not in c.subflows:
            ident = (r["flow_id"], r["conn"], k)
            c.subflows[k] = _Subflow(
                _h64(*ident, "c") & 0xFFFFFFFF,
                _h64(*ident, "s") & 0xFFFFFFFF,
                _h64(*ident, "rc") & 0xFFFFFFFF,
                _h64(*ident, "rs") & 0xFFFFFFFF,
            )
        if k == 0 and r["flags"] & SYN:
            key = r["mp_key"] & _MASK64
            if r["flags"] & ACK:
                c.key_s = key
            else:
                c.key_c = key
        return c, c.subflows[k]

    def add(self, r: Dict[str, Any]) -> None:
        """One ``send`` or ``retransmit`` row as a packet."""
        c, sf = self._state(r)
        client = r["to_server"]
        tcp = self._tcp(r, c, sf)
        src, dst = _addr(r["path"], not client), _addr(r["path"], client)
        total = 20 + len(tcp) + r["len"]
        key = (r["path"], client)
        ident = self.ip_id.get(key, 0)
        self.ip_id[key] = (ident + 1) & 0xFFFF
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, ident, 0x4000, 64, 6, 0, src, dst)
        ip = ip[:10] + struct.pack("!H", _checksum(ip)) + ip[12:]
        pseudo = src + dst + struct.pack("!BBH", 0, 6, len(tcp) + r["len"])
        # The zero payload adds nothing to the checksum.
        tcp = tcp[:16] + struct.pack("!H", _checksum(pseudo + tcp)) + tcp[18:]
        pkt = ip + tcp + bytes(r["len"])
        cap = pkt if self.snaplen is None else pkt[: self.snaplen]
        t = r["t_ns"]
        self.out.write(
            struct.pack("<IIII", t // 1_000_000_000, t % 1_000_000_000, len(cap), len(pkt))
        )
        self.out.write(cap)
        self.packets += 1

    def _tcp(self, r: Dict[str, Any], c: _Conn, sf: _Subflow) -> bytes:
        client = r["to_server"]
        own_isn, peer_isn = (sf.isn_c, sf.isn_s) if client else (sf.isn_s, sf.isn_c)
        sport = 32768 + (8 * r["conn"] + r["subflow"]) % 32768
        dport = 5001 + r["flow_id"] % 27000
        if not client:
            sport, dport = dport, sport
        opts = _tcp_options(r, _mptcp_option(r, c, sf), sf)
        seq = (own_isn + r["seq"]) & 0xFFFFFFFF
        ack = (peer_isn + r["ack"]) & 0xFFFFFFFF if r["flags"] & ACK else 0
        wnd = r["wnd"] if r["flags"] & SYN else r["wnd"] >> _WSCALE
        off = (20 + len(opts)) // 4
        head = struct.pack(
            "!HHIIBBHHH",
            sport,
            dport,
            seq,
            ack,
            off << 4,
            _tcp_flags(r["flags"]),
            min(wnd, 0xFFFF),
            0,
            0,
        )
        return head + opts


def write_pcap(
    packets: Union[str, Path], out: Union[str, Path], snaplen: Optional[int] = None
) -> int:
    """Write the ``send``/``retransmit`` rows of ``packets`` (a ``packets.parquet``, read row
    group by row group) to the pcap file ``out``; returns the number of packets written.
    ``snaplen`` truncates each captured packet (None: headers and zero-filled payload)."""
    path = Path(packets)
    if not path.is_file():
        raise PcapError(f"{path}: no packet trace (run with --trace-packets)")
    f = pq.ParquetFile(path)
    missing = [c for c in _COLUMNS if c not in f.schema_arrow.names]
    if missing:
        raise PcapError(f"{path}: not a packet trace (missing columns: {', '.join(missing)})")
    if snaplen is not None and snaplen < 1:
        raise PcapError(f"snaplen: expected a positive number of bytes, got {snaplen}")
    with open(out, "wb") as fh:
        w = _Writer(fh, snaplen)
        for batch in f.iter_batches(batch_size=65536, columns=_COLUMNS):
            for r in batch.to_pylist():
                if r["event"] in ("send", "retransmit"):
                    w.add(r)
    return w.packets
