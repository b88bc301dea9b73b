//! The simulator: event loop, packet arena, endpoints, metrics.

use std::collections::VecDeque;

use mpsched_transport::{
    ConnConfig, Connection, Decision, Event, Instant, PathState, Segment, Side, SlotStats, SubflowInfo,
};

use crate::energy::InterfaceEnergy;
use crate::event::{EventQueue, Kind};
use crate::link::{Link, Offer, PktId};
use crate::rng::Rng;
use crate::scenario::{App, DecisionInterval, PathDef, PathEventKind, Scenario};
use crate::table::{Column, Table};

/// A packet in the network. `Copy`, stored in an arena and referred to by index.
#[derive(Clone, Copy, Debug)]
struct Packet {
    flow: u32,
    /// Global path id: the route is this path's forward or reverse link list.
    path: u16,
    /// Client (data sender) -> server (receiver) when true: the path's forward links.
    to_server: bool,
    hop: u8,
    size: u32,
    seg: Segment,
}

struct Endpoint {
    conn: Option<Connection>,
    /// Time of the live `Wake` event in the queue, if any. Timers that move later (an RTO
    /// restarted by every ACK) keep this event; it re-arms itself when it fires early.
    queued_wake: Option<u64>,
    gen: u32,
}

/// Per-flow bookkeeping.
struct FlowRt {
    started: bool,
    done_at: Option<u64>,
    data_drops: u64,
    /// Counters at the previous sample, per subflow: (bytes_sent, delivered, lost, retx).
    prev: Vec<(u64, u64, u64, u64)>,
    /// Per-slot statistics at the previous sample, per subflow.
    prev_slots: Vec<SlotStats>,
    prev_app: u64,
    /// Receiver's cumulative buffer-full time at the previous sample.
    prev_full: f64,
    /// Application bytes written so far on the current connection (rate-limited sources).
    written: u64,
    /// Start of the current transfer, and the completed ones: (start, end) in ns.
    transfer_start: u64,
    transfers: Vec<(u64, u64)>,
    /// Totals of earlier connections of a repeated download.
    acc: Totals,
    /// Energy of the device's interfaces attributed to this flow (J).
    energy_j: f64,
    /// Applied to each new connection of the flow before it sends (see [`Sim::set_initial_decision`]).
    initial_decision: Option<Decision>,
}

/// Counters summed over the connections a flow has used.
#[derive(Clone, Copy, Debug, Default)]
struct Totals {
    delivered: u64,
    retx: u64,
    lost: u64,
    rtos: u64,
    frs: u64,
    slots: SlotStats,
}

/// Why [`Sim::advance`] returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Flow `flow`'s per-packet external scheduler waits for [`Sim::decide`].
    Decision { flow: u32 },
    /// Flow `flow`'s decision interval elapsed (decide, or keep the current setting).
    Interval { flow: u32 },
    /// The requested time was reached.
    Deadline,
    /// The scenario's duration was reached, or every sized flow completed.
    Finished,
}

/// Counters describing a finished run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RunStats {
    pub events: u64,
    pub packets: u64,
    pub sim_ns: u64,
}

/// Timeseries accumulated at each sample.
#[derive(Default)]
struct Series {
    time_s: Vec<f64>,
    flow: Vec<String>,
    subflow: Vec<i64>,
    cwnd: Vec<i64>,
    ssthresh: Vec<Option<i64>>,
    srtt_ms: Vec<f64>,
    rttvar_ms: Vec<f64>,
    rto_ms: Vec<f64>,
    inflight: Vec<i64>,
    throughput: Vec<f64>,
    goodput: Vec<f64>,
    flow_goodput: Vec<f64>,
    ooo_bytes: Vec<i64>,
    rwnd_full_frac: Vec<f64>,
    losses: Vec<i64>,
    retransmits: Vec<i64>,
    slots: Vec<i64>,
    slot_bw_mbps: Vec<f64>,
    slot_srtt_ms: Vec<f64>,
}

pub struct Sim {
    sc: Scenario,
    now: u64,
    ev: EventQueue,
    pkts: Vec<Packet>,
    free: Vec<PktId>,
    links: Vec<Link>,
    flows: Vec<FlowRt>,
    /// Endpoint `2f` is flow f's client (data sender), `2f + 1` its server (receiver).
    eps: Vec<Endpoint>,
    scratch: Vec<PktId>,
    packets_created: u64,
    series: Series,
    finished_flows: usize,
    /// Paths currently down by a path event.
    path_down: Vec<bool>,
    /// Flows whose sender asked for a per-packet decision, in order.
    pending_decisions: VecDeque<u32>,
    /// Per path with an energy model: the interface's energy, and the device-side link byte
    /// counters (down: last forward link, up: first reverse link) at the previous sample.
    energy: Vec<(InterfaceEnergy, u64, u64)>,
    /// Scratch for a sample: (path, flow, bytes acknowledged on that path in the bin).
    bin_bytes: Vec<(u16, u32, u64)>,
    all_sized: bool,
}

