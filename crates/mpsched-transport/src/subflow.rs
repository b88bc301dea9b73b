//! One TCP-like subflow: handshake, SACK scoreboard, RFC 6675 loss recovery, RFC 6298 RTO with
//! Karn's rule and backoff, delayed ACK, receive reassembly. Sans-IO: segments and `now` in,
//! segments and a timer deadline out.
//!
//! Data is virtual: the subflow maps its own sequence space onto connection-level data sequence
//! numbers (DSN) handed out by [`ConnShared`].

use std::collections::VecDeque;

use crate::cc::{AckSample, AnyCc, CcState, CongestionControl, CongestionEvent, SiblingInfo};
use crate::reassembly::Reassembly;
use crate::rtt::RttEstimator;
use crate::segment::{Flags, SackBlock, Segment, SubflowId};
use crate::time::{Duration, Instant};

/// Per-subflow TCP parameters. [`SubflowConfig::linux`] and [`SubflowConfig::ns3`] are the two
/// stack profiles; every field can be overridden.
#[derive(Clone, Debug, PartialEq)]
pub struct SubflowConfig {
    /// Maximum segment payload in bytes.
    pub mss: u32,
    /// Initial congestion window in segments.
    pub init_cwnd: u32,
    pub min_rto: Duration,
    pub max_rto: Duration,
    pub delayed_ack: bool,
    pub delayed_ack_timeout: Duration,
    /// Duplicate-ACK threshold (RFC 6675 DupThresh).
    pub dupthresh: u32,
    /// Appropriate byte counting: grow cwnd by bytes acknowledged (Linux) rather than per ACK (ns-3).
    pub abc: bool,
}

impl SubflowConfig {
    /// Linux defaults: IW 10, min RTO 200 ms, max RTO 120 s, ABC, delayed ACK 40 ms.
    pub fn linux() -> Self {
        SubflowConfig {
            mss: 1448,
            init_cwnd: 10,
            min_rto: Duration::from_millis(200),
            max_rto: Duration::from_secs(120),
            delayed_ack: true,
            delayed_ack_timeout: Duration::from_millis(40),
            dupthresh: 3,
            abc: true,
        }
    }
    /// ns-3 TcpSocketBase defaults: IW 1 (ns-3 3.3x uses 10; papers built on older ns-3 used 1),
    /// min RTO 1 s, delayed ACK every 2nd segment / 200 ms, per-ACK window growth.
    pub fn ns3() -> Self {
        SubflowConfig {
            mss: 1448,
            init_cwnd: 10,
            min_rto: Duration::from_secs(1),
            max_rto: Duration::from_secs(60),
            delayed_ack: true,
            delayed_ack_timeout: Duration::from_millis(200),
            dupthresh: 3,
            abc: false,
        }
    }
}

impl Default for SubflowConfig {
    fn default() -> Self {
        Self::linux()
    }
}

/// Which end opened the subflow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Sends the SYN.
    Client,
    /// Answers with SYN-ACK.
    Server,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SfState {
    Closed,
    SynSent,
    SynReceived,
    Established,
}

/// Timers of a subflow, indexing [`Subflow::timers`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum Timer {
    Rto = 0,
    DelayedAck = 1,
    Pacing = 2,
    /// Zero-window probe (persist timer).
    Probe = 3,
}
const N_TIMERS: usize = 4;

/// What a subflow borrows from its connection for one call.
#[derive(Debug)]
pub struct ConnShared {
    /// Next connection-level byte not yet handed to any subflow.
    pub snd_next_dsn: u64,
    /// One past the last byte the application has written.
    pub snd_end_dsn: u64,
    /// Connection-level reassembly of received data (DSN space).
    pub rcv: Reassembly,
    /// Receive buffer size in bytes; the free part is advertised as window.
    pub rcv_buf: u64,
    /// Bytes received but not yet read by the application.
    pub rcv_unread: u64,
    /// Largest right edge (DATA_ACK + window, DSN space) advertised so far: never moved left
    /// (baselines spec C.2, RFC 8684 3.3.4; Linux tcp_select_window never shrinks the window).
    pub rcv_edge: u64,
    /// Snapshot of all subflows for coupled congestion control.
    pub siblings: Vec<SiblingInfo>,
}

impl ConnShared {
    pub fn new(rcv_buf: u64) -> Self {
        ConnShared {
            snd_next_dsn: 0,
            snd_end_dsn: 0,
            rcv: Reassembly::new(0),
            rcv_buf,
            rcv_unread: 0,
            rcv_edge: 0,
            siblings: Vec::new(),
        }
    }
    /// Free receive buffer: what every subflow advertises (MPTCP shares one window).
    #[inline]
    pub fn rcv_window(&self) -> u64 {
        self.rcv_buf.saturating_sub(self.rcv.ooo_bytes() + self.rcv_unread)
    }
    /// The window to put in an ACK carrying DATA_ACK = `rcv.next()`: the free buffer, or more if
    /// an earlier ACK already offered a farther right edge (out-of-order arrivals fill the buffer
    /// without moving DATA_ACK; the edge offered before stays valid). Records the edge.
    /// The edge never exceeds read point + buffer, so the peer never gets more than the buffer.
    pub fn advertise_window(&mut self) -> u64 {
        let data_ack = self.rcv.next();
        let wnd = self.rcv_window().max(self.rcv_edge.saturating_sub(data_ack));
        self.rcv_edge = self.rcv_edge.max(data_ack + wnd);
        wnd
    }
    #[inline]
    pub fn unsent(&self) -> u64 {
        self.snd_end_dsn - self.snd_next_dsn
    }
}

/// Lent to a subflow for one call.
pub struct SubflowCx<'a> {
    pub conn: &'a mut ConnShared,
}

/// A snapshot of a subflow's state for schedulers, metrics and observations.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SubflowInfo {
    pub established: bool,
    pub srtt: Duration,
    pub rttvar: Duration,
    pub min_rtt: Duration,
    pub rto: Duration,
    pub cwnd: u64,
    pub ssthresh: u64,
    /// Bytes in flight (RFC 6675 pipe).
    pub pipe: u64,
    /// Bytes sent and not cumulatively acknowledged.
    pub outstanding: u64,
    /// Bytes acknowledged (cumulatively or by SACK) over the subflow's life.
    pub delivered: u64,
    /// Payload bytes sent, retransmissions included.
    pub bytes_sent: u64,
    pub bytes_retransmitted: u64,
    pub segments_sent: u64,
    pub segments_retransmitted: u64,
    /// Segments detected lost (by SACK or RTO).
    pub segments_lost: u64,
    pub rto_count: u64,
    pub fast_recoveries: u64,
    /// Latest delivery-rate sample, bytes per second.
    pub delivery_rate: u64,
    pub in_recovery: bool,
    /// Peer's advertised receive window.
    pub peer_wnd: u64,
    /// Payload bytes received in order on this subflow.
    pub bytes_received: u64,
}

