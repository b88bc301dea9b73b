//! LIA, the Linked Increases Algorithm of MPTCP (RFC 6356, "coupled" in Linux).
//!
//! RFC 6356 section 3, windows in bytes, per ACK on subflow i in congestion avoidance:
//!
//! ```text
//! cwnd_total = sum_i cwnd_i
//! alpha      = cwnd_total * max_i(cwnd_i / rtt_i^2) / (sum_i cwnd_i / rtt_i)^2
//! cwnd_i    += min(alpha * bytes_acked * MSS_i / cwnd_total,  bytes_acked * MSS_i / cwnd_i)
//! ```
//!
//! Loss: halve like Reno (ssthresh = max(cwnd/2, 2 MSS), cwnd = ssthresh); RTO: cwnd = 1 MSS.
//! Slow start is ordinary per-subflow slow start (RFC 6356 section 3: "unchanged from TCP").
//!
//! Implementation choices:
//! * The sums run over subflows that are established and have an RTT estimate (Linux
//!   `mptcp_coupled.c`: `mptcp_sk_can_send && srtt`); the caller always counts, from `st`.
//!   With one such subflow alpha = 1 and the rule is exactly Reno's `MSS*MSS/cwnd`.
//! * alpha is recomputed on every ACK in floating point (the RFC allows once per loss or per RTT
//!   and recommends scaled integers; the kernel recomputes after each increase). [deliberate]
//! * With byte counting (`st.abc`) `bytes_acked` is the ACK's newly acknowledged bytes; without,
//!   every ACK counts as one MSS (ns-3 style per-ACK increase), as in `reno.rs`.
//! * Fractional bytes of growth are carried to the next ACK, so growth is exact on average.
//! * Not modelled: Linux grows only while the subflow is cwnd-limited (`tcp_is_cwnd_limited`);
//!   like `reno.rs`, this controller grows on every ACK it is given.
//!
//! Goal check (RFC 6356 section 2, goals 1 and 2): with n subflows of equal RTT and window w,
//! alpha = 1/n, so each grows 1/n^2 MSS per RTT and the aggregate 1/n MSS per RTT, while each
//! still halves on its own losses: in equilibrium the aggregate window equals that of one TCP
//! flow seeing the same loss rate. It is NOT one MSS per RTT in aggregate.
//!
//! This file also holds the small helpers the other coupled controllers (OLIA, BALIA, wVegas) use.

use super::{after_slow_start, AckSample, CcState, CongestionControl, CongestionEvent, SiblingInfo, Siblings};
use crate::time::{Duration, Instant};

/// One subflow as the coupled formulas see it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Path {
    /// Congestion window in bytes.
    pub cwnd: u64,
    pub mss: u32,
    pub srtt: Duration,
    /// [`CongestionControl::shared_state`] of that subflow's controller (the caller's own, fresh).
    pub shared: [f64; 2],
    pub is_self: bool,
}

impl Path {
    /// Window in segments.
    #[inline]
    pub fn w(&self) -> f64 {
        self.cwnd as f64 / self.mss as f64
    }
    /// Smoothed RTT in seconds.
    #[inline]
    pub fn rtt(&self) -> f64 {
        self.srtt.as_secs_f64()
    }
}

/// The caller takes part in coupling whenever it has an RTT estimate (and an MSS).
#[inline]
fn own_counts(st: &CcState) -> bool {
    st.srtt > Duration::ZERO && st.mss > 0
}

/// A sibling takes part in coupling: established with an RTT estimate, an MSS and a window.
#[inline]
fn counts(s: &SiblingInfo) -> bool {
    s.established && s.srtt > Duration::ZERO && s.mss > 0 && s.cwnd > 0
}

/// Calls `f` for every subflow that takes part in coupling: established with an RTT estimate
/// (Linux: `mptcp_sk_can_send(sk) && tp->srtt`). The caller is taken from `st` (its entry in
/// `sib` may be stale) and counts whenever it has an RTT estimate; an empty `sib` means
/// the caller alone.
pub(crate) fn for_each_path(st: &CcState, own_shared: [f64; 2], sib: Siblings, mut f: impl FnMut(Path)) {
    let me = st.index as usize;
    let own = Path { cwnd: st.cwnd, mss: st.mss, srtt: st.srtt, shared: own_shared, is_self: true };
    let own_ok = own_counts(st);
    if me >= sib.len() {
        if own_ok {
            f(own);
        }
        return;
    }
    for (i, s) in sib.iter().enumerate() {
        if i == me {
            if own_ok {
                f(own);
            }
        } else if counts(s) {
            f(Path { cwnd: s.cwnd, mss: s.mss, srtt: s.srtt, shared: s.cc_shared, is_self: false });
        }
    }
}

