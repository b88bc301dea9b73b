//! Congestion control: the trait every controller implements, and the registry of built-ins.
//!
//! The window lives in the subflow ([`CcState`]); controllers mutate it from their hooks. Hooks
//! follow quinn-proto's `Controller`; coupled multipath controllers (LIA, OLIA, BALIA, wVegas)
//! read `Siblings`.

#[cfg(any(test, feature = "example-algorithms"))]
pub mod aimd;
mod balia;
mod bbr;
mod cubic;
mod external;
mod hystart;
mod lia;
mod olia;
mod reno;
mod wvegas;

pub use balia::Balia;
pub use bbr::{Bbr, BbrMode};
pub use cubic::Cubic;
pub use external::ExternalCc;
pub use lia::Lia;
pub use olia::Olia;
pub use reno::NewReno;
pub use wvegas::WVegas;

use std::sync::Arc;

use crate::algo::{AlgoEntry, Custom, Spec};
use crate::time::{Duration, Instant};

/// Per-subflow congestion state, owned by the subflow and lent to the controller.
#[derive(Clone, Copy, Debug)]
pub struct CcState {
    /// Congestion window in bytes.
    pub cwnd: u64,
    /// Slow-start threshold in bytes.
    pub ssthresh: u64,
    /// Maximum segment payload in bytes.
    pub mss: u32,
    /// Bytes in flight (RFC 6675 `pipe`).
    pub pipe: u64,
    /// Smoothed RTT (RFC 6298), zero before the first sample.
    pub srtt: Duration,
    /// Smallest RTT sample, zero before the first.
    pub min_rtt: Duration,
    /// Appropriate byte counting (RFC 3465, Linux): grow by bytes acknowledged rather than per ACK.
    pub abc: bool,
    /// The RFCs' or the kernel's variant of an algorithm (CUBIC reads it).
    pub stack: crate::info::Stack,
    /// True while in fast recovery or RTO recovery; controllers do not grow the window then.
    pub in_recovery: bool,
    /// This subflow's index in `Siblings`.
    pub index: u8,
}

impl CcState {
    /// The window is below the slow-start threshold.
    #[inline]
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }
}

/// What one ACK told the sender.
#[derive(Clone, Copy, Debug, Default)]
pub struct AckSample {
    /// Bytes newly acknowledged (cumulatively or by SACK) by this ACK.
    pub newly_acked: u64,
    /// RTT sample, if this ACK gave a valid one (Karn's rule applied).
    pub rtt: Option<Duration>,
    /// Total bytes delivered on this subflow so far.
    pub delivered: u64,
    /// Delivery-rate sample in bytes per second (0 if none).
    pub delivery_rate: u64,
    /// The sender had nothing more to send when the sample's segment left
    /// ([`RateSample::is_app_limited`]).
    pub app_limited: bool,
    /// The full delivery-rate sample of this ACK (draft-cheng-iccrg-delivery-rate-estimation;
    /// Linux `tcp_rate_gen`), which rate-based controllers ([`CongestionControl::cong_control`])
    /// read.
    pub rate: RateSample,
    /// The subflow's oldest unacknowledged sequence number after this ACK (HyStart's rounds).
    pub snd_una: u64,
    /// The subflow's next sequence number to send.
    pub snd_nxt: u64,
}

/// The kernel's pacing rate of a subflow (`tcp_update_pacing_rate`, net/ipv4/tcp_input.c),
/// bytes/s: max(cwnd, in flight) / srtt × 200 % while cwnd < ssthresh / 2
/// (`tcp_pacing_ss_ratio`), else × 120 % (`tcp_pacing_ca_ratio`). None before an RTT sample
/// (the kernel does not divide by a zero srtt). The upstream MPTCP scheduler's linger time
/// and HyStart's ACK-delay cushion read it.
pub fn kernel_pacing_rate(cwnd: u64, ssthresh: u64, in_flight: u64, srtt: crate::time::Duration) -> Option<u64> {
    if srtt.0 == 0 {
        return None;
    }
    let ratio: u128 = if cwnd < ssthresh / 2 { 200 } else { 120 };
    let window = cwnd.max(in_flight) as u128;
    Some((window * ratio * 10_000_000 / srtt.0 as u128).min(u64::MAX as u128) as u64)
}

/// One delivery-rate sample (draft-cheng-iccrg-delivery-rate-estimation §3; Linux
/// `struct rate_sample`, filled by `tcp_rate_gen`). Sizes in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RateSample {
    /// The sample is usable: a segment sent after sampling started was delivered and the
    /// interval is at least the minimum RTT (Linux discards shorter intervals).
    pub valid: bool,
    /// `P.delivered`: bytes delivered when the newest segment this ACK delivered was sent.
    pub prior_delivered: u64,
    /// Bytes delivered over the interval (`delivered − P.delivered`).
    pub delivered: u64,
    /// `max(send_elapsed, ack_elapsed)`.
    pub interval: Duration,
    /// The newest delivered segment left while the sender was application-limited.
    pub is_app_limited: bool,
    /// Segments newly marked lost while this ACK was processed (Linux `rs->losses`).
    pub losses: u32,
    /// Bytes in flight before this ACK (Linux `rs->prior_in_flight`).
    pub prior_in_flight: u64,
}

