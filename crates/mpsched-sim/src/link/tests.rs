//! Unit tests of the links.

use super::*;

fn link(rate_bps: u64, delay_ns: u64, cap: u64, trace: Option<Arc<Trace>>) -> Link {
    Link::new(0, "l".into(), rate_bps, delay_ns, cap, LossModel::None, trace, Rng::new(1), vec![])
}

/// Runs the link's own events until none are left; returns (arrival time, pkt) pairs.
fn drain(l: &mut Link, ev: &mut EventQueue) -> Vec<(u64, PktId)> {
    let mut out = Vec::new();
    let (mut dropped, mut lost) = (Vec::new(), Vec::new());
    while let Some(e) = ev.pop() {
        let mut arrived = Vec::new();
        match e.kind {
            Kind::Lost => l.on_lost(e.at, e.b, ev, &mut lost),
            Kind::Arrive if l.live(e.b) => l.on_arrive(e.at, ev, &mut arrived),
            Kind::Arrive => {}
            Kind::TraceOpportunity => l.on_trace_opportunity(e.at, ev, &mut dropped),
            _ => unreachable!(),
        }
        out.extend(arrived.into_iter().map(|p| (e.at, p)));
    }
    out
}

#[test]
fn serialization_plus_propagation() {
    // 12 Mbps: a 1500 B packet takes 1 ms; delay 10 ms.
    let mut l = link(12_000_000, 10_000_000, 1_000_000, None);
    let mut ev = EventQueue::default();
    for p in 0..3 {
        assert_eq!(l.offer(0, p, 1500, &mut ev), Offer::Accepted);
    }
    let out = drain(&mut l, &mut ev);
    assert_eq!(out, vec![(11_000_000, 0), (12_000_000, 1), (13_000_000, 2)]);
}

#[test]
fn arrive_single_takes_a_lone_head_and_leaves_a_batch_to_on_arrive() {
    // 12 Mbit/s, 10 ms: packets 0 and 1 leave the serializer at 1 and 2 ms, decided at enqueue
    // (no serializer event).
    let serialize = |l: &mut Link, ev: &mut EventQueue| {
        l.offer(0, 0, 1500, ev);
        l.offer(0, 1, 1500, ev);
    };
    let mut l = link(12_000_000, 10_000_000, 1_000_000, None);
    let mut ev = EventQueue::default();
    serialize(&mut l, &mut ev);
    let e = ev.pop().unwrap();
    assert_eq!((e.at, e.kind), (11_000_000, Kind::Arrive));
    // Packet 1 is not due: packet 0 is taken, the next arrival is scheduled at 12 ms.
    assert_eq!(l.arrive_single(11_000_000, &mut ev), Some(0));
    let e = ev.pop().unwrap();
    assert_eq!((e.at, e.kind), (12_000_000, Kind::Arrive));
    assert_eq!(ev.pop(), None);
    assert_eq!(l.arrive_single(12_000_000, &mut ev), Some(1));
    assert_eq!(ev.pop(), None);
    // Both due at 13 ms: nothing changes, `on_arrive` takes them in order.
    let mut l = link(12_000_000, 10_000_000, 1_000_000, None);
    let mut ev = EventQueue::default();
    serialize(&mut l, &mut ev);
    assert_eq!(l.arrive_single(13_000_000, &mut ev), None);
    let mut out = Vec::new();
    l.on_arrive(13_000_000, &mut ev, &mut out);
    assert_eq!(out, vec![0, 1]);
}

#[test]
fn drop_tail_counts_bytes_excluding_the_packet_in_service() {
    let mut l = link(12_000_000, 0, 3000, None);
    let mut ev = EventQueue::default();
    let verdicts: Vec<Offer> = (0..5).map(|p| l.offer(0, p, 1500, &mut ev)).collect();
    assert_eq!(verdicts[..3], [Offer::Accepted; 3]);
    assert_eq!(verdicts[3..], [Offer::DroppedQueue; 2]);
}