// Scoreboard flags.
const SACKED: u8 = 1;
const LOST: u8 = 2;
const RETRANS: u8 = 4;
const EVER_RETRANS: u8 = 8;

#[derive(Clone, Copy, Debug)]
struct SentSeg {
    seq: u64,
    dsn: u64,
    len: u32,
    flags: u8,
    sent_at: Instant,
    /// Delivery-rate sampling state at send time (as BBR's rate sample).
    delivered: u64,
    delivered_time: Instant,
}

/// Keeps the newest-sent, never-retransmitted segment (Karn's rule) as the ACK's sample.
#[inline]
fn note_sample(s: &SentSeg, sample: &mut Option<SentSeg>) {
    if s.flags & EVER_RETRANS == 0 && sample.is_none_or(|x| s.sent_at >= x.sent_at) {
        *sample = Some(*s);
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Recovery {
    None,
    /// SACK-based fast recovery until `snd_una >= point`.
    Fast {
        point: u64,
    },
    /// After an RTO: retransmit everything outstanding until `snd_una >= point`.
    Rto {
        point: u64,
    },
}

/// One subflow. See the module docs.
pub struct Subflow {
    pub id: SubflowId,
    role: Role,
    state: SfState,
    cfg: SubflowConfig,
    timers: [Option<Instant>; N_TIMERS],

    // ---- send half ----
    snd_una: u64,
    snd_nxt: u64,
    peer_wnd: u64,
    /// Scoreboard of sent, not cumulatively acknowledged segments, ascending `seq`.
    segs: VecDeque<SentSeg>,
    /// Absolute index of `segs[0]` (segments popped so far).
    head_abs: u64,
    sacked_bytes: u64,
    lost_bytes: u64,
    retrans_bytes: u64,
    /// Segments below this absolute index were evaluated for loss.
    lost_ptr: u64,
    /// Sacked bytes in `[head, lost_ptr)`.
    sacked_before_ptr: u64,
    /// Lost segments below this absolute index were retransmitted already.
    retx_ptr: u64,
    /// SACK blocks of the previous ACK: their segments are already marked.
    sack_cache: [SackBlock; 3],
    recovery: Recovery,
    /// RFC 6675 step 4.3: the first retransmission of a recovery episode goes out at once,
    /// whatever the window.
    fast_retx_pending: bool,
    /// snd_una when the last RTO fired: a repeated timeout does not reduce ssthresh again.
    rto_una: u64,
    probe_pending: bool,
    probe_backoff: u32,
    /// Retransmissions in the order they were sent: (seq, sent_at). Lets a lost retransmission
    /// be detected without an RTO once a later-sent segment is delivered (Linux
    /// tcp_mark_lost_retrans / the RACK idea of RFC 8985).
    retx_log: VecDeque<(u64, Instant)>,
    /// Retransmissions found lost again, to resend before scanning on (ascending send order).
    relost: VecDeque<u64>,
    /// Send time of the most recently sent segment known delivered.
    rack_xmit: Instant,
    backoff: u32,
    syn_pending: bool,
    /// A joining client subflow between the SYN-ACK and the peer's ACK of its third ACK
    /// (baselines spec A.1 D2, "pre-established"): TCP-established but carries no data yet.
    pre_established: bool,
    rtt: RttEstimator,
    cc: AnyCc,
    cc_state: CcState,
    next_send_time: Instant,
    delivered: u64,
    delivered_time: Instant,
    delivery_rate: u64,
    stats: SubflowInfo,

    // ---- receive half ----
    rcv_nxt: u64,
    /// Out-of-order segments: (seq, end, dsn of seq); merged when both spaces are contiguous.
    rcv_ooo: VecDeque<(u64, u64, u64)>,
    /// Most recently received out-of-order segment start (first SACK block, RFC 2018).
    last_ooo_seq: u64,
    unacked_segs: u32,
    ack_now: bool,
    ts_recent: u64,
}

impl Subflow {
    /// A new subflow. A client sends its SYN at the first `poll_transmit`.
    pub fn new(id: SubflowId, role: Role, cfg: SubflowConfig, cc: AnyCc, now: Instant) -> Self {
        let mss = cfg.mss;
        let cc_state = CcState {
            cwnd: cfg.init_cwnd as u64 * mss as u64,
            ssthresh: u64::MAX,
            mss,
            pipe: 0,
            srtt: Duration::ZERO,
            min_rtt: Duration::ZERO,
            abc: cfg.abc,
            in_recovery: false,
            index: id,
        };
        Subflow {
            id,
            role,
            state: SfState::Closed,
            timers: [None; N_TIMERS],
            snd_una: 0,
            snd_nxt: 0,
            peer_wnd: 65_535,
            segs: VecDeque::with_capacity(64),
            head_abs: 0,
            sacked_bytes: 0,
            lost_bytes: 0,
            retrans_bytes: 0,
            lost_ptr: 0,
            sacked_before_ptr: 0,
            retx_ptr: 0,
            sack_cache: [SackBlock::default(); 3],
            recovery: Recovery::None,
            fast_retx_pending: false,
            rto_una: u64::MAX,
            probe_pending: false,
            probe_backoff: 0,
            retx_log: VecDeque::new(),
            relost: VecDeque::new(),
            rack_xmit: Instant::ZERO,
            backoff: 0,
            syn_pending: role == Role::Client && id == 0,
            pre_established: false,
            rtt: RttEstimator::new(cfg.min_rto, cfg.max_rto),
            cc,
            cc_state,
            next_send_time: now,
            delivered: 0,
            delivered_time: now,
            delivery_rate: 0,
            stats: SubflowInfo::default(),
            rcv_nxt: 0,
            rcv_ooo: VecDeque::new(),
            last_ooo_seq: 0,
            unacked_segs: 0,
            ack_now: false,
            ts_recent: 0,
            cfg,
        }
    }

    pub fn state(&self) -> SfState {
        self.state
    }
    pub fn is_established(&self) -> bool {
        self.state == SfState::Established
    }
    /// A joining subflow whose MP_JOIN third ACK has not been acknowledged yet (A.1 D2).
    pub fn is_pre_established(&self) -> bool {
        self.pre_established
    }
    pub fn cc_name(&self) -> &'static str {
        self.cc.name()
    }
    pub fn config(&self) -> &SubflowConfig {
        &self.cfg
    }

    /// RFC 6675 pipe: outstanding − sacked − lost + retransmitted-in-flight.
    #[inline]
    pub fn pipe(&self) -> u64 {
        (self.snd_nxt - self.snd_una - self.syn_outstanding()) - self.sacked_bytes - self.lost_bytes
            + self.retrans_bytes
    }

    #[inline]
    fn syn_outstanding(&self) -> u64 {
        // The SYN occupies sequence number 0 until it is acknowledged.
        (self.snd_una == 0 && self.snd_nxt > 0) as u64
    }

    /// Bytes the subflow may send now: min(cwnd, peer window) − pipe.
    pub fn send_space(&self) -> u64 {
        if self.state != SfState::Established {
            return 0;
        }
        let wnd_room = (self.snd_una + self.peer_wnd).saturating_sub(self.snd_nxt);
        self.cc_state.cwnd.saturating_sub(self.pipe()).min(wnd_room)
    }

    pub fn info(&self) -> SubflowInfo {
        let mut s = self.stats;
        s.established = self.is_established();
        s.srtt = self.rtt.srtt();
        s.rttvar = self.rtt.rttvar();
        s.min_rtt = self.rtt.min_rtt();
        s.rto = self.current_rto();
        s.cwnd = self.cc_state.cwnd;
        s.ssthresh = self.cc_state.ssthresh;
        s.pipe = self.pipe();
        s.outstanding = self.outstanding();
        s.delivered = self.delivered;
        s.delivery_rate = self.delivery_rate;
        s.in_recovery = self.recovery != Recovery::None;
        s.peer_wnd = self.peer_wnd;
        s
    }

    pub fn sibling_info(&self) -> SiblingInfo {
        SiblingInfo {
            cwnd: self.cc_state.cwnd,
            ssthresh: self.cc_state.ssthresh,
            srtt: self.rtt.srtt(),
            min_rtt: self.rtt.min_rtt(),
            mss: self.cfg.mss,
            established: self.is_established(),
            cc_shared: self.cc.shared_state(),
        }
    }

    fn current_rto(&self) -> Duration {
        let base = self.rtt.rto();
        let d = base.saturating_mul(1u64 << self.backoff.min(30));
        d.min(self.rtt.max_rto())
    }

    /// Earliest timer deadline.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.timers.iter().flatten().min().copied()
    }

    // ------------------------------------------------------------------ input

    /// Handles one segment received from the peer.
    pub fn handle_segment(&mut self, now: Instant, seg: &Segment, cx: &mut SubflowCx) {
        self.ts_recent = seg.ts_val;
        if seg.flags.contains(Flags::SYN) {
            self.handle_syn(now, seg);
            return;
        }
        if self.state == SfState::SynReceived && seg.flags.contains(Flags::ACK) && seg.ack >= 1 {
            self.snd_una = 1;
            self.timers[Timer::Rto as usize] = None;
            self.state = SfState::Established;
            self.backoff = 0;
        }
        if self.state != SfState::Established {
            return;
        }
        if seg.flags.contains(Flags::MP_JOIN_ACK) {
            // The joining peer's third ACK (or its repetition): acknowledge it at once (4th ACK).
            self.ack_now = true;
        }
        if self.pre_established && seg.flags.contains(Flags::ACK) {
            // The peer acknowledged our third ACK: the subflow may carry data (A.1 D2).
            self.pre_established = false;
            self.backoff = 0;
            if self.snd_una == self.snd_nxt {
                self.timers[Timer::Rto as usize] = None;
            }
        }
        if seg.flags.contains(Flags::ACK) {
            self.on_ack(now, seg, cx);
        }
        if seg.len > 0 {
            self.on_data(now, seg, cx);
        } else if seg.seq < self.rcv_nxt {
            // A window probe (sequence number below what we expect): answer with an ACK.
            self.ack_now = true;
        }
    }

    fn handle_syn(&mut self, now: Instant, seg: &Segment) {
        match (self.role, seg.flags.contains(Flags::ACK)) {
            (Role::Server, false) => {
                // SYN (or its retransmission): answer with SYN-ACK.
                self.rcv_nxt = seg.seq + 1;
                if self.state == SfState::Closed {
                    self.state = SfState::SynReceived;
                }
                if self.state == SfState::SynReceived {
                    self.syn_pending = true;
                } else {
                    self.ack_now = true;
                }
            }
            (Role::Client, true) => {
                if self.state == SfState::SynSent && seg.ack == 1 {
                    self.rcv_nxt = seg.seq + 1;
                    self.snd_una = 1;
                    self.peer_wnd = seg.wnd as u64;
                    if self.backoff == 0 {
                        // Karn: no sample from a retransmitted SYN.
                        self.rtt.on_sample(now.saturating_since(Instant(seg.ts_ecr)));
                        self.cc_state.srtt = self.rtt.srtt();
                        self.cc_state.min_rtt = self.rtt.min_rtt();
                    } else if self.cc_state.cwnd > self.cfg.mss as u64 {
                        // RFC 6298 5.7 / RFC 5681: lost SYN => initial window of one segment.
                        self.cc_state.cwnd = self.cfg.mss as u64;
                    }
                    self.backoff = 0;
                    self.timers[Timer::Rto as usize] = None;
                    self.state = SfState::Established;
                    self.delivered_time = now;
                    if self.id != 0 {
                        // MP_JOIN: pre-established until the server acknowledges the third ACK
                        // (A.1 D2); the third ACK is repeated on the retransmission timer.
                        self.pre_established = true;
                        self.timers[Timer::Rto as usize] = Some(now + self.current_rto());
                    }
                }
                // A duplicate SYN-ACK means our ACK was lost: acknowledge again.
                self.ack_now = true;
            }
            _ => {}
        }
    }

    fn on_ack(&mut self, now: Instant, seg: &Segment, cx: &mut SubflowCx) {
        self.peer_wnd = seg.wnd as u64;
        let una_before = self.snd_una;
        let mut newly_acked = 0u64;
        // Newest-sent never-retransmitted segment acknowledged by this ACK: RTT and rate sample.
        let mut sample: Option<SentSeg> = None;

        // Cumulative part.
        if seg.ack > self.snd_una && seg.ack <= self.snd_nxt {
            while let Some(front) = self.segs.front_mut() {
                if front.seq + front.len as u64 <= seg.ack {
                    let s = *front;
                    self.segs.pop_front();
                    let abs = self.head_abs;
                    self.head_abs += 1;
                    if s.flags & SACKED != 0 {
                        self.sacked_bytes -= s.len as u64;
                        if abs < self.lost_ptr {
                            self.sacked_before_ptr -= s.len as u64;
                        }
                    } else {
                        newly_acked += s.len as u64;
                        note_sample(&s, &mut sample);
                    }
                    if s.flags & LOST != 0 {
                        self.lost_bytes -= s.len as u64;
                    }
                    if s.flags & RETRANS != 0 {
                        self.retrans_bytes -= s.len as u64;
                    }
                } else {
                    if front.seq < seg.ack {
                        // Partial acknowledgement of a segment: trim it.
                        let cut = seg.ack - front.seq;
                        let flags = front.flags;
                        front.seq += cut;
                        front.dsn += cut;
                        front.len -= cut as u32;
                        if flags & SACKED == 0 {
                            newly_acked += cut;
                        } else {
                            self.sacked_bytes -= cut;
                        }
                        if flags & LOST != 0 {
                            self.lost_bytes -= cut;
                        }
                        if flags & RETRANS != 0 {
                            self.retrans_bytes -= cut;
                        }
                    }
                    break;
                }
            }
            self.lost_ptr = self.lost_ptr.max(self.head_abs);
            self.retx_ptr = self.retx_ptr.max(self.head_abs);
            if self.lost_ptr == self.head_abs {
                self.sacked_before_ptr = 0;
            }
            self.snd_una = seg.ack;
        }

        // Selective part.
        let blocks = seg.sacks();
        if !blocks.is_empty() {
            let mut cache = [SackBlock::default(); 3];
            for (i, b) in blocks.iter().enumerate() {
                cache[i] = *b;
                let (lo, hi) = (b.start.max(self.snd_una), b.end.min(self.snd_nxt));
                if lo >= hi {
                    continue;
                }
                // Skip parts already covered by the previous ACK's blocks.
                let mut pieces = [(lo, hi), (0, 0), (0, 0), (0, 0)];
                let mut n = 1;
                for c in self.sack_cache.iter().filter(|c| c.end > c.start) {
                    let mut out = [(0u64, 0u64); 4];
                    let mut m = 0;
                    for &(s, e) in &pieces[..n] {
                        if c.end <= s || c.start >= e {
                            out[m] = (s, e);
                            m += 1;
                        } else {
                            if s < c.start {
                                out[m] = (s, c.start);
                                m += 1;
                            }
                            if c.end < e && m < 4 {
                                out[m] = (c.end, e);
                                m += 1;
                            }
                        }
                    }
                    pieces = out;
                    n = m;
                }
                for &(s, e) in &pieces[..n] {
                    newly_acked += self.mark_sacked(s, e, &mut sample);
                }
            }
            self.sack_cache = cache;
        } else {
            self.sack_cache = [SackBlock::default(); 3];
        }

        if let Some(sm) = sample {
            self.rack_xmit = self.rack_xmit.max(sm.sent_at);
        }
        if self.sacked_bytes > 0 {
            self.detect_losses();
        }
        if self.retrans_bytes > 0 {
            self.detect_lost_retransmissions();
        }

        // RTT and delivery rate (Karn: only never-retransmitted segments).
        let mut rtt_sample = None;
        if let Some(s) = sample {
            let r = now.saturating_since(s.sent_at);
            // RFC 6298 5.7 / Karn: the backed-off RTO stays until a valid measurement.
            self.backoff = 0;
            self.rtt.on_sample(r);
            rtt_sample = Some(r);
            self.cc_state.srtt = self.rtt.srtt();
            self.cc_state.min_rtt = self.rtt.min_rtt();
        }
        if newly_acked > 0 {
            self.delivered += newly_acked;
            self.delivered_time = now;
            if let Some(s) = sample {
                let dt = now.saturating_since(s.delivered_time).0;
                if dt > 0 {
                    self.delivery_rate = ((self.delivered - s.delivered) as u128 * 1_000_000_000 / dt as u128) as u64;
                }
            }
        }

        // Recovery state machine.
        match self.recovery {
            Recovery::Fast { point } | Recovery::Rto { point } if self.snd_una >= point => {
                self.recovery = Recovery::None;
                self.cc_state.in_recovery = false;
                self.cc.on_recovery_exit(now, &mut self.cc_state);
            }
            _ => {}
        }
        if self.recovery == Recovery::None && self.lost_bytes > 0 {
            self.recovery = Recovery::Fast { point: self.snd_nxt };
            self.fast_retx_pending = true;
            self.stats.fast_recoveries += 1;
            self.cc_state.pipe = self.pipe();
            self.cc_state.in_recovery = true;
            let sib = &cx.conn.siblings;
            self.cc.on_congestion_event(now, &mut self.cc_state, CongestionEvent::Loss, sib);
        }

        if newly_acked > 0 && !matches!(self.recovery, Recovery::Fast { .. }) {
            self.cc_state.pipe = self.pipe();
            let ack = AckSample {
                newly_acked,
                rtt: rtt_sample,
                delivered: self.delivered,
                delivery_rate: self.delivery_rate,
                app_limited: false,
            };
            let sib = &cx.conn.siblings;
            self.cc.on_ack(now, &mut self.cc_state, &ack, sib);
        }

        // RFC 6298 5.2 / 5.3: stop when all is acknowledged, restart on a cumulative ACK.
        if self.snd_una == self.snd_nxt {
            self.timers[Timer::Rto as usize] = None;
        } else if self.snd_una > una_before {
            self.timers[Timer::Rto as usize] = Some(now + self.current_rto());
        }
    }

    /// Marks segments fully inside `[s, e)` as SACKed; returns newly acknowledged bytes.
    fn mark_sacked(&mut self, s: u64, e: u64, sample: &mut Option<SentSeg>) -> u64 {
        let mut i = self.segs.partition_point(|x| x.seq < s);
        let mut n = 0;
        while i < self.segs.len() {
            let seg = self.segs[i];
            let end = seg.seq + seg.len as u64;
            if end > e {
                break;
            }
            if seg.flags & SACKED == 0 {
                let len = seg.len as u64;
                if seg.flags & LOST != 0 {
                    self.lost_bytes -= len;
                }
                if seg.flags & RETRANS != 0 {
                    self.retrans_bytes -= len;
                }
                note_sample(&seg, sample);
                self.segs[i].flags = (seg.flags & EVER_RETRANS) | SACKED;
                self.sacked_bytes += len;
                if self.head_abs + (i as u64) < self.lost_ptr {
                    self.sacked_before_ptr += len;
                }
                n += len;
            }
            i += 1;
        }
        n
    }

    /// RFC 6675 IsLost: a segment is lost once more than (DupThresh − 1)·MSS bytes above it are
    /// SACKed. Holes are evaluated once, in ascending order.
    fn detect_losses(&mut self) {
        let thresh = (self.cfg.dupthresh as u64 - 1) * self.cfg.mss as u64;
        let end_abs = self.head_abs + self.segs.len() as u64;
        while self.lost_ptr < end_abs {
            let i = (self.lost_ptr - self.head_abs) as usize;
            let seg = self.segs[i];
            if seg.flags & SACKED != 0 {
                self.sacked_before_ptr += seg.len as u64;
            } else if self.sacked_bytes - self.sacked_before_ptr > thresh {
                if seg.flags & LOST == 0 {
                    self.segs[i].flags |= LOST;
                    self.lost_bytes += seg.len as u64;
                    self.stats.segments_lost += 1;
                    if seg.flags & RETRANS != 0 {
                        // A retransmission marked lost again (only after an RTO rewind).
                        self.segs[i].flags &= !RETRANS;
                        self.retrans_bytes -= seg.len as u64;
                    }
                }
            } else {
                break;
            }
            self.lost_ptr += 1;
        }
    }

    /// A retransmission is lost if a segment sent after it (by more than a reordering window of
    /// min_rtt/4) has been delivered: mark it lost again so it is resent without waiting for RTO.
    fn detect_lost_retransmissions(&mut self) {
        let reo_wnd = Duration(self.rtt.min_rtt().0 / 4);
        while let Some(&(seq, sent)) = self.retx_log.front() {
            if seq < self.snd_una {
                self.retx_log.pop_front();
                continue;
            }
            if sent + reo_wnd >= self.rack_xmit {
                break;
            }
            self.retx_log.pop_front();
            let i = self.segs.partition_point(|x| x.seq < seq);
            if i < self.segs.len() && self.segs[i].seq == seq && self.segs[i].sent_at == sent {
                let f = self.segs[i].flags;
                if f & RETRANS != 0 && f & SACKED == 0 {
                    // Still LOST: only its retransmission stops counting as in flight.
                    self.segs[i].flags &= !RETRANS;
                    self.retrans_bytes -= self.segs[i].len as u64;
                    self.stats.segments_lost += 1;
                    if self.head_abs + (i as u64) < self.retx_ptr {
                        self.relost.push_back(seq);
                    }
                }
            }
        }
    }

    fn on_data(&mut self, now: Instant, seg: &Segment, cx: &mut SubflowCx) {
        let (mut s, e) = (seg.seq, seg.end());
        // Data beyond the receive buffer (in DSN space) is dropped, as a real stack would.
        let read_point = cx.conn.rcv.next() - cx.conn.rcv_unread;
        if seg.dsn + seg.len as u64 > read_point + cx.conn.rcv_buf {
            self.ack_now = true;
            return;
        }
        let mut dsn = seg.dsn;
        if e <= self.rcv_nxt {
            self.ack_now = true; // duplicate: acknowledge at once
            return;
        }
        if s < self.rcv_nxt {
            dsn += self.rcv_nxt - s;
            s = self.rcv_nxt;
        }
        if s == self.rcv_nxt {
            let filled_hole = !self.rcv_ooo.is_empty();
            self.deliver(s, e, dsn, cx);
            // Pull queued segments that are now in order.
            while let Some(&(qs, qe, qd)) = self.rcv_ooo.front() {
                if qs > self.rcv_nxt {
                    break;
                }
                self.rcv_ooo.pop_front();
                if qe > self.rcv_nxt {
                    let skip = self.rcv_nxt - qs;
                    self.deliver(self.rcv_nxt, qe, qd + skip, cx);
                }
            }
            if filled_hole || !self.cfg.delayed_ack {
                self.ack_now = true;
            } else {
                self.unacked_segs += 1;
                if self.unacked_segs >= 2 {
                    self.ack_now = true;
                } else if self.timers[Timer::DelayedAck as usize].is_none() {
                    self.timers[Timer::DelayedAck as usize] = Some(now + self.cfg.delayed_ack_timeout);
                }
            }
        } else {
            // Out of order: queue and send an immediate duplicate ACK with SACK.
            self.queue_ooo(s, e, dsn);
            self.last_ooo_seq = s;
            self.ack_now = true;
        }
    }

    fn deliver(&mut self, s: u64, e: u64, dsn: u64, cx: &mut SubflowCx) {
        self.rcv_nxt = e;
        self.stats.bytes_received += e - s;
        let ooo_before = cx.conn.rcv.ooo_bytes();
        cx.conn.rcv.insert(dsn, dsn + (e - s));
        if cx.conn.rcv.ooo_bytes() < ooo_before {
            // A connection-level hole was filled: the shared window just opened, tell the peer now.
            self.ack_now = true;
        }
    }

    fn queue_ooo(&mut self, s: u64, e: u64, dsn: u64) {
        let v = &mut self.rcv_ooo;
        let i = v.partition_point(|r| r.0 < s);
        // Merge with the previous entry when both sequence spaces continue.
        if i > 0 && v[i - 1].1 >= s {
            let p = &mut v[i - 1];
            if p.1 >= e {
                return;
            }
            if p.2 + (s - p.0) == dsn {
                p.1 = e;
                self.merge_forward(i - 1);
                return;
            }
        }
        v.insert(i, (s, e, dsn));
        self.merge_forward(i);
    }

    fn merge_forward(&mut self, i: usize) {
        let v = &mut self.rcv_ooo;
        while i + 1 < v.len() && v[i + 1].0 <= v[i].1 {
            let (ns, ne, nd) = v[i + 1];
            let (cs, ce, cd) = v[i];
            if cd + (ns - cs) == nd || ne <= ce {
                v[i].1 = ce.max(ne);
                v.remove(i + 1);
            } else {
                break;
            }
        }
    }

    /// Fires expired timers.
    pub fn handle_timeout(&mut self, now: Instant, _cx: &mut SubflowCx) {
        if let Some(t) = self.timers[Timer::DelayedAck as usize] {
            if t <= now {
                self.timers[Timer::DelayedAck as usize] = None;
                if self.unacked_segs > 0 {
                    self.ack_now = true;
                }
            }
        }
        if let Some(t) = self.timers[Timer::Pacing as usize] {
            if t <= now {
                self.timers[Timer::Pacing as usize] = None;
            }
        }
        if let Some(t) = self.timers[Timer::Probe as usize] {
            if t <= now {
                self.probe_pending = true;
                self.probe_backoff = (self.probe_backoff + 1).min(10);
                let d = self.rtt.rto().saturating_mul(1 << self.probe_backoff).min(self.rtt.max_rto());
                self.timers[Timer::Probe as usize] = Some(now + d);
            }
        }
        if let Some(t) = self.timers[Timer::Rto as usize] {
            if t <= now {
                self.on_rto(now);
            }
        }
    }

    fn on_rto(&mut self, now: Instant) {
        if self.pre_established {
            // The MP_JOIN third ACK (or the server's ACK of it) was lost: repeat it, with
            // backoff. Not a data RTO (Linux uses a separate timer for it).
            self.backoff = (self.backoff + 1).min(30);
            self.ack_now = true;
            self.timers[Timer::Rto as usize] = Some(now + self.current_rto());
            return;
        }
        self.stats.rto_count += 1;
        self.backoff = (self.backoff + 1).min(30);
        match self.state {
            SfState::SynSent | SfState::SynReceived => {
                self.syn_pending = true;
                self.timers[Timer::Rto as usize] = Some(now + self.current_rto());
                return;
            }
            SfState::Established if self.snd_una < self.snd_nxt => {}
            _ => {
                self.timers[Timer::Rto as usize] = None;
                return;
            }
        }
        self.cc_state.pipe = self.pipe();
        let repeated = matches!(self.recovery, Recovery::Rto { .. }) && self.snd_una == self.rto_una;
        let ssthresh = self.cc_state.ssthresh;
        self.cc.on_rto(now, &mut self.cc_state);
        if repeated {
            // RFC 5681 3.1: the segment was already resent by the timer; keep ssthresh.
            self.cc_state.ssthresh = ssthresh;
        }
        self.rto_una = self.snd_una;
        self.fast_retx_pending = false;
        // Linux tcp_enter_loss: every un-SACKed segment is lost; retransmissions are forgotten.
        for s in self.segs.iter_mut() {
            if s.flags & SACKED == 0 {
                if s.flags & LOST == 0 {
                    self.lost_bytes += s.len as u64;
                    self.stats.segments_lost += 1;
                }
                s.flags = (s.flags | LOST) & !RETRANS;
            }
        }
        self.retrans_bytes = 0;
        self.retx_log.clear();
        self.relost.clear();
        self.lost_ptr = self.head_abs + self.segs.len() as u64;
        self.sacked_before_ptr = self.sacked_bytes;
        self.retx_ptr = self.head_abs;
        self.recovery = Recovery::Rto { point: self.snd_nxt };
        self.cc_state.in_recovery = false; // the window grows again in slow start
        self.timers[Timer::Rto as usize] = Some(now + self.current_rto());
    }

    // ----------------------------------------------------------------- output

    /// Next segment to send, if any. Call until `None` after every input.
    pub fn poll_transmit(&mut self, now: Instant, cx: &mut SubflowCx) -> Option<Segment> {
        if self.syn_pending {
            self.syn_pending = false;
            let wnd = cx.conn.rcv_window().min(u32::MAX as u64) as u32;
            return Some(self.make_syn(now, wnd));
        }
        if self.state == SfState::Established {
            if let Some(seg) = self.poll_data(now, cx) {
                return Some(seg);
            }
        }
        if self.probe_pending && self.state == SfState::Established {
            self.probe_pending = false;
            let mut seg = self.base_segment(now, cx);
            seg.seq = self.snd_una - 1;
            return Some(seg);
        }
        if self.ack_now {
            let mut seg = self.base_segment(now, cx);
            seg.seq = self.snd_nxt;
            return Some(seg);
        }
        None
    }

    /// The peer's window is closed and nothing is in flight: arm the persist timer (RFC 9293
    /// 3.8.6.1) so a lost window update cannot stall the connection.
    pub fn arm_probe(&mut self, now: Instant) {
        if self.timers[Timer::Probe as usize].is_none() && self.snd_una == self.snd_nxt {
            self.timers[Timer::Probe as usize] = Some(now + self.rtt.rto());
        }
    }

    /// Sends an ACK at the next `poll_transmit` (window update after the application read).
    pub fn request_ack(&mut self) {
        if self.state == SfState::Established {
            self.ack_now = true;
        }
    }

    fn make_syn(&mut self, now: Instant, wnd: u32) -> Segment {
        let mut seg = Segment {
            sf: self.id,
            flags: Flags::SYN,
            wnd,
            seq: 0,
            ts_val: now.0,
            ts_ecr: self.ts_recent,
            ..Default::default()
        };
        if self.id != 0 {
            seg.flags = seg.flags.with(Flags::MP_JOIN);
        }
        if self.role == Role::Server {
            seg.flags = seg.flags.with(Flags::ACK);
            seg.ack = self.rcv_nxt;
            self.state = SfState::SynReceived;
        } else {
            self.state = SfState::SynSent;
        }
        self.snd_nxt = self.snd_nxt.max(1);
        if self.timers[Timer::Rto as usize].is_none() {
            self.timers[Timer::Rto as usize] = Some(now + self.current_rto());
        }
        seg
    }

    /// ACK fields common to every segment; clears the pending-ACK state.
    fn base_segment(&mut self, now: Instant, cx: &mut SubflowCx) -> Segment {
        self.ack_now = false;
        self.unacked_segs = 0;
        self.timers[Timer::DelayedAck as usize] = None;
        let mut seg = Segment {
            sf: self.id,
            flags: Flags::ACK,
            ack: self.rcv_nxt,
            wnd: cx.conn.advertise_window().min(u32::MAX as u64) as u32,
            data_ack: cx.conn.rcv.next(),
            ts_val: now.0,
            ts_ecr: self.ts_recent,
            ..Default::default()
        };
        if !self.rcv_ooo.is_empty() {
            self.fill_sack(&mut seg);
        }
        if self.pre_established {
            seg.flags = seg.flags.with(Flags::MP_JOIN_ACK);
        }
        seg
    }

    /// RFC 2018: the block holding the most recent arrival first, then the highest others.
    fn fill_sack(&self, seg: &mut Segment) {
        let mut n = 0usize;
        // Entries are sorted and disjoint: binary search for the one holding the latest arrival.
        let k = self.rcv_ooo.partition_point(|r| r.1 <= self.last_ooo_seq);
        let first = (k < self.rcv_ooo.len() && self.rcv_ooo[k].0 <= self.last_ooo_seq).then_some(k);
        // Coalesce entries that are contiguous in subflow space (DSN breaks do not matter here).
        let block_at = |i: usize| -> (usize, SackBlock) {
            let mut lo = i;
            while lo > 0 && self.rcv_ooo[lo - 1].1 >= self.rcv_ooo[lo].0 {
                lo -= 1;
            }
            let mut hi = i;
            while hi + 1 < self.rcv_ooo.len() && self.rcv_ooo[hi].1 >= self.rcv_ooo[hi + 1].0 {
                hi += 1;
            }
            (lo, SackBlock { start: self.rcv_ooo[lo].0, end: self.rcv_ooo[hi].1 })
        };
        let mut first_lo = usize::MAX;
        if let Some(i) = first {
            let (lo, b) = block_at(i);
            first_lo = lo;
            seg.sack[0] = b;
            n = 1;
        }
        let mut i = self.rcv_ooo.len();
        while i > 0 && n < 3 {
            let (lo, b) = block_at(i - 1);
            if lo != first_lo {
                seg.sack[n] = b;
                n += 1;
            }
            i = lo;
        }
        seg.n_sack = n as u8;
    }

    fn poll_data(&mut self, now: Instant, cx: &mut SubflowCx) -> Option<Segment> {
        // Pacing.
        if let Some(rate) = self.cc.pacing_rate(&self.cc_state) {
            if rate > 0 && now < self.next_send_time {
                self.timers[Timer::Pacing as usize] = Some(self.next_send_time);
                return None;
            }
        }
        let pipe = self.pipe();
        let cwnd = self.cc_state.cwnd;
        // Retransmit a lost segment first (RFC 6675 NextSeg rule 1).
        if let Some(i) = self.next_retransmission() {
            let s = self.segs[i];
            if pipe + s.len as u64 > cwnd && !self.fast_retx_pending {
                return None;
            }
            self.fast_retx_pending = false;
            self.segs[i].flags |= RETRANS | EVER_RETRANS;
            self.segs[i].sent_at = now;
            self.segs[i].delivered = self.delivered;
            self.segs[i].delivered_time = self.delivered_time;
            self.retrans_bytes += s.len as u64;
            if self.head_abs + i as u64 >= self.retx_ptr {
                self.retx_ptr = self.head_abs + i as u64 + 1;
            } else {
                self.relost.pop_front();
            }
            self.retx_log.push_back((s.seq, now));
            self.stats.segments_retransmitted += 1;
            self.stats.bytes_retransmitted += s.len as u64;
            let mut seg = self.base_segment(now, cx);
            seg.seq = s.seq;
            seg.len = s.len as u16;
            seg.dsn = s.dsn;
            if i == 0 {
                self.timers[Timer::Rto as usize] = Some(now + self.current_rto());
            }
            return Some(self.account_sent(now, seg));
        }
        None
    }

    /// Bytes of new data this subflow may send now: free congestion window, zero while it is
    /// not established, is pacing, or still has lost data to resend (RFC 6675 NextSeg: lost
    /// data before new data; A.1 T1 after an RTO).
    pub fn new_data_space(&self, now: Instant) -> u64 {
        if self.state != SfState::Established
            || self.pre_established
            || (self.lost_bytes > 0 && self.lost_bytes > self.retrans_bytes)
        {
            return 0;
        }
        if self.next_send_time > now && self.cc.pacing_rate(&self.cc_state).is_some_and(|r| r > 0) {
            return 0;
        }
        self.cc_state.cwnd.saturating_sub(self.pipe())
    }

    /// Sends `len` bytes of connection data starting at `dsn` as a new subflow segment.
    /// The caller checked [`Subflow::new_data_space`].
    pub fn send_new(&mut self, now: Instant, dsn: u64, len: u32, cx: &mut SubflowCx) -> Segment {
        self.timers[Timer::Probe as usize] = None;
        self.probe_backoff = 0;
        let seq = self.snd_nxt;
        self.snd_nxt += len as u64;
        if self.segs.is_empty() {
            // Nothing in flight: a new delivery-rate interval starts now.
            self.delivered_time = now;
        }
        self.segs.push_back(SentSeg {
            seq,
            dsn,
            len,
            flags: 0,
            sent_at: now,
            delivered: self.delivered,
            delivered_time: self.delivered_time,
        });
        if self.timers[Timer::Rto as usize].is_none() {
            self.timers[Timer::Rto as usize] = Some(now + self.current_rto());
        }
        let mut seg = self.base_segment(now, cx);
        seg.seq = seq;
        seg.len = len as u16;
        seg.dsn = dsn;
        self.account_sent(now, seg)
    }

    /// Connection-level ranges `(dsn, len)` of data sent on this subflow and not yet
    /// acknowledged on it (cumulatively or by SACK): what MPTCP reinjects elsewhere.
    pub fn unacked_data(&self, out: &mut Vec<(u64, u32)>) {
        out.extend(self.segs.iter().filter(|s| s.flags & SACKED == 0).map(|s| (s.dsn, s.len)));
    }

    /// Halves the window (opportunistic-retransmission penalization, baselines spec A.3).
    pub fn penalize(&mut self) {
        let mss = self.cfg.mss as u64;
        let prior = self.cc_state.cwnd;
        self.cc_state.cwnd = (prior / 2 / mss * mss).max(mss);
        if prior >= self.cc_state.ssthresh {
            self.cc_state.ssthresh = (self.cc_state.ssthresh / 2).max(2 * mss);
        }
    }

    /// Path came back: restart the retransmission timer now with no backoff, so the subflow
    /// resumes at once instead of waiting out a backed-off RTO. Returns whether the timer was
    /// armed (the connection then knows that this timeout is a restart, not a failure).
    pub fn path_up(&mut self, now: Instant) -> bool {
        self.backoff = 0;
        if self.snd_una < self.snd_nxt
            || self.syn_pending
            || matches!(self.state, SfState::SynSent | SfState::SynReceived)
        {
            self.timers[Timer::Rto as usize] = Some(now);
            return true;
        }
        false
    }

    /// A client subflow other than the first waits for the MP_CAPABLE subflow; this starts its
    /// MP_JOIN handshake.
    pub fn start_join(&mut self) {
        if self.state == SfState::Closed && self.role == Role::Client {
            self.syn_pending = true;
        }
    }

    /// Whether an RTO is being recovered from (A.1 T1).
    pub fn in_loss_state(&self) -> bool {
        matches!(self.recovery, Recovery::Rto { .. })
    }

    pub fn mss(&self) -> u32 {
        self.cfg.mss
    }

    /// Bytes sent and not cumulatively acknowledged.
    #[inline]
    pub fn outstanding(&self) -> u64 {
        self.snd_nxt - self.snd_una - self.syn_outstanding()
    }

    /// Bytes acknowledged (cumulatively or by SACK) so far.
    #[inline]
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    #[inline]
    pub fn srtt(&self) -> Duration {
        self.rtt.srtt()
    }

    fn account_sent(&mut self, now: Instant, seg: Segment) -> Segment {
        self.stats.segments_sent += 1;
        self.stats.bytes_sent += seg.len as u64;
        self.cc.on_sent(now, &self.cc_state, seg.len as u32);
        if let Some(rate) = self.cc.pacing_rate(&self.cc_state) {
            if rate > 0 {
                let gap = Duration(seg.wire_size() as u64 * 1_000_000_000 / rate);
                self.next_send_time = self.next_send_time.max(now) + gap;
            }
        }
        seg
    }

    /// Index of the first lost, not yet retransmitted segment in `[retx_ptr, lost_ptr)`.
    fn next_retransmission(&mut self) -> Option<usize> {
        if self.lost_bytes == 0 {
            return None;
        }
        // Retransmissions found lost again come first (they are below the scan pointer).
        while let Some(&seq) = self.relost.front() {
            let i = self.segs.partition_point(|x| x.seq < seq);
            if i < self.segs.len() && self.segs[i].seq == seq && self.segs[i].flags & (LOST | RETRANS | SACKED) == LOST
            {
                return Some(i);
            }
            self.relost.pop_front();
        }
        while self.retx_ptr < self.lost_ptr {
            let i = (self.retx_ptr - self.head_abs) as usize;
            let f = self.segs[i].flags;
            if f & LOST != 0 && f & RETRANS == 0 {
                return Some(i);
            }
            self.retx_ptr += 1;
        }
        None
    }

    /// Sets the congestion window (external congestion control); at least one segment.
    pub fn set_cwnd(&mut self, cwnd: u64) {
        self.cc_state.cwnd = cwnd.max(self.cfg.mss as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::{CongestionEvent, Siblings};

    /// A controller with a huge window that paces at a fixed rate.
    struct Paced(u64);
    impl CongestionControl for Paced {
        fn name(&self) -> &'static str {
            "paced"
        }
        fn on_ack(&mut self, _: Instant, _: &mut CcState, _: &AckSample, _: Siblings) {}
        fn on_congestion_event(&mut self, _: Instant, _: &mut CcState, _: CongestionEvent, _: Siblings) {}
        fn on_rto(&mut self, _: Instant, _: &mut CcState) {}
        fn pacing_rate(&self, _: &CcState) -> Option<u64> {
            Some(self.0)
        }
    }

    fn established_client(cc: AnyCc) -> (Subflow, ConnShared) {
        let mut cfg = SubflowConfig::linux();
        cfg.init_cwnd = 100;
        let mut sf = Subflow::new(0, Role::Client, cfg, cc, Instant::ZERO);
        let mut conn = ConnShared::new(1 << 20);
        let mut cx = SubflowCx { conn: &mut conn };
        let syn = sf.poll_transmit(Instant::ZERO, &mut cx).unwrap();
        assert!(syn.flags.contains(Flags::SYN));
        let synack =
            Segment { flags: Flags::SYN.with(Flags::ACK), ack: 1, wnd: 1 << 20, ts_ecr: 0, ..Default::default() };
        sf.handle_segment(Instant(10_000_000), &synack, &mut cx);
        assert!(sf.is_established());
        (sf, conn)
    }

    /// Pacing at 1.2 MB/s spaces 1500-byte segments (1448 payload + 52 header) 1.25 ms apart,
    /// although the window would allow all of them at once; the pacing timer says when.
    #[test]
    fn pacing_spaces_segments() {
        let (mut sf, mut conn) = established_client(AnyCc::Custom(Box::new(Paced(1_200_000))));
        let mut now = Instant(10_000_000);
        let mut sent = Vec::new();
        for _ in 0..5 {
            assert!(sf.new_data_space(now) >= 1448, "window space at {now:?}");
            let mut cx = SubflowCx { conn: &mut conn };
            sf.send_new(now, 0, 1448, &mut cx);
            sent.push(now);
            // Nothing more until the pacing gap has passed.
            assert_eq!(sf.new_data_space(now), 0);
            now = sf.next_send_time;
        }
        let gaps: Vec<u64> = sent.windows(2).map(|w| w[1].0 - w[0].0).collect();
        assert_eq!(gaps, vec![1_250_000; 4]);
    }

    /// Without pacing the whole initial window may leave at once.
    #[test]
    fn unpaced_window_is_available_at_once() {
        let (sf, _) = established_client(AnyCc::by_name("newreno").unwrap());
        assert_eq!(sf.new_data_space(Instant(10_000_000)), 100 * 1448);
    }
}