impl RateSample {
    /// Delivery rate in bytes per second, if the sample is valid.
    #[inline]
    pub fn bw(&self) -> Option<u64> {
        if !self.valid || self.interval.0 == 0 {
            return None;
        }
        Some((self.delivered as u128 * 1_000_000_000 / self.interval.0 as u128) as u64)
    }
}

/// A congestion signal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CongestionEvent {
    /// Loss detected by SACK / duplicate ACKs: entering fast recovery.
    Loss,
    /// ECN congestion experienced.
    Ecn,
}

/// What a coupled controller may know of its sibling subflows (all subflows of the connection,
/// including the caller, in subflow order).
#[derive(Clone, Copy, Debug, Default)]
pub struct SiblingInfo {
    /// Congestion window in bytes.
    pub cwnd: u64,
    /// Slow-start threshold in bytes.
    pub ssthresh: u64,
    /// Smoothed RTT, zero before the first sample.
    pub srtt: Duration,
    /// Smallest RTT sample, zero before the first.
    pub min_rtt: Duration,
    /// Maximum segment payload in bytes.
    pub mss: u32,
    /// The subflow completed its handshake.
    pub established: bool,
    /// Controller-specific state a coupled algorithm shares with its siblings
    /// ([`CongestionControl::shared_state`]), e.g. OLIA's bytes between losses.
    pub cc_shared: [f64; 2],
    /// This subflow's terms of LIA's alpha, `[cwnd, cwnd / rtt², cwnd / rtt]` (bytes, seconds),
    /// if kept with the snapshot ([`SiblingInfo::with_lia_terms`], from the fields above) so
    /// that an ACK on another subflow does not compute them again (two divisions and three
    /// conversions per subflow and ACK); `None`: not kept, computed from the fields.
    pub lia_terms: Option<[f64; 3]>,
}

impl SiblingInfo {
    /// The snapshot with [`SiblingInfo::lia_terms`] derived from its other fields.
    #[inline]
    pub fn with_lia_terms(mut self) -> Self {
        self.lia_terms = lia::sibling_terms(&self);
        self
    }
}

/// Every subflow of the connection, in subflow order (empty unless the controller is coupled).
/// The caller's own entry may be stale: a controller reads its own subflow from [`CcState`].
pub type Siblings<'a> = &'a [SiblingInfo];

/// A congestion controller. Windows are in bytes.
pub trait CongestionControl {
    /// Registry name of the algorithm.
    fn name(&self) -> &'static str;
    /// A segment of `bytes` payload left (new data or retransmission).
    fn on_sent(&mut self, _now: Instant, _st: &CcState, _bytes: u32) {}
    /// An ACK acknowledged new data (not called while in recovery).
    fn on_ack(&mut self, now: Instant, st: &mut CcState, ack: &AckSample, sib: Siblings);
    /// Entering loss recovery: set `st.ssthresh` and `st.cwnd`.
    fn on_congestion_event(&mut self, now: Instant, st: &mut CcState, ev: CongestionEvent, sib: Siblings);
    /// Retransmission timeout: set `st.ssthresh`, `st.cwnd` (normally one segment).
    fn on_rto(&mut self, now: Instant, st: &mut CcState);
    /// Fast or RTO recovery ended (the cumulative ACK passed the recovery point).
    fn on_recovery_exit(&mut self, _now: Instant, _st: &mut CcState) {}
    /// Pacing rate in bytes per second, if this controller paces.
    fn pacing_rate(&self, _st: &CcState) -> Option<u64> {
        None
    }
    /// Whether the connection must build `Siblings` for this controller.
    fn coupled(&self) -> bool {
        false
    }
    /// State exported to sibling controllers through [`SiblingInfo::cc_shared`].
    fn shared_state(&self) -> [f64; 2] {
        [0.0; 2]
    }
    /// Rate-based control (Linux `tcp_congestion_ops.cong_control`, used by BBR): `on_ack` is
    /// called on every ACK that delivers data, in fast recovery too, and the controller sets the
    /// window itself there (no other reduction is applied).
    fn cong_control(&self) -> bool {
        false
    }
    /// Asked after `on_ack` of a [`CongestionControl::cong_control`] controller: mark the
    /// subflow application-limited now (BBR's ProbeRTT, Linux `bbr_update_min_rtt`).
    fn wants_app_limited(&self) -> bool {
        false
    }
    /// A deterministic seed for whatever the controller randomises (BBR's initial ProbeBW
    /// phase), given once when the subflow is created (the connection derives it from its key
    /// and the subflow's index).
    fn seed(&mut self, _seed: u64) {}
}