#[test]
fn packet_limit_and_unlimited_queue() {
    // Three packets wait at most (the one in service excluded), whatever their size.
    let mut l = link(12_000_000, 0, u64::MAX, None);
    l.queue_cap_packets = 3;
    let mut ev = EventQueue::default();
    let verdicts: Vec<Offer> = (0..6).map(|p| l.offer(0, p, 40, &mut ev)).collect();
    assert_eq!(verdicts[..4], [Offer::Accepted; 4]);
    assert_eq!(verdicts[4..], [Offer::DroppedQueue; 2]);
    // Unlimited: 10,000 full packets all wait.
    let mut l = link(12_000_000, 0, u64::MAX, None);
    assert!((0..10_000).all(|p| l.offer(0, p, 1500, &mut ev) == Offer::Accepted));
    assert_eq!((l.queued_bytes(), l.queued_packets()), (9_999 * 1500, 9_999));
}

#[test]
fn queue_occupancy_is_integrated_exactly() {
    // 12 Mbit/s: 1 ms per 1500 B. Three packets at t = 0: one in service, two waiting
    // until 1 ms, then one until 2 ms, then none: 3 packet·ms over 4 ms.
    let mut l = link(12_000_000, 0, 1_000_000, None);
    let mut ev = EventQueue::default();
    for p in 0..3 {
        l.offer(0, p, 1500, &mut ev);
    }
    drain(&mut l, &mut ev);
    l.settle_to(4_000_000);
    assert_eq!((l.stats.max_queue_bytes, l.stats.max_queue_packets), (3000, 2));
    assert_eq!(l.mean_queue(4_000_000), (3.0 * 1500.0 / 4.0, 3.0 / 4.0));
}

#[test]
fn trace_releases_1500_bytes_per_opportunity_with_carry_over() {
    // Opportunities at 1, 1, 3 ms, looping with period 3 ms.
    let tr = Arc::new(Trace::new(vec![1, 1, 3]));
    let mut l = link(0, 0, 1_000_000, Some(tr));
    let mut ev = EventQueue::default();
    l.offer(0, 0, 1000, &mut ev);
    l.offer(0, 1, 1000, &mut ev);
    l.offer(0, 2, 1500, &mut ev);
    l.offer(0, 3, 1500, &mut ev);
    let out = drain(&mut l, &mut ev);
    // t=1 ms: 3000 B of budget: pkt0 (1000), pkt1 (1000), 1000 of pkt2.
    // t=3 ms: 500 more of pkt2 (done), 1000 of pkt3. Next lap: t=4 ms (=3+1): pkt3 done.
    assert_eq!(out, vec![(1_000_000, 0), (1_000_000, 1), (3_000_000, 2), (4_000_000, 3)]);
}

#[test]
fn trace_wastes_opportunities_while_idle() {
    let tr = Arc::new(Trace::new(vec![1, 2, 3, 4]));
    let mut l = link(0, 0, 1_000_000, Some(tr));
    let mut ev = EventQueue::default();
    // Arrives at 10.5 ms: the next opportunity is at 11 ms (lap 2 starts at 8 ms: 9,10,11,12).
    l.offer(10_500_000, 7, 1500, &mut ev);
    assert_eq!(drain(&mut l, &mut ev), vec![(11_000_000, 7)]);
    assert_eq!(l.capacity_bytes(12_000_000), 12.0 * 1500.0);
}

#[test]
fn gilbert_elliott_long_run_rate() {
    let ge = LossModel::GilbertElliott { p_gb: 0.01, p_bg: 0.1, loss_good: 0.0, loss_bad: 0.5 };
    let mut l = Link::new(0, "l".into(), 1, 0, 0, ge.clone(), None, Rng::new(3), vec![]);
    let n = 400_000;
    let lost = (0..n).filter(|_| l.lose()).count() as f64 / n as f64;
    // pi_bad = 0.01/0.11 = 0.0909; mean loss = 0.04545.
    assert!((lost - ge.mean_loss()).abs() < 0.004, "{lost} vs {}", ge.mean_loss());
}

mod against_the_two_event_model {
    //! The rate link (departures decided at enqueue, link/serial.rs) against the old model with
    //! a serializer event per packet (reference.rs), on random offers and changes at instants
    //! that are not departures: the same arrivals, drops (time, packet, reason), counters and
    //! queue integrals.
    use super::super::reference::{Record, RefLink};
    use super::*;
    use crate::rng::Rng;
    use proptest::prelude::{any, prop_assert_eq, prop_oneof, proptest, Just, ProptestConfig, Strategy};
    use proptest::test_runner::TestCaseError;