/// Number of established subflows (the kernel's `mpcb->cnt_established`), at least 1 (the caller).
pub(crate) fn established_count(st: &CcState, sib: Siblings) -> usize {
    let me = st.index as usize;
    let n = sib.iter().enumerate().filter(|&(i, s)| i == me || s.established).count();
    if me >= sib.len() {
        n + 1
    } else {
        n
    }
}

/// Applies a (possibly negative, possibly fractional) change of `delta` bytes to `st.cwnd`,
/// carrying the fraction in `frac`. The window never drops below one MSS.
pub(crate) fn apply_delta(st: &mut CcState, frac: &mut f64, delta: f64) {
    if !delta.is_finite() {
        return;
    }
    let g = delta + *frac;
    // Nearly every ACK grows the window by a positive amount: its floor without the call.
    if let Some((w, whole)) = super::floor_positive(g) {
        *frac = g - whole;
        st.cwnd = st.cwnd.saturating_add(w);
        return;
    }
    let whole = g.floor();
    *frac = g - whole;
    if whole >= 0.0 {
        st.cwnd = st.cwnd.saturating_add(whole as u64);
    } else {
        st.cwnd = st.cwnd.saturating_sub((-whole) as u64).max(st.mss as u64);
    }
}

/// Bytes an ACK counts for in congestion avoidance: the acknowledged bytes with byte counting,
/// one MSS per ACK without.
#[inline]
pub(crate) fn ca_bytes(st: &CcState, acked: u64) -> f64 {
    if st.abc {
        acked as f64
    } else {
        st.mss as f64
    }
}

/// Reno's multiplicative decrease (RFC 5681 eq. 4 with cwnd for FlightSize, as `reno.rs`).
#[inline]
pub(crate) fn reno_ssthresh(st: &CcState) -> u64 {
    (st.cwnd / 2).max(2 * st.mss as u64)
}

#[derive(Clone, Debug, Default)]
/// The controller; see the module docs.
pub struct Lia {
    /// Fractional bytes of window growth not yet applied.
    frac: f64,
}

/// A path's terms of alpha, `[cwnd, cwnd / rtt², cwnd / rtt]`: the operations of
/// [`Lia::alpha`]'s sums, in the same order, so a cached term is the same `f64`.
#[inline]
fn terms(cwnd: u64, srtt: Duration) -> [f64; 3] {
    let c = cwnd as f64;
    let r = srtt.as_secs_f64();
    [c, c / (r * r), c / r]
}

/// The terms of a sibling that [`for_each_path`] counts (established, with an RTT estimate, an
/// MSS and a window), else `None`: what [`SiblingInfo::lia_terms`] keeps.
pub(crate) fn sibling_terms(s: &SiblingInfo) -> Option<[f64; 3]> {
    counts(s).then(|| terms(s.cwnd, s.srtt))
}

impl Lia {
    /// RFC 6356 alpha and cwnd_total (bytes) over the coupled subflows, or `None` if the caller
    /// has no RTT estimate yet (then the increase is Reno's).
    ///
    /// The paths of [`for_each_path`] in its order, the caller's terms from `st` and the
    /// siblings' from their snapshots ([`SiblingInfo::lia_terms`], taken with them): the
    /// snapshots change only when their subflow does, while with eight subflows the terms of
    /// the seven others were most of each ACK's cost. Debug builds check each cached term.
    pub fn alpha(st: &CcState, sib: Siblings) -> Option<(f64, f64)> {
        let me = st.index as usize;
        let own = own_counts(st).then(|| terms(st.cwnd, st.srtt))?;
        let (mut total, mut best, mut denom) = (0.0f64, 0.0f64, 0.0f64);
        let mut add = |[c, q, d]: [f64; 3]| {
            total += c;
            // `best.max(q)` without its NaN handling (~5 instructions a path): a term
            // `cwnd / rtt²` is a finite non-negative count over a positive finite square
            // (`srtt > 0`, at most 2^64 ns), never NaN and never `-0.0`, so the comparison
            // picks the same value, to the bit (measured: `subflows-8` −0.30 %, `lia-2path`
            // −0.07 %).
            debug_assert!(!q.is_nan() && q.is_sign_positive());
            if q > best {
                best = q;
            }
            denom += d;
        };
        // An empty `sib` (or one without the caller): the caller alone, as `for_each_path`.
        let sib = if me >= sib.len() {
            add(own);
            &[][..]
        } else {
            sib
        };
        for (i, s) in sib.iter().enumerate() {
            #[cfg(debug_assertions)]
            if let Some(t) = s.lia_terms {
                assert_eq!(Some(t.map(f64::to_bits)), sibling_terms(s).map(|t| t.map(f64::to_bits)), "sibling {i}");
            }
            if i == me {
                add(own);
            } else if let Some(t) = s.lia_terms.or_else(|| sibling_terms(s)) {
                add(t);
            }
        }
        if denom <= 0.0 {
            return None;
        }
        Some((total * best / (denom * denom), total))
    }
}

