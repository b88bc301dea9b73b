//! DMPTCP's set choice and scheduling on hand-built views. Subflow 0: srtt 10 ms, subflow 1:
//! srtt 40 ms, both with a 10-segment window in slow start (MSS 1448). With the default horizon
//! (the next candidate's first round), the fast subflow alone delivers in 40 ms (4 rounds)
//! 10 + 20 + 40 + 80 = 150 segments = 217 200 bytes; in preference order 1, 0 the slow subflow
//! alone delivers one round (10 segments = 14 480 bytes) within max(40, 10) = 40 ms.
use super::*;
use crate::algo::FromParams;
use crate::info::ConnInfo;
use crate::sched::tests::{at_ms, busy, carried, idle, reinj_view, retrans, send, unusable, view, MSS};
use crate::sched::{SchedSpec, SchedSubflow};

const FAST_ALONE: u64 = 150 * MSS;

fn conn(remaining: u64) -> ConnInfo {
    ConnInfo { bytes_written: remaining, ..ConnInfo::default() }
}

fn dmptcp() -> Dmptcp {
    let mut d = Dmptcp::from_params(&DmptcpParams::default());
    d.start(&SchedStart { now: Instant::ZERO, paths: 2, mss: MSS as u32, rcv_buf: 1 << 20 });
    d
}

/// Which subflow the scheduler picks for the next new segment.
fn pick(
    d: &mut Dmptcp,
    t: Instant,
    subs: &[SchedSubflow],
    c: &ConnInfo,
    pref: Option<&[f32]>,
) -> (Verdict, Vec<usize>) {
    let v = SchedView { preference: pref, ..view(subs, c) };
    send(d, t, &v)
}

/// A small remainder stays on the fast subflow, even when its window is full; one byte more
/// than it can deliver before the slow one's first round brings the slow one in.
#[test]
fn set_by_remaining_bytes() {
    let mut d = dmptcp();
    let c = conn(FAST_ALONE);
    assert_eq!(pick(&mut d, at_ms(0), &[idle(10), idle(40)], &c, None), (Verdict::Send, vec![0]));
    assert_eq!(d.set(), SubflowSet(0b01));
    assert_eq!(pick(&mut d, at_ms(0), &[busy(10), idle(40)], &c, None), (Verdict::Wait, vec![]));
    let mut d = dmptcp();
    let c = conn(FAST_ALONE + 1);
    assert_eq!(pick(&mut d, at_ms(0), &[busy(10), idle(40)], &c, None), (Verdict::Send, vec![1]));
    assert_eq!(d.set(), SubflowSet(0b11));
    // Remaining = written − DATA_ACKed.
    let mut d = dmptcp();
    let c = ConnInfo { bytes_written: FAST_ALONE + 1000, data_acked: 1000, ..ConnInfo::default() };
    assert_eq!(pick(&mut d, at_ms(0), &[busy(10), idle(40)], &c, None), (Verdict::Wait, vec![]));
}

/// The preference orders the candidates: [0.2, 0.8] tries the slow subflow first, which alone
/// delivers 14 480 bytes in 40 ms; that much goes on it although subflow 0 is faster and idle.
#[test]
fn preference_orders_the_candidates() {
    let subs = [idle(10), idle(40)];
    let pref: &[f32] = &[0.2, 0.8];
    let mut d = dmptcp();
    assert_eq!(pick(&mut d, at_ms(0), &subs, &conn(10 * MSS), Some(pref)), (Verdict::Send, vec![1]));
    assert_eq!(d.set(), SubflowSet(0b10));
    let mut d = dmptcp();
    assert_eq!(pick(&mut d, at_ms(0), &subs, &conn(10 * MSS + 1), Some(pref)), (Verdict::Send, vec![0]));
    assert_eq!(d.set(), SubflowSet(0b11));
    // Without the preference (srtt order) the fast subflow alone takes the small remainder.
    let mut d = dmptcp();
    assert_eq!(pick(&mut d, at_ms(0), &subs, &conn(10 * MSS), None), (Verdict::Send, vec![0]));
}

/// A zero preference masks the path: it gets no new data even for a long flow whose set would
/// otherwise be every path; all masked (never passed by the connection): nothing is sent.
#[test]
fn zero_preference_masks_a_path() {
    let subs = [busy(10), idle(40)];
    let mut d = dmptcp();
    assert_eq!(pick(&mut d, at_ms(0), &subs, &conn(1 << 30), Some(&[1.0, 0.0])), (Verdict::Wait, vec![]));
    assert_eq!(d.set(), SubflowSet(0b01));
    let mut d = dmptcp();
    assert_eq!(pick(&mut d, at_ms(0), &subs, &conn(1 << 30), Some(&[1.0])), (Verdict::Wait, vec![]), "missing = 0");
    let mut d = dmptcp();
    assert_eq!(
        pick(&mut d, at_ms(0), &[idle(10), idle(40)], &conn(1 << 30), Some(&[0.0, 0.0])),
        (Verdict::Wait, vec![])
    );
    let mut d = dmptcp();
    assert_eq!(pick(&mut d, at_ms(0), &subs, &conn(1 << 30), None), (Verdict::Send, vec![1]));
}

