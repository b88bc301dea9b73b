//! Packet schedulers: which subflow carries the next segment of connection data.
//!
//! Names follow Linux's `struct mptcp_sched_ops`. The connection calls the scheduler whenever a
//! segment (new or reinjected) waits and at least one subflow could send. A new scheduler is one
//! file plus one line in the `registry!` table below.

mod blest;
mod ecf;
mod external;
mod minrtt;
mod redundant;
mod roundrobin;

pub use blest::Blest;
pub use ecf::Ecf;
pub use external::{External, ExternalMode};
pub use minrtt::MinRtt;
pub use redundant::Redundant;
pub use roundrobin::RoundRobin;

use crate::connection::ConnInfo;
use crate::subflow::SubflowInfo;
use crate::time::Instant;

/// A set of subflows as a bitmask (bit i = subflow i).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SubflowSet(pub u16);

impl SubflowSet {
    #[inline]
    pub fn insert(&mut self, i: usize) {
        self.0 |= 1 << i;
    }
    #[inline]
    pub fn contains(self, i: usize) -> bool {
        self.0 & (1 << i) != 0
    }
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
}

/// One subflow as the scheduler sees it.
#[derive(Clone, Copy, Debug, Default)]
pub struct SchedSubflow {
    pub info: SubflowInfo,
    /// Not definitely unavailable (established, joined, not potentially failed, path up).
    pub usable: bool,
    /// Usable and has congestion-window space for the segment (A.1 "available").
    pub available: bool,
    pub backup: bool,
    /// Free congestion window in bytes.
    pub space: u64,
    /// The segment being scheduled was already sent on this subflow.
    pub carried: bool,
    /// Bytes sent on this subflow and not yet acknowledged on it.
    pub queued: u64,
    /// Running min and max of srtt (BLEST's linger estimate).
    pub min_srtt_ns: u64,
    pub max_srtt_ns: u64,
}

/// Everything a scheduler may look at.
pub struct SchedView<'a> {
    pub subflows: &'a [SchedSubflow],
    pub conn: &'a ConnInfo,
    /// Length of the segment to schedule.
    pub seg_len: u32,
    /// The segment is a reinjection (data already sent on another subflow).
    pub reinjection: bool,
    /// Connection-level bytes in the send buffer not yet handed to any subflow (ECF's k).
    pub unsent: u64,
    /// Connection-level send window left: peer's window right edge − next DSN to send.
    pub send_window: u64,
}

impl SchedView<'_> {
    /// A.2 minRTT selection: the available active subflow with the smallest srtt; backups only
    /// when no active subflow is usable at all. Reinjections prefer subflows that have not carried
    /// the segment. Ties go to the lower index.
    pub fn min_rtt(&self) -> Option<usize> {
        let pick = |backup: bool, skip_carried: bool| -> (Option<usize>, bool) {
            let mut best: Option<usize> = None;
            let mut any_usable = false;
            for (i, s) in self.subflows.iter().enumerate() {
                if s.backup != backup || !s.usable || (skip_carried && s.carried) {
                    continue;
                }
                any_usable = true;
                if s.available && best.is_none_or(|b| s.info.srtt < self.subflows[b].info.srtt) {
                    best = Some(i);
                }
            }
            (best, any_usable)
        };
        let skip = self.reinjection && self.subflows.iter().any(|s| s.usable && !s.carried);
        let (best, any_active) = pick(false, skip);
        if any_active {
            return best;
        }
        pick(true, skip).0.or_else(|| if skip { pick(true, false).0 } else { None })
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
    /// Opportunistic retransmission and penalization when receive-window limited (A.3).
    fn opportunistic_retransmission(&self) -> bool {
        false
    }
    /// BLEST's variant of A.3 penalizes every slower carrier, not only the first.
    fn penalize_all_carriers(&self) -> bool {
        false
    }
    /// A HoL event was handled by A.3 (BLEST adapts its lambda).
    fn on_hol_event(&mut self) {}
    /// An outside decision (answer to `Verdict::Ask`, or a per-interval setting).
    fn decide(&mut self, _d: &Decision) {}
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

macro_rules! registry {
    ($($variant:ident => $ty:ty, [$($alias:literal),+]);+ $(;)?) => {
        /// Any scheduler: built-ins by `match`, user plug-ins boxed.
        pub enum AnySched {
            $($variant($ty),)+
            Custom(Box<dyn Scheduler + Send>),
        }

        impl AnySched {
            /// Names accepted by [`AnySched::by_name`].
            pub const NAMES: &'static [&'static str] = &[$($($alias),+),+];

            /// Builds a built-in scheduler from its name (case-insensitive).
            pub fn by_name(name: &str) -> Option<AnySched> {
                let n = name.to_ascii_lowercase();
                $( if [$($alias),+].contains(&n.as_str()) { return Some(AnySched::$variant(<$ty>::from_name(&n))); } )+
                None
            }
        }

        impl Scheduler for AnySched {
            fn name(&self) -> &'static str {
                match self { $(AnySched::$variant(s) => s.name(),)+ AnySched::Custom(s) => s.name() }
            }
            #[inline]
            fn get_send(&mut self, now: Instant, v: &SchedView, out: &mut SubflowSet) -> Verdict {
                match self { $(AnySched::$variant(s) => s.get_send(now, v, out),)+ AnySched::Custom(s) => s.get_send(now, v, out) }
            }
            #[inline]
            fn get_retrans(&mut self, now: Instant, v: &SchedView, out: &mut SubflowSet) -> Verdict {
                match self { $(AnySched::$variant(s) => s.get_retrans(now, v, out),)+ AnySched::Custom(s) => s.get_retrans(now, v, out) }
            }
            #[inline]
            fn redundant(&self) -> bool {
                match self { $(AnySched::$variant(s) => s.redundant(),)+ AnySched::Custom(s) => s.redundant() }
            }
            fn opportunistic_retransmission(&self) -> bool {
                match self { $(AnySched::$variant(s) => s.opportunistic_retransmission(),)+ AnySched::Custom(s) => s.opportunistic_retransmission() }
            }
            fn penalize_all_carriers(&self) -> bool {
                match self { $(AnySched::$variant(s) => s.penalize_all_carriers(),)+ AnySched::Custom(s) => s.penalize_all_carriers() }
            }
            fn on_hol_event(&mut self) {
                match self { $(AnySched::$variant(s) => s.on_hol_event(),)+ AnySched::Custom(s) => s.on_hol_event() }
            }
            fn decide(&mut self, d: &Decision) {
                match self { $(AnySched::$variant(s) => s.decide(d),)+ AnySched::Custom(s) => s.decide(d) }
            }
        }
    };
}

registry! {
    MinRtt => MinRtt, ["minrtt", "default", "minrtt-rp", "minrtt-norp"];
    RoundRobin => RoundRobin, ["roundrobin", "rr"];
    Redundant => Redundant, ["redundant"];
    Blest => Blest, ["blest"];
    Ecf => Ecf, ["ecf"];
    External => External, ["external", "external-mode", "external-weights", "external-packet"];
}
