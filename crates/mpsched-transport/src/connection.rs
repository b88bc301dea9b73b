//! A multipath connection (MPTCP semantics): one subflow per path, data sequence numbers (DSN)
//! mapped onto subflow sequence numbers, DATA_ACK, a connection-level send queue with
//! reinjection, a shared receive buffer whose free space is advertised on every subflow, a path
//! manager (full mesh over the configured paths: the first subflow handshakes, the others join
//! after it), a packet scheduler and per-subflow congestion control, coupled or not.
//!
//! Behaviour follows the Linux out-of-tree MPTCP implementation as described in
//! `shared/specs/baselines.md` sections A and C.

use std::collections::VecDeque;

use crate::cc::CcSpec;
use crate::sched::{AnySched, Decision, SchedSpec, SchedSubflow, SchedView, Scheduler, SubflowSet, Verdict};
use crate::segment::{Flags, Segment};
use crate::subflow::{ConnShared, Role, Subflow, SubflowConfig, SubflowCx, SubflowInfo};
use crate::time::{Duration, Instant};

/// Index of a network path, assigned by the driver.
pub type PathId = u16;

/// Which end of the connection this is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// Opens the connection (sends SYN) and the MP_JOIN subflows.
    Client,
    Server,
}

#[derive(Clone, Debug)]
pub struct ConnConfig {
    pub subflow: SubflowConfig,
    /// Congestion control of every subflow (one instance each), e.g. `CcSpec::parse("cubic")`.
    pub cc: CcSpec,
    /// Receive buffer in bytes, shared by all subflows (its free space is the advertised window).
    pub rcv_buf: u64,
    /// One subflow per path, in this order. The first carries the MP_CAPABLE handshake.
    pub paths: Vec<PathId>,
    /// Packet scheduler, e.g. `SchedSpec::parse("minrtt")`.
    pub scheduler: SchedSpec,
    /// Paths flagged as backup (MP_PRIO): used only when no active subflow is usable.
    pub backup: Vec<bool>,
}

impl Default for ConnConfig {
    fn default() -> Self {
        ConnConfig {
            subflow: SubflowConfig::linux(),
            cc: CcSpec::default(),
            rcv_buf: 6 << 20,
            paths: vec![0],
            scheduler: SchedSpec::default(),
            backup: Vec::new(),
        }
    }
}

/// A segment to put on a path.
#[derive(Clone, Copy, Debug)]
pub struct Transmit {
    pub path: PathId,
    pub seg: Segment,
}

/// Up/down/backup state of a path, from the driver (interface events).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathState {
    Up,
    Down,
    Backup(bool),
}

/// Something the driver may want to know.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The first subflow completed its handshake.
    Established,
    /// A subflow completed its handshake or join.
    SubflowUp(u8),
    /// A subflow became potentially failed (RTO) or its path went down.
    SubflowDown(u8),
    /// The scheduler asked for an outside decision; the connection sends no new data until
    /// [`Connection::decide`] is called.
    DecisionNeeded,
}

/// Connection-level counters, including the head-of-line (HoL) figures of baselines spec C.3.
/// Counters are cumulative; interval figures are differences of two snapshots.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ConnInfo {
    /// Bytes the application has written.
    pub bytes_written: u64,
    /// Bytes handed to subflows at least once (next new DSN).
    pub bytes_sent_new: u64,
    /// Highest DATA_ACK received (sender side).
    pub data_acked: u64,
    /// Bytes delivered in order to the receiving application.
    pub bytes_delivered: u64,
    /// Bytes waiting out of order in the shared receive buffer (now).
    pub ooo_bytes: u64,
    /// Integral of out-of-order bytes over time, in byte·seconds.
    pub ooo_byte_seconds: f64,
    /// Time the receive window was below one MSS ("buffer full"), in seconds.
    pub rwnd_full_seconds: f64,
    /// Time the sender had data and window space on a subflow but the peer's window was closed.
    pub send_blocked_seconds: f64,
    /// Bytes received more than once at the connection level.
    pub duplicate_bytes: u64,
    /// Free receive window advertised now.
    pub rcv_window: u64,
    pub reinjected_bytes: u64,
    pub opportunistic_retransmissions: u64,
    pub penalizations: u64,
    /// Bytes sent as copies on additional subflows by redundant scheduling.
    pub redundant_bytes: u64,
}

