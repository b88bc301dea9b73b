//! One interval's values of each feature, from counters: the computation shared by the
//! simulator's envs and the sender-side [`super::Recorder`], so that a policy sees in a sender
//! exactly what it saw in training. Units are those of the feature tables ([`super::features`]).

use super::features::{ConnFeature, Feature, FlowFeature, SubflowFeature};
use crate::info::SubflowInfo;

/// Bits per second in a megabit per second.
pub const MBPS: f64 = 1e6;

/// Counter difference that survives a new connection (repeated downloads restart counters).
pub fn delta(cur: u64, prev: u64) -> u64 {
    if cur >= prev {
        cur - prev
    } else {
        cur
    }
}

/// [`delta`] of a cumulative time.
pub fn delta_f(cur: f64, prev: f64) -> f64 {
    if cur >= prev {
        cur - prev
    } else {
        cur
    }
}

/// Writes `value(f)` for every feature `f` of a group into its slot, in enum order: every
/// feature is written exactly once, at its own index.
pub fn fill<F: Feature>(row: &mut [f32], value: impl Fn(F) -> f32) {
    assert_eq!(row.len(), F::ALL.len(), "{} slot", F::GROUP);
    for (x, &f) in row.iter_mut().zip(F::ALL) {
        *x = value(f);
    }
}

/// Drops the oldest frame of `frames` (frames of `frame_len`) and clears the newest.
pub fn shift_frames(frames: &mut [f32], frame_len: usize) {
    frames.copy_within(frame_len.., 0);
    let base = frames.len() - frame_len;
    frames[base..].iter_mut().for_each(|x| *x = 0.0);
}

/// Moves a delivery-rate history on by one interval (the newest samples zero).
pub fn shift_rates(rates: &mut [[u64; 8]]) {
    rates.rotate_left(1);
    *rates.last_mut().expect("a history of at least one frame") = [0; 8];
}

/// Cumulative counters of one subflow at the last boundary.
#[derive(Clone, Copy, Debug, Default)]
pub struct SubSnap {
    /// Payload bytes sent.
    pub sent: u64,
    /// Bytes acknowledged on the subflow.
    pub acked: u64,
    /// Data segments sent.
    pub seg_sent: u64,
    /// Segments detected lost.
    pub seg_lost: u64,
    /// Bytes the receiver took in order on the subflow (0 where the receiver is not known).
    pub received: u64,
    /// Smoothed RTT (ns).
    pub srtt_ns: u64,
}

/// One subflow's counters over the interval.
#[derive(Clone, Copy, Debug, Default)]
pub struct SubflowDelta {
    /// Payload bytes sent, retransmissions included.
    pub sent: u64,
    /// Bytes acknowledged on the subflow.
    pub acked: u64,
    /// Data segments sent.
    pub seg_sent: u64,
    /// Segments detected lost.
    pub seg_lost: u64,
    /// Bytes received in order by the peer on the subflow (receiver side).
    pub recv: u64,
    /// Smoothed RTT at the previous boundary (ns).
    pub prev_srtt_ns: u64,
}

impl SubSnap {
    /// The counters of `s` since this snapshot; the snapshot moves on to `s` (`received`: the
    /// receiver's in-order bytes, 0 where unknown).
    pub fn advance(&mut self, s: &SubflowInfo, received: u64) -> SubflowDelta {
        let prev = *self;
        *self = SubSnap {
            sent: s.bytes_sent,
            acked: s.delivered,
            seg_sent: s.segments_sent,
            seg_lost: s.segments_lost,
            received,
            srtt_ns: s.srtt.0,
        };
        SubflowDelta {
            sent: delta(self.sent, prev.sent),
            acked: delta(self.acked, prev.acked),
            seg_sent: delta(self.seg_sent, prev.seg_sent),
            seg_lost: delta(self.seg_lost, prev.seg_lost),
            recv: delta(self.received, prev.received),
            prev_srtt_ns: prev.srtt_ns,
        }
    }
}

/// |Δ srtt| of an established subflow since the previous boundary (ns; 0 without two RTT
/// estimates).
pub fn jitter_ns(s: &SubflowInfo, d: &SubflowDelta) -> f64 {
    if s.established && s.srtt.0 > 0 && d.prev_srtt_ns > 0 {
        (s.srtt.0 as f64 - d.prev_srtt_ns as f64).abs()
    } else {
        0.0
    }
}

/// Inputs of one subflow's features.
pub struct SubflowSample<'a> {
    /// The subflow now.
    pub s: &'a SubflowInfo,
    /// Its counters over the interval.
    pub d: &'a SubflowDelta,
    /// Maximum segment size (bytes).
    pub mss: f64,
    /// Length rates are computed over (s).
    pub dt: f64,
    /// Payload sent in the interval (Mbit/s).
    pub tput: f64,
    /// Largest delivery rate over the history (Mbit/s).
    pub max_rate: f64,
    /// The previous action's share or selection of this subflow.
    pub prev_share: f32,
    /// Energy charged to the subflow in the interval (J; 0 without an energy model).
    pub energy_j: f64,
}

