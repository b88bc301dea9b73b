//! Send-buffer backpressure and `Event::DataAcked`, with a minimal in-crate driver: one path,
//! 10 ms each way, no loss, no bottleneck, both ends' outputs drained after every input.
//! [`Wire`] also runs several paths with their own one-way delays (ahead_tests.rs).

use super::*;
use crate::segment::SackBlock;
use crate::time::Duration;

const DELAY: Duration = Duration::from_millis(10);

pub(super) struct Wire {
    pub client: Connection,
    pub server: Connection,
    /// One-way delay of each path.
    delays: Vec<Duration>,
    /// (arrival, to_server, path, segment)
    flight: Vec<(Instant, bool, PathId, Segment)>,
    now: Instant,
    client_events: Vec<(Instant, Event)>,
    /// Every segment the client sent: (time, path, segment).
    pub client_sent: Vec<(Instant, PathId, Segment)>,
    /// Every segment the server sent, likewise.
    server_sent: Vec<(Instant, PathId, Segment)>,
    /// Drain both ends with [`Connection::poll_transmit_into`] into a slot still holding an
    /// unrelated segment (as a simulator's reused packet slot does), not `poll_transmit`.
    dirty_slot: bool,
    /// Loses the client's `k`-th data segment (counted from 0 over all paths) sent on `path`
    /// when `lose(k, path)`: sent, never delivered.
    lose: Option<fn(u64, PathId) -> bool>,
    /// The client's data segments sent so far.
    data_sent: u64,
}

impl Wire {
    fn new() -> Self {
        Wire::with(&ConnConfig::default(), &[DELAY])
    }
    /// Both ends built from `cfg`; path `i` (`cfg.paths[i]` = i) delays segments by `delays[i]`.
    pub(super) fn with(cfg: &ConnConfig, delays: &[Duration]) -> Self {
        Wire {
            client: Connection::new(cfg, Side::Client, Instant::ZERO).unwrap(),
            server: Connection::new(cfg, Side::Server, Instant::ZERO).unwrap(),
            delays: delays.to_vec(),
            flight: Vec::new(),
            now: Instant::ZERO,
            client_events: Vec::new(),
            client_sent: Vec::new(),
            server_sent: Vec::new(),
            dirty_slot: false,
            lose: None,
            data_sent: 0,
        }
    }
    /// The next segment of `c`, by `poll_transmit` or, with `dirty`, written over a stale one.
    fn next(c: &mut Connection, now: Instant, dirty: bool) -> Option<Transmit> {
        if !dirty {
            return c.poll_transmit(now);
        }
        let stale = SackBlock { start: 7, end: 9 };
        let mut seg =
            Segment { seq: 1 << 40, len: 999, n_sack: 3, sack: [stale; 3], dsn: 5, mp_opt: 77, ..Segment::default() };
        seg.flags = seg.flags.with(crate::segment::Flags::FIN);
        let path = c.poll_transmit_into(now, &mut seg)?;
        Some(Transmit { path, seg })
    }
    fn drain(&mut self) {
        while let Some(t) = Self::next(&mut self.client, self.now, self.dirty_slot) {
            self.client_sent.push((self.now, t.path, t.seg));
            if t.seg.len > 0 {
                self.data_sent += 1;
                if self.lose.is_some_and(|lose| lose(self.data_sent - 1, t.path)) {
                    continue;
                }
            }
            self.flight.push((self.now + self.delays[t.path as usize], true, t.path, t.seg));
        }
        while let Some(t) = Self::next(&mut self.server, self.now, self.dirty_slot) {
            self.server_sent.push((self.now, t.path, t.seg));
            self.flight.push((self.now + self.delays[t.path as usize], false, t.path, t.seg));
        }
        while let Some(e) = self.client.poll_event() {
            self.client_events.push((self.now, e));
        }
        while self.server.poll_event().is_some() {}
    }
    /// Runs until `until`, delivering segments and firing timers in time order.
    pub(super) fn run(&mut self, until: Instant) {
        self.drain();
        loop {
            let next_seg = self.flight.iter().map(|f| f.0).min();
            let next = [next_seg, self.client.poll_timeout(), self.server.poll_timeout()].into_iter().flatten().min();
            let Some(t) = next.filter(|&t| t <= until) else { break };
            self.now = t;
            self.client.handle_timeout(t);
            self.server.handle_timeout(t);
            self.drain();
            let due: Vec<_> = self.flight.iter().filter(|f| f.0 <= t).copied().collect();
            self.flight.retain(|f| f.0 > t);
            for (_, to_server, path, seg) in due {
                if to_server {
                    self.server.handle_segment(t, path, &seg);
                    self.server.read(u64::MAX);
                } else {
                    self.client.handle_segment(t, path, &seg);
                }
                self.drain();
            }
        }
        self.now = until;
    }
    fn data_acked(&self) -> Vec<(Instant, u64)> {
        self.client_events
            .iter()
            .filter_map(|&(t, e)| match e {
                Event::DataAcked(d) => Some((t, d)),
                _ => None,
            })
            .collect()
    }
}

