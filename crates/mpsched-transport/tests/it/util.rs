//! Pair harness (after quinn-proto's `src/tests/util.rs`): a client and a server [`Connection`]
//! joined by two FIFO "wires", a virtual clock, scripted faults, and a log of every segment sent.
//! No simulator: the harness is the driver.
//!
//! * `step()` flushes pending transmissions, jumps the clock to the earliest of (next arrival,
//!   client `poll_timeout`, server `poll_timeout`), fires expired timers (client, then server),
//!   delivers every segment due by then (client→server first), and after *every* input drains
//!   that side's `poll_transmit` until `None`.
//! * A wire has a constant one-way delay and an optional bottleneck rate: a segment occupies
//!   `wire_size·8/rate` seconds of its direction (FIFO, unbounded queue, no queue drops).
//!   A dropped segment never enters the wire (it is lost before the bottleneck).
//! * The receiving application reads everything (`read(u64::MAX)`) after each delivered segment,
//!   unless `client_reads` / `server_reads` is turned off.
//! * Faults are closures over the [`Sent`] record (time, direction, path, segment, data ordinal)
//!   returning `true` to drop; every fault sees every segment.
//! * Multipath: every path has its own pair of wires (one per direction), routed by
//!   `Transmit::path`. Path 0 uses `delay` / `rate_bps`; other paths use `other_paths[path - 1]`
//!   (set with [`Pair::with_path`]) or, when not set, path 0's parameters. At one instant, due
//!   segments of one direction are delivered in arrival order across paths (ties: lower path).
#![allow(dead_code)]

use std::collections::VecDeque;

use mpsched_transport::{
    CcSpec, ConnConfig, ConnInfo, Connection, Duration, Event, Flags, Instant, PathId, SchedSpec, Segment, Side,
    SubflowConfig, SubflowInfo,
};

pub const MSS: u64 = 1448;
/// The server's MPTCP key in every pair (the client keeps the config's).
pub const SERVER_KEY: u64 = 0x5e12_7e12_0000_0001;

pub const fn ms(x: u64) -> Duration {
    Duration::from_millis(x)
}
pub const fn at_ms(x: u64) -> Instant {
    Instant(x * 1_000_000)
}
pub const fn at_us(x: u64) -> Instant {
    Instant(x * 1_000)
}

/// Direction of a segment on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dir {
    /// Client to server (data, in most tests).
    C2S,
    /// Server to client (ACKs, in most tests).
    S2C,
}

impl Dir {
    fn ix(self) -> usize {
        self as usize
    }
}

/// One segment handed to the wire by an endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sent {
    /// When `poll_transmit` returned it.
    pub at: Instant,
    pub dir: Dir,
    pub path: PathId,
    pub seg: Segment,
    /// 1-based ordinal among the data-carrying segments (`len > 0`) sent in this direction,
    /// retransmissions included; `None` for segments without payload.
    pub data_no: Option<u64>,
    /// Arrival time at the peer; `None` if a fault dropped it.
    pub arrival: Option<Instant>,
}

impl Sent {
    pub fn is_data(&self) -> bool {
        self.seg.len > 0
    }
    pub fn is_syn(&self) -> bool {
        self.seg.flags.contains(Flags::SYN)
    }
    /// An ACK without payload and without SYN.
    pub fn is_pure_ack(&self) -> bool {
        self.seg.len == 0 && !self.is_syn() && self.seg.flags.contains(Flags::ACK)
    }
    pub fn dropped(&self) -> bool {
        self.arrival.is_none()
    }
}

/// A fault: `true` drops the segment.
pub type Fault = Box<dyn FnMut(&Sent) -> bool>;

