//! The wire-level unit exchanged by subflows. Payload is virtual: only byte ranges travel.

/// Identifies a subflow inside its connection (0 = the initial subflow).
pub type SubflowId = u8;

/// TCP/MPTCP flags carried by a [`Segment`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flags(pub u8);

impl Flags {
    /// Synchronize sequence numbers (opens a subflow).
    pub const SYN: Flags = Flags(1);
    /// The `ack` field is valid.
    pub const ACK: Flags = Flags(2);
    /// No more data from the sender on this subflow (RFC 9293).
    pub const FIN: Flags = Flags(4);
    /// The SYN opens an additional subflow of an existing connection (RFC 8684 3.2).
    pub const MP_JOIN: Flags = Flags(8);
    /// No more data from the sender on the connection (RFC 8684 3.3.3).
    pub const DATA_FIN: Flags = Flags(16);
    /// The third ACK of an MP_JOIN handshake (in MPTCP it carries the MP_JOIN HMAC), repeated
    /// until the peer acknowledges it; the peer answers each with an ACK (RFC 8684 3.2).
    pub const MP_JOIN_ACK: Flags = Flags(32);
    /// Reset: the subflow is aborted (RFC 9293 3.5.2); accepted only at the exact next
    /// expected sequence number (RFC 5961 3.2).
    pub const RST: Flags = Flags(64);
    /// With [`Flags::RST`]: the whole connection is aborted (RFC 8684 3.5, "Option R");
    /// `mp_key` carries the receiver's key, which authenticates it.
    pub const MP_FASTCLOSE: Flags = Flags(128);
    /// Every flag of `f` is set.
    #[inline]
    pub fn contains(self, f: Flags) -> bool {
        self.0 & f.0 == f.0
    }
    /// These flags plus those of `f`.
    #[inline]
    pub fn with(self, f: Flags) -> Flags {
        Flags(self.0 | f.0)
    }
}

/// A SACK block `[start, end)` in subflow sequence space.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackBlock {
    /// First sequence number received.
    pub start: u64,
    /// One past the last sequence number received.
    pub end: u64,
}

/// One segment. Sequence numbers are 64-bit and never wrap inside the simulator; a wire encoding
/// (the later UDP transport) truncates them to 32 bits and extends them on receipt.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Segment {
    /// The subflow it belongs to.
    pub sf: SubflowId,
    /// TCP and MPTCP flags.
    pub flags: Flags,
    /// Number of valid entries in `sack`.
    pub n_sack: u8,
    /// MPTCP option bytes on the wire besides the handshake's (the DSS option: [`DssBytes`]);
    /// 0 for plain TCP and where `SubflowConfig::dss` is `None` (the `ns3` profile).
    pub mp_opt: u8,
    /// Payload length in bytes (0 for a pure ACK).
    pub len: u16,
    /// Receive window advertised by the sender of this segment, in bytes.
    pub wnd: u32,
    /// Subflow sequence number of the first payload byte.
    pub seq: u64,
    /// Subflow cumulative acknowledgement: next sequence number expected.
    pub ack: u64,
    /// SACK blocks (RFC 2018), the first `n_sack` valid, most recent arrival first.
    pub sack: [SackBlock; 3],
    /// Data sequence number of the first payload byte (MPTCP DSS mapping).
    pub dsn: u64,
    /// Connection-level cumulative acknowledgement (MPTCP DATA_ACK).
    pub data_ack: u64,
    /// Sender's transmit time in nanoseconds (timestamp option, echoed in `ts_ecr`).
    pub ts_val: u64,
    /// Echo of the peer's latest `ts_val` (RFC 7323).
    pub ts_ecr: u64,
    /// MPTCP key material, by flags: the sender's key on the first subflow's SYN and SYN-ACK
    /// (MP_CAPABLE, RFC 8684 3.1), the receiver's token in the low 32 bits of an MP_JOIN SYN
    /// (RFC 8684 3.2), the receiver's key on an MP_FASTCLOSE (RFC 8684 3.5); 0 otherwise.
    pub mp_key: u64,
}

/// TCP/IP header bytes on the wire for every segment: IPv4 20 + TCP 20 + timestamps 12.
pub const HEADER_BYTES: u32 = 52;

/// The DSS option a Linux MPTCP subflow puts on every established-state segment, as measured
/// on the kernel engine (Linux 6.18; docs/fidelity.md): a data segment carries the mapping
/// (64-bit DSN, subflow sequence, length) and a 32-bit DATA_ACK, 24 bytes, so 1,424 payload
/// bytes fill a 1,500-byte packet where plain TCP carries 1,448; a pure ACK carries a 64-bit
/// DATA_ACK, 12 bytes (64-byte ACKs). `mptcp_established_options` → `mptcp_write_options`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DssBytes {
    /// On a segment with payload.
    pub data: u8,
    /// On a segment without payload.
    pub ack: u8,
}

impl DssBytes {
    /// The Linux kernel's.
    pub const LINUX: DssBytes = DssBytes { data: 24, ack: 12 };
}

impl Segment {
    /// Size of the segment on the wire in bytes (headers + options + payload).
    #[inline]
    pub fn wire_size(&self) -> u32 {
        let sack = if self.n_sack > 0 { 4 + 8 * self.n_sack as u32 } else { 0 };
        HEADER_BYTES + sack + self.mp_opt as u32 + self.len as u32
    }
    /// One past the last payload sequence number.
    #[inline]
    pub fn end(&self) -> u64 {
        self.seq + self.len as u64
    }
    /// The connection token an MP_JOIN SYN asks for (RFC 8684 3.2): a driver serving many
    /// connections looks it up among their [`crate::Connection::token`]s to route the SYN.
    #[inline]
    pub fn join_token(&self) -> Option<u32> {
        let join = Flags::SYN.with(Flags::MP_JOIN);
        (self.flags.contains(join) && !self.flags.contains(Flags::ACK)).then_some(self.mp_key as u32)
    }
    /// The valid SACK blocks.
    #[inline]
    pub fn sacks(&self) -> &[SackBlock] {
        &self.sack[..self.n_sack as usize]
    }
}