/// A connection-level segment not yet DATA_ACKed, with the subflows that carried it.
#[derive(Clone, Copy, Debug)]
struct MetaSeg {
    dsn: u64,
    len: u32,
    carried: SubflowSet,
}

/// Connection-side state kept per subflow.
#[derive(Clone, Copy, Debug)]
struct SfMeta {
    /// Potentially failed: RTO fired, cleared by the next ACK of new data (A.1 D3).
    pf: bool,
    backup: bool,
    path_up: bool,
    announced: bool,
    last_penalization: Option<Instant>,
    min_srtt: u64,
    max_srtt: u64,
    /// Redundant mode: next DSN this subflow has not carried.
    red_next: u64,
    rto_seen: u64,
    /// set_path(Up) armed the subflow's retransmission timer for "now" (to resume at once):
    /// that one timeout is a restart, not a new failure.
    up_restart: bool,
    delivered_seen: u64,
    slots: SlotStats,
}

/// The state of one subflow at the moments the connection scheduled new data on it: one *time
/// slot* (one packet transmission) of the OLMS paper (olms.txt §II-A) per segment. The OLMS
/// paper's evaluation metrics (§VI-B) are the selected path's throughput, "the ratios of the size
/// of the congestion window to the smoothed RTT", and "the RTT of the scheduled path ... from the
/// measurements of smoothed RTT", per slot; these sums give their averages exactly. Integer
/// arithmetic only, so results are identical on every platform.
///
/// Counted: every new-data segment put on a subflow by the scheduler (or the only subflow of a
/// single-path connection), with the cwnd and srtt the scheduler saw when choosing. Not counted:
/// reinjections, opportunistic retransmissions, redundant copies and subflow-level
/// retransmissions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SlotStats {
    /// New-data segments scheduled on the subflow.
    pub slots: u64,
    /// Of those, the ones sent with an RTT estimate (srtt > 0): the sums below cover these.
    pub measured: u64,
    /// Σ cwnd × 8 × 10⁹ / srtt_ns, bits per second (integer division per slot).
    pub bw_bps_sum: u128,
    /// Σ srtt, nanoseconds.
    pub srtt_ns_sum: u128,
}

impl SlotStats {
    #[inline]
    fn record(&mut self, cwnd: u64, srtt_ns: u64) {
        self.slots += 1;
        if srtt_ns > 0 {
            self.measured += 1;
            // u64 division (a u128 one costs more); exact below a 2.3 GB window.
            self.bw_bps_sum += (cwnd.saturating_mul(8_000_000_000) / srtt_ns) as u128;
            self.srtt_ns_sum += srtt_ns as u128;
        }
    }

    /// Mean cwnd/srtt over the measured slots, Mbit/s (0 without any).
    pub fn mean_bw_mbps(&self) -> f64 {
        if self.measured == 0 {
            0.0
        } else {
            self.bw_bps_sum as f64 / self.measured as f64 / 1e6
        }
    }

    /// Mean srtt over the measured slots, ms (0 without any).
    pub fn mean_srtt_ms(&self) -> f64 {
        if self.measured == 0 {
            0.0
        } else {
            self.srtt_ns_sum as f64 / self.measured as f64 / 1e6
        }
    }

    /// Adds `other`'s counts (totals over several subflows or connections).
    pub fn add(&mut self, other: &SlotStats) {
        self.slots += other.slots;
        self.measured += other.measured;
        self.bw_bps_sum += other.bw_bps_sum;
        self.srtt_ns_sum += other.srtt_ns_sum;
    }