pub(super) fn at_ms(ms: u64) -> Instant {
    Instant(ms * 1_000_000)
}

/// A Linux-profile multipath segment's payload: plain TCP's 1,448 less the DSS option.
pub(super) const MSS: u64 = 1448 - crate::segment::DssBytes::LINUX.data as u64;

/// The client's data segments as runs of consecutive DSNs sent at one time on one path, in
/// sending order: (ms, path, first DSN / MSS, segments).
pub(super) fn runs(w: &Wire) -> Vec<(u64, PathId, u64, u64)> {
    let mut out: Vec<(u64, PathId, u64, u64)> = Vec::new();
    for &(t, p, s) in w.client_sent.iter().filter(|(_, _, s)| s.len > 0) {
        assert_eq!(s.len as u64, MSS, "whole segments only here");
        let (ms, k) = (t.0 / 1_000_000, s.dsn / MSS);
        match out.last_mut() {
            Some(r) if r.0 == ms && r.1 == p && r.2 + r.3 == k => r.3 += 1,
            _ => out.push((ms, p, k, 1)),
        }
    }
    out
}

/// Handshake 0-20 ms, 3 segments leave at 20 ms and arrive at 30 ms; the receiver acknowledges
/// every second segment at once (RFC 9293 3.8.6.3) and the third after the 40 ms delayed-ACK
/// timer, so DATA_ACK reaches the sender at 40 ms (2 segments) and 80 ms (all 3).
#[test]
fn data_acked_reports_each_advance_once() {
    let mut w = Wire::new();
    assert_eq!(w.client.write(3 * 1448), 3 * 1448);
    w.run(at_ms(200));
    assert_eq!(w.data_acked(), vec![(at_ms(40), 2 * 1448), (at_ms(80), 3 * 1448)]);
    assert_eq!(w.server.info().bytes_delivered, 3 * 1448);
}

/// A 4000-byte send buffer takes 4000 bytes of a 10 000-byte write, nothing more until DATA_ACK
/// frees space, then exactly what was freed.
#[test]
fn write_respects_the_send_buffer() {
    let mut w = Wire::new();
    w.client.set_send_buffer(4_000);
    assert_eq!(w.client.write(10_000), 4_000);
    assert_eq!(w.client.write(10_000), 0);
    w.run(at_ms(41));
    // 2 of the 3 segments (2896 bytes) were acknowledged at 40 ms.
    assert_eq!(w.data_acked(), vec![(at_ms(40), 2_896)]);
    assert_eq!(w.client.write(10_000), 2_896);
    assert_eq!(w.client.write(10_000), 0);
    w.run(at_ms(1_000));
    assert_eq!(w.client.info().data_acked, 6_896);
    assert_eq!(w.client.write(10_000), 4_000);
    // Byte conservation: everything written is delivered exactly once.
    w.run(at_ms(2_000));
    assert_eq!(w.server.info().bytes_delivered, 10_896);
    assert_eq!(w.server.info().duplicate_bytes, 0);
    assert_eq!(w.data_acked().last().map(|e| e.1), Some(10_896));
}

/// Delivery-rate sampling (subflow/rate.rs): once the application's data is all handed out,
/// the subflow is marked application-limited at delivered + in flight (Linux
/// `tcp_rate_check_app_limited`); a sender that always has data is never marked. Only a
/// rate-based controller (BBR) has the subflow keep the mark.
#[test]
fn app_limited_when_the_application_has_nothing_more() {
    let bbr = || ConnConfig { cc: crate::cc::CcSpec::parse("bbr").unwrap(), ..ConnConfig::default() };
    let mut cubic = Wire::new();
    cubic.client.write(3 * 1448);
    cubic.run(at_ms(20));
    assert_eq!(cubic.client.subflows[0].app_limited_mark(), 0);
    let mut w = Wire::with(&bbr(), &[DELAY]);
    w.client.write(3 * 1448);
    // Paced from 20 ms (2.885 × 10 segments per 20 ms: 0.75 ms apart); the last leaves by 22 ms.
    w.run(at_ms(21));
    assert_eq!(w.client.subflows[0].app_limited_mark(), 0, "data still waiting for the pacer");
    w.run(at_ms(25));
    assert_eq!(w.client.subflows[0].app_limited_mark(), 3 * 1448);
    let mut greedy = Wire::with(&bbr(), &[DELAY]);
    greedy.client.write(u64::MAX / 4);
    greedy.run(at_ms(500));
    assert!(greedy.server.info().bytes_delivered > 100_000);
    assert_eq!(greedy.client.subflows[0].app_limited_mark(), 0);
}