/// Drops the `n`-th (1-based) data segment sent in `dir`, retransmissions counted.
pub fn drop_nth_data(dir: Dir, n: u64) -> Fault {
    Box::new(move |s| s.dir == dir && s.data_no == Some(n))
}
/// Drops the data segments whose ordinals are listed.
pub fn drop_data_nos(dir: Dir, nos: &[u64]) -> Fault {
    let nos = nos.to_vec();
    Box::new(move |s| s.dir == dir && s.data_no.is_some_and(|n| nos.contains(&n)))
}
/// Drops every data segment sent in `dir` during `[t1, t2)`.
pub fn drop_data_between(dir: Dir, t1: Instant, t2: Instant) -> Fault {
    Box::new(move |s| s.dir == dir && s.is_data() && t1 <= s.at && s.at < t2)
}
/// Drops every pure ACK sent in `dir` during `[t1, t2)`.
pub fn drop_acks_between(dir: Dir, t1: Instant, t2: Instant) -> Fault {
    Box::new(move |s| s.dir == dir && s.is_pure_ack() && t1 <= s.at && s.at < t2)
}
/// Drops the first `k` SYN-flagged segments sent in `dir`.
pub fn drop_first_syns(dir: Dir, k: u32) -> Fault {
    let mut seen = 0;
    Box::new(move |s| {
        if s.dir == dir && s.is_syn() {
            seen += 1;
            seen <= k
        } else {
            false
        }
    })
}

/// Drops every segment (data, ACKs, SYNs, both directions) on `path` sent during `[t1, t2)`.
pub fn blackhole_path(path: PathId, t1: Instant, t2: Instant) -> Fault {
    Box::new(move |s| s.path == path && t1 <= s.at && s.at < t2)
}
/// Drops every data segment sent on `path` in `dir` during `[t1, t2)`.
pub fn drop_path_data_between(path: PathId, dir: Dir, t1: Instant, t2: Instant) -> Fault {
    Box::new(move |s| s.path == path && s.dir == dir && s.is_data() && t1 <= s.at && s.at < t2)
}

/// Wire parameters of one path (both directions).
#[derive(Clone, Copy, Debug)]
pub struct Link {
    /// One-way propagation delay per direction, indexed by `Dir as usize`.
    pub delay: [Duration; 2],
    /// Bottleneck rate in bits per second (both directions), `None` = infinitely fast.
    pub rate_bps: Option<u64>,
}

/// A one-path connection config with a large receive buffer (16 MiB); other fields default.
pub fn config(cc: &str, subflow: SubflowConfig) -> ConnConfig {
    ConnConfig { subflow, cc: CcSpec::parse(cc).unwrap(), rcv_buf: 16 << 20, paths: vec![0], ..ConnConfig::default() }
}

/// The linux profile without its two measured per-packet overheads — the receive buffer's
/// payload share (`rcv_scaling_ratio`) and the DSS option bytes (`dss`) — so that the protocol
/// tests count windows and buffers in whole 1,448-byte segments. kernel_overheads.rs tests both.
pub fn linux_whole_segments() -> SubflowConfig {
    SubflowConfig { rcv_scaling_ratio: 256, dss: None, ..SubflowConfig::linux() }
}

/// A connection over `paths` (subflow i on path i) with the linux profile in whole segments
/// ([`linux_whole_segments`]), NewReno, scheduler `sched` and a `rcv_buf`-byte shared receive
/// buffer.
pub fn multipath_config(sched: &str, paths: usize, rcv_buf: u64) -> ConnConfig {
    ConnConfig {
        subflow: linux_whole_segments(),
        cc: CcSpec::parse("newreno").unwrap(),
        rcv_buf,
        paths: (0..paths as PathId).collect(),
        scheduler: SchedSpec::parse(sched).unwrap(),
        ..ConnConfig::default()
    }
}

/// The linux profile with NewReno.
pub fn linux_reno() -> ConnConfig {
    config("newreno", SubflowConfig::linux())
}

/// The linux profile with NewReno and RFC 6298's RTO estimator (`Stack::Rfc`): the timer tests
/// whose expected times are RFC 6298's (the kernel's estimator has exact tests in rtt.rs).
pub fn rfc6298_reno() -> ConnConfig {
    config("newreno", SubflowConfig { stack: mpsched_transport::Stack::Rfc, ..SubflowConfig::linux() })
}