    /// `self − earlier` (both cumulative).
    pub fn since(&self, earlier: &SlotStats) -> SlotStats {
        SlotStats {
            slots: self.slots - earlier.slots,
            measured: self.measured - earlier.measured,
            bw_bps_sum: self.bw_bps_sum - earlier.bw_bps_sum,
            srtt_ns_sum: self.srtt_ns_sum - earlier.srtt_ns_sum,
        }
    }
}

pub struct Connection {
    side: Side,
    shared: ConnShared,
    subflows: Vec<Subflow>,
    paths: Vec<PathId>,
    meta: Vec<SfMeta>,
    sched: AnySched,
    coupled: bool,
    /// Connection-level retransmission queue: sent, not DATA_ACKed, ascending DSN.
    sent: VecDeque<MetaSeg>,
    data_una: u64,
    /// Right edge of the peer's window in DSN space: the largest DATA_ACK + window seen (C.2).
    wnd_right: u64,
    reinject: VecDeque<(u64, u32)>,
    pending: VecDeque<Transmit>,
    events: VecDeque<Event>,
    parked: bool,
    established: bool,
    read_total: u64,
    next_poll: usize,
    next_red: usize,
    info: ConnInfo,
    hol_last: Instant,
    blocked_since: Option<Instant>,
    views: Vec<SchedSubflow>,
    scratch: Vec<(u64, u32)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigError {
    /// The path list is empty or too long.
    Paths(String),
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConfigError::Paths(m) => f.write_str(m),
        }
    }
}

impl Connection {
    pub fn new(cfg: &ConnConfig, side: Side, now: Instant) -> Result<Self, ConfigError> {
        if cfg.paths.is_empty() || cfg.paths.len() > 8 {
            return Err(ConfigError::Paths(format!("expected 1 to 8 paths, got {}", cfg.paths.len())));
        }
        let role = match side {
            Side::Client => Role::Client,
            Side::Server => Role::Server,
        };
        let mut subflows = Vec::with_capacity(cfg.paths.len());
        for i in 0..cfg.paths.len() {
            subflows.push(Subflow::new(i as u8, role, cfg.subflow.clone(), cfg.cc.build(), now));
        }
        let sched: AnySched = cfg.scheduler.build();
        let coupled = cfg.cc.coupled();
        let meta = (0..cfg.paths.len())
            .map(|i| SfMeta {
                pf: false,
                backup: cfg.backup.get(i).copied().unwrap_or(false),
                path_up: true,
                announced: false,
                last_penalization: None,
                min_srtt: u64::MAX,
                max_srtt: 0,
                red_next: 0,
                rto_seen: 0,
                up_restart: false,
                delivered_seen: 0,
                slots: SlotStats::default(),
            })
            .collect();
        Ok(Connection {
            side,
            shared: ConnShared::new(cfg.rcv_buf),
            subflows,
            paths: cfg.paths.clone(),
            meta,
            sched,
            coupled,
            sent: VecDeque::new(),
            data_una: 0,
            wnd_right: 0, // set by the SYN-ACK (client) or the third ACK (server)
            reinject: VecDeque::new(),
            pending: VecDeque::new(),
            events: VecDeque::new(),
            parked: false,
            established: false,
            read_total: 0,
            next_poll: 0,
            next_red: 0,
            info: ConnInfo::default(),
            hol_last: now,
            blocked_since: None,
            views: Vec::with_capacity(cfg.paths.len()),
            scratch: Vec::new(),
        })
    }

    pub fn side(&self) -> Side {
        self.side
    }

    /// Application writes `bytes` more bytes; all are accepted (the send buffer is unbounded).
    pub fn write(&mut self, bytes: u64) -> u64 {
        self.shared.snd_end_dsn = self.shared.snd_end_dsn.saturating_add(bytes);
        bytes
    }

