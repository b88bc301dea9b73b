//! Packet schedulers: which subflow carries the next segment of connection data.
//!
//! Names follow Linux's `struct mptcp_sched_ops`. The connection calls the scheduler whenever a
//! segment (new or reinjected) waits and at least one subflow could send (for new data, one that
//! [`Scheduler::queues`]: whenever a segment waits). A new scheduler is one file plus one line in
//! the `registry!` table below.

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
    /// Every subflow.
    pub const ALL: SubflowSet = SubflowSet(u16::MAX);

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
    /// Put the segment at the back of the send queue of the (usable) subflow set in `out`,
    /// whatever its window: it takes the next DSN now (within the peer's window) and leaves on
    /// that subflow, after the data queued there before it, once the subflow's windows let it;
    /// it is reinjected if the subflow becomes unusable first (connection/queue.rs). The
    /// upstream Linux scheduler's way: `__subflow_push_pending` → `mptcp_sendmsg_frag` fills the
    /// chosen subflow's write queue, which `tcp_push` sends as its windows open. Only for a
    /// scheduler whose [`Scheduler::queues`] is true.
    Queue,
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
    /// Bytes on this subflow not yet acknowledged on it: sent, plus `unsent` (Linux
    /// `sk_wmem_queued`).
    pub queued: u64,
    /// Bytes waiting in this subflow's send queue ([`Verdict::Queue`]), not yet sent.
    pub unsent: u64,
    /// Running minimum of srtt in nanoseconds (BLEST's linger estimate), 0 before a sample.
    pub min_srtt_ns: u64,
    /// Running maximum of srtt in nanoseconds.
    pub max_srtt_ns: u64,
}

/// A scheduler's constant answers to [`Scheduler::queues`], [`Scheduler::reads_conn`],
/// [`Scheduler::reads_fit`] and [`Scheduler::reads_full_info`] ([`AnySched::shape`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SchedShape {
    /// [`Scheduler::queues`].
    pub queues: bool,
    /// [`Scheduler::reads_conn`].
    pub reads_conn: bool,
    /// [`Scheduler::reads_fit`].
    pub reads_fit: bool,
    /// [`Scheduler::reads_full_info`].
    pub full_info: bool,
}