pub struct Pair {
    pub client: Connection,
    pub server: Connection,
    pub now: Instant,
    /// One-way propagation delay per direction, indexed by `Dir as usize`.
    pub delay: [Duration; 2],
    /// Bottleneck rate in bits per second (both directions), `None` = infinitely fast.
    pub rate_bps: Option<u64>,
    /// The application at this end reads everything after each delivered segment.
    pub client_reads: bool,
    pub server_reads: bool,
    pub faults: Vec<Fault>,
    /// Every segment sent, in sending order.
    pub log: Vec<Sent>,
    /// Client subflow 0 after every client input (timer or segment), with the time.
    pub client_trace: Vec<(Instant, SubflowInfo)>,
    /// Server connection counters after every server input.
    pub server_trace: Vec<(Instant, ConnInfo)>,
    /// Bytes read by each application so far, indexed by `Side` (client 0, server 1).
    pub app_read: [u64; 2],
    /// Connection events (`poll_event`), drained after every drain of that side's transmissions.
    pub events: Vec<(Instant, Side, Event)>,
    /// Wire parameters of paths 1, 2, ... (path 0 uses `delay` / `rate_bps`).
    pub other_paths: Vec<Link>,
    /// Per path, per direction: segments in flight `(arrival, segment)`.
    queues: Vec<[VecDeque<(Instant, Segment)>; 2]>,
    link_free: Vec<[Instant; 2]>,
    data_count: [u64; 2],
    steps: u64,
}

/// Gives up on a runaway loop (a timer that never advances, endless transmissions).
const MAX_STEPS: u64 = 2_000_000;
const MAX_DRAIN: u32 = 100_000;

impl Pair {
    /// Both endpoints created at time 0, 50 ms one-way delay (RTT 100 ms), no rate limit.
    pub fn new(cfg: ConnConfig) -> Self {
        let now = Instant::ZERO;
        let server_cfg = ConnConfig { key: SERVER_KEY, ..cfg.clone() };
        Pair {
            client: Connection::new(&cfg, Side::Client, now).expect("known cc"),
            server: Connection::new(&server_cfg, Side::Server, now).expect("known cc"),
            now,
            delay: [ms(50); 2],
            rate_bps: None,
            client_reads: true,
            server_reads: true,
            faults: Vec::new(),
            log: Vec::new(),
            client_trace: Vec::new(),
            server_trace: Vec::new(),
            app_read: [0; 2],
            events: Vec::new(),
            other_paths: Vec::new(),
            queues: vec![[VecDeque::new(), VecDeque::new()]],
            link_free: vec![[Instant::ZERO; 2]],
            data_count: [0; 2],
            steps: 0,
        }
    }

    pub fn with_delay(mut self, one_way: Duration) -> Self {
        self.delay = [one_way; 2];
        self
    }
    pub fn with_rate(mut self, bps: u64) -> Self {
        self.rate_bps = Some(bps);
        self
    }
    /// Sets path `path`'s one-way delay (both directions) and rate (`None` = infinitely fast).
    pub fn with_path(mut self, path: PathId, one_way: Duration, rate_bps: Option<u64>) -> Self {
        self.set_link(path, Link { delay: [one_way; 2], rate_bps });
        self
    }
    /// Sets path `path`'s wire parameters (takes effect for segments sent from now on).
    pub fn set_link(&mut self, path: PathId, link: Link) {
        if path == 0 {
            self.delay = link.delay;
            self.rate_bps = link.rate_bps;
        } else {
            let k = path as usize - 1;
            while self.other_paths.len() <= k {
                let l0 = self.link(0);
                self.other_paths.push(l0);
            }
            self.other_paths[k] = link;
        }
    }
    /// Path `path`'s wire parameters (path 0's when not set).
    pub fn link(&self, path: PathId) -> Link {
        match path {
            0 => Link { delay: self.delay, rate_bps: self.rate_bps },
            p => self
                .other_paths
                .get(p as usize - 1)
                .copied()
                .unwrap_or(Link { delay: self.delay, rate_bps: self.rate_bps }),
        }
    }
    pub fn with_fault(mut self, f: Fault) -> Self {
        self.faults.push(f);
        self
    }
    pub fn server_not_reading(mut self) -> Self {
        self.server_reads = false;
        self
    }

    // ------------------------------------------------------------------ driving

    /// Drains both endpoints (picks up application writes made between steps).
    pub fn flush(&mut self) {
        self.drain(Side::Client);
        self.drain(Side::Server);
    }

    /// Earliest pending arrival or timer.
    pub fn next_event(&self) -> Option<Instant> {
        let arrivals = self.queues.iter().flat_map(|q| q.iter().filter_map(|d| d.front().map(|x| x.0)));
        arrivals.chain(self.client.poll_timeout()).chain(self.server.poll_timeout()).min()
    }