    /// Application reads up to `max` in-order bytes; returns how many.
    pub fn read(&mut self, max: u64) -> u64 {
        let avail = self.shared.rcv.next() - self.read_total;
        let n = avail.min(max);
        if n == 0 {
            return 0;
        }
        let before = self.shared.rcv_window();
        self.read_total += n;
        self.shared.rcv_unread = self.shared.rcv.next() - self.read_total;
        // Linux tcp_cleanup_rbuf: announce a window that at least doubled.
        let after = self.shared.rcv_window();
        if after >= 2 * before.max(1) && after >= self.subflows[0].mss() as u64 {
            if let Some(sf) = self.subflows.iter_mut().find(|s| s.is_established()) {
                sf.request_ack();
            }
        }
        n
    }

    /// Integrates the receiver's HoL figures up to `now`.
    fn account_hol(&mut self, now: Instant) {
        let dt = now.saturating_since(self.hol_last).as_secs_f64();
        if dt > 0.0 {
            self.info.ooo_byte_seconds += self.shared.rcv.ooo_bytes() as f64 * dt;
            if self.shared.rcv_window() < self.subflows[0].mss() as u64 {
                self.info.rwnd_full_seconds += dt;
            }
        }
        self.hol_last = now;
    }

    pub fn handle_segment(&mut self, now: Instant, _path: PathId, seg: &Segment) {
        let i = seg.sf as usize;
        if i >= self.subflows.len() {
            return;
        }
        self.account_hol(now);
        self.refresh_siblings();
        let mut cx = SubflowCx { conn: &mut self.shared };
        self.subflows[i].handle_segment(now, seg, &mut cx);
        self.shared.rcv_unread = self.shared.rcv.next() - self.read_total;

        if seg.flags.contains(Flags::ACK) && seg.data_ack >= self.data_una {
            self.data_una = seg.data_ack;
            // C.2: keep the largest right edge seen (a reordered or duplicated ACK with a smaller
            // window must not pull it back).
            self.wnd_right = self.wnd_right.max(seg.data_ack + seg.wnd as u64);
            while self.sent.front().is_some_and(|m| m.dsn + m.len as u64 <= self.data_una) {
                self.sent.pop_front();
            }
        }
        let sf = &self.subflows[i];
        let (delivered, srtt, established) = (sf.delivered(), sf.srtt(), sf.is_established());
        let m = &mut self.meta[i];
        if delivered > m.delivered_seen {
            m.delivered_seen = delivered;
            m.pf = false;
            m.up_restart = false;
        }
        if srtt.0 > 0 {
            m.min_srtt = m.min_srtt.min(srtt.0);
            m.max_srtt = m.max_srtt.max(srtt.0);
        }
        if established && !m.announced {
            m.announced = true;
            self.events.push_back(Event::SubflowUp(i as u8));
            if i == 0 && !self.established {
                self.established = true;
                self.events.push_back(Event::Established);
                if self.side == Side::Client {
                    // Path manager (full mesh): join the other paths once MP_CAPABLE completed.
                    for sf in self.subflows.iter_mut().skip(1) {
                        sf.start_join();
                    }
                }
            }
        }
    }

    pub fn handle_timeout(&mut self, now: Instant) {
        for i in 0..self.subflows.len() {
            if !self.subflows[i].poll_timeout().is_some_and(|t| t <= now) {
                continue;
            }
            let mut cx = SubflowCx { conn: &mut self.shared };
            self.subflows[i].handle_timeout(now, &mut cx);
            let rtos = self.subflows[i].info().rto_count;
            if rtos > self.meta[i].rto_seen {
                self.meta[i].rto_seen = rtos;
                if std::mem::take(&mut self.meta[i].up_restart) {
                    // The restart armed by set_path(Up): the path was just declared usable (A.1 D3
                    // "cleared when the interface comes back up"), so this is no new failure.
                    continue;
                }
                if !self.meta[i].path_up {
                    // The path is down: SubflowDown was reported and the subflow's data queued for
                    // reinjection at set_path(Down), and nothing new was put on it since.
                    continue;
                }
                if self.subflows.len() > 1 && self.subflows[i].is_established() {
                    // Linux: RTO => potentially failed, reinject its unacknowledged data elsewhere.
                    if !self.meta[i].pf {
                        self.events.push_back(Event::SubflowDown(i as u8));
                    }
                    self.meta[i].pf = true;
                    self.reinject_from(i);
                }
            }
        }
    }