impl SchedShape {
    /// `s`'s answers, asked through its trait methods.
    pub fn of(s: &dyn Scheduler) -> Self {
        SchedShape {
            queues: s.queues(),
            reads_conn: s.reads_conn(),
            reads_fit: s.reads_fit(),
            full_info: s.reads_full_info(),
        }
    }
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
    /// The subflows whose `usable` or `backup` flag or `info` snapshot may differ from those
    /// shown at this scheduler's previous [`Scheduler::get_send`] other than by segments sent
    /// on them since (which only add to `info.pipe`, `info.outstanding` and the sent counters):
    /// for the others the flags are as they were then and the snapshot is, or differs only so
    /// (their other fields may have changed). [`SubflowSet::ALL`] when not tracked. Lets a
    /// scheduler keep per-subflow results across decisions (the upstream scheduler's send
    /// buffers and ranking keys).
    pub changed: SubflowSet,
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
        if !self.reinjection {
            let best = self.min_rtt_new(set);
            debug_assert_eq!(best, self.min_rtt_passes(set), "minRTT fast path");
            return best;
        }
        self.min_rtt_passes(set)
    }

    /// [`SchedView::min_rtt_in`] for new data (no carriers to mask), written out: without a
    /// mask every candidate is unused, so the active pass settles it whenever it finds a
    /// subflow with room or one that is only busy, else the backup pass (with the same rule)
    /// does. The general passes below (a closure called up to four times, out of line) cost
    /// ~110 instructions per decision with two subflows in `edar-handoff`.
    #[inline]
    fn min_rtt_new(&self, set: SubflowSet) -> Option<usize> {
        let mut busy = [false; 2];
        let mut best = [None::<usize>; 2];
        for (i, s) in self.subflows.iter().enumerate() {
            if !s.usable || !set.contains(i) {
                continue;
            }
            let k = s.backup as usize;
            if !s.available {
                busy[k] = true;
            } else if best[k].is_none_or(|b| s.info.srtt < self.subflows[b].info.srtt) {
                best[k] = Some(i);
            }
        }
        if best[0].is_some() || busy[0] {
            best[0]
        } else {
            best[1]
        }
    }

    /// [`SchedView::min_rtt_in`]'s passes, Linux's order.
    fn min_rtt_passes(&self, set: SubflowSet) -> Option<usize> {
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
    /// A segment of new data waits and some subflow may have space (any time, if
    /// [`Scheduler::queues`]): set bits in `out`.
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
    /// It answers [`Verdict::Queue`]: the connection asks it about new data even when no
    /// subflow has window room (the upstream Linux scheduler's subflow write queues). Like
    /// `reads_conn` and `reads_fit`, a constant of the scheduler.
    fn queues(&self) -> bool {
        false
    }
    /// It reads [`SchedView::conn`] or [`SchedView::unsent`] when asked about a segment
    /// (`get_send`, `get_retrans`). `false` lets the connection skip bringing them up to date
    /// for those calls: the counters in `conn` may then be stale and `unsent` is 0.
    fn reads_conn(&self) -> bool {
        true
    }
    /// It reads [`SchedSubflow::available`] or [`SchedSubflow::carried`] in `get_send` (the
    /// connection asks only a scheduler that [`Scheduler::queues`]). `false` lets the
    /// connection skip writing them for those calls: they may then be stale there.
    fn reads_fit(&self) -> bool {
        true
    }
    /// It reads fields of [`SchedSubflow::info`] other than its [`SubflowInfo::core`] (srtt,
    /// cwnd, ssthresh, pipe, outstanding bytes), in any call. `false` lets the connection copy
    /// only those of a changed subflow's snapshot before `get_send` (the others may then be
    /// stale, in `get_retrans` and `handle_timeout` too). Such a scheduler must not ask for
    /// redundant mode (the connection reads more of the snapshots there); opportunistic
    /// retransmission reads the one other field it needs (`in_recovery`) from the subflow.
    fn reads_full_info(&self) -> bool {
        true
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

        impl AnySched {
            /// [`Scheduler::redundant`] dispatched over every variant (the test's reference for
            /// `AnySched`'s shortcut), generated from the registry so that a new scheduler is in it.
            #[cfg(test)]
            pub(crate) fn redundant_dispatch(&self) -> bool {
                match self { $($(#[cfg($cfg)])? AnySched::$variant(s) => s.redundant(),)+ AnySched::Custom(s) => s.redundant() }
            }
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
            /// Only the redundant and the external scheduler (and a plug-in) can be in
            /// redundant mode: the others keep the trait's `false` (`redundant_overrides`
            /// checks every name against the dispatch over all variants). Asked at every
            /// multipath poll, the jump table over every variant cost ~7 instructions a call.
            #[inline]
            fn redundant(&self) -> bool {
                match self {
                    AnySched::Redundant(s) => s.redundant(),
                    AnySched::External(s) => s.redundant(),
                    AnySched::Custom(s) => s.redundant(),
                    _ => false,
                }
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
            fn queues(&self) -> bool {
                match self { $($(#[cfg($cfg)])? AnySched::$variant(s) => s.queues(),)+ AnySched::Custom(s) => s.queues() }
            }
            #[inline]
            fn reads_conn(&self) -> bool {
                match self { $($(#[cfg($cfg)])? AnySched::$variant(s) => s.reads_conn(),)+ AnySched::Custom(s) => s.reads_conn() }
            }
            #[inline]
            fn reads_fit(&self) -> bool {
                match self { $($(#[cfg($cfg)])? AnySched::$variant(s) => s.reads_fit(),)+ AnySched::Custom(s) => s.reads_fit() }
            }
            #[inline]
            fn reads_full_info(&self) -> bool {
                match self { $($(#[cfg($cfg)])? AnySched::$variant(s) => s.reads_full_info(),)+ AnySched::Custom(s) => s.reads_full_info() }
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
    /// [`SchedShape::of`] `self`, with one test of the variant for the built-ins: the upstream
    /// scheduler is the only built-in that overrides the three defaults. Asked through the
    /// trait at every decision they were three dispatches over the variants of ~11
    /// instructions each (perf13p's profile of `lia-2path`, 251,339 decisions); a test checks
    /// every built-in against its trait methods.
    #[inline]
    pub(crate) fn shape(&self) -> SchedShape {
        match self {
            AnySched::Upstream(_) => SchedShape { queues: true, reads_conn: false, reads_fit: false, full_info: false },
            AnySched::MinRtt(_) => SchedShape { queues: false, reads_conn: false, reads_fit: true, full_info: false },
            AnySched::Custom(s) => SchedShape::of(&**s),
            _ => SchedShape { queues: false, reads_conn: true, reads_fit: true, full_info: true },
        }
    }

    /// Whether the scheduler may keep a deadline of its own ([`Scheduler::poll_timeout`]): only
    /// a plug-in can, every built-in keeps the trait's `None`. The driver asks the connection
    /// for its next deadline after every drive; with this test the common case needs no call
    /// through the plug-in's vtable, so the question compiles without saved registers (issue
    /// 22, twenty-first pass). A test checks every built-in's `poll_timeout`.
    #[inline(always)]
    pub(crate) fn may_keep_timer(&self) -> bool {
        matches!(self, AnySched::Custom(_))
    }

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
    /// lowest linger time (queued bytes / pacing rate), 64 KB bursts into the chosen subflow's
    /// send queue, which it sends as its windows open; the `linux` profile's default.
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
pub(crate) mod tests;