/// `x.floor()` for `0 < x < 2^63` as the integer and the `f64` of it, without the call: the
/// window growth of LIA (and OLIA, BALIA) and CUBIC splits off its whole bytes per ACK, and
/// on x86-64 without SSE4.1 `f64::floor` is a call into compiler-builtins' software floor
/// (~20 instructions, plus the caller's spills around the call). For a positive `x` below
/// 2^63 truncation is the floor, `x as i64` is exact and so is its conversion back (an
/// integer-valued `f64`), so the pair equals `(x.floor() as u64, x.floor())` to the bit;
/// `None` outside that range (the caller takes `floor` then). Debug builds check the bits.
#[inline]
pub(crate) fn floor_positive(x: f64) -> Option<(u64, f64)> {
    if x > 0.0 && x < 9_223_372_036_854_775_808.0 {
        // Below 2^63 the signed conversions are exact and single instructions (the unsigned
        // ones are longer sequences that handle the upper half).
        let w = x as i64;
        debug_assert_eq!(((w as f64).to_bits(), w as u64), (x.floor().to_bits(), x.floor() as u64), "{x}");
        Some((w as u64, w as f64))
    } else {
        None
    }
}

/// Slow start first: the bytes of an ACK left for congestion avoidance, or `None` when slow
/// start absorbed all of them (the shared prologue of every controller's `on_ack`).
pub(crate) fn after_slow_start(st: &mut CcState, newly_acked: u64) -> Option<u64> {
    if !st.in_slow_start() {
        return Some(newly_acked);
    }
    match slow_start(st, newly_acked) {
        0 => None,
        left => Some(left),
    }
}

/// Shared slow-start step (RFC 5681 / RFC 3465): returns the bytes of `acked` left over once
/// `ssthresh` is reached, which the caller feeds to congestion avoidance.
pub(crate) fn slow_start(st: &mut CcState, acked: u64) -> u64 {
    let inc = if st.abc { acked } else { st.mss as u64 };
    let room = st.ssthresh.saturating_sub(st.cwnd);
    if inc <= room {
        st.cwnd += inc;
        0
    } else {
        st.cwnd += room;
        if st.abc {
            inc - room
        } else {
            0
        }
    }
}