    /// Queues subflow `i`'s unacknowledged data for reinjection on the others.
    fn reinject_from(&mut self, i: usize) {
        self.scratch.clear();
        self.subflows[i].unacked_data(&mut self.scratch);
        for &(dsn, len) in &self.scratch {
            if dsn + len as u64 <= self.data_una {
                continue;
            }
            // Keep the queue sorted by DSN and free of duplicates.
            let pos = self.reinject.partition_point(|r| r.0 < dsn);
            if self.reinject.get(pos).is_some_and(|r| r.0 == dsn) {
                continue;
            }
            self.reinject.insert(pos, (dsn, len));
        }
    }

    /// Interface events from the driver.
    pub fn set_path(&mut self, now: Instant, i: usize, st: PathState) {
        if i >= self.subflows.len() {
            return;
        }
        match st {
            PathState::Down => {
                if self.meta[i].path_up {
                    self.meta[i].path_up = false;
                    self.events.push_back(Event::SubflowDown(i as u8));
                    if self.subflows.len() > 1 {
                        self.reinject_from(i);
                    }
                }
            }
            PathState::Up => {
                if !self.meta[i].path_up {
                    self.meta[i].path_up = true;
                    self.meta[i].pf = false;
                    self.meta[i].up_restart = self.subflows[i].path_up(now);
                }
            }
            PathState::Backup(b) => self.meta[i].backup = b,
        }
    }

    /// Answers a `DecisionNeeded` (per-packet policies) or applies a per-interval decision.
    pub fn decide(&mut self, d: Decision) {
        self.sched.decide(&d);
        self.parked = false;
    }

    /// Seeds the scheduler's random numbers (Peekaboo's stochastic adjustment).
    pub fn seed_scheduler(&mut self, seed: u64) {
        self.sched.seed(seed);
    }

    /// Whether the connection waits for [`Connection::decide`].
    pub fn is_parked(&self) -> bool {
        self.parked
    }

    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    pub fn poll_transmit(&mut self, now: Instant) -> Option<Transmit> {
        if let Some(t) = self.pending.pop_front() {
            return Some(t);
        }
        // Subflow-level work first: handshakes, retransmissions, pure ACKs.
        let n = self.subflows.len();
        for k in 0..n {
            let i = (self.next_poll + k) % n;
            let mut cx = SubflowCx { conn: &mut self.shared };
            if let Some(seg) = self.subflows[i].poll_transmit(now, &mut cx) {
                self.next_poll = (i + 1) % n;
                return Some(Transmit { path: self.paths[i], seg });
            }
        }
        if self.parked || self.side == Side::Server && self.shared.unsent() == 0 && self.reinject.is_empty() {
            return None;
        }
        self.schedule(now)
    }

    /// Builds the scheduler's view for a segment of `len` bytes whose carriers are `carried`.
    fn build_views(&mut self, now: Instant, len: u32, carried: SubflowSet) -> bool {
        self.views.clear();
        let mut any_space = false;
        for (i, sf) in self.subflows.iter().enumerate() {
            let m = &self.meta[i];
            let info = sf.info();
            // A.1 D1-D3: established, not pre-established (join's 4th ACK), not potentially failed.
            let usable = sf.is_established() && !sf.is_pre_established() && !m.pf && m.path_up;
            let space = if usable { sf.new_data_space(now) } else { 0 };
            let available = usable && space >= len as u64;
            any_space |= available;
            self.views.push(SchedSubflow {
                info,
                usable,
                available,
                backup: m.backup,
                space,
                carried: carried.contains(i),
                queued: info.outstanding,
                min_srtt_ns: if m.min_srtt == u64::MAX { 0 } else { m.min_srtt },
                max_srtt_ns: m.max_srtt,
            });
        }
        any_space
    }

