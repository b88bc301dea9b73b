//! Per-packet delay variation (`jitter_ms`, `link::Jitter`): netem's uniform
//! `delay ± jitter` draw from the link's own `link/<name>/jitter` stream, packets kept in FIFO
//! order, no draw (and byte-identical outputs) without jitter; the scenario field's checks.

use mpsched_sim::event::{EventQueue, Kind};
use mpsched_sim::link::{Link, LossModel, PktId};
use mpsched_sim::netmodel::build_links;
use mpsched_sim::rng::Rng;
use mpsched_sim::{parse_text, run, Format, Scenario, Table};

const MS: u64 = 1_000_000;

/// 12 Mbit/s (1 ms per 1500 B packet), 10 ms delay, 5 ms jitter from `Rng::new(seed)`.
fn jittery(seed: u64) -> Link {
    let mut l = Link::new(0, "l".into(), 12_000_000, 10 * MS, u64::MAX, LossModel::None, None, Rng::new(9), vec![]);
    l.set_jitter(5 * MS, Rng::new(seed));
    l
}

/// Offers one 1500 B packet at each time and runs the link's events: (arrival, packet) pairs.
fn send(l: &mut Link, times: &[u64]) -> Vec<(u64, PktId)> {
    let mut ev = EventQueue::default();
    let (mut out, mut dropped) = (Vec::new(), Vec::new());
    let mut next = 0;
    loop {
        let offer_next = match (times.get(next), ev.peek_time()) {
            (Some(&t), Some(q)) => t <= q,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => return out,
        };
        if offer_next {
            l.offer(times[next], next as PktId, 1500, &mut ev);
            next += 1;
            continue;
        }
        let e = ev.pop().unwrap();
        let mut arrived = Vec::new();
        match e.kind {
            Kind::Lost => l.on_lost(e.at, e.b, &mut ev, &mut dropped),
            Kind::Arrive if l.live(e.b) => l.on_arrive(e.at, &mut ev, &mut arrived),
            Kind::Arrive => {}
            _ => unreachable!(),
        }
        out.extend(arrived.into_iter().map(|p| (e.at, p)));
    }
}

#[test]
fn a_packets_delay_is_netems_uniform_draw_from_the_links_stream() {
    // Packets 100 ms apart never queue: each arrives at send + 1 ms (serialization) + its own
    // delay 10 ms + (r mod 10 ms) − 5 ms, r the stream's next 64 bits (tabledist, no table).
    let times: Vec<u64> = (0..5).map(|i| i * 100 * MS).collect();
    let out = send(&mut jittery(7), &times);
    let mut r = Rng::new(7);
    let want: Vec<(u64, PktId)> =
        times.iter().enumerate().map(|(i, &t)| (t + MS + 5 * MS + r.next_u64() % (10 * MS), i as PktId)).collect();
    assert_eq!(out, want);
    // Pinned for seed 7, so a change of the stream or of the formula is noticed.
    assert_eq!(out[0], (6 * MS + Rng::new(7).next_u64() % (10 * MS), 0));
    assert_eq!(out[0].0, 10_665_661);
}

#[test]
fn back_to_back_packets_keep_their_order() {
    // Twenty packets at t = 0 leave the serializer 1 ms apart: each arrives at its own draw or,
    // if that would overtake the packet before it, right with it (FIFO, as netem with a rate).
    let out = send(&mut jittery(3), &[0; 20]);
    let mut r = Rng::new(3);
    let mut last = 0;
    for (i, &(at, p)) in out.iter().enumerate() {
        let own = (i as u64 + 1) * MS + 5 * MS + r.next_u64() % (10 * MS);
        last = own.max(last);
        assert_eq!((at, p), (last, i as PktId));
    }
    // The clamp is taken: some packet arrives later than its own draw.
    let mut r = Rng::new(3);
    assert!(out.iter().enumerate().any(|(i, &(at, _))| at > (i as u64 + 1) * MS + 5 * MS + r.next_u64() % (10 * MS)));
}