    /// One step; `false` when nothing is pending (idle).
    pub fn step(&mut self) -> bool {
        self.flush();
        let Some(t) = self.next_event() else { return false };
        self.steps += 1;
        assert!(self.steps < MAX_STEPS, "runaway: {} steps at {:?}", self.steps, self.now);
        self.now = self.now.max(t);
        let now = self.now;
        if self.client.poll_timeout().is_some_and(|d| d <= now) {
            self.client.handle_timeout(now);
            self.drain(Side::Client);
            self.snap(Side::Client);
        }
        if self.server.poll_timeout().is_some_and(|d| d <= now) {
            self.server.handle_timeout(now);
            self.drain(Side::Server);
            self.snap(Side::Server);
        }
        for dir in [Dir::C2S, Dir::S2C] {
            // The earliest due segment of this direction over all paths (ties: lower path).
            while let Some(path) = (0..self.queues.len())
                .filter(|&p| self.queues[p][dir.ix()].front().is_some_and(|x| x.0 <= now))
                .min_by_key(|&p| self.queues[p][dir.ix()].front().unwrap().0)
            {
                let (_, seg) = self.queues[path][dir.ix()].pop_front().unwrap();
                let to = match dir {
                    Dir::C2S => Side::Server,
                    Dir::S2C => Side::Client,
                };
                self.conn_mut(to).handle_segment(now, path as PathId, &seg);
                let reads = match to {
                    Side::Client => self.client_reads,
                    Side::Server => self.server_reads,
                };
                if reads {
                    self.read(to, u64::MAX);
                }
                self.drain(to);
                self.snap(to);
            }
        }
        true
    }

    /// Runs every event due at or before `t`, then sets the clock to `t`.
    pub fn drive_until(&mut self, t: Instant) {
        loop {
            self.flush();
            match self.next_event() {
                Some(e) if e <= t => {
                    self.step();
                }
                _ => break,
            }
        }
        self.now = self.now.max(t);
    }

    /// Runs until idle (no segment in flight, no timer armed).
    pub fn drive(&mut self) {
        while self.step() {}
    }

    /// Runs until the server has `bytes` in order; returns that time. Panics past `deadline`.
    pub fn run_until_delivered(&mut self, bytes: u64, deadline: Instant) -> Instant {
        loop {
            self.flush();
            if self.server.info().bytes_delivered >= bytes {
                return self.now;
            }
            match self.next_event() {
                Some(e) if e <= deadline => {
                    self.step();
                }
                next => panic!(
                    "only {} of {bytes} bytes delivered by {:?} (next event {next:?}); client {:?}",
                    self.server.info().bytes_delivered,
                    deadline,
                    self.client_info()
                ),
            }
        }
    }

    /// The application at `side` reads up to `max` bytes (recorded in `app_read`).
    pub fn read(&mut self, side: Side, max: u64) -> u64 {
        let n = self.conn_mut(side).read(max);
        self.app_read[side_ix(side)] += n;
        n
    }

    // ------------------------------------------------------------------ queries

