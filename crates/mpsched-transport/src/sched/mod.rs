//! Packet schedulers: which subflow carries the next segment of connection data.
//!
//! Names follow Linux's `struct mptcp_sched_ops`. The connection calls the scheduler whenever a
//! segment (new or reinjected) waits and at least one subflow could send. A new scheduler is one
//! file plus one line in the `registry!` table below.

mod blest;
mod dmptcp;
mod ecf;
mod emptcp;
mod external;
mod minrtt;
pub mod olms;
mod peekaboo;
#[cfg(any(test, feature = "example-algorithms"))]
pub mod prefer;
pub mod quality;
mod redundant;
mod roundrobin;
mod stms;
pub mod tmodel;
mod upstream;

pub use blest::Blest;
pub use dmptcp::{Dmptcp, DmptcpParams};
pub use ecf::Ecf;
pub use emptcp::{Emptcp, EmptcpParams};
pub use external::{External, ExternalBusy, ExternalFallback, ExternalMode, ExternalParams};
pub use minrtt::MinRtt;
pub use olms::Olms;
pub use peekaboo::Peekaboo;
pub use redundant::Redundant;
pub use roundrobin::RoundRobin;
pub use stms::Stms;
pub use upstream::{Upstream, UpstreamParams};

use std::sync::Arc;

use crate::algo::{AlgoEntry, Custom, Spec};
use crate::info::{ConnInfo, SubflowInfo};
use crate::observe::DecisionStats;
use crate::time::Instant;

/// A set of subflows as a bitmask (bit i = subflow i).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SubflowSet(pub u16);

impl SubflowSet {
    /// Adds subflow `i`.
    #[inline]
    pub fn insert(&mut self, i: usize) {
        self.0 |= 1 << i;
    }
    /// Subflow `i` is a member.
    #[inline]
    pub fn contains(self, i: usize) -> bool {
        self.0 & (1 << i) != 0
    }
    /// No member.
    #[inline]
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// Lowest member.
    #[inline]
    pub fn first(self) -> Option<usize> {
        (self.0 != 0).then(|| self.0.trailing_zeros() as usize)
    }
}

/// What the scheduler decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Send on the subflows set in `out`.
    Send,
    /// Hold the data for now (BLEST, ECF waiting for the fast subflow).
    Wait,
    /// Pause the connection until an outside policy answers with `Connection::decide`.
    Ask,
    /// Send on the subflow set in `out` a segment that starts `gap` bytes past the next DSN
    /// subflow `owner` will send (its oldest reserved DSN, else the next new DSN), or at the
    /// next new DSN if that is further. The bytes skipped are reserved for `owner`: the
    /// connection sends them on it, in DSN order, before any new data, as soon as it has window
    /// space (on the minRTT choice instead while it is not usable). STMS's pre-allocation for
    /// the fast path (Shi et al., USENIX ATC 2018). The connection sends nothing if the segment
    /// would pass the peer's window; it shortens the gap to the data written.
    SendAhead {
        /// The subflow the skipped bytes are reserved for.
        owner: u8,
        /// Bytes between `owner`'s next DSN and the segment sent now.
        gap: u64,
    },
}

/// One subflow as the scheduler sees it.
#[derive(Clone, Copy, Debug, Default)]
pub struct SchedSubflow {
    /// The subflow's snapshot.
    pub info: SubflowInfo,
    /// Not definitely unavailable (established, joined, not potentially failed, path up).
    pub usable: bool,
    /// Usable and has congestion-window space for the segment (Linux `mptcp_is_available`).
    pub available: bool,
    /// Flagged backup (MP_PRIO): used only when no active subflow is usable.
    pub backup: bool,
    /// Free congestion window in bytes.
    pub space: u64,
    /// The segment being scheduled was already sent on this subflow.
    pub carried: bool,
    /// Bytes sent on this subflow and not yet acknowledged on it.
    pub queued: u64,
    /// Running minimum of srtt in nanoseconds (BLEST's linger estimate), 0 before a sample.
    pub min_srtt_ns: u64,
    /// Running maximum of srtt in nanoseconds.
    pub max_srtt_ns: u64,
}

/// Everything a scheduler may look at.
pub struct SchedView<'a> {
    /// Every subflow, in subflow order.
    pub subflows: &'a [SchedSubflow],
    /// Connection counters.
    pub conn: &'a ConnInfo,
    /// Length of the segment to schedule.
    pub seg_len: u32,
    /// The segment is a reinjection (data already sent on another subflow).
    pub reinjection: bool,
    /// Connection-level bytes in the send buffer not yet handed to any subflow (ECF's k).
    pub unsent: u64,
    /// Connection-level send window left: peer's window right edge − next DSN to send.
    pub send_window: u64,
    /// The host policy's path preference ([`crate::Connection::set_path_preference`]): one
    /// value per subflow index, higher = preferred, non-positive = do not use; `None` when
    /// unset. Only schedulers that order paths by it read it (`dmptcp`).
    pub preference: Option<&'a [f32]>,
}