    /// Bytes the application has queued in the send buffer and no subflow has taken yet.
    /// Linux autotunes the send buffer to about twice the sum of the subflows' windows
    /// (tcp_sndbuf_expand), between 16 KiB and tcp_wmem[2] = 4 MiB; an application that writes
    /// more waits. ECF's k is this figure, not the whole file.
    fn queued_unsent(&self) -> u64 {
        let sum_cwnd: u64 = self.views.iter().map(|v| v.info.cwnd).sum();
        let sndbuf = (2 * sum_cwnd).clamp(16 << 10, 4 << 20);
        let in_flight = self.shared.snd_next_dsn - self.data_una;
        self.shared.unsent().min(sndbuf.saturating_sub(in_flight))
    }

    /// Asks the scheduler about a segment of `len` bytes (views already built).
    fn ask_scheduler(&mut self, now: Instant, len: u32, reinjection: bool) -> (Verdict, SubflowSet) {
        let info = self.info_now();
        let v = SchedView {
            subflows: &self.views,
            conn: &info,
            seg_len: len,
            reinjection,
            unsent: self.queued_unsent(),
            send_window: self.wnd_right.saturating_sub(self.shared.snd_next_dsn),
        };
        let mut out = SubflowSet::default();
        let verdict = if reinjection {
            self.sched.get_retrans(now, &v, &mut out)
        } else {
            self.sched.get_send(now, &v, &mut out)
        };
        (verdict, out)
    }

    fn carriers_of(&self, dsn: u64) -> Option<usize> {
        // New data is at the back: check it before searching.
        if let Some(last) = self.sent.back() {
            if last.dsn == dsn {
                return Some(self.sent.len() - 1);
            }
        }
        let k = self.sent.partition_point(|m| m.dsn < dsn);
        (k < self.sent.len() && self.sent[k].dsn == dsn).then_some(k)
    }

    /// Sends `len` bytes at `dsn` on subflow `i`.
    fn send_on(&mut self, now: Instant, i: usize, dsn: u64, len: u32) -> Transmit {
        let mut cx = SubflowCx { conn: &mut self.shared };
        let seg = self.subflows[i].send_new(now, dsn, len, &mut cx);
        if self.multipath() {
            if let Some(k) = self.carriers_of(dsn) {
                self.sent[k].carried.insert(i);
            }
        }
        Transmit { path: self.paths[i], seg }
    }

    /// More than one subflow: the connection-level retransmission queue is needed (reinjection,
    /// opportunistic retransmission, redundant scheduling). Plain TCP skips that bookkeeping.
    #[inline]
    fn multipath(&self) -> bool {
        self.subflows.len() > 1
    }