/// Re-evaluation: once per smallest srtt (10 ms), and at once on a new application write or a
/// changed preference.
#[test]
fn re_evaluation() {
    let subs = [busy(10), idle(40)];
    let mut d = dmptcp();
    let c = conn(FAST_ALONE + 1);
    assert_eq!(pick(&mut d, at_ms(0), &subs, &c, None), (Verdict::Send, vec![1]));
    // One byte acknowledged: the remainder fits the fast subflow, but the period has not ended.
    let c = ConnInfo { data_acked: 1, ..c };
    assert_eq!(pick(&mut d, at_ms(9), &subs, &c, None), (Verdict::Send, vec![1]));
    assert_eq!(pick(&mut d, at_ms(10), &subs, &c, None), (Verdict::Wait, vec![]));
    assert_eq!(d.set(), SubflowSet(0b01));
    // A new write: evaluated at once.
    let c = ConnInfo { bytes_written: c.bytes_written + 1, ..c };
    assert_eq!(pick(&mut d, at_ms(11), &subs, &c, None), (Verdict::Send, vec![1]));
    // A preference: at once too.
    assert_eq!(pick(&mut d, at_ms(12), &subs, &c, Some(&[1.0, 0.0])), (Verdict::Wait, vec![]));
}

/// An MP_JOIN subflow waiting for its fourth ACK (established, not usable, nothing sent) is a
/// candidate whose first round ends one srtt later: 80 ms, in which the fast subflow delivers
/// 8 rounds = 10 · 255 segments. A subflow without an RTT sample is no candidate, and joins
/// the candidates (re-evaluation at once) when it comes up.
#[test]
fn joining_and_unknown_subflows() {
    let mut d = dmptcp();
    let joining = unusable(40);
    let _ = pick(&mut d, at_ms(0), &[idle(10), joining], &conn(2550 * MSS), None);
    assert_eq!(d.set(), SubflowSet(0b01));
    let _ = pick(&mut d, at_ms(0), &[idle(10), joining], &conn(2550 * MSS + 1), None);
    assert_eq!(d.set(), SubflowSet(0b11));
    // Failed (an RTO fired): no candidate.
    let mut failed = unusable(40);
    failed.info.rto_count = 1;
    let mut d = dmptcp();
    let _ = pick(&mut d, at_ms(0), &[idle(10), failed], &conn(1 << 30), None);
    assert_eq!(d.set(), SubflowSet(0b01));
    // SYN in flight: no srtt.
    let mut syn = unusable(0);
    syn.info.established = false;
    let mut d = dmptcp();
    let _ = pick(&mut d, at_ms(0), &[idle(10), syn], &conn(1 << 30), None);
    assert_eq!(d.set(), SubflowSet(0b01));
    assert_eq!(pick(&mut d, at_ms(1), &[busy(10), idle(40)], &conn(1 << 30), None), (Verdict::Send, vec![1]));
}

/// A usable subflow without an RTT sample (its SYN was retransmitted): no restriction until
/// the sample; then the model decides (here: the fast subflow alone).
#[test]
fn unsampled_usable_subflow_means_no_restriction() {
    let mut d = dmptcp();
    let c = conn(10 * MSS);
    let mut nosample = busy(10);
    nosample.info.srtt = crate::time::Duration(0);
    assert_eq!(pick(&mut d, at_ms(0), &[nosample, idle(40)], &c, None), (Verdict::Send, vec![1]));
    assert_eq!(d.set(), SubflowSet(0b11));
    assert_eq!(pick(&mut d, at_ms(1), &[busy(10), idle(40)], &c, None), (Verdict::Wait, vec![]));
    assert_eq!(d.set(), SubflowSet(0b01));
}

/// No member usable (the fast path failed): minRTT over every allowed subflow.
#[test]
fn falls_back_when_no_member_is_usable() {
    let mut d = dmptcp();
    let c = conn(10 * MSS);
    let _ = pick(&mut d, at_ms(0), &[idle(10), idle(40)], &c, None);
    assert_eq!(d.set(), SubflowSet(0b01));
    let mut pf = unusable(10);
    pf.info.rto_count = 1;
    // Subflow 0 failed: it is no candidate any more, the set is re-evaluated to {1}.
    assert_eq!(pick(&mut d, at_ms(1), &[pf, idle(40)], &c, None), (Verdict::Send, vec![1]));
}

/// Reinjections may use any subflow (plain minRTT), outside the set too.
#[test]
fn reinjection_uses_any_subflow() {
    let mut d = dmptcp();
    let c = conn(10 * MSS);
    let _ = pick(&mut d, at_ms(0), &[idle(10), idle(40)], &c, None);
    assert_eq!(d.set(), SubflowSet(0b01));
    let subs = [carried(idle(10)), idle(40)];
    assert_eq!(retrans(&mut d, at_ms(0), &reinj_view(&subs, &c)), (Verdict::Send, vec![1]));
}

/// By name, with parameters.
#[test]
fn registered() {
    let s = SchedSpec::parse("dmptcp:next_candidate=false,coupled=false").unwrap();
    assert_eq!(s.build().name(), "dmptcp");
    assert!(SchedSpec::parse("dmptcp:period_rtts=0").is_err());
}