crate::no_params!(Lia);

impl CongestionControl for Lia {
    fn name(&self) -> &'static str {
        "lia"
    }

    /// Inlined into the subflow's ACK path (its own arm there, `Subflow::on_ack_full`): the
    /// sample's fields it does not read are then never written (~1.5 M instructions in
    /// `lia-2path`).
    #[inline]
    fn on_ack(&mut self, _now: Instant, st: &mut CcState, ack: &AckSample, sib: Siblings) {
        let Some(acked) = after_slow_start(st, ack.newly_acked) else { return };
        let mss = st.mss as f64;
        let bytes = ca_bytes(st, acked);
        let reno = bytes * mss / st.cwnd as f64;
        let inc = match Lia::alpha(st, sib) {
            Some((alpha, total)) => (alpha * bytes * mss / total).min(reno),
            None => reno,
        };
        apply_delta(st, &mut self.frac, inc);
    }

    fn on_congestion_event(&mut self, _now: Instant, st: &mut CcState, _ev: CongestionEvent, _sib: Siblings) {
        st.ssthresh = reno_ssthresh(st);
        st.cwnd = st.ssthresh;
        self.frac = 0.0;
    }

    fn on_rto(&mut self, _now: Instant, st: &mut CcState) {
        st.ssthresh = reno_ssthresh(st);
        st.cwnd = st.mss as u64;
        self.frac = 0.0;
    }

    fn coupled(&self) -> bool {
        true
    }
}

/// Test helpers shared by the coupled controllers' unit tests.
#[cfg(test)]
pub(crate) mod testutil {
    use super::super::{AckSample, CcState, SiblingInfo};
    use crate::time::Duration;

    pub const MSS: u64 = 1000;

    pub fn st(cwnd_seg: u64, rtt_ms: u64, index: u8, abc: bool) -> CcState {
        CcState {
            cwnd: cwnd_seg * MSS,
            ssthresh: 2 * MSS,
            mss: MSS as u32,
            pipe: cwnd_seg * MSS,
            srtt: Duration::from_millis(rtt_ms),
            min_rtt: Duration::from_millis(rtt_ms),
            abc,
            stack: crate::info::Stack::Rfc,
            in_recovery: false,
            index,
        }
    }

    pub fn sib(cwnd_seg: u64, rtt_ms: u64) -> SiblingInfo {
        SiblingInfo {
            cwnd: cwnd_seg * MSS,
            ssthresh: 2 * MSS,
            srtt: Duration::from_millis(rtt_ms),
            min_rtt: Duration::from_millis(rtt_ms),
            mss: MSS as u32,
            established: true,
            cc_shared: [0.0; 2],
            lia_terms: None,
        }
        .with_lia_terms()
    }

    pub fn info(s: &CcState) -> SiblingInfo {
        SiblingInfo {
            cwnd: s.cwnd,
            ssthresh: s.ssthresh,
            srtt: s.srtt,
            min_rtt: s.min_rtt,
            mss: s.mss,
            established: true,
            cc_shared: [0.0; 2],
            lia_terms: None,
        }
        .with_lia_terms()
    }

    pub fn ack(bytes: u64) -> AckSample {
        AckSample { newly_acked: bytes, ..Default::default() }
    }