#[test]
fn draws_cover_delay_plus_or_minus_jitter_and_floor_at_zero() {
    let times: Vec<u64> = (0..4000).map(|i| i * 100 * MS).collect();
    let out = send(&mut jittery(11), &times);
    let d: Vec<u64> = out.iter().map(|&(at, p)| at - times[p as usize] - MS).collect();
    assert!(d.iter().all(|&x| (5 * MS..15 * MS).contains(&x)));
    let mean = d.iter().sum::<u64>() as f64 / d.len() as f64 / MS as f64;
    // Uniform on [5, 15) ms: sd 2.9 ms, the mean's sd over 4000 draws 0.046 ms.
    assert!((mean - 10.0).abs() < 0.25, "{mean}");
    assert!(d.iter().any(|&x| x < 6 * MS) && d.iter().any(|&x| x >= 14 * MS));
    // A jitter larger than the delay: the delay never goes below 0.
    let mut l = Link::new(0, "l".into(), 12_000_000, MS, u64::MAX, LossModel::None, None, Rng::new(9), vec![]);
    l.set_jitter(5 * MS, Rng::new(11));
    let out = send(&mut l, &times[..200]);
    assert!(out.iter().all(|&(at, p)| at >= times[p as usize] + MS));
    assert!(out.iter().any(|&(at, p)| at == times[p as usize] + MS));
}

const BASE: &str = "[sim]\nduration_s = 3\nseed = 5\n[[paths]]\nname = \"a\"\nrate_mbps = 20\ndelay_ms = 10\nJ\n\
                    loss = { model = \"bernoulli\", p = 0.01 }\n[[paths]]\nname = \"b\"\nrate_mbps = 10\n\
                    delay_ms = 25\n[[flows]]\nname = \"f\"\npaths = [\"a\", \"b\"]\nsize_bytes = 3_000_000\n";

fn parse(jitter: &str) -> Result<Scenario, String> {
    parse_text(&BASE.replace('J', jitter), "s.toml", Format::Toml, None).map_err(|e| e.0)
}

fn tables(sc: Scenario) -> Vec<String> {
    let out = run(sc);
    let t = |t: &Table| format!("{:?}", t.columns);
    vec![out.summary_json, t(&out.flows), t(&out.subflows), t(&out.timeseries), t(&out.links)]
}

#[test]
fn path_jitter_is_on_the_data_direction_from_its_own_stream() {
    let sc = parse("jitter_ms = 5").unwrap();
    let j: Vec<u64> = sc.links.iter().map(|l| l.jitter_ns).collect();
    assert_eq!(j, [5 * MS, 0, 0, 0]); // a.fwd, a.rev, b.fwd, b.rev
    assert_eq!(build_links(&sc).iter().map(Link::jitter_ns).collect::<Vec<_>>(), j);
    assert!(sc.resolved_toml().contains("jitter_ms = 5"));
    let again = Scenario::from_toml(&sc.resolved_toml(), "r.toml").unwrap();
    assert_eq!(again.links[0].jitter_ns, 5 * MS);
}

#[test]
fn zero_jitter_changes_nothing_and_jitter_changes_the_run() {
    let plain = tables(parse("").unwrap());
    assert_eq!(tables(parse("jitter_ms = 0").unwrap()), plain);
    let jit = tables(parse("jitter_ms = 5").unwrap());
    assert_ne!(jit[1], plain[1]);
    assert_eq!(tables(parse("jitter_ms = 5").unwrap()), jit);
}

#[test]
fn jitter_errors_are_one_line_and_name_the_field() {
    assert_eq!(parse("jitter_ms = -1").unwrap_err(), "s.toml: paths[0].jitter_ms: expected a number >= 0, got -1");
    assert_eq!(
        parse("jitter_ms = 2000").unwrap_err(),
        "s.toml: paths[0].jitter_ms: expected at most 1000 ms, got 2000"
    );
    let links = "[sim]\nduration_s = 1\n[[links]]\nname = \"x\"\nrate_mbps = 5\njitter_ms = nan\n[[links]]\nname = \"y\"\n\
                 rate_mbps = 5\n[[paths]]\nname = \"p\"\nforward = [\"x\"]\nreverse = [\"y\"]\n[[flows]]\nname = \"f\"\npath = \"p\"\n";
    let e = parse_text(links, "s.toml", Format::Toml, None).unwrap_err().0;
    assert_eq!(e, "s.toml: line 6: links[0].jitter_ms: expected a finite number, got NaN");
}