    #[derive(Clone, Debug)]
    enum Op {
        Offer(u32),
        Change(LinkChange),
        /// A path event's outage (announced with `expect_change_at`).
        Outage(bool),
    }

    fn loss() -> impl Strategy<Value = LossModel> {
        prop_oneof![
            Just(LossModel::None),
            (0.0f64..0.5).prop_map(|p| LossModel::Bernoulli { p }),
            (0.0f64..0.3, 0.1f64..0.9).prop_map(|(p_gb, p_bg)| LossModel::GilbertElliott {
                p_gb,
                p_bg,
                loss_good: 0.01,
                loss_bad: 0.6
            }),
        ]
    }

    fn change() -> impl Strategy<Value = LinkChange> {
        (
            proptest::option::of(prop_oneof![Just(1_000_000u64), Just(7_000_000), Just(40_000_000)]),
            proptest::option::of(0u64..20_000_000),
            proptest::option::of(loss()),
            proptest::option::of(any::<bool>()),
        )
            .prop_map(|(rate_bps, delay_ns, loss, outage)| LinkChange {
                at_ns: 0,
                rate_bps,
                delay_ns,
                loss,
                outage,
            })
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            12 => (40u32..1500).prop_map(Op::Offer),
            1 => change().prop_map(Op::Change),
            1 => any::<bool>().prop_map(Op::Outage),
        ]
    }

    /// Drop reasons: 0 queue full, 1 loss model, 2 outage.
    type Drops = Vec<(u64, PktId, u8)>;

    struct Run {
        link: Link,
        ev: EventQueue,
        arrivals: Vec<(u64, PktId)>,
        drops: Drops,
    }

    impl Run {
        /// Runs the link's events due by `t` (departures first: an offer at `t` comes after).
        fn until(&mut self, t: u64) {
            while self.ev.peek_time().is_some_and(|q| q <= t) {
                let e = self.ev.pop().unwrap();
                let (mut arrived, mut lost) = (Vec::new(), Vec::new());
                match e.kind {
                    Kind::Lost => self.link.on_lost(e.at, e.b, &mut self.ev, &mut lost),
                    Kind::Arrive if self.link.live(e.b) => self.link.on_arrive(e.at, &mut self.ev, &mut arrived),
                    Kind::Arrive => {}
                    _ => unreachable!(),
                }
                self.arrivals.extend(arrived.into_iter().map(|p| (e.at, p)));
                self.drops.extend(lost.into_iter().map(|(p, o)| (e.at, p, if o { 2 } else { 1 })));
            }
        }
    }

    fn sorted<T: Ord>(mut v: Vec<T>) -> Vec<T> {
        v.sort();
        v
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn same_outcomes_as_a_serializer_event_per_packet(
            rate in prop_oneof![Just(1_000_000u64), Just(12_000_000), Just(100_000_000)],
            delay in 0u64..30_000_000,
            cap in 1_500u64..30_000,
            cap_packets in proptest::option::of(1u64..12),
            loss0 in loss(),
            jitter in proptest::option::of(1u64..5_000_000),
            ops in proptest::collection::vec((1u64..4_000_000, op()), 1..120),
        ) {
            // Times: cumulative gaps; changes scheduled (and announced) at theirs.
            let mut t = 0;
            let timed: Vec<(u64, Op)> = ops.into_iter().map(|(gap, o)| { t += gap; (t, o) }).collect();
            let (mut run, mut refl) = pair(&Params { rate, delay, cap, cap_packets, loss: loss0, jitter }, &timed);
            let mut rec = Record::default();
            let mut change = 0;
            for (pkt, (t, o)) in timed.iter().enumerate() {
                let (t, pkt) = (*t, pkt as PktId);
                // An instant that is a departure: the two models order it differently; the
                // change still applies (it was scheduled), the offer is left out.
                let tie = refl.next_departure() == Some(t);
                run.until(t);
                refl.run_until(t, &mut rec);
                match o {
                    Op::Offer(_) if tie => continue,
                    Op::Offer(size) => {
                        let verdict = run.link.offer(t, pkt, *size, &mut run.ev);
                        match verdict {
                            Offer::Accepted => {}
                            Offer::DroppedQueue => run.drops.push((t, pkt, 0)),
                            Offer::DroppedOutage => run.drops.push((t, pkt, 2)),
                        }
                        let ok = refl.offer(t, pkt, *size, &mut rec);
                        prop_assert_eq!(ok, verdict == Offer::Accepted, "offer of {} at {}", pkt, t);
                    }
                    Op::Change(_) | Op::Outage(_) if tie => {
                        // Not comparable from here on (the in-service packet's fate depends on
                        // which of the two comes first).
                        return Ok(());
                    }
                    Op::Change(c) => {
                        let mut dropped = Vec::new();
                        run.link.apply_change(t, change, &mut dropped, &mut run.ev);
                        run.drops.extend(dropped.into_iter().map(|p| (t, p, 2)));
                        refl.apply_change(t, &LinkChange { at_ns: t, ..c.clone() }, &mut rec);
                        change += 1;
                    }
                    Op::Outage(on) => {
                        let mut dropped = Vec::new();
                        run.link.set_outage(t, *on, &mut dropped, &mut run.ev);
                        run.drops.extend(dropped.into_iter().map(|p| (t, p, 2)));
                        refl.apply_change(t, &LinkChange { at_ns: t, outage: Some(*on), ..Default::default() }, &mut rec);
                    }
                }
                run.link.settle_to(t);
                prop_assert_eq!(run.link.held_packets(), refl.held_packets(), "held at {}", t);
                prop_assert_eq!((run.link.queued_bytes(), run.link.queued_packets()), refl.queued(), "queue at {}", t);
            }
            same_at_the_end(run, refl, rec, t + 1_000_000_000)?;
        }
    }

    /// The link's parameters drawn for a case.
    struct Params {
        rate: u64,
        delay: u64,
        cap: u64,
        cap_packets: Option<u64>,
        loss: LossModel,
        jitter: Option<u64>,
    }

    /// The link and the reference, alike, for the timed operations: the changes scheduled (and
    /// announced) at their times, the outages announced.
    fn pair(p: &Params, timed: &[(u64, Op)]) -> (Run, RefLink) {
        let changes: Vec<LinkChange> = timed
            .iter()
            .filter_map(|(t, o)| match o {
                Op::Change(c) => Some(LinkChange { at_ns: *t, ..c.clone() }),
                _ => None,
            })
            .collect();
        let mut link = Link::new(0, "l".into(), p.rate, p.delay, p.cap, p.loss.clone(), None, Rng::new(5), changes);
        let mut refl = RefLink::new(p.rate, p.delay, p.cap, p.loss.clone(), Rng::new(5));
        if let Some(c) = p.cap_packets {
            link.queue_cap_packets = c;
            refl.queue_cap_packets = c;
        }
        if let Some(j) = p.jitter {
            link.set_jitter(j, Rng::new(11));
            refl.set_jitter(j, Rng::new(11));
        }
        for (t, o) in timed {
            if matches!(o, Op::Outage(_)) {
                link.expect_change_at(*t);
            }
        }
        (Run { link, ev: EventQueue::default(), arrivals: Vec::new(), drops: Vec::new() }, refl)
    }

    /// Both run to the end; then the same arrivals, drops, counters, maxima and mean queue.
    fn same_at_the_end(mut run: Run, mut refl: RefLink, mut rec: Record, end: u64) -> Result<(), TestCaseError> {
        run.until(u64::MAX);
        refl.run_until(u64::MAX, &mut rec);
        run.link.settle_to(end);
        prop_assert_eq!(sorted(run.arrivals), sorted(rec.arrivals));
        // The reference tells queue-full from loss-model drops by time only: same packets,
        // times and outage flags.
        let ours: Vec<(u64, PktId, bool)> = sorted(run.drops.iter().map(|&(t, p, r)| (t, p, r == 2)).collect());
        prop_assert_eq!(ours, sorted(rec.drops));
        let (a, b) = (run.link.stats, refl.stats);
        prop_assert_eq!(
            (a.packets_in, a.packets_out, a.bytes_out, a.dropped_queue, a.dropped_loss, a.dropped_outage),
            (b.packets_in, b.packets_out, b.bytes_out, b.dropped_queue, b.dropped_loss, b.dropped_outage)
        );
        prop_assert_eq!((a.max_queue_bytes, a.max_queue_packets), (b.max_queue_bytes, b.max_queue_packets));
        prop_assert_eq!(run.link.mean_queue(end), refl.mean_queue(end));
        Ok(())
    }
}