impl SchedView<'_> {
    /// minRTT selection, as Linux's `get_available_subflow` (mptcp_sched.c): the available
    /// active subflow with the smallest srtt; backups only when no active subflow is usable at
    /// all. Reinjections prefer subflows that have not carried the segment; when the active and
    /// backup passes find no such subflow to send on now, the path mask is cleared and the
    /// active pass repeated once. Ties go to the lower index.
    pub fn min_rtt(&self) -> Option<usize> {
        self.min_rtt_in(SubflowSet(u16::MAX))
    }

    /// [`SchedView::min_rtt`] restricted to the subflows of `set`: the others are treated as
    /// unusable (DMPTCP's minRTT inside its chosen set).
    pub fn min_rtt_in(&self, set: SubflowSet) -> Option<usize> {
        // One pass of Linux's `get_subflow_from_selectors` over the active or the backup
        // subflows; `masked` marks carriers as used. Returns the choice and Linux's `force`: set
        // when the choice is an unused subflow, or (no choice) when an unused one is only busy.
        let select = |backup: bool, masked: bool| -> (Option<usize>, bool) {
            let (mut best, mut found_unused, mut unused_busy) = (None::<usize>, false, false);
            for (i, s) in self.subflows.iter().enumerate() {
                let unused = !(masked && s.carried);
                if s.backup != backup || (!unused && found_unused) || !s.usable || !set.contains(i) {
                    continue;
                }
                if !s.available {
                    unused_busy |= unused;
                    continue;
                }
                if unused && !found_unused {
                    // The first unused candidate wipes a used one.
                    (best, found_unused) = (None, true);
                }
                if best.is_none_or(|b| s.info.srtt < self.subflows[b].info.srtt) {
                    best = Some(i);
                }
            }
            (best, if best.is_some() { found_unused } else { unused_busy })
        };
        let mut masked = self.reinjection;
        loop {
            let (best, force) = select(false, masked);
            if force {
                return best;
            }
            let (best, force) = select(true, masked);
            // Without a mask (new data, or the second round) another round would repeat this one.
            if force || !masked {
                return best;
            }
            masked = false;
        }
    }

    /// Sends on the minRTT choice, or waits if there is none: the default answer of most
    /// schedulers.
    pub fn send_min_rtt(&self, out: &mut SubflowSet) -> Verdict {
        send_on(self.min_rtt(), out)
    }

    /// The usable subflow with the smallest srtt, whether or not it has window space (BLEST/ECF's f).
    pub fn fastest(&self) -> Option<usize> {
        let mut best: Option<usize> = None;
        for (i, s) in self.subflows.iter().enumerate() {
            if s.usable && !s.backup && best.is_none_or(|b| s.info.srtt < self.subflows[b].info.srtt) {
                best = Some(i);
            }
        }
        best
    }
}

/// A packet scheduler.
pub trait Scheduler {
    /// Registry name of the scheduler.
    fn name(&self) -> &'static str;
    /// A segment of new data waits and some subflow may have space: set bits in `out`.
    fn get_send(&mut self, now: Instant, v: &SchedView, out: &mut SubflowSet) -> Verdict;
    /// Data must be reinjected (an RTO on a subflow, a path went down).
    fn get_retrans(&mut self, now: Instant, v: &SchedView, out: &mut SubflowSet) -> Verdict {
        self.get_send(now, v, out)
    }
    /// Every subflow carries every segment (Linux "redundant"), instead of one subflow per segment.
    fn redundant(&self) -> bool {
        false
    }
    /// In redundant mode, offer segments to the subflows in srtt order (minRTT first, EdAR:
    /// edar.txt §IV-A) instead of round-robin (Linux `mptcp_redundant.c`).
    fn redundant_min_rtt_first(&self) -> bool {
        false
    }
    /// Opportunistic retransmission and penalization when receive-window limited (Linux
    /// `mptcp_rcv_buf_optimization`; Raiciu et al. NSDI 2012 §4).
    fn opportunistic_retransmission(&self) -> bool {
        false
    }
    /// BLEST's variant (`mptcp_blest_rcv_buf_optimization` in mptcp_blest.c) penalizes every
    /// slower carrier, not only the first.
    fn penalize_all_carriers(&self) -> bool {
        false
    }
    /// Under per-subflow windows ([`crate::SubflowConfig::subflow_windows`]): whether a subflow
    /// whose own send window is full is shown as unavailable. True for the upstream kernel's
    /// scheduler, where such a subflow takes no more data now (the kernel would queue it in the
    /// subflow: `__subflow_push_pending`). False, the default, as the out-of-tree v0.95
    /// schedulers have it: `mptcp_next_segment` asks `get_available_subflow(.., false)`, no
    /// zero-window test; the chosen subflow then sends only within its window (the connection
    /// waits).
    fn hides_full_subflow_windows(&self) -> bool {
        false
    }
    /// A HoL event was handled by opportunistic retransmission / penalization (BLEST adapts its
    /// lambda: `retrans_flag` in mptcp_blest.c).
    fn on_hol_event(&mut self) {}
    /// An outside decision (answer to `Verdict::Ask`, or a per-interval setting).
    fn decide(&mut self, _d: &Decision) {}
    /// Seed for a scheduler that draws random numbers (the simulator derives it from the
    /// scenario seed), so that runs stay deterministic.
    fn seed(&mut self, _seed: u64) {}
    /// The connection was made ([`crate::Connection::new`]): what a scheduler that keeps its
    /// own timer or observation needs to know about it.
    fn start(&mut self, _s: &SchedStart) {}
    /// The scheduler's own deadline (a per-interval policy's next decision boundary): the
    /// connection includes it in [`crate::Connection::poll_timeout`].
    fn poll_timeout(&self) -> Option<Instant> {
        None
    }
    /// The deadline of [`Scheduler::poll_timeout`] passed: `v` is the connection now (no
    /// segment waits: `seg_len` 0, `carried` all false). The scheduler may change what it will
    /// decide for the following segments and set its next deadline.
    fn handle_timeout(&mut self, _now: Instant, _v: &SchedView) {}
    /// A learned policy's decision count and latencies (`None` for other schedulers).
    fn decision_stats(&self) -> Option<&DecisionStats> {
        None
    }
    /// The segment of a [`Verdict::SendAhead`] went out at `dsn` (`len` bytes).
    fn sent_ahead(&mut self, _dsn: u64, _len: u32) {}
}