    /// A coupled controller alone on one path grows like Reno: over the 10 ACKs of one RTT
    /// from 10 MSS, sum 1000²/cwnd ≈ 0.96 MSS (with and without ABC).
    pub fn assert_single_path_is_reno<C: super::super::CongestionControl + Default>() {
        for abc in [true, false] {
            let mut c = C::default();
            let mut s = st(10, 100, 0, abc);
            for _ in 0..10 {
                let sibs = vec![info(&s)];
                c.on_ack(crate::time::Instant(0), &mut s, &ack(MSS), &sibs);
            }
            let g = (s.cwnd - 10 * MSS) as f64 / MSS as f64;
            assert!((0.9..=1.0).contains(&g), "abc={abc}: grew {g} MSS in one RTT");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testutil::*;
    use super::*;

    /// One RTT of ACKs (one per MSS of the window at the start of the round).
    fn one_rtt(c: &mut Lia, s: &mut CcState, sibs: &mut [crate::cc::SiblingInfo]) {
        let n = s.cwnd / MSS;
        for _ in 0..n {
            if (s.index as usize) < sibs.len() {
                sibs[s.index as usize] = info(s);
            }
            c.on_ack(Instant(0), s, &ack(MSS), sibs);
        }
    }

    #[test]
    fn lia_single_path_is_reno() {
        for abc in [true, false] {
            // Alone (empty siblings) and with a non-established sibling: both plain Reno.
            let mut lone = Lia::default();
            let mut s1 = st(10, 100, 0, abc);
            one_rtt(&mut lone, &mut s1, &mut []);
            let mut other = sib(50, 10);
            other.established = false;
            // Its kept terms follow its fields (the connection takes them with the snapshot).
            let mut sibs = vec![info(&st(10, 100, 0, abc)), other.with_lia_terms()];
            let mut c = Lia::default();
            let mut s2 = st(10, 100, 0, abc);
            one_rtt(&mut c, &mut s2, &mut sibs);
            assert_eq!(s1.cwnd, s2.cwnd);
            // Reno per-ACK growth over 10 ACKs from 10 MSS: sum 1000^2/cwnd ~ 0.96 MSS.
            let g = (s1.cwnd - 10 * MSS) as f64 / MSS as f64;
            assert!((0.9..=1.0).contains(&g), "abc={abc}: grew {g} MSS in one RTT");
        }
        let s = st(10, 100, 0, true);
        let (alpha, _) = Lia::alpha(&s, &[info(&s)]).unwrap();
        assert!((alpha - 1.0).abs() < 1e-12);
    }

    #[test]
    fn lia_two_equal_paths_grow_half_mss_per_rtt_in_total() {
        // alpha = 1/2; each ACK adds alpha*MSS^2/cwnd_total = MSS^2/(4w): a quarter MSS per RTT
        // per subflow, half an MSS per RTT in aggregate (RFC 6356: no more aggressive than one
        // TCP on the best path, whose window would be 2w and halve on each loss).
        let mut a = Lia::default();
        let mut b = Lia::default();
        let mut sa = st(40, 50, 0, true);
        let mut sb = st(40, 50, 1, true);
        let mut sibs = vec![info(&sa), info(&sb)];
        let (alpha, total) = Lia::alpha(&sa, &sibs).unwrap();
        assert!((alpha - 0.5).abs() < 1e-12);
        assert_eq!(total, 80_000.0);
        let before = sa.cwnd + sb.cwnd;
        for _ in 0..10 {
            one_rtt(&mut a, &mut sa, &mut sibs);
            sibs[0] = info(&sa);
            one_rtt(&mut b, &mut sb, &mut sibs);
            sibs[1] = info(&sb);
        }
        let per_rtt = (sa.cwnd + sb.cwnd - before) as f64 / MSS as f64 / 10.0;
        assert!((0.48..=0.51).contains(&per_rtt), "aggregate growth {per_rtt} MSS/RTT, expected ~0.5");
        assert!((sa.cwnd as i64 - sb.cwnd as i64).abs() <= MSS as i64 / 10);
    }

    #[test]
    fn lia_min_caps_increase_at_reno_on_that_path() {
        // Path 0: small window, short RTT; path 1: large window, long RTT. alpha is large,
        // but path 0 may never beat Reno's MSS^2/cwnd_0.
        let s0 = st(5, 10, 0, true);
        let sibs = vec![info(&s0), sib(100, 200)];
        let (alpha, total) = Lia::alpha(&s0, &sibs).unwrap();
        // Hand value: total 105e3; max cwnd/rtt^2 = 5e3/0.01^2 = 5e7; sum cwnd/rtt = 5e5 + 5e5 = 1e6.
        assert!((alpha - 105e3 * 5e7 / 1e12).abs() < 1e-9, "alpha = {alpha}");
        assert_eq!(total, 105e3);
        let mut c = Lia::default();
        let mut s = s0;
        c.on_ack(Instant(0), &mut s, &ack(MSS), &sibs);
        // coupled term = 5.25 * 1e6 / 105e3 = 50 bytes; Reno term = 1e6/5e3 = 200 bytes.
        assert_eq!(s.cwnd, 5 * MSS + 50);
        let mut s1 = st(100, 200, 1, true);
        let sibs1 = vec![info(&s0), info(&s1)];
        c = Lia::default();
        c.on_ack(Instant(0), &mut s1, &ack(MSS), &sibs1);
        // Path 1: min(50, 1e6/1e5 = 10) = 10 bytes.
        assert_eq!(s1.cwnd, 100 * MSS + 10);
    }

    /// alpha from terms kept with the snapshots, and from terms computed from their fields, equals
    /// to the bit the sums of `for_each_path` in its order (the computation before the terms
    /// were kept), the caller in the middle, and a sibling that does not count.
    #[test]
    fn kept_terms_give_the_same_alpha_to_the_bit() {
        let s1 = st(7, 23, 1, true);
        let mut idle = sib(50, 10);
        idle.established = false;
        let kept = vec![sib(13, 41), info(&s1), sib(29, 97), idle.with_lia_terms()];
        assert!(kept[0].lia_terms.is_some() && kept[3].lia_terms.is_none());
        let plain: Vec<_> = kept.iter().map(|s| SiblingInfo { lia_terms: None, ..*s }).collect();
        let (mut total, mut best, mut denom) = (0.0f64, 0.0f64, 0.0f64);
        for_each_path(&s1, [0.0; 2], &kept, |p| {
            let (c, r) = (p.cwnd as f64, p.rtt());
            total += c;
            best = best.max(c / (r * r));
            denom += c / r;
        });
        let want = ((total * best / (denom * denom)).to_bits(), total.to_bits());
        for sibs in [&kept, &plain] {
            let (alpha, total) = Lia::alpha(&s1, sibs).unwrap();
            assert_eq!((alpha.to_bits(), total.to_bits()), want);
        }
    }

    #[test]
    fn lia_loss_halves_and_rto_resets() {
        let mut c = Lia::default();
        let mut s = st(20, 100, 0, true);
        c.on_congestion_event(Instant(0), &mut s, CongestionEvent::Loss, &[]);
        assert_eq!((s.cwnd, s.ssthresh), (10 * MSS, 10 * MSS));
        c.on_rto(Instant(0), &mut s);
        assert_eq!((s.cwnd, s.ssthresh), (MSS, 5 * MSS));
        assert!(c.coupled());
        assert_eq!(c.name(), "lia");
    }

    /// `floor_positive` against `f64::floor`, to the bit, where it answers; `None` exactly
    /// outside `(0, 2^63)`.
    fn floor_positive_matches(x: f64) {
        match crate::cc::floor_positive(x) {
            Some((w, f)) => {
                assert_eq!(f.to_bits(), x.floor().to_bits(), "{x}");
                assert_eq!(w, x.floor() as u64, "{x}");
            }
            None => assert!(!(x > 0.0 && x < 9_223_372_036_854_775_808.0), "{x}"),
        }
    }

    #[test]
    fn floor_positive_at_the_edges() {
        for x in [
            0.0,
            -0.0,
            f64::MIN_POSITIVE,
            5e-324,
            0.5,
            0.999_999_999_999_999_9,
            1.0,
            1.5,
            4_503_599_627_370_495.5,
            9_007_199_254_740_993.0,
            9_223_372_036_854_774_784.0,
            9_223_372_036_854_775_808.0,
            1e300,
            -1.5,
            f64::INFINITY,
            f64::NAN,
        ] {
            floor_positive_matches(x);
        }
    }

    proptest::proptest! {
        #[test]
        fn floor_positive_is_floor(bits in proptest::prelude::any::<u64>()) {
            floor_positive_matches(f64::from_bits(bits));
        }
        #[test]
        fn floor_positive_of_window_growth(x in 0.0f64..1e7) {
            floor_positive_matches(x);
        }
    }
}