impl Sim {
    pub fn new(sc: Scenario) -> Self {
        let links = sc
            .links
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let rng = Rng::stream(sc.seed, &format!("link/{}/loss", l.name));
                Link::new(
                    i as u32,
                    l.name.clone(),
                    l.rate_bps,
                    l.delay_ns,
                    l.queue_bytes,
                    l.loss.clone(),
                    l.trace.clone(),
                    rng,
                    l.changes.clone(),
                )
            })
            .collect::<Vec<_>>();
        let mut ev = EventQueue::default();
        for (i, l) in links.iter().enumerate() {
            for (j, c) in l.changes.iter().enumerate() {
                ev.push(c.at_ns, Kind::LinkChange, i as u32, j as u32);
            }
        }
        for (i, f) in sc.flows.iter().enumerate() {
            ev.push(f.start_ns, Kind::FlowStart, i as u32, 0);
        }
        for (i, e) in sc.events.iter().enumerate() {
            ev.push(e.at_ns, Kind::PathEvent, i as u32, 0);
        }
        ev.push(sc.sample_ns, Kind::Sample, 0, 0);
        let flows = sc
            .flows
            .iter()
            .map(|_| FlowRt {
                started: false,
                done_at: None,
                data_drops: 0,
                prev: vec![(0, 0, 0, 0)],
                prev_slots: vec![SlotStats::default()],
                prev_app: 0,
                prev_full: 0.0,
                written: 0,
                transfer_start: 0,
                transfers: Vec::new(),
                acc: Totals::default(),
                energy_j: 0.0,
                initial_decision: None,
            })
            .collect();
        let eps = (0..2 * sc.flows.len()).map(|_| Endpoint { conn: None, queued_wake: None, gen: 0 }).collect();
        Sim {
            now: 0,
            ev,
            pkts: Vec::with_capacity(1024),
            free: Vec::with_capacity(1024),
            links,
            flows,
            eps,
            scratch: Vec::with_capacity(64),
            packets_created: 0,
            series: Series::default(),
            finished_flows: 0,
            path_down: vec![false; sc.paths.len()],
            pending_decisions: VecDeque::new(),
            energy: vec![(InterfaceEnergy::default(), 0, 0); sc.paths.len()],
            bin_bytes: Vec::new(),
            all_sized: sc.flows.iter().all(|f| f.size.is_some()),
            sc,
        }
    }

    pub fn scenario(&self) -> &Scenario {
        &self.sc
    }
    pub fn now_ns(&self) -> u64 {
        self.now
    }

    /// Runs to the scenario's end (or until every sized flow has completed). Decision points of
    /// externally scheduled flows get default answers: minRTT per packet, and the current
    /// setting kept at interval boundaries.
    pub fn run(&mut self) -> RunStats {
        loop {
            match self.advance(u64::MAX) {
                Stop::Decision { flow } => self.decide(flow as usize, Decision::Path(None)),
                Stop::Interval { .. } => {}
                Stop::Deadline | Stop::Finished => break,
            }
        }
        self.stats()
    }

    /// Whether the run is over early: every flow sized and complete (unless the scenario asks to
    /// run to its duration, e.g. to account an interface's tail energy).
    fn finished(&self) -> bool {
        self.all_sized && self.sc.stop_when_done && self.finished_flows == self.flows.len()
    }

    /// Processes events up to `until_ns` (capped at the scenario's duration) and stops early at
    /// a decision point: a flow with a per-packet external scheduler asked for a decision, or a
    /// flow's decision interval elapsed. Call [`Sim::decide`] (optional for intervals), then
    /// `advance` again: a paused run continues exactly as if the decision had been made inline.
    pub fn advance(&mut self, until_ns: u64) -> Stop {
        let end = self.sc.duration_ns;
        let until = until_ns.min(end);
        loop {
            if let Some(flow) = self.pending_decisions.pop_front() {
                return Stop::Decision { flow };
            }
            if self.finished() {
                return Stop::Finished;
            }
            match self.ev.peek_time() {
                Some(t) if t <= until => {}
                next => {
                    if until == end || next.is_none() {
                        self.now = self.now.max(end);
                        return Stop::Finished;
                    }
                    self.now = self.now.max(until);
                    return Stop::Deadline;
                }
            }
            let e = self.ev.pop().unwrap();
            self.now = e.at;
            match e.kind {
                Kind::TxDone => {
                    let mut dropped = std::mem::take(&mut self.scratch);
                    self.links[e.a as usize].on_tx_done(self.now, &mut self.ev, &mut dropped);
                    self.drop_all(&mut dropped);
                    self.scratch = dropped;
                }
                Kind::TraceOpportunity => {
                    let mut dropped = std::mem::take(&mut self.scratch);
                    self.links[e.a as usize].on_trace_opportunity(self.now, &mut self.ev, &mut dropped);
                    self.drop_all(&mut dropped);
                    self.scratch = dropped;
                }
                Kind::Arrive => {
                    let mut arrived = std::mem::take(&mut self.scratch);
                    self.links[e.a as usize].on_arrive(self.now, &mut self.ev, &mut arrived);
                    for &p in arrived.iter() {
                        self.forward(p);
                    }
                    arrived.clear();
                    self.scratch = arrived;
                }
                Kind::LinkChange => {
                    let mut dropped = std::mem::take(&mut self.scratch);
                    self.links[e.a as usize].apply_change(self.now, e.b as usize, &mut dropped);
                    self.drop_all(&mut dropped);
                    self.scratch = dropped;
                }
                Kind::Wake => {
                    let ep = e.a as usize;
                    if self.eps[ep].gen == e.b {
                        self.eps[ep].queued_wake = None;
                        if let Some(c) = self.eps[ep].conn.as_mut() {
                            if c.poll_timeout().is_some_and(|t| t.0 <= self.now) {
                                c.handle_timeout(Instant(self.now));
                            }
                        }
                        self.drive(ep);
                    }
                }
                Kind::FlowStart => self.start_flow(e.a as usize),
                Kind::AppTick => {
                    self.app_tick(e.a as usize);
                    self.drive(2 * e.a as usize);
                }
                Kind::PathEvent => self.path_event(e.a as usize),
                Kind::Sample => {
                    self.sample();
                    let next = self.now + self.sc.sample_ns;
                    if next <= end {
                        self.ev.push(next, Kind::Sample, 0, 0);
                    }
                }
                Kind::DecisionTimer => {
                    // One last boundary after the flow completed closes its final interval.
                    let f = e.a as usize;
                    if self.flows[f].done_at.is_none() {
                        let next = self.now + self.decision_interval(f);
                        self.ev.push(next, Kind::DecisionTimer, e.a, 0);
                    }
                    return Stop::Interval { flow: e.a };
                }
            }
        }
    }

    /// Length of flow `f`'s next decision interval: fixed, or its minimum subflow smoothed RTT
    /// (EdAR's transmission interval; 100 ms until an RTT is known, at least 1 ms).
    fn decision_interval(&self, f: usize) -> u64 {
        match self.sc.flows[f].decision {
            DecisionInterval::None => u64::MAX / 4,
            DecisionInterval::Fixed(ns) => ns,
            DecisionInterval::MinRtt => {
                let conn = self.eps[2 * f].conn.as_ref();
                let min = conn.and_then(|c| {
                    c.subflows().filter(|(_, s)| s.established && s.srtt.0 > 0).map(|(_, s)| s.srtt.0).min()
                });
                min.unwrap_or(100_000_000).max(1_000_000)
            }
        }
    }

    /// Answers flow `f`'s decision point (or applies a per-interval decision) and re-drives its
    /// sender at the current instant.
    pub fn decide(&mut self, f: usize, d: Decision) {
        if let Some(c) = self.eps[2 * f].conn.as_mut() {
            c.decide(d);
        }
        self.drive(2 * f);
    }

    /// Makes every connection of flow `f` start with decision `d` in force, before its first
    /// decision boundary: EdAR sends redundantly "at the beginning of a connection" (edar.txt
    /// §IV-B), while the first transmission interval is still unknown.
    pub fn set_initial_decision(&mut self, f: usize, d: Decision) {
        self.flows[f].initial_decision = Some(d);
    }

    /// Sets subflow `i`'s congestion window of flow `f` (external congestion control).
    pub fn set_cwnd(&mut self, f: usize, i: usize, cwnd_bytes: u64) {
        if let Some(c) = self.eps[2 * f].conn.as_mut() {
            c.set_subflow_cwnd(i, cwnd_bytes);
        }
        self.drive(2 * f);
    }

    /// The sending connection of flow `f`, once started.
    pub fn connection(&self, f: usize) -> Option<&Connection> {
        self.eps[2 * f].conn.as_ref()
    }

    /// The receiving connection of flow `f`, once started.
    pub fn receiver(&self, f: usize) -> Option<&Connection> {
        self.eps[2 * f + 1].conn.as_ref()
    }

    /// Whether flow `f` has completed its transfer(s).
    pub fn flow_done(&self, f: usize) -> bool {
        self.flows[f].done_at.is_some()
    }

    /// Whether path `p` is down by a path event.
    pub fn path_is_down(&self, p: usize) -> bool {
        self.path_down[p]
    }

    pub fn stats(&self) -> RunStats {
        RunStats { events: self.ev.popped(), packets: self.packets_created, sim_ns: self.now }
    }

    fn start_flow(&mut self, f: usize) {
        let def = &self.sc.flows[f];
        let cfg = ConnConfig {
            subflow: def.subflow.clone(),
            cc: def.cc.clone(),
            rcv_buf: def.rcv_buf,
            paths: def.paths.clone(),
            scheduler: def.scheduler.clone(),
            backup: def.backup.clone(),
        };
        let now = Instant(self.now);
        let mut client = Connection::new(&cfg, Side::Client, now).expect("cc validated by the scenario");
        client.seed_scheduler(crate::rng::stream_seed(self.sc.seed, &format!("flow/{}/sched", def.name)));
        if let Some(d) = self.flows[f].initial_decision {
            client.decide(d);
        }
        let server = Connection::new(&cfg, Side::Server, now).expect("cc validated by the scenario");
        let app = def.app;
        if app == App::Greedy {
            client.write(def.size.unwrap_or(u64::MAX / 4));
        }
        let rt = &mut self.flows[f];
        rt.started = true;
        rt.prev = vec![(0, 0, 0, 0); client.subflow_count()];
        rt.prev_slots = vec![SlotStats::default(); client.subflow_count()];
        rt.prev_app = 0;
        rt.prev_full = 0.0;
        rt.written = 0;
        rt.transfer_start = self.now;
        self.eps[2 * f].conn = Some(client);
        self.eps[2 * f + 1].conn = Some(server);
        // A path already down when the flow starts.
        for (k, &p) in def.paths.iter().enumerate() {
            if self.path_down[p as usize] {
                for ep in [2 * f, 2 * f + 1] {
                    self.eps[ep].conn.as_mut().unwrap().set_path(now, k, PathState::Down);
                }
            }
        }
        if app != App::Greedy {
            self.app_tick(f);
        }
        self.drive(2 * f);
        if self.sc.flows[f].decision != DecisionInterval::None && self.flows[f].transfers.is_empty() {
            let at = self.now + self.decision_interval(f);
            self.ev.push(at, Kind::DecisionTimer, f as u32, 0);
        }
    }

    /// A rate-limited application writes what it has produced by now and schedules its next tick.
    fn app_tick(&mut self, f: usize) {
        let def = &self.sc.flows[f];
        let rt = &mut self.flows[f];
        let cap = def.size.unwrap_or(u64::MAX / 4);
        let elapsed = self.now - rt.transfer_start;
        let (due, next) = match def.app {
            App::Greedy => return,
            App::Cbr { rate_bps } => {
                let due = (rate_bps as u128 * elapsed as u128 / 8_000_000_000) as u64;
                // About one segment per tick, at least 1 ms apart.
                let tick = (def.subflow.mss as u64 * 8_000_000_000 / rate_bps.max(1)).max(1_000_000);
                (due, tick)
            }
            App::Chunks { bytes, period_ns } => (bytes.saturating_mul(elapsed / period_ns + 1), period_ns),
        };
        let due = due.min(cap);
        if due > rt.written {
            let n = due - rt.written;
            rt.written = due;
            if let Some(c) = self.eps[2 * f].conn.as_mut() {
                c.write(n);
            }
        }
        if rt.written < cap {
            self.ev.push(self.now + next, Kind::AppTick, f as u32, 0);
        }
    }

    /// A sized transfer completed at the receiver: record it, then finish the flow or start the
    /// next download on fresh connections after the gap.
    fn transfer_done(&mut self, f: usize) {
        let def = &self.sc.flows[f];
        let rt = &mut self.flows[f];
        rt.transfers.push((rt.transfer_start, self.now));
        if rt.transfers.len() as u32 >= def.repeat {
            rt.done_at = Some(self.now);
            self.finished_flows += 1;
            return;
        }
        // Fold this connection's counters into the totals; a new pair starts after the gap.
        if let (Some(snd), Some(rcv)) = (self.eps[2 * f].conn.take(), self.eps[2 * f + 1].conn.take()) {
            rt.acc.delivered += rcv.info().bytes_delivered;
            for (_, s) in snd.subflows() {
                rt.acc.retx += s.segments_retransmitted;
                rt.acc.lost += s.segments_lost;
                rt.acc.rtos += s.rto_count;
                rt.acc.frs += s.fast_recoveries;
            }
            for i in 0..snd.subflow_count() {
                rt.acc.slots.add(&snd.slot_stats(i));
            }
        }
        for ep in [2 * f, 2 * f + 1] {
            self.eps[ep].queued_wake = None;
            self.eps[ep].gen = self.eps[ep].gen.wrapping_add(1);
        }
        self.ev.push(self.now + def.repeat_gap_ns, Kind::FlowStart, f as u32, 0);
    }

    /// Interface down/up/priority: links of the path stop/resume carrying packets, and every
    /// connection using the path is told (reinjection, join again).
    fn path_event(&mut self, i: usize) {
        let e = self.sc.events[i].clone();
        let p = e.path as usize;
        let state = match e.kind {
            PathEventKind::Down => PathState::Down,
            PathEventKind::Up => PathState::Up,
            PathEventKind::Backup => PathState::Backup(true),
            PathEventKind::Active => PathState::Backup(false),
        };
        if matches!(e.kind, PathEventKind::Down | PathEventKind::Up) {
            let down = e.kind == PathEventKind::Down;
            self.path_down[p] = down;
            let mut dropped = std::mem::take(&mut self.scratch);
            let path = &self.sc.paths[p];
            for &l in path.fwd.iter().chain(&path.rev) {
                self.links[l as usize].set_outage(self.now, down, &mut dropped);
            }
            self.drop_all(&mut dropped);
            self.scratch = dropped;
        }
        let now = Instant(self.now);
        for f in 0..self.flows.len() {
            let Some(k) = self.sc.flows[f].paths.iter().position(|&q| q as usize == p) else { continue };
            for ep in [2 * f, 2 * f + 1] {
                if let Some(c) = self.eps[ep].conn.as_mut() {
                    c.set_path(now, k, state);
                    self.drive(ep);
                }
            }
        }
    }

    #[inline]
    fn route(path: &PathDef, to_server: bool) -> &[u32] {
        if to_server {
            &path.fwd
        } else {
            &path.rev
        }
    }

    /// A packet left a link: on to the next hop, or to its endpoint.
    fn forward(&mut self, p: PktId) {
        let pk = &mut self.pkts[p as usize];
        pk.hop += 1;
        let pk = *pk;
        let route = Self::route(&self.sc.paths[pk.path as usize], pk.to_server);
        if (pk.hop as usize) < route.len() {
            let l = route[pk.hop as usize] as usize;
            self.offer(l, p, pk);
            return;
        }
        self.free.push(p);
        let ep = 2 * pk.flow as usize + pk.to_server as usize;
        let now = Instant(self.now);
        let Some(conn) = self.eps[ep].conn.as_mut() else { return };
        conn.handle_segment(now, 0, &pk.seg);
        if pk.to_server {
            conn.read(u64::MAX);
            let f = pk.flow as usize;
            if let (Some(size), None) = (self.sc.flows[f].size, self.flows[f].done_at) {
                if conn.info().bytes_delivered >= size {
                    self.drive(ep);
                    self.transfer_done(f);
                    return;
                }
            }
        }
        self.drive(ep);
    }

    #[inline]
    fn offer(&mut self, l: usize, p: PktId, pk: Packet) {
        match self.links[l].offer(self.now, p, pk.size, &mut self.ev) {
            Offer::Accepted => {}
            Offer::DroppedQueue | Offer::DroppedOutage => self.dropped(p),
        }
    }

    fn dropped(&mut self, p: PktId) {
        let pk = &self.pkts[p as usize];
        if pk.seg.len > 0 {
            self.flows[pk.flow as usize].data_drops += 1;
        }
        self.free.push(p);
    }

    fn drop_all(&mut self, dropped: &mut Vec<PktId>) {
        for &p in dropped.iter() {
            self.dropped(p);
        }
        dropped.clear();
    }

    /// Drains an endpoint's transmissions onto the network and re-arms its wake-up.
    fn drive(&mut self, ep: usize) {
        let flow = (ep / 2) as u32;
        let to_server = ep % 2 == 0;
        let now = Instant(self.now);
        loop {
            let Some(conn) = self.eps[ep].conn.as_mut() else { return };
            let Some(t) = conn.poll_transmit(now) else { break };
            let pk = Packet { flow, path: t.path, to_server, hop: 0, size: t.seg.wire_size(), seg: t.seg };
            let p = self.alloc(pk);
            let first = Self::route(&self.sc.paths[t.path as usize], to_server)[0] as usize;
            self.offer(first, p, pk);
        }
        if ep % 2 == 0 {
            if let Some(c) = self.eps[ep].conn.as_mut() {
                while let Some(ev) = c.poll_event() {
                    if ev == Event::DecisionNeeded {
                        self.pending_decisions.push_back(flow);
                    }
                }
            }
        }
        let e = &mut self.eps[ep];
        let d = e.conn.as_ref().and_then(|c| c.poll_timeout()).map(|t| t.0.max(self.now));
        if let Some(t) = d {
            if e.queued_wake.is_none_or(|q| t < q) {
                e.queued_wake = Some(t);
                e.gen = e.gen.wrapping_add(1);
                self.ev.push(t, Kind::Wake, ep as u32, e.gen);
            }
        }
    }

    #[inline]
    fn alloc(&mut self, pk: Packet) -> PktId {
        self.packets_created += 1;
        if let Some(p) = self.free.pop() {
            self.pkts[p as usize] = pk;
            p
        } else {
            self.pkts.push(pk);
            (self.pkts.len() - 1) as PktId
        }
    }

    /// Integrates each interface's energy over the sample interval that just ended and
    /// attributes the transfer energy to flows in proportion to the bytes they moved on it.
    fn account_energy(&mut self) {
        for (p, path) in self.sc.paths.iter().enumerate() {
            let Some(params) = path.energy else { continue };
            let down_link = *path.fwd.last().unwrap() as usize;
            let up_link = path.rev[0] as usize;
            let (down, up) = (self.links[down_link].stats.bytes_out, self.links[up_link].stats.bytes_out);
            let (ie, prev_down, prev_up) = &mut self.energy[p];
            let e = ie.bin(&params, self.now, self.sc.sample_ns, up - *prev_up, down - *prev_down);
            (*prev_down, *prev_up) = (down, up);
            if e > 0.0 {
                let users = self.bin_bytes.iter().filter(|b| b.0 as usize == p).count();
                let total: u64 = self.bin_bytes.iter().filter(|b| b.0 as usize == p).map(|b| b.2).sum();
                for &(q, f, bytes) in &self.bin_bytes {
                    if q as usize == p {
                        // By bytes moved; a bin with only handshake/ACK traffic is split evenly.
                        let share = if total > 0 { bytes as f64 / total as f64 } else { 1.0 / users as f64 };
                        self.flows[f as usize].energy_j += e * share;
                    }
                }
            }
        }
        self.bin_bytes.clear();
    }

    fn sample(&mut self) {
        self.sample_flows();
        self.account_energy();
    }

    fn sample_flows(&mut self) {
        let dt = self.sc.sample_ns as f64 / 1e9;
        let t = self.now as f64 / 1e9;
        let to_mbps = |bytes: u64| bytes as f64 * 8.0 / dt / 1e6;
        for (f, def) in self.sc.flows.iter().enumerate() {
            let rt = &mut self.flows[f];
            // Not started yet, or between two downloads of a repeated transfer.
            if !rt.started || self.eps[2 * f].conn.is_none() {
                continue;
            }
            let now = Instant(self.now);
            let rcv = self.eps[2 * f + 1].conn.as_mut().map(|c| c.info_at(now)).unwrap_or_default();
            let app = rcv.bytes_delivered;
            let flow_goodput = to_mbps(app - rt.prev_app);
            rt.prev_app = app;
            let full_frac = ((rcv.rwnd_full_seconds - rt.prev_full) / dt).clamp(0.0, 1.0);
            rt.prev_full = rcv.rwnd_full_seconds;
            let Some(conn) = self.eps[2 * f].conn.as_ref() else { continue };
            for (i, (_, s)) in conn.subflows().enumerate() {
                let s: SubflowInfo = s;
                let prev = rt.prev[i];
                let s_ = &mut self.series;
                s_.time_s.push(t);
                s_.flow.push(def.name.clone());
                s_.subflow.push(i as i64);
                s_.cwnd.push(s.cwnd as i64);
                s_.ssthresh.push(if s.ssthresh >= i64::MAX as u64 { None } else { Some(s.ssthresh as i64) });
                s_.srtt_ms.push(s.srtt.as_millis_f64());
                s_.rttvar_ms.push(s.rttvar.as_millis_f64());
                s_.rto_ms.push(s.rto.as_millis_f64());
                s_.inflight.push(s.pipe as i64);
                s_.throughput.push(to_mbps(s.bytes_sent - prev.0));
                s_.goodput.push(to_mbps(s.delivered - prev.1));
                s_.flow_goodput.push(flow_goodput);
                s_.ooo_bytes.push(rcv.ooo_bytes as i64);
                s_.rwnd_full_frac.push(full_frac);
                self.bin_bytes.push((def.paths[i], f as u32, s.delivered - prev.1));
                s_.losses.push((s.segments_lost - prev.2) as i64);
                s_.retransmits.push((s.segments_retransmitted - prev.3) as i64);
                rt.prev[i] = (s.bytes_sent, s.delivered, s.segments_lost, s.segments_retransmitted);
                let sl = conn.slot_stats(i);
                let d = sl.since(&rt.prev_slots[i]);
                rt.prev_slots[i] = sl;
                s_.slots.push(d.measured as i64);
                s_.slot_bw_mbps.push(d.mean_bw_mbps());
                s_.slot_srtt_ms.push(d.mean_srtt_ms());
            }
        }
    }

    /// Results of the run so far.
    pub fn output(&mut self) -> RunOutput {
        let end = self.now;
        let now = Instant(end);
        let mut flow_rows = Vec::new();
        let mut subflow_rows = Vec::new();
        for (f, def) in self.sc.flows.iter().enumerate() {
            let rt = &self.flows[f];
            let rcv = self.eps[2 * f + 1].conn.as_mut().map(|c| c.info_at(now)).unwrap_or_default();
            let snd = self.eps[2 * f].conn.as_mut().map(|c| c.info_at(now)).unwrap_or_default();
            let delivered = rt.acc.delivered + rcv.bytes_delivered;
            let (mut retx, mut lost, mut rtos, mut frs, mut srtt_ms) =
                (rt.acc.retx, rt.acc.lost, rt.acc.rtos, rt.acc.frs, f64::INFINITY);
            let mut slots = rt.acc.slots;
            if let Some(c) = self.eps[2 * f].conn.as_ref() {
                for (i, s) in c.subflows() {
                    let sl = c.slot_stats(i as usize);
                    slots.add(&sl);
                    retx += s.segments_retransmitted;
                    lost += s.segments_lost;
                    rtos += s.rto_count;
                    frs += s.fast_recoveries;
                    if s.established {
                        srtt_ms = srtt_ms.min(s.srtt.as_millis_f64());
                    }
                    let p = def.paths[i as usize] as usize;
                    subflow_rows.push(serde_json::json!({
                        "flow": def.name, "subflow": i, "path": self.sc.paths[p].name,
                        "backup": def.backup[i as usize], "established": s.established,
                        "bytes_sent": s.bytes_sent, "bytes_retransmitted": s.bytes_retransmitted,
                        "bytes_acked": s.delivered, "segments_lost": s.segments_lost,
                        "rto_count": s.rto_count, "fast_recoveries": s.fast_recoveries,
                        "srtt_ms": s.srtt.as_millis_f64(), "min_rtt_ms": s.min_rtt.as_millis_f64(),
                        "cwnd_bytes": s.cwnd,
                        "slots": sl.slots, "slot_bw_mbps": sl.mean_bw_mbps(), "slot_srtt_ms": sl.mean_srtt_ms(),
                    }));
                }
            }
            let stop = rt.done_at.unwrap_or(end);
            let active = stop.saturating_sub(def.start_ns) as f64 / 1e9;
            let goodput = if active > 0.0 { delivered as f64 * 8.0 / active / 1e6 } else { 0.0 };
            let mean_ooo = if active > 0.0 { rcv.ooo_byte_seconds / active } else { 0.0 };
            let path = def.paths.iter().map(|&p| self.sc.paths[p as usize].name.as_str()).collect::<Vec<_>>().join("+");
            flow_rows.push(serde_json::json!({
                "name": def.name, "path": path, "subflows": def.paths.len(), "cc": def.cc.label(),
                "scheduler": def.scheduler.label(), "start_s": def.start_ns as f64 / 1e9,
                "size_bytes": def.size, "completed": rt.done_at.is_some(),
                "fct_s": rt.done_at.map(|d| (d - def.start_ns) as f64 / 1e9),
                "bytes_delivered": delivered, "goodput_mbps": goodput,
                "retransmits": retx, "losses": lost, "packets_dropped": rt.data_drops,
                "rto_count": rtos, "fast_recoveries": frs,
                "srtt_ms": if srtt_ms.is_finite() { srtt_ms } else { 0.0 },
                "energy_j": rt.energy_j,
                "transfers": rt.transfers.len(),
                "mean_transfer_s": if rt.transfers.is_empty() { None } else {
                    Some(rt.transfers.iter().map(|(a, b)| (b - a) as f64 / 1e9).sum::<f64>() / rt.transfers.len() as f64)
                },
                "reinjected_bytes": snd.reinjected_bytes, "redundant_bytes": snd.redundant_bytes,
                "opportunistic_retransmissions": snd.opportunistic_retransmissions,
                "penalizations": snd.penalizations, "duplicate_bytes": rcv.duplicate_bytes,
                "mean_ooo_bytes": mean_ooo, "rwnd_full_s": rcv.rwnd_full_seconds,
                "send_blocked_s": snd.send_blocked_seconds,
                "slots": slots.slots, "slot_bw_mbps": slots.mean_bw_mbps(), "slot_srtt_ms": slots.mean_srtt_ms(),
            }));
        }
        let mut link_rows = Vec::new();
        for l in self.links.iter_mut() {
            let cap = l.capacity_bytes(end);
            let s = l.stats;
            link_rows.push(serde_json::json!({
                "name": l.name, "packets_sent": s.packets_out, "bytes_delivered": s.bytes_out,
                "packets_dropped_queue": s.dropped_queue, "packets_dropped_loss": s.dropped_loss,
                "packets_dropped_outage": s.dropped_outage, "max_queue_bytes": s.max_queue_bytes,
                "utilization": if cap > 0.0 { s.bytes_out as f64 / cap } else { 0.0 },
            }));
        }
        let stats = self.stats();
        let summary = serde_json::json!({
            "scenario": self.sc.name,
            "seed": self.sc.seed,
            "profile": self.sc.profile.name(),
            "duration_s": self.sc.duration_ns as f64 / 1e9,
            "end_s": end as f64 / 1e9,
            "flows": flow_rows,
            "subflows": subflow_rows,
            "links": link_rows,
            "interfaces": self.sc.paths.iter().enumerate().filter(|(_, p)| p.energy.is_some()).map(|(i, p)| {
                let e = &self.energy[i].0;
                serde_json::json!({
                    "path": p.name, "energy_j": e.total_j(), "active_j": e.active_j,
                    "promotion_j": e.promotion_j, "tail_j": e.tail_j, "idle_j": e.idle_j, "active_s": e.active_s,
                })
            }).collect::<Vec<_>>(),
            "stats": {"events": stats.events, "packets": stats.packets, "sim_seconds": stats.sim_ns as f64 / 1e9},
        });
        let s = std::mem::take(&mut self.series);
        let timeseries = Table {
            columns: vec![
                ("time_s".into(), Column::F64(s.time_s)),
                ("flow".into(), Column::Str(s.flow)),
                ("subflow".into(), Column::I64(s.subflow)),
                ("cwnd_bytes".into(), Column::I64(s.cwnd)),
                ("ssthresh_bytes".into(), Column::OptI64(s.ssthresh)),
                ("srtt_ms".into(), Column::F64(s.srtt_ms)),
                ("rttvar_ms".into(), Column::F64(s.rttvar_ms)),
                ("rto_ms".into(), Column::F64(s.rto_ms)),
                ("inflight_bytes".into(), Column::I64(s.inflight)),
                ("throughput_mbps".into(), Column::F64(s.throughput)),
                ("goodput_mbps".into(), Column::F64(s.goodput)),
                ("flow_goodput_mbps".into(), Column::F64(s.flow_goodput)),
                ("ooo_bytes".into(), Column::I64(s.ooo_bytes)),
                ("rwnd_full_frac".into(), Column::F64(s.rwnd_full_frac)),
                ("losses".into(), Column::I64(s.losses)),
                ("retransmits".into(), Column::I64(s.retransmits)),
                ("slots".into(), Column::I64(s.slots)),
                ("slot_bw_mbps".into(), Column::F64(s.slot_bw_mbps)),
                ("slot_srtt_ms".into(), Column::F64(s.slot_srtt_ms)),
            ],
        };
        RunOutput {
            summary_json: serde_json::to_string_pretty(&summary).unwrap() + "\n",
            resolved_toml: self.sc.resolved_toml(),
            flows: Table::from_rows(&flow_rows, &[("size_bytes", false), ("fct_s", true), ("mean_transfer_s", true)]),
            subflows: Table::from_rows(&subflow_rows, &[]),
            timeseries,
            links: Table::from_rows(&link_rows, &[]),
            stats,
        }
    }
}

/// Everything a run produces, in memory.
pub struct RunOutput {
    /// summary.json text (sorted keys, pretty, trailing newline).
    pub summary_json: String,
    /// The scenario with every default written out.
    pub resolved_toml: String,
    pub flows: Table,
    /// One row per subflow of every flow.
    pub subflows: Table,
    pub timeseries: Table,
    pub links: Table,
    pub stats: RunStats,
}