/// What a scheduler learns about its connection at [`Scheduler::start`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SchedStart {
    /// When the connection was made.
    pub now: Instant,
    /// Subflows (one per configured path).
    pub paths: usize,
    /// Payload bytes of a full segment ([`Connection::mss`](crate::Connection::mss): the
    /// configured MSS less the DSS option on a multipath connection).
    pub mss: u32,
    /// Its receive buffer (bytes): the peer's too in a symmetric setup, and the simulator's.
    pub rcv_buf: u64,
}

/// An outside policy's answer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Decision {
    /// Per interval: 0 = normal (minRTT), 1 = redundant (EdAR).
    Mode(u8),
    /// Per interval: share of new data per subflow (MPTCP-RL, PDAA3C); non-positive = unused.
    Weights([f32; 8]),
    /// Per packet: the subflow for the pending segment (OLMS); `None` = the default (minRTT).
    Path(Option<u8>),
}

/// Generates, from one line per scheduler: [`AnySched`] (static dispatch over the built-ins plus
/// one boxed plug-in variant) and its [`Scheduler`] impl, [`SchedAlgo`] (each built-in's typed
/// parameters) and the table of names, aliases and parameter docs. A new scheduler is one file
/// (the type, its `params!` struct and `FromParams`) plus one line here.
macro_rules! registry {
    ($($(#[doc = $doc:literal])* $(#[cfg($cfg:meta)])? $variant:ident($ty:ty) $name:literal
        [$($alias:literal $(= $preset:literal)?),* $(,)?];)+) => {
        $crate::algo_registry! {
            any AnySched, algo SchedAlgo, dyn Scheduler, what "scheduler", entries ENTRIES;
            $($(#[doc = $doc])* $(#[cfg($cfg)])? $variant($ty) $name [$($alias $(= $preset)?),*];)+
        }

        impl Scheduler for AnySched {
            fn name(&self) -> &'static str {
                match self { $($(#[cfg($cfg)])? AnySched::$variant(s) => s.name(),)+ AnySched::Custom(s) => s.name() }
            }
            #[inline]
            fn get_send(&mut self, now: Instant, v: &SchedView, out: &mut SubflowSet) -> Verdict {
                match self { $($(#[cfg($cfg)])? AnySched::$variant(s) => s.get_send(now, v, out),)+ AnySched::Custom(s) => s.get_send(now, v, out) }
            }
            #[inline]
            fn get_retrans(&mut self, now: Instant, v: &SchedView, out: &mut SubflowSet) -> Verdict {
                match self { $($(#[cfg($cfg)])? AnySched::$variant(s) => s.get_retrans(now, v, out),)+ AnySched::Custom(s) => s.get_retrans(now, v, out) }
            }
            #[inline]
            fn redundant(&self) -> bool {
                match self { $($(#[cfg($cfg)])? AnySched::$variant(s) => s.redundant(),)+ AnySched::Custom(s) => s.redundant() }
            }
            #[inline]
            fn redundant_min_rtt_first(&self) -> bool {
                match self { $($(#[cfg($cfg)])? AnySched::$variant(s) => s.redundant_min_rtt_first(),)+ AnySched::Custom(s) => s.redundant_min_rtt_first() }
            }
            fn opportunistic_retransmission(&self) -> bool {
                match self { $($(#[cfg($cfg)])? AnySched::$variant(s) => s.opportunistic_retransmission(),)+ AnySched::Custom(s) => s.opportunistic_retransmission() }
            }
            fn penalize_all_carriers(&self) -> bool {
                match self { $($(#[cfg($cfg)])? AnySched::$variant(s) => s.penalize_all_carriers(),)+ AnySched::Custom(s) => s.penalize_all_carriers() }
            }
            fn hides_full_subflow_windows(&self) -> bool {
                match self { $($(#[cfg($cfg)])? AnySched::$variant(s) => s.hides_full_subflow_windows(),)+ AnySched::Custom(s) => s.hides_full_subflow_windows() }
            }
            fn on_hol_event(&mut self) {
                match self { $($(#[cfg($cfg)])? AnySched::$variant(s) => s.on_hol_event(),)+ AnySched::Custom(s) => s.on_hol_event() }
            }
            fn decide(&mut self, d: &Decision) {
                match self { $($(#[cfg($cfg)])? AnySched::$variant(s) => s.decide(d),)+ AnySched::Custom(s) => s.decide(d) }
            }
            fn seed(&mut self, seed: u64) {
                match self { $($(#[cfg($cfg)])? AnySched::$variant(s) => s.seed(seed),)+ AnySched::Custom(s) => s.seed(seed) }
            }
            fn start(&mut self, st: &SchedStart) {
                match self { $($(#[cfg($cfg)])? AnySched::$variant(s) => s.start(st),)+ AnySched::Custom(s) => s.start(st) }
            }
            #[inline]
            fn poll_timeout(&self) -> Option<Instant> {
                match self { $($(#[cfg($cfg)])? AnySched::$variant(s) => s.poll_timeout(),)+ AnySched::Custom(s) => s.poll_timeout() }
            }
            fn handle_timeout(&mut self, now: Instant, v: &SchedView) {
                match self { $($(#[cfg($cfg)])? AnySched::$variant(s) => s.handle_timeout(now, v),)+ AnySched::Custom(s) => s.handle_timeout(now, v) }
            }
            fn decision_stats(&self) -> Option<&DecisionStats> {
                match self { $($(#[cfg($cfg)])? AnySched::$variant(s) => s.decision_stats(),)+ AnySched::Custom(s) => s.decision_stats() }
            }
            fn sent_ahead(&mut self, dsn: u64, len: u32) {
                match self { $($(#[cfg($cfg)])? AnySched::$variant(s) => s.sent_ahead(dsn, len),)+ AnySched::Custom(s) => s.sent_ahead(dsn, len) }
            }
        }
    };
}

/// A scheduler chosen by name with typed parameters (`minrtt`, `olms:app=bandwidth,l=2`): what
/// [`crate::ConnConfig`] holds. [`SchedSpec::parse`] reads the text form;
/// [`SchedSpec::custom`] wraps a plug-in.
pub type SchedSpec = Spec<SchedAlgo>;

impl SchedSpec {
    /// A user's scheduler: `factory` builds one per connection.
    pub fn custom(name: &str, factory: impl Fn() -> Box<dyn Scheduler + Send + Sync> + Send + Sync + 'static) -> Self {
        Spec::from_algo(name, SchedAlgo::Custom(Custom { name: name.to_string(), factory: Arc::new(factory) }))
    }

    /// A fresh scheduler.
    pub fn build(&self) -> AnySched {
        self.algo().build()
    }
}

impl Default for SchedSpec {
    /// minRTT with opportunistic retransmission and penalization, as in Linux.
    fn default() -> Self {
        SchedSpec::parse("minrtt").expect("registered")
    }
}

impl AnySched {
    /// Builds a built-in scheduler from `name` or `name:key=value,...`; `None` if the name is
    /// unknown or a parameter is invalid (use [`SchedSpec::parse`] for the reason).
    pub fn by_name(name: &str) -> Option<AnySched> {
        SchedSpec::parse(name).ok().map(|s| s.build())
    }
}

/// The registered schedulers: canonical name, aliases with the parameters they preset, and
/// parameter docs (the documentation table and `mpsched list` are made from it).
pub fn registry() -> &'static [AlgoEntry] {
    ENTRIES
}

registry! {
    /// minRTT, the default of the out-of-tree Linux MPTCP v0.95: the available subflow with the
    /// smallest srtt, with opportunistic retransmission and penalisation.
    MinRtt(MinRtt) "minrtt" ["default", "minrtt-rp", "minrtt-norp" = "opportunistic=false"];
    /// The upstream Linux MPTCP scheduler (net/mptcp/protocol.c `mptcp_subflow_get_send`): the
    /// lowest linger time (queued bytes / pacing rate), 64 KB bursts; the `linux` profile's default.
    Upstream(Upstream) "upstream" [];
    /// Round-robin over the available subflows.
    RoundRobin(RoundRobin) "roundrobin" ["rr"];
    /// Every segment on every subflow (Linux mptcp_redundant.c): a subflow with window space sends
    /// the oldest segment not yet DATA_ACKed that it has not carried, else new data; subflows
    /// take turns. `external-mode` in redundant mode (EdAR) does the same, minRTT subflow first.
    Redundant(Redundant) "redundant" [];
    /// BLEST (Ferlin et al., IFIP Networking 2016): blocking estimation.
    Blest(Blest) "blest" [];
    /// ECF (Lim et al., CoNEXT 2017): earliest completion first.
    Ecf(Ecf) "ecf" [];
    /// Peekaboo (Wu et al., 2020): online-learning wait/send decisions.
    Peekaboo(Box<Peekaboo>) "peekaboo" ["peekaboo-pkt" = "per_packet_reward=true"];
    /// STMS (Shi et al., USENIX ATC 2018): the slow path sends ahead in DSN, leaving a gap the
    /// fast path fills, so that both arrive in order.
    Stms(Stms) "stms" [];
    /// Driven from outside: per-interval mode or weights, or per-packet paths (learning).
    External(External) "external" ["external-mode" = "mode=mode", "external-weights" = "mode=weights", "external-packet" = "mode=packet"];
    /// OLMS (Cai et al., IEEE TNSE 2025): Thompson sampling and a linear program per packet.
    #[cfg(feature = "olms")]
    Olms(Box<Olms>) "olms" ["olms-maxrtt" = "app=max-rtt", "olms-bw" = "app=bandwidth"];
    /// DMPTCP (Dong et al., JNCA 2018): a per-flow path set from the MPTCP transmission model,
    /// minRTT inside it.
    Dmptcp(Dmptcp) "dmptcp" [];
    /// eMPTCP (Lim et al., CoNEXT 2015): WiFi alone or all interfaces by energy per bit, with
    /// delayed use of the cellular subflow.
    Emptcp(Box<Emptcp>) "emptcp" [];
    /// Example (docs/extending.md): a preferred subflow while its srtt is within a bound.
    #[cfg(any(test, feature = "example-algorithms"))]
    Prefer(prefer::Prefer) "prefer" [];
}

/// `Send` on subflow `choice` (added to `out`), or `Wait` when there is none.
#[inline]
pub fn send_on(choice: Option<usize>, out: &mut SubflowSet) -> Verdict {
    match choice {
        Some(i) => {
            out.insert(i);
            Verdict::Send
        }
        None => Verdict::Wait,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    //! Shared helpers for the scheduler unit tests (hand-built [`SchedView`]s), and the tests of
    //! [`SchedView::min_rtt`] (Linux `get_available_subflow`), [`SchedView::fastest`], [`SubflowSet`] and
    //! the registry.
    use super::*;
    use crate::time::Duration;

    pub(crate) const MSS: u64 = 1448;

    pub(crate) fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }
    pub(crate) fn at_ms(x: u64) -> Instant {
        Instant(x * 1_000_000)
    }

    /// A usable, active, established subflow: srtt in ms, cwnd and pipe in segments of `MSS`.
    /// Available (Linux `mptcp_is_available`) iff at least one segment of window is free. min/max
    /// srtt = srtt, rttvar = srtt / 4, ssthresh infinite (initial slow start), not carried.
    pub(crate) fn sf(srtt_ms: u64, cwnd_segs: u64, pipe_segs: u64) -> SchedSubflow {
        let (cwnd, pipe) = (cwnd_segs * MSS, pipe_segs * MSS);
        let space = cwnd.saturating_sub(pipe);
        SchedSubflow {
            info: SubflowInfo {
                established: true,
                srtt: ms(srtt_ms),
                rttvar: Duration(ms(srtt_ms).0 / 4),
                min_rtt: ms(srtt_ms),
                cwnd,
                ssthresh: u64::MAX,
                pipe,
                outstanding: pipe,
                ..SubflowInfo::default()
            },
            usable: true,
            available: space >= MSS,
            backup: false,
            space,
            carried: false,
            queued: pipe,
            min_srtt_ns: ms(srtt_ms).0,
            max_srtt_ns: ms(srtt_ms).0,
        }
    }
    /// An idle subflow (10-segment window, nothing in flight): available.
    pub(crate) fn idle(srtt_ms: u64) -> SchedSubflow {
        sf(srtt_ms, 10, 0)
    }
    /// A subflow whose window is full: usable but not available (no free cwnd slot:
    /// Linux `mptcp_is_temp_unavailable`).
    pub(crate) fn busy(srtt_ms: u64) -> SchedSubflow {
        sf(srtt_ms, 10, 10)
    }
    /// Definitely unavailable (potentially failed, not joined, path down).
    pub(crate) fn unusable(srtt_ms: u64) -> SchedSubflow {
        SchedSubflow { usable: false, available: false, space: 0, ..sf(srtt_ms, 10, 0) }
    }
    pub(crate) fn backup(s: SchedSubflow) -> SchedSubflow {
        SchedSubflow { backup: true, ..s }
    }
    pub(crate) fn carried(s: SchedSubflow) -> SchedSubflow {
        SchedSubflow { carried: true, ..s }
    }

    /// A view for one new MSS-sized segment, no connection-level limits (send window 1 GB).
    pub(crate) fn view<'a>(subs: &'a [SchedSubflow], conn: &'a ConnInfo) -> SchedView<'a> {
        SchedView {
            subflows: subs,
            conn,
            seg_len: MSS as u32,
            reinjection: false,
            unsent: 0,
            send_window: 1 << 30,
            preference: None,
        }
    }
    /// The same for a reinjected segment (`carried` marks who already sent it).
    pub(crate) fn reinj_view<'a>(subs: &'a [SchedSubflow], conn: &'a ConnInfo) -> SchedView<'a> {
        SchedView { reinjection: true, ..view(subs, conn) }
    }

    /// Runs `get_send` once; returns the verdict and the chosen subflows (ascending).
    pub(crate) fn send<S: Scheduler + ?Sized>(s: &mut S, now: Instant, v: &SchedView) -> (Verdict, Vec<usize>) {
        let mut out = SubflowSet::default();
        let verdict = s.get_send(now, v, &mut out);
        (verdict, (0..16).filter(|&i| out.contains(i)).collect())
    }
    pub(crate) fn retrans<S: Scheduler + ?Sized>(s: &mut S, now: Instant, v: &SchedView) -> (Verdict, Vec<usize>) {
        let mut out = SubflowSet::default();
        let verdict = s.get_retrans(now, v, &mut out);
        (verdict, (0..16).filter(|&i| out.contains(i)).collect())
    }

    fn min_rtt(subs: &[SchedSubflow]) -> Option<usize> {
        let conn = ConnInfo::default();
        view(subs, &conn).min_rtt()
    }
    fn min_rtt_reinj(subs: &[SchedSubflow]) -> Option<usize> {
        let conn = ConnInfo::default();
        reinj_view(subs, &conn).min_rtt()
    }

    // ------------------------------------------------------------------ SubflowSet

    #[test]
    fn subflow_set_bits() {
        let mut s = SubflowSet::default();
        assert!(s.is_empty());
        assert_eq!(s.first(), None);
        s.insert(3);
        s.insert(1);
        assert_eq!(s, SubflowSet(0b1010));
        assert!(s.contains(1) && s.contains(3) && !s.contains(0) && !s.contains(2));
        assert_eq!(s.first(), Some(1), "first = lowest member");
        s.insert(15);
        assert!(s.contains(15));
    }

    // ----------------------------------------------------- min_rtt (Linux get_available_subflow)

    /// New data: the available active subflow with the smallest srtt.
    #[test]
    fn min_rtt_picks_smallest_srtt_among_available() {
        assert_eq!(min_rtt(&[idle(30), idle(10), idle(20)]), Some(1));
        assert_eq!(min_rtt(&[idle(5)]), Some(0));
        assert_eq!(min_rtt(&[]), None);
    }

    /// Strict "<" on srtt: the first subflow in list order wins a tie.
    #[test]
    fn min_rtt_tie_goes_to_lower_index() {
        assert_eq!(min_rtt(&[idle(10), idle(10)]), Some(0));
        assert_eq!(min_rtt(&[idle(20), idle(10), idle(10)]), Some(1));
    }

    /// No free cwnd slot (Linux `mptcp_is_temp_unavailable`): a fast subflow with a full window
    /// is skipped; the slower available one is used.
    #[test]
    fn min_rtt_skips_busy_fast_subflow() {
        assert_eq!(min_rtt(&[busy(10), idle(30)]), Some(1));
        // One free segment in the window is enough to be available.
        assert_eq!(min_rtt(&[sf(10, 10, 9), idle(30)]), Some(0));
    }

    /// Definitely unavailable subflows (pf, not joined, path down) are ignored even when fastest.
    #[test]
    fn min_rtt_ignores_unusable() {
        assert_eq!(min_rtt(&[unusable(1), idle(50)]), Some(1));
        assert_eq!(min_rtt(&[unusable(1), unusable(2)]), None);
    }

    /// Every usable active subflow is busy: wait (None), even with several of them.
    #[test]
    fn min_rtt_waits_when_all_active_busy() {
        assert_eq!(min_rtt(&[busy(10), busy(20)]), None);
    }

    /// Linux `get_available_subflow`: if every active subflow that could be used is only
    /// temporarily busy (cwnd full), the answer is "wait", NOT "use a backup" (the active pass
    /// returns with force set). A faster idle backup does not change that.
    #[test]
    fn min_rtt_busy_active_does_not_fall_back_to_backup() {
        assert_eq!(min_rtt(&[busy(10), backup(idle(5))]), None);
        assert_eq!(min_rtt(&[backup(idle(5)), busy(50)]), None);
        // With an available active subflow, the (faster) backup is never chosen either.
        assert_eq!(min_rtt(&[backup(idle(5)), idle(50)]), Some(1));
    }

    /// Backups carry data only when no ACTIVE subflow is usable at all; among backups, minRTT
    /// again (smallest srtt, then lower index), and a busy backup means wait.
    #[test]
    fn min_rtt_uses_backup_only_without_usable_active() {
        assert_eq!(min_rtt(&[unusable(10), backup(idle(40))]), Some(1));
        assert_eq!(min_rtt(&[unusable(10), backup(idle(40)), backup(idle(30))]), Some(2));
        assert_eq!(min_rtt(&[unusable(10), backup(idle(30)), backup(idle(30))]), Some(1));
        assert_eq!(min_rtt(&[unusable(10), backup(busy(30)), backup(idle(40))]), Some(2));
        assert_eq!(min_rtt(&[unusable(10), backup(busy(30))]), None);
        assert_eq!(min_rtt(&[backup(idle(30))]), Some(0), "only backups: they are used");
    }

    /// Reinjection: subflows that have not carried the segment are preferred, even when slower.
    #[test]
    fn min_rtt_reinjection_prefers_not_carried() {
        assert_eq!(min_rtt_reinj(&[carried(idle(10)), idle(30)]), Some(1));
        assert_eq!(min_rtt_reinj(&[carried(idle(10)), idle(30), idle(20)]), Some(2));
        // The usual case after an RTO: the carrier is potentially failed, the other one takes it.
        assert_eq!(min_rtt_reinj(&[carried(unusable(10)), idle(30)]), Some(1));
    }

    /// Reinjection where every usable subflow already carried it: the path mask is cleared and
    /// the selection repeated, i.e. plain minRTT among the carriers.
    #[test]
    fn min_rtt_reinjection_all_carried_clears_mask() {
        assert_eq!(min_rtt_reinj(&[carried(idle(30)), carried(idle(10))]), Some(1));
        assert_eq!(min_rtt_reinj(&[carried(unusable(5)), carried(idle(30))]), Some(1));
    }

    /// `get_available_subflow`'s backup pass: active subflows all carried the segment; an unused
    /// BACKUP is chosen (the backup pass returns an unused subflow with force = true) before an
    /// active carrier.
    #[test]
    fn min_rtt_reinjection_unused_backup_before_active_carrier() {
        assert_eq!(min_rtt_reinj(&[carried(idle(10)), backup(idle(50))]), Some(1));
        // For new data (no mask) the backup is never used while the active one is available.
        assert_eq!(min_rtt(&[idle(10), backup(idle(5))]), Some(0));
    }

    /// `get_subflow_from_selectors`: an unused subflow that is only busy does not block the
    /// reinjection when a carrier is available. Linux: the active pass finds best = the available
    /// carrier with force = false (found_unused stays false because the unused one is temporarily
    /// unavailable); the backup pass finds nothing, so the mask is cleared and the active pass
    /// repeated, which returns the carrier. The reinjection goes out now on subflow 0.
    #[test]
    fn min_rtt_reinjection_busy_unused_falls_back_to_available_carrier() {
        assert_eq!(min_rtt_reinj(&[carried(idle(10)), busy(30)]), Some(0));
    }

    /// `get_subflow_from_selectors` with backups, following the passes of Linux's
    /// `get_available_subflow`.
    #[test]
    fn min_rtt_reinjection_passes_with_backups() {
        // Active pass: only the used carrier is available (force = false); the backup pass finds
        // an unused available backup (force = true): the backup takes the reinjection.
        assert_eq!(min_rtt_reinj(&[carried(idle(10)), busy(30), backup(idle(50))]), Some(2));
        // The backup pass finds only a used backup (force = false): mask cleared, active pass
        // repeated, now every subflow is unused and the fastest available active one wins.
        assert_eq!(min_rtt_reinj(&[carried(idle(10)), busy(30), backup(carried(idle(5)))]), Some(0));
        // The unused backup is only busy: the backup pass returns none with force = true: wait.
        assert_eq!(min_rtt_reinj(&[carried(idle(10)), backup(busy(50))]), None);
        // Nothing available: the unused active subflow is busy (force = true): wait.
        assert_eq!(min_rtt_reinj(&[carried(busy(10)), busy(30)]), None);
        // Carriers all busy, no other subflow: after the mask is cleared they are busy unused
        // ones: wait.
        assert_eq!(min_rtt_reinj(&[carried(busy(10)), carried(busy(30))]), None);
    }

    // ------------------------------------------------------------------ fastest

    /// BLEST/ECF's f: the smallest srtt among usable active subflows, window space or not.
    #[test]
    fn fastest_ignores_window_but_not_usability_or_backup() {
        let conn = ConnInfo::default();
        let subs = [idle(30), busy(10), unusable(1), backup(idle(2))];
        let v = view(&subs, &conn);
        assert_eq!(v.fastest(), Some(1), "busy but fastest usable active");
        assert_eq!(v.min_rtt(), Some(0), "minRTT takes the slower available one");
        let subs = [idle(10), idle(10)];
        assert_eq!(view(&subs, &conn).fastest(), Some(0), "tie: lower index");
        let subs = [unusable(10), backup(idle(10))];
        assert_eq!(view(&subs, &conn).fastest(), None);
    }

    // ------------------------------------------------------------------ registry

    #[test]
    fn registry_names_and_aliases() {
        let name = |n: &str| AnySched::by_name(n).map(|s| s.name());
        assert_eq!(name("minrtt"), Some("minrtt"));
        assert_eq!(name("default"), Some("minrtt"));
        assert_eq!(name("minrtt-rp"), Some("minrtt"));
        assert_eq!(name("minrtt-norp"), Some("minrtt-norp"));
        assert_eq!(name("MinRTT"), Some("minrtt"), "case-insensitive");
        assert_eq!(name("rr"), Some("roundrobin"));
        assert_eq!(name("roundrobin"), Some("roundrobin"));
        assert_eq!(name("redundant"), Some("redundant"));
        assert_eq!(name("blest"), Some("blest"));
        assert_eq!(name("ecf"), Some("ecf"));
        assert_eq!(name("stms"), Some("stms"));
        assert_eq!(name("external"), Some("external-mode"));
        assert_eq!(name("external-mode"), Some("external-mode"));
        assert_eq!(name("external-weights"), Some("external-weights"));
        assert_eq!(name("external-packet"), Some("external-packet"));
        assert_eq!(name("nope"), None);
        for n in SchedSpec::names() {
            assert!(AnySched::by_name(n).is_some(), "{n}");
        }
    }

    /// Which schedulers turn on opportunistic retransmission + penalization (Linux
    /// `mptcp_rcv_buf_optimization`), BLEST's "penalize every slower carrier" variant, and
    /// redundant mode.
    #[test]
    fn registry_flags() {
        let flags = |n: &str| {
            let s = AnySched::by_name(n).unwrap();
            (s.opportunistic_retransmission(), s.penalize_all_carriers(), s.redundant())
        };
        assert_eq!(flags("minrtt"), (true, false, false));
        assert_eq!(flags("minrtt-norp"), (false, false, false));
        assert_eq!(flags("roundrobin"), (false, false, false));
        assert_eq!(flags("redundant"), (false, false, true));
        assert_eq!(flags("blest"), (true, true, false));
        assert_eq!(flags("ecf"), (true, false, false));
        assert_eq!(flags("external-mode"), (false, false, false));
        assert_eq!(flags("stms"), (false, false, false));
        assert_eq!(flags("olms"), (true, false, false));
        let paper = crate::SchedSpec::parse("olms:opportunistic=false").unwrap().build();
        assert!(!paper.opportunistic_retransmission() && !paper.redundant());
    }

    /// The plug-in of the tests below: always the last subflow.
    struct Last;
    impl Scheduler for Last {
        fn name(&self) -> &'static str {
            "last"
        }
        fn get_send(&mut self, _: Instant, v: &SchedView, out: &mut SubflowSet) -> Verdict {
            out.insert(v.subflows.len() - 1);
            Verdict::Send
        }
    }

    /// A registered plug-in resolves by name (any case) to a spec labelled with its name that
    /// builds it; it takes no parameters; unknown-name errors list it; unregistering removes it.
    /// (The table is process-wide: each test uses its own names.)
    #[test]
    fn plugin_registered_by_name() {
        SchedSpec::register_plugin("last-test", Arc::new(|| Box::new(Last))).unwrap();
        let s = SchedSpec::parse("Last-Test").unwrap();
        assert_eq!(s.label(), "last-test");
        assert!(matches!(s.algo(), SchedAlgo::Custom(c) if c.name == "last-test"));
        assert_eq!(s.build().name(), "last");
        assert_eq!(s.params(), vec![]);
        assert_eq!(SchedSpec::parse("last-test").unwrap(), s, "same factory: equal specs");
        assert_eq!(SchedSpec::parse("last-test:x=1").unwrap_err().to_string(), "x: last-test takes no parameters");
        let table = [("x".to_string(), crate::ParamValue::Int(1))];
        let e = SchedSpec::resolve("last-test", |n| if n == "last-test" { &table[..] } else { &[] }).unwrap_err();
        assert_eq!(e.to_string(), "x: last-test takes no parameters");
        assert_eq!(SchedSpec::check_table("last-test", &[]), Ok(()));
        assert!(SchedSpec::check_table("last-test", &table).is_err());
        let e = SchedSpec::parse("nope").unwrap_err().to_string();
        assert!(
            e.starts_with("unknown scheduler \"nope\", expected one of [\"minrtt\"") && e.contains("\"last-test\""),
            "{e}"
        );
        assert!(SchedSpec::plugin_names().contains(&"last-test".to_string()));
        assert!(SchedSpec::unregister_plugin("last-test"));
        assert!(SchedSpec::parse("last-test").is_err());
    }

    /// A plug-in cannot take a built-in's name or alias, nor a name that text cannot carry.
    #[test]
    fn plugin_names_must_not_collide_with_builtins() {
        for taken in ["minrtt", "rr", "minrtt-norp", "external-packet"] {
            assert_eq!(
                SchedSpec::register_plugin(taken, Arc::new(|| Box::new(Last))),
                Err(format!("{taken:?} is the name of a built-in scheduler; choose another name"))
            );
        }
        assert!(SchedSpec::register_plugin("a:b", Arc::new(|| Box::new(Last)))
            .unwrap_err()
            .starts_with("expected a name"));
        assert_eq!(SchedSpec::parse("rr").unwrap().label(), "rr");
    }

    /// The default `get_retrans` is `get_send` (a custom plug-in that only implements get_send).
    #[test]
    fn custom_scheduler_default_get_retrans_is_get_send() {
        let mut s = AnySched::Custom(Box::new(Last));
        let conn = ConnInfo::default();
        let subs = [idle(10), carried(idle(20))];
        assert_eq!(s.name(), "last");
        assert_eq!(retrans(&mut s, Instant::ZERO, &reinj_view(&subs, &conn)), (Verdict::Send, vec![1]));
        assert!(!s.redundant() && !s.opportunistic_retransmission());
    }
}
