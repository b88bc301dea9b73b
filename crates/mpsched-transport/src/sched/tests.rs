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
        unsent: 0,
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
        changed: SubflowSet::ALL,
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

/// `AnySched::shape`'s answers for the built-ins (one test of the variant) equal their trait
/// methods', for every registered name; a plug-in is asked through its own.
#[test]
fn shape_matches_trait_methods() {
    for n in SchedSpec::names() {
        let s = AnySched::by_name(n).unwrap();
        assert_eq!(s.shape(), SchedShape::of(&s), "{n}");
        assert!(!s.may_keep_timer() && s.poll_timeout().is_none(), "{n}");
    }
    assert!(AnySched::by_name("upstream").unwrap().shape().queues);
    let custom = AnySched::Custom(Box::new(<Upstream as crate::algo::FromParams>::from_params(&Default::default())));
    assert_eq!(custom.shape(), SchedShape { queues: true, reads_conn: false, reads_fit: false, full_info: false });
    assert!(custom.may_keep_timer());
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
    assert!(SchedSpec::register_plugin("a:b", Arc::new(|| Box::new(Last))).unwrap_err().starts_with("expected a name"));
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

proptest::proptest! {
    /// minRTT's written-out path for new data chooses as Linux's passes do, for any mix of
    /// usable, busy, backup and carried subflows, equal srtts (ties) and any subset.
    #[test]
    fn min_rtt_new_matches_the_passes(
        subs in proptest::collection::vec((0u64..4, 0u8..4, proptest::bool::ANY, proptest::bool::ANY), 1..=8),
        set in 0u16..256,
    ) {
        let views: Vec<SchedSubflow> = subs
            .iter()
            .map(|&(srtt, kind, is_backup, carried)| {
                let s = match kind { 0 => idle(srtt), 1 => busy(srtt), 2 => unusable(srtt), _ => sf(srtt, 4, 3) };
                SchedSubflow { backup: is_backup, carried, ..s }
            })
            .collect();
        let conn = ConnInfo::default();
        let v = view(&views, &conn);
        proptest::prop_assert_eq!(v.min_rtt_in(SubflowSet(set)), v.min_rtt_passes(SubflowSet(set)));
        proptest::prop_assert_eq!(v.min_rtt(), v.min_rtt_passes(SubflowSet(u16::MAX)));
    }
}

/// `AnySched::redundant`'s shortcut (the variants that can be redundant, `false` for the
/// others) answers as the trait method of every registered scheduler, in both of the external
/// scheduler's modes.
#[test]
fn redundant_overrides() {
    for n in SchedSpec::names() {
        let mut s = AnySched::by_name(n).unwrap();
        assert_eq!(s.redundant(), s.redundant_dispatch(), "{n}");
        s.decide(&Decision::Mode(1));
        assert_eq!(s.redundant(), s.redundant_dispatch(), "{n} after mode 1");
    }
    let mut e = AnySched::by_name("external-mode").unwrap();
    e.decide(&Decision::Mode(1));
    assert!(e.redundant());
}