/// Generates, from one line per controller: [`AnyCc`] (static dispatch over the built-ins plus
/// one boxed plug-in variant) and its [`CongestionControl`] impl, [`CcAlgo`] (each built-in's
/// typed parameters) and the table of names, aliases and parameter docs. A new controller is one
/// file (the type, its `params!` struct and `FromParams`) plus one line here.
macro_rules! registry {
    ($($(#[doc = $doc:literal])* $(#[cfg($cfg:meta)])? $variant:ident($ty:ty) $name:literal
        [$($alias:literal $(= $preset:literal)?),* $(,)?];)+) => {
        $crate::algo_registry! {
            any AnyCc, algo CcAlgo, dyn CongestionControl, what "congestion control", entries ENTRIES;
            $($(#[doc = $doc])* $(#[cfg($cfg)])? $variant($ty) $name [$($alias $(= $preset)?),*];)+
        }

        impl CongestionControl for AnyCc {
            fn name(&self) -> &'static str {
                match self { $($(#[cfg($cfg)])? AnyCc::$variant(c) => c.name(),)+ AnyCc::Custom(c) => c.name() }
            }
            #[inline]
            fn on_sent(&mut self, now: Instant, st: &CcState, bytes: u32) {
                match self { $($(#[cfg($cfg)])? AnyCc::$variant(c) => c.on_sent(now, st, bytes),)+ AnyCc::Custom(c) => c.on_sent(now, st, bytes) }
            }
            #[inline]
            fn on_ack(&mut self, now: Instant, st: &mut CcState, ack: &AckSample, sib: Siblings) {
                match self { $($(#[cfg($cfg)])? AnyCc::$variant(c) => c.on_ack(now, st, ack, sib),)+ AnyCc::Custom(c) => c.on_ack(now, st, ack, sib) }
            }
            fn on_congestion_event(&mut self, now: Instant, st: &mut CcState, ev: CongestionEvent, sib: Siblings) {
                match self { $($(#[cfg($cfg)])? AnyCc::$variant(c) => c.on_congestion_event(now, st, ev, sib),)+ AnyCc::Custom(c) => c.on_congestion_event(now, st, ev, sib) }
            }
            fn on_rto(&mut self, now: Instant, st: &mut CcState) {
                match self { $($(#[cfg($cfg)])? AnyCc::$variant(c) => c.on_rto(now, st),)+ AnyCc::Custom(c) => c.on_rto(now, st) }
            }
            fn on_recovery_exit(&mut self, now: Instant, st: &mut CcState) {
                match self { $($(#[cfg($cfg)])? AnyCc::$variant(c) => c.on_recovery_exit(now, st),)+ AnyCc::Custom(c) => c.on_recovery_exit(now, st) }
            }
            #[inline]
            fn pacing_rate(&self, st: &CcState) -> Option<u64> {
                match self { $($(#[cfg($cfg)])? AnyCc::$variant(c) => c.pacing_rate(st),)+ AnyCc::Custom(c) => c.pacing_rate(st) }
            }
            fn coupled(&self) -> bool {
                match self { $($(#[cfg($cfg)])? AnyCc::$variant(c) => c.coupled(),)+ AnyCc::Custom(c) => c.coupled() }
            }
            fn shared_state(&self) -> [f64; 2] {
                match self { $($(#[cfg($cfg)])? AnyCc::$variant(c) => c.shared_state(),)+ AnyCc::Custom(c) => c.shared_state() }
            }
            #[inline]
            fn cong_control(&self) -> bool {
                match self { $($(#[cfg($cfg)])? AnyCc::$variant(c) => c.cong_control(),)+ AnyCc::Custom(c) => c.cong_control() }
            }
            fn wants_app_limited(&self) -> bool {
                match self { $($(#[cfg($cfg)])? AnyCc::$variant(c) => c.wants_app_limited(),)+ AnyCc::Custom(c) => c.wants_app_limited() }
            }
            fn seed(&mut self, seed: u64) {
                match self { $($(#[cfg($cfg)])? AnyCc::$variant(c) => c.seed(seed),)+ AnyCc::Custom(c) => c.seed(seed) }
            }
        }
    };
}

/// A congestion controller chosen by name with typed parameters (`cubic`, `cubic:beta=0.8`):
/// what [`crate::ConnConfig`] holds. [`CcSpec::parse`] reads the text form; [`CcSpec::custom`]
/// wraps a plug-in.
pub type CcSpec = Spec<CcAlgo>;

impl CcSpec {
    /// A user's controller: `factory` builds one per subflow.
    pub fn custom(
        name: &str,
        factory: impl Fn() -> Box<dyn CongestionControl + Send + Sync> + Send + Sync + 'static,
    ) -> Self {
        Spec::from_algo(name, CcAlgo::Custom(Custom { name: name.to_string(), factory: Arc::new(factory) }))
    }

    /// A fresh controller.
    pub fn build(&self) -> AnyCc {
        self.algo().build()
    }

    /// Whether the connection must build `Siblings` for this controller (a coupled one).
    pub fn coupled(&self) -> bool {
        self.build().coupled()
    }
}

impl Default for CcSpec {
    /// CUBIC (RFC 9438), Linux's default.
    fn default() -> Self {
        CcSpec::parse("cubic").expect("registered")
    }
}

impl AnyCc {
    /// Builds a built-in controller from `name` or `name:key=value,...`; `None` if the name is
    /// unknown or a parameter is invalid (use [`CcSpec::parse`] for the reason).
    pub fn by_name(name: &str) -> Option<AnyCc> {
        CcSpec::parse(name).ok().map(|s| s.build())
    }
}

/// The registered congestion controllers: canonical name, aliases and parameter docs.
pub fn registry() -> &'static [AlgoEntry] {
    ENTRIES
}

registry! {
    /// NewReno (RFC 5681, RFC 6582).
    NewReno(NewReno) "newreno" ["reno"];
    /// CUBIC (RFC 9438).
    Cubic(Cubic) "cubic" [];
    /// LIA, the linked-increases coupled controller (RFC 6356).
    Lia(Lia) "lia" ["coupled"];
    /// OLIA (Khalili et al., IEEE/ACM ToN 2013).
    Olia(Olia) "olia" [];
    /// BALIA (Peng et al., IEEE/ACM ToN 2016).
    Balia(Balia) "balia" [];
    /// wVegas (Cao et al., ICNP 2012), delay-based coupled.
    WVegas(WVegas) "wvegas" [];
    /// BBR v1 (Cardwell et al., ACM Queue 2016), paced, uncoupled per subflow (MPTCP-BBR).
    // Boxed: its state is the largest of the built-ins and every subflow carries an `AnyCc`,
    // so the other controllers' subflows would pay for it (issue 22).
    Bbr(Box<Bbr>) "bbr" [];
    /// Window set from outside (learning environments).
    External(ExternalCc) "external" [];
    /// Example (docs/extending.md): AIMD(a, b).
    #[cfg(any(test, feature = "example-algorithms"))]
    Aimd(aimd::Aimd) "aimd" [];
}
