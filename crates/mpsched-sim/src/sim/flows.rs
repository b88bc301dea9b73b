//! Flow life cycle: connection start, application sources, completed transfers (repeated
//! downloads), path events, and the length of decision intervals.

use mpsched_transport::observe::min_rtt_interval_ns;
use mpsched_transport::{ConnConfig, Connection, Instant, PathState, SchedSpec, Side, SlotStats};

use super::Sim;
use crate::event::Kind;
use crate::scenario::{App, DecisionInterval, PathEventKind};

impl Sim {
    /// Length of flow `f`'s next decision interval: fixed, or its minimum subflow smoothed RTT
    /// (EdAR's transmission interval; 100 ms until an RTT is known, at least 1 ms).
    pub fn decision_interval(&self, f: usize) -> u64 {
        match self.sc.flows[f].decision {
            DecisionInterval::None => u64::MAX / 4,
            DecisionInterval::Fixed(ns) => ns,
            DecisionInterval::MinRtt => match self.eps[2 * f].conn.as_ref() {
                Some(c) => min_rtt_interval_ns(c.subflows().map(|(_, s)| s)),
                None => min_rtt_interval_ns(std::iter::empty()),
            },
        }
    }

    pub(super) fn start_flow(&mut self, f: usize) {
        // The next download of a repeated transfer, due after the flow stopped.
        if self.flows[f].stopped_at.is_some() {
            return;
        }
        let def = &self.sc.flows[f];
        let mut cfg = ConnConfig {
            subflow: def.subflow.clone(),
            cc: def.cc.clone(),
            rcv_buf: def.rcv_buf,
            paths: def.paths.clone(),
            scheduler: def.scheduler.clone(),
            backup: def.backup.clone(),
            // MPTCP keys: a pure function of the seed (no draw from a generator, so adding them
            // changed no other random number).
            key: crate::rng::stream_seed(self.sc.seed, &format!("flow/{}/key/client", def.name)),
            // The agent answers a per-packet decision before simulated time moves on.
            decision_timeout: None,
        };
        let now = Instant(self.now);
        let mut client = Connection::new(&cfg, Side::Client, now).expect("cc validated by the scenario");
        client.seed_scheduler(crate::rng::stream_seed(self.sc.seed, &format!("flow/{}/sched", def.name)));
        if let Some(d) = self.flows[f].initial_decision {
            client.decide(d);
        }
        cfg.key = crate::rng::stream_seed(self.sc.seed, &format!("flow/{}/key/server", def.name));
        // The server sends no data: its scheduler is never asked, and a policy scheduler there
        // would only take decisions for nothing.
        cfg.scheduler = SchedSpec::default();
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
        for &p in &def.paths {
            if self.path_down[p as usize] {
                for ep in [2 * f, 2 * f + 1] {
                    self.eps[ep].conn.as_mut().unwrap().set_path(now, p, PathState::Down);
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

    /// The application of flow `f` stops at its `stop_s` (an iPerf3 client at the end of its
    /// time): unless the flow has already completed, both connections are closed at once. They
    /// stay in place, frozen, for the outputs; their timers are cancelled, they send nothing
    /// more, and packets still in the network are discarded when they arrive.
    pub(super) fn stop_flow(&mut self, f: usize) {
        let rt = &mut self.flows[f];
        if rt.done_at.is_some() || rt.stopped_at.is_some() {
            return;
        }
        rt.stopped_at = Some(self.now);
        self.finished_flows += 1;
        for ep in [2 * f, 2 * f + 1] {
            self.eps[ep].queued_wake = None;
            self.eps[ep].gen = self.eps[ep].gen.wrapping_add(1);
        }
    }

    /// A rate-limited application writes what it has produced by now and schedules its next tick.
    pub(super) fn app_tick(&mut self, f: usize) {
        let def = &self.sc.flows[f];
        let rt = &mut self.flows[f];
        if rt.stopped_at.is_some() {
            return;
        }
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
    pub(super) fn transfer_done(&mut self, f: usize) {
        let def = &self.sc.flows[f];
        let rt = &mut self.flows[f];
        rt.transfers.push((rt.transfer_start, self.now));
        rt.conn = (rt.transfers.len() as u32).min(def.repeat.max(1) - 1);
        if rt.transfers.len() as u32 >= def.repeat {
            rt.done_at = Some(self.now);
            self.finished_flows += 1;
            return;
        }
        // Fold this connection's counters into the totals; a new pair starts after the gap.
        if let (Some(mut snd), Some(mut rcv)) = (self.eps[2 * f].conn.take(), self.eps[2 * f + 1].conn.take()) {
            if let Some(d) = snd.decision_stats() {
                rt.decisions.get_or_insert_with(Default::default).merge(d);
            }
            let (si, ri) = (snd.info_at(Instant(self.now)), rcv.info_at(Instant(self.now)));
            rt.acc.delivered += ri.bytes_delivered;
            rt.acc.conn = rt.acc.conn.plus(&si, &ri);
            for (i, s) in snd.subflows() {
                rt.acc.add_subflow(i as usize, &s, &snd.slot_stats(i as usize));
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
    pub(super) fn path_event(&mut self, i: usize) {
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
            let (nf, nr) = (path.fwd.len(), path.rev.len());
            for k in 0..nf + nr {
                let path = &self.sc.paths[p];
                let l = if k < nf { path.fwd[k] } else { path.rev[k - nf] } as usize;
                self.links[l].set_outage(self.now, down, &mut dropped, &mut self.ev);
                self.drop_all(l, &mut dropped);
            }
            self.scratch = dropped;
        }
        let now = Instant(self.now);
        for f in 0..self.flows.len() {
            if !self.sc.flows[f].paths.iter().any(|&q| q as usize == p) {
                continue;
            }
            for ep in [2 * f, 2 * f + 1] {
                if let Some(c) = self.eps[ep].conn.as_mut() {
                    c.set_path(now, e.path, state);
                    self.drive(ep);
                }
            }
        }
    }
}