    fn schedule(&mut self, now: Instant) -> Option<Transmit> {
        let mss = self.subflows[0].mss();
        // 1. Reinjections (A.0 step 2).
        while let Some(&(dsn, len)) = self.reinject.front() {
            if dsn + len as u64 <= self.data_una {
                self.reinject.pop_front();
                continue;
            }
            let carried = self.carriers_of(dsn).map(|k| self.sent[k].carried).unwrap_or_default();
            if !self.build_views(now, len, carried) {
                return None;
            }
            let (verdict, out) = self.ask_scheduler(now, len, true);
            match (verdict, out.first()) {
                (Verdict::Send, Some(i)) if self.views[i].available => {
                    self.reinject.pop_front();
                    self.info.reinjected_bytes += len as u64;
                    return Some(self.send_on(now, i, dsn, len));
                }
                (Verdict::Ask, _) => return self.park(),
                _ => return None,
            }
        }
        // 2. Redundant mode (A.5 (a)): each subflow catches up on what it has not carried.
        if self.sched.redundant() && self.subflows.len() > 1 {
            return self.schedule_redundant(now, mss);
        }
        // 3. New data.
        let unsent = self.shared.unsent();
        if unsent == 0 {
            return None;
        }
        let len = (mss as u64).min(unsent) as u32;
        let s = if self.subflows.len() == 1 {
            // Plain TCP: no scheduling decision to make.
            let sf = &self.subflows[0];
            if !sf.is_established() || sf.new_data_space(now) < len as u64 {
                return None;
            }
            0
        } else {
            if !self.build_views(now, len, SubflowSet::default()) {
                return None;
            }
            let (verdict, out) = self.ask_scheduler(now, len, false);
            match (verdict, out.first()) {
                (Verdict::Send, Some(s)) if self.views[s].available => s,
                (Verdict::Ask, _) => return self.park(),
                _ => return None,
            }
        };
        let dsn = self.shared.snd_next_dsn;
        if dsn + len as u64 > self.wnd_right {
            // Receive-window limited (A.0 step 5): opportunistic retransmission + penalization.
            self.blocked_since.get_or_insert(now);
            if self.subflows.iter().all(|sf| sf.outstanding() == 0) {
                self.subflows[s].arm_probe(now);
            }
            if self.sched.opportunistic_retransmission() && self.subflows.len() > 1 {
                return self.opportunistic(now, s);
            }
            return None;
        }
        if let Some(t) = self.blocked_since.take() {
            self.info.send_blocked_seconds += now.saturating_since(t).as_secs_f64();
        }
        self.shared.snd_next_dsn += len as u64;
        if self.multipath() {
            self.sent.push_back(MetaSeg { dsn, len, carried: SubflowSet::default() });
            // The state the scheduler chose from (views are built before asking it).
            let info = &self.views[s].info;
            self.meta[s].slots.record(info.cwnd, info.srtt.0);
        } else {
            let si = self.subflows[0].sibling_info();
            self.meta[0].slots.record(si.cwnd, si.srtt.0);
        }
        Some(self.send_on(now, s, dsn, len))
    }

    fn park(&mut self) -> Option<Transmit> {
        self.parked = true;
        self.events.push_back(Event::DecisionNeeded);
        None
    }

    fn schedule_redundant(&mut self, now: Instant, mss: u32) -> Option<Transmit> {
        let n = self.subflows.len();
        let unsent = self.shared.unsent();
        let len_new = (mss as u64).min(unsent) as u32;
        self.build_views(now, 1, SubflowSet::default());
        let any_active = self.views.iter().any(|v| v.usable && !v.backup);
        for k in 0..n {
            let i = (self.next_red + k) % n;
            let v = self.views[i];
            if !v.usable || (v.backup && any_active) {
                continue;
            }
            let cursor = self.meta[i].red_next.max(self.data_una);
            if cursor < self.shared.snd_next_dsn {
                // Catch up: the first unacknowledged segment at or after the cursor.
                let kseg = self.sent.partition_point(|m| m.dsn + m.len as u64 <= cursor);
                let Some(&m) = self.sent.get(kseg) else { continue };
                if v.space < m.len as u64 {
                    continue;
                }
                self.meta[i].red_next = m.dsn + m.len as u64;
                self.next_red = (i + 1) % n;
                if !m.carried.is_empty() && !m.carried.contains(i) {
                    self.info.redundant_bytes += m.len as u64;
                }
                return Some(self.send_on(now, i, m.dsn, m.len));
            }
            if len_new == 0 || v.space < len_new as u64 {
                continue;
            }
            let dsn = self.shared.snd_next_dsn;
            if dsn + len_new as u64 > self.wnd_right {
                self.blocked_since.get_or_insert(now);
                return None;
            }
            if let Some(t) = self.blocked_since.take() {
                self.info.send_blocked_seconds += now.saturating_since(t).as_secs_f64();
            }
            self.shared.snd_next_dsn += len_new as u64;
            self.sent.push_back(MetaSeg { dsn, len: len_new, carried: SubflowSet::default() });
            self.meta[i].red_next = dsn + len_new as u64;
            self.next_red = (i + 1) % n;
            return Some(self.send_on(now, i, dsn, len_new));
        }
        None
    }