/// `poll_transmit_into` overwrites the whole slot it is given: two paths under the upstream
/// scheduler with its send queues (short segments, SACK-free ACKs, DSS options, the joins'
/// handshakes, DATA_FIN and the close), drained into slots holding a stale segment (SACK
/// blocks, FIN, payload length, DSN), send exactly what `poll_transmit` sends, segment for
/// segment, at the same times.
#[test]
fn segments_written_into_a_stale_slot_equal_poll_transmit() {
    let cfg = ConnConfig {
        paths: vec![0, 1],
        scheduler: crate::sched::SchedSpec::parse("upstream").unwrap(),
        ..ConnConfig::default()
    };
    let delays = [Duration::from_millis(15), Duration::from_millis(30)];
    let run = |dirty: bool| {
        let mut w = Wire::with(&cfg, &delays);
        w.dirty_slot = dirty;
        w.client.write(300 * 1448 + 700);
        w.run(at_ms(400));
        w.client.close();
        w.server.close();
        w.run(at_ms(2_000));
        (w.client_sent, w.server_sent)
    };
    let (clean, dirty) = (run(false), run(true));
    assert!(clean.0.len() > 300 && clean.1.len() > 100, "a real transfer: {} / {}", clean.0.len(), clean.1.len());
    assert!(clean.0.iter().any(|(_, _, s)| s.len > 0 && (s.len as u64) < MSS), "a short segment is among them");
    assert_eq!(clean, dirty);
}

/// The upstream scheduler's kept ranking keys (more than two subflows, `sched/upstream.rs`)
/// rest on how the connection moves queued bytes; this crate's tests check them against the
/// scan over every subflow at every pick in any build. Five paths with their own delays, data
/// lost on two of them (RTOs, reinjections, SACK recovery), a receive buffer that out-of-order
/// data fills (picks on a closed window), one path made backup and back, one path down and up
/// again (its data reinjected elsewhere): the whole transfer arrives, every path carried data.
#[test]
fn upstream_kept_keys_hold_over_lossy_paths_and_path_changes() {
    let cfg = ConnConfig {
        paths: vec![0, 1, 2, 3, 4],
        backup: vec![false; 5],
        rcv_buf: 96 * 1448,
        scheduler: crate::sched::SchedSpec::parse("upstream").unwrap(),
        ..ConnConfig::default()
    };
    let delays: Vec<Duration> = [5, 12, 20, 33, 8].iter().map(|&ms| Duration::from_millis(ms)).collect();
    let mut w = Wire::with(&cfg, &delays);
    w.lose = Some(|k, path| (path == 1 && k % 29 == 3) || (path == 3 && k % 41 == 7) || (200..206).contains(&k));
    let total = 4_000 * 1448 + 300;
    w.client.write(total);
    w.run(at_ms(300));
    w.client.set_path(at_ms(300), 2, PathState::Backup(true));
    w.client.set_path(at_ms(300), 4, PathState::Down);
    w.run(at_ms(900));
    w.client.set_path(at_ms(900), 2, PathState::Backup(false));
    w.client.set_path(at_ms(900), 4, PathState::Up);
    w.run(at_ms(20_000));
    assert_eq!(w.server.info().bytes_delivered, total, "the whole transfer arrived");
    let data_on = |p: PathId| w.client_sent.iter().filter(|(_, q, s)| *q == p && s.len > 0).count();
    for p in 0..5 {
        assert!(data_on(p) > 20, "path {p} carried {} data segments", data_on(p));
    }
    assert!(w.data_sent > 4_000 + 50, "losses were recovered: {} data segments sent", w.data_sent);
}

/// A segment's path names its subflow: the first subflow listed on it, also when a path's own
/// number is its index (the direct lookup) and when a path is listed twice (the search).
#[test]
fn index_of_path_is_the_first_listed() {
    let conn = |paths: Vec<PathId>| {
        Connection::new(&ConnConfig { paths, ..ConnConfig::default() }, Side::Server, Instant::ZERO).unwrap()
    };
    let direct = conn(vec![0, 1, 2, 3]);
    assert!(direct.paths_distinct);
    assert_eq!((0..5).map(|p| direct.index_of_path(p)).collect::<Vec<_>>(), [Some(0), Some(1), Some(2), Some(3), None]);
    let shuffled = conn(vec![5, 2, 1, 9]);
    assert_eq!([9, 1, 2, 5, 0].map(|p| shuffled.index_of_path(p)), [Some(3), Some(2), Some(1), Some(0), None]);
    let twice = conn(vec![0, 2, 2, 3]);
    assert!(!twice.paths_distinct);
    assert_eq!([2, 3].map(|p| twice.index_of_path(p)), [Some(1), Some(3)]);
}