    /// Whether `side` reported `e`.
    pub fn has_event_of(&self, side: Side, e: Event) -> bool {
        self.events.iter().any(|x| x.1 == side && x.2 == e)
    }
    /// Events of `side`, with the time they were drained.
    pub fn events_of(&self, side: Side) -> Vec<(Instant, Event)> {
        self.events.iter().filter(|e| e.1 == side).map(|e| (e.0, e.2)).collect()
    }
    /// Client subflow `i` now.
    pub fn client_sf(&self, i: usize) -> SubflowInfo {
        self.client.subflow_info(i)
    }
    /// Data segments sent by the client on subflow `i` (C2S).
    pub fn client_data_on(&self, i: u8) -> impl Iterator<Item = &Sent> + '_ {
        self.data(Dir::C2S).filter(move |s| s.seg.sf == i)
    }
    pub fn client_info(&self) -> SubflowInfo {
        self.client.subflow_info(0)
    }
    pub fn server_info(&self) -> SubflowInfo {
        self.server.subflow_info(0)
    }
    pub fn sent(&self, dir: Dir) -> impl Iterator<Item = &Sent> + '_ {
        self.log.iter().filter(move |s| s.dir == dir)
    }
    pub fn data(&self, dir: Dir) -> impl Iterator<Item = &Sent> + '_ {
        self.sent(dir).filter(|s| s.is_data())
    }
    pub fn pure_acks(&self, dir: Dir) -> impl Iterator<Item = &Sent> + '_ {
        self.sent(dir).filter(|s| s.is_pure_ack())
    }
    /// Data segments in `dir` whose sequence range was already sent before (retransmissions).
    pub fn retransmissions(&self, dir: Dir) -> Vec<Sent> {
        let mut high = 0u64;
        let mut out = Vec::new();
        for s in self.data(dir) {
            if s.seg.end() <= high {
                out.push(*s);
            }
            high = high.max(s.seg.end());
        }
        out
    }

    // ------------------------------------------------------------------ internals

    fn conn_mut(&mut self, side: Side) -> &mut Connection {
        match side {
            Side::Client => &mut self.client,
            Side::Server => &mut self.server,
        }
    }

    fn snap(&mut self, side: Side) {
        match side {
            Side::Client => self.client_trace.push((self.now, self.client.subflow_info(0))),
            Side::Server => self.server_trace.push((self.now, self.server.info())),
        }
    }

    fn drain(&mut self, side: Side) {
        let dir = match side {
            Side::Client => Dir::C2S,
            Side::Server => Dir::S2C,
        };
        let now = self.now;
        for _ in 0..MAX_DRAIN {
            let Some(tx) = self.conn_mut(side).poll_transmit(now) else {
                while let Some(e) = self.conn_mut(side).poll_event() {
                    self.events.push((now, side, e));
                }
                return;
            };
            self.put_on_wire(dir, tx.path, tx.seg);
        }
        panic!("{side:?} produced {MAX_DRAIN} segments in one drain at {now:?}");
    }

    fn put_on_wire(&mut self, dir: Dir, path: PathId, seg: Segment) {
        let d = dir.ix();
        let data_no = (seg.len > 0).then(|| {
            self.data_count[d] += 1;
            self.data_count[d]
        });
        let mut rec = Sent { at: self.now, dir, path, seg, data_no, arrival: None };
        // Every fault sees every segment (stateful faults count consistently).
        let drop = self.faults.iter_mut().fold(false, |acc, f| f(&rec) | acc);
        if !drop {
            let p = path as usize;
            while self.queues.len() <= p {
                self.queues.push([VecDeque::new(), VecDeque::new()]);
                self.link_free.push([Instant::ZERO; 2]);
            }
            let link = self.link(path);
            let start = self.now.max(self.link_free[p][d]);
            let ser = link
                .rate_bps
                .map(|r| Duration((seg.wire_size() as u128 * 8 * 1_000_000_000 / r as u128) as u64))
                .unwrap_or(Duration::ZERO);
            self.link_free[p][d] = start + ser;
            let mut arrival = self.link_free[p][d] + link.delay[d];
            if let Some(&(last, _)) = self.queues[p][d].back() {
                arrival = arrival.max(last); // FIFO even if the delay is changed mid-run
            }
            self.queues[p][d].push_back((arrival, seg));
            rec.arrival = Some(arrival);
        }
        self.log.push(rec);
    }
}

fn side_ix(side: Side) -> usize {
    match side {
        Side::Client => 0,
        Side::Server => 1,
    }
}

/// Prints the log (debugging aid: `cargo test -- --nocapture`).
pub fn dump(log: &[Sent]) {
    for s in log {
        println!(
            "{:>10.3}ms {:?} p{} sf{} flags={:>2} dsn={:>8} seq={:>8} len={:>4} ack={:>8} wnd={:>8} sack={:?} no={:?} arr={:?}",
            s.at.0 as f64 / 1e6,
            s.dir,
            s.path,
            s.seg.sf,
            s.seg.flags.0,
            s.seg.dsn,
            s.seg.seq,
            s.seg.len,
            s.seg.ack,
            s.seg.wnd,
            s.seg.sacks().iter().map(|b| (b.start, b.end)).collect::<Vec<_>>(),
            s.data_no,
            s.arrival.map(|a| a.0 as f64 / 1e6)
        );
    }
}