    /// Opportunistic retransmission and penalization (baselines spec A.3) on subflow `s`.
    fn opportunistic(&mut self, now: Instant, s: usize) -> Option<Transmit> {
        let h = *self.sent.front()?;
        if h.carried.is_empty() {
            return None;
        }
        let srtt_s = self.views[s].info.srtt;
        let due = self.meta[s].last_penalization.is_none_or(|t| now.saturating_since(t) >= srtt_s);
        if due {
            let all = self.sched.penalize_all_carriers();
            for o in (0..self.subflows.len()).filter(|&o| o != s && h.carried.contains(o)) {
                let vo = self.views[o].info;
                if srtt_s < vo.srtt && !vo.in_recovery {
                    self.subflows[o].penalize();
                    self.info.penalizations += 1;
                    self.meta[s].last_penalization = Some(now);
                }
                if !all {
                    break;
                }
            }
            self.sched.on_hol_event();
        }
        if h.carried.contains(s) {
            return None;
        }
        let mut retransmit = false;
        for o in (0..self.subflows.len()).filter(|&o| o != s && h.carried.contains(o)) {
            let vo = self.views[o].info;
            if vo.cwnd <= 4 * self.subflows[o].mss() as u64 {
                retransmit = true;
                break;
            } else if Duration(4 * srtt_s.0) >= vo.srtt {
                retransmit = false;
                break;
            } else {
                retransmit = true;
            }
        }
        if retransmit && self.views[s].space >= h.len as u64 {
            self.info.opportunistic_retransmissions += 1;
            return Some(self.send_on(now, s, h.dsn, h.len));
        }
        None
    }

    pub fn poll_timeout(&self) -> Option<Instant> {
        self.subflows.iter().filter_map(|s| s.poll_timeout()).min()
    }

    fn info_now(&self) -> ConnInfo {
        ConnInfo {
            bytes_written: self.shared.snd_end_dsn,
            bytes_sent_new: self.shared.snd_next_dsn,
            data_acked: self.data_una,
            bytes_delivered: self.shared.rcv.next(),
            ooo_bytes: self.shared.rcv.ooo_bytes(),
            duplicate_bytes: self.shared.rcv.duplicate_bytes(),
            rcv_window: self.shared.rcv_window(),
            ..self.info
        }
    }

    /// Connection counters, with time integrals accounted up to `now`.
    pub fn info_at(&mut self, now: Instant) -> ConnInfo {
        self.account_hol(now);
        if let Some(t) = self.blocked_since {
            self.info.send_blocked_seconds += now.saturating_since(t).as_secs_f64();
            self.blocked_since = Some(now);
        }
        self.info_now()
    }

    /// Connection counters (time integrals as of the last event).
    pub fn info(&self) -> ConnInfo {
        self.info_now()
    }

    pub fn subflow_count(&self) -> usize {
        self.subflows.len()
    }

    pub fn subflow_info(&self, i: usize) -> SubflowInfo {
        self.subflows[i].info()
    }

    /// Per-slot statistics of subflow `i` (see [`SlotStats`]), cumulative.
    pub fn slot_stats(&self, i: usize) -> SlotStats {
        self.meta[i].slots
    }

    pub fn subflows(&self) -> impl Iterator<Item = (u8, SubflowInfo)> + '_ {
        self.subflows.iter().map(|s| (s.id, s.info()))
    }

    /// Sets subflow `i`'s congestion window (external congestion control, DRL-CC).
    pub fn set_subflow_cwnd(&mut self, i: usize, cwnd: u64) {
        if let Some(sf) = self.subflows.get_mut(i) {
            sf.set_cwnd(cwnd);
        }
    }

    pub fn cc_name(&self) -> &'static str {
        self.subflows.first().map(|s| s.cc_name()).unwrap_or("")
    }

    pub fn scheduler_name(&self) -> &'static str {
        self.sched.name()
    }

    fn refresh_siblings(&mut self) {
        if self.coupled {
            self.shared.siblings.clear();
            self.shared.siblings.extend(self.subflows.iter().map(|s| s.sibling_info()));
        }
    }
}