impl SubflowSample<'_> {
    /// The value of feature `f` (units in [`SubflowFeature`]'s table).
    pub fn value(&self, f: SubflowFeature) -> f32 {
        let (s, d) = (self.s, self.d);
        match f {
            SubflowFeature::Srtt => (s.srtt.0 as f64 / 1e8) as f32,
            SubflowFeature::Rttvar => (s.rttvar.0 as f64 / 1e8) as f32,
            SubflowFeature::Rto => (s.rto.0 as f64 / 1e8) as f32,
            SubflowFeature::Cwnd => (s.cwnd as f64 / self.mss / 100.0) as f32,
            SubflowFeature::Inflight => (s.pipe as f64 / self.mss / 100.0) as f32,
            SubflowFeature::DeliveryRate => (s.delivery_rate as f64 * 8.0 / MBPS / 10.0) as f32,
            SubflowFeature::Throughput => (self.tput / 10.0) as f32,
            SubflowFeature::Goodput => (d.acked as f64 * 8.0 / self.dt / MBPS / 10.0) as f32,
            SubflowFeature::Loss if d.seg_sent > 0 => (d.seg_lost as f64 / d.seg_sent as f64).min(1.0) as f32,
            SubflowFeature::Loss => 0.0,
            SubflowFeature::FreeBw => ((self.max_rate - self.tput).max(0.0) / 10.0) as f32,
            SubflowFeature::PrevShare => self.prev_share,
            SubflowFeature::EnergyJ => self.energy_j as f32,
            SubflowFeature::PowerW => (self.energy_j / self.dt) as f32,
            SubflowFeature::Jitter => jitter_ns(s, d) as f32 / 1e8,
        }
    }
}

/// Inputs of the connection features.
#[derive(Clone, Copy, Debug, Default)]
pub struct ConnSample {
    /// Peer's advertised window, largest over the subflows (bytes).
    pub peer_wnd: u64,
    /// Bytes in flight over all subflows.
    pub pipe: u64,
    /// Receive buffer (bytes, at least 1).
    pub rcv_buf: f64,
    /// Length rates are computed over (s).
    pub dt: f64,
    /// Receiver: out-of-order byte·seconds in the interval (0 in a sender).
    pub ooo_s: f64,
    /// Receiver: seconds the receive buffer was full (0 in a sender).
    pub full_s: f64,
    /// Seconds the sender was blocked by the peer's window.
    pub blocked_s: f64,
    /// Receiver: goodput to the application (Mbit/s; 0 in a sender).
    pub goodput: f64,
    /// Previous mode action (0 normal, 1 redundant).
    pub prev_mode: f32,
}

impl ConnSample {
    /// The value of feature `f` (units in [`ConnFeature`]'s table).
    pub fn value(&self, f: ConnFeature) -> f32 {
        match f {
            ConnFeature::RcvWindow => (self.peer_wnd as f64 / self.rcv_buf) as f32,
            ConnFeature::Inflight => (self.pipe as f64 / self.rcv_buf) as f32,
            ConnFeature::Ooo => (self.ooo_s / self.dt / self.rcv_buf) as f32,
            ConnFeature::BufferFull => (self.full_s / self.dt).min(1.0) as f32,
            ConnFeature::Goodput => (self.goodput / 10.0) as f32,
            ConnFeature::SendBlocked => (self.blocked_s / self.dt).min(1.0) as f32,
            ConnFeature::PrevMode => self.prev_mode,
            ConnFeature::Interval => (self.dt * 10.0) as f32,
        }
    }
}

/// Inputs of one flow's host-view features.
#[derive(Clone, Copy, Debug, Default)]
pub struct FlowSample {
    /// Payload sent over all subflows in the interval (bytes).
    pub sent: u64,
    /// Receiver: goodput to the application (Mbit/s).
    pub goodput: f64,
    /// Sum of smoothed RTTs over established subflows with an estimate (ns).
    pub srtt: f64,
    /// Sum of RTT variations over the same subflows (ns).
    pub rttvar: f64,
    /// Sum of the congestion windows (bytes).
    pub cwnd: u64,
    /// Established subflows with an RTT estimate, at least 1.
    pub n: f64,
    /// Maximum segment size (bytes).
    pub mss: f64,
    /// Length rates are computed over (s).
    pub dt: f64,
    /// The action applies to this flow.
    pub target: bool,
    /// A multipath flow.
    pub multipath: bool,
    /// Established subflows.
    pub open: usize,
}

impl FlowSample {
    /// The value of feature `f` (units in [`FlowFeature`]'s table).
    pub fn value(&self, f: FlowFeature) -> f32 {
        match f {
            FlowFeature::SendRate => (self.sent as f64 * 8.0 / self.dt / MBPS / 10.0) as f32,
            FlowFeature::Goodput => (self.goodput / 10.0) as f32,
            FlowFeature::Srtt => (self.srtt / self.n / 1e8) as f32,
            FlowFeature::Rttvar => (self.rttvar / self.n / 1e8) as f32,
            FlowFeature::Cwnd => (self.cwnd as f64 / self.mss / 100.0) as f32,
            FlowFeature::Target => f32::from(u8::from(self.target)),
            FlowFeature::Multipath => f32::from(u8::from(self.multipath)),
            FlowFeature::Subflows => self.open as f32,
        }
    }
}

/// The length of the next decision interval of a flow that decides every minimum RTT (EdAR's
/// transmission interval, edar.txt §IV-A): the smallest smoothed RTT over established subflows,
/// 100 ms before any RTT is known, at least 1 ms (ns).
pub fn min_rtt_interval_ns(subflows: impl Iterator<Item = SubflowInfo>) -> u64 {
    let min = subflows.filter(|s| s.established && s.srtt.0 > 0).map(|s| s.srtt.0).min();
    min.unwrap_or(100_000_000).max(1_000_000)
}
