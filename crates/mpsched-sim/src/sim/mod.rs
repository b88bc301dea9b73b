//! The simulator: the state of a run (event queue, packet arena, links, endpoints, per-flow
//! bookkeeping) and its public control surface.
//!
//! - [`events`]: the event loop and dispatch;
//! - [`net`]: packets hop by hop over links, drops, driving endpoints;
//! - [`flows`]: flow start, application sources, repeated transfers, path events, decision
//!   intervals;
//! - [`sample`]: periodic samples (timeseries) and energy accounting;
//! - [`output`]: summary and tables of a run;
//! - [`invariants`]: what every run's outputs satisfy (checked in debug builds).

use std::collections::VecDeque;

use mpsched_transport::observe::DecisionStats;
use mpsched_transport::{CcSpec, Connection, Decision, SchedSpec, Segment, SlotStats};

use crate::energy::InterfaceEnergy;
use crate::event::{EventQueue, Kind};
use crate::link::{Link, PktId};
use crate::scenario::Scenario;
use crate::table::Table;

mod events;
mod flows;
mod hosts;
mod invariants;
mod net;
mod output;
mod sample;
mod series;
mod totals;
mod trace;
mod udp;

pub use invariants::check_invariants;
pub use output::RunOutput;
use series::Series;
use totals::Totals;
pub use trace::{DropReason, PacketEvent, PacketTrace};

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
    /// A `[[udp]]` flow's packet (`flow` indexes the scenario's `udp`), not a segment of a
    /// connection.
    udp: bool,
    /// Which of the flow's connections sent it (its downloads completed before: `repeat`
    /// starts each download on a new connection). A segment still in flight when its
    /// connection ended is discarded at arrival: the next connection has a port pair of its
    /// own, so the real stack never hands it the old one's segments.
    conn: u32,
}

impl Packet {
    /// A slot's content before its first packet is written ([`Sim::drive`] fills every field).
    fn empty() -> Packet {
        Packet { flow: 0, path: 0, to_server: false, hop: 0, size: 0, seg: Segment::default(), udp: false, conn: 0 }
    }
}

// `repr(C, align(64))`, wake-up fields first: they share the first cache line with the
// connection's hot-first fields (24 + 1,320 bytes = 21 lines exactly) instead of a line at
// the boundary of two endpoints' connections (BENCHMARKS.md, twelfth pass).
#[repr(C, align(64))]
struct Endpoint {
    /// Time of the live `Wake` event in the queue, if any. Timers that move later (an RTO
    /// restarted by every ACK) keep this event; it re-arms itself when it fires early.
    queued_wake: Option<u64>,
    gen: u32,
    conn: Option<Connection>,
}

/// Per-flow bookkeeping.
// `repr(C)`: what every packet of the flow reads (`stopped_at`, `done_at`, `conn`) and the
// periodic sample's scalars share the first cache line (1,000 flows: each line is a miss).
#[repr(C)]
struct FlowRt {
    /// When its application stopped (`stop_s`) before it completed.
    stopped_at: Option<u64>,
    done_at: Option<u64>,
    /// The flow definition's `size`, `u64::MAX` for none (no delivered count reaches it): the
    /// receiver checks it per data segment, and the 448-byte definition would be one more
    /// cache line per packet with many flows (BENCHMARKS.md, twelfth pass).
    size: u64,
    /// The index of the current connection (see [`Sim::conn_index`]), kept with `transfers`:
    /// the driver stamps it on every packet and checks it on every arrival.
    conn: u32,
    started: bool,
    prev_app: u64,
    /// Receiver's cumulative buffer-full time at the previous sample.
    prev_full: f64,
    /// Application bytes written so far on the current connection (rate-limited sources).
    written: u64,
    /// Counters at the previous sample, per subflow: (bytes_sent, delivered, lost, retx).
    prev: Vec<(u64, u64, u64, u64)>,
    /// Per-slot statistics at the previous sample, per subflow.
    prev_slots: Vec<SlotStats>,
    data_drops: u64,
    /// Start of the current transfer, and the completed ones: (start, end) in ns.
    transfer_start: u64,
    transfers: Vec<(u64, u64)>,
    /// Totals of earlier connections of a repeated download.
    acc: Totals,
    /// Energy of the device's interfaces attributed to this flow (J).
    energy_j: f64,
    /// Applied to each new connection of the flow before it sends (see [`Sim::set_initial_decision`]).
    initial_decision: Option<Decision>,
    /// A policy scheduler's decisions on the flow's earlier connections.
    decisions: Option<DecisionStats>,
}

/// Why [`Sim::advance`] returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Flow `flow`'s per-packet external scheduler waits for [`Sim::decide`].
    Decision {
        /// The flow.
        flow: u32,
    },
    /// Flow `flow`'s decision interval elapsed (decide, or keep the current setting).
    Interval {
        /// The flow.
        flow: u32,
    },
    /// The requested time was reached.
    Deadline,
    /// The scenario's duration was reached, or every sized flow completed.
    Finished,
}

/// Counters describing a finished run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RunStats {
    /// Events processed.
    pub events: u64,
    /// Packets created.
    pub packets: u64,
    /// Simulated time reached (ns).
    pub sim_ns: u64,
}

/// A running simulation of one scenario.
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
    /// Reused buffer of [`Sim::lost`]'s packets.
    lost_scratch: Vec<(PktId, bool)>,
    scratch: Vec<PktId>,
    packets_created: u64,
    series: Series,
    queue_series: sample::QueueSeries,
    finished_flows: usize,
    /// Paths currently down by a path event.
    path_down: Vec<bool>,
    /// Flows whose sender asked for a per-packet decision, in order.
    pending_decisions: VecDeque<u32>,
    /// Per path with an energy model: the interface's energy, and the device-side link byte
    /// counters (down: last forward link, up: first reverse link) at the previous sample.
    energy: Vec<(InterfaceEnergy, u64, u64)>,
    /// Scratch for a sample: (path, flow, bytes acknowledged on that path in the bin); `None`
    /// when no path has an energy model (nothing reads them: a push per row saved).
    bin_bytes: Option<Vec<(u16, u32, u64)>>,
    /// Every flow ends by itself: sized, or with a stop time.
    all_sized: bool,
    /// Host controllers (`cc = "policy:PATH"` naming a host policy), and their earliest deadline.
    hosts: Vec<hosts::HostRt>,
    host_due: u64,
    /// The packet trace, when on ([`Sim::trace_packets`]).
    trace: Option<Box<PacketTrace>>,
    /// Per `[[udp]]` flow: its sending state and counters.
    udp: Vec<udp::UdpRt>,
    /// UDP packets and probe echoes on their way (a run does not end early while any is).
    udp_in_flight: u64,
}

impl Sim {
    /// A simulation of `sc` at time 0, its first events queued.
    pub fn new(sc: Scenario) -> Self {
        let links = crate::netmodel::build_links(&sc);
        let mut ev = EventQueue::default();
        crate::netmodel::schedule_changes(&links, &mut ev);
        for (i, f) in sc.flows.iter().enumerate() {
            ev.push(f.start_ns, Kind::FlowStart, i as u32, 0);
        }
        for (i, f) in sc.flows.iter().enumerate() {
            if let Some(stop) = f.stop_ns.filter(|&t| t <= sc.duration_ns) {
                ev.push(stop, Kind::FlowStop, i as u32, 0);
            }
        }
        for (i, e) in sc.events.iter().enumerate() {
            ev.push(e.at_ns, Kind::PathEvent, i as u32, 0);
        }
        ev.push(sc.sample_ns, Kind::Sample, 0, 0);
        let flows = sc
            .flows
            .iter()
            .map(|def| FlowRt {
                size: def.size.unwrap_or(u64::MAX),
                started: false,
                done_at: None,
                stopped_at: None,
                data_drops: 0,
                prev: vec![(0, 0, 0, 0)],
                prev_slots: vec![SlotStats::default()],
                prev_app: 0,
                prev_full: 0.0,
                written: 0,
                transfer_start: 0,
                transfers: Vec::new(),
                conn: 0,
                acc: Totals::default(),
                energy_j: 0.0,
                initial_decision: None,
                decisions: None,
            })
            .collect();
        let eps = (0..2 * sc.flows.len()).map(|_| Endpoint { conn: None, queued_wake: None, gen: 0 }).collect();
        let mut sim = Sim {
            now: 0,
            ev,
            pkts: Vec::with_capacity(1024),
            free: Vec::with_capacity(1024),
            links,
            flows,
            eps,
            lost_scratch: Vec::new(),
            scratch: Vec::with_capacity(64),
            packets_created: 0,
            series: Series::default(),
            queue_series: Default::default(),
            finished_flows: 0,
            path_down: vec![false; sc.paths.len()],
            pending_decisions: VecDeque::new(),
            energy: vec![(InterfaceEnergy::default(), 0, 0); sc.paths.len()],
            bin_bytes: sc.paths.iter().any(|p| p.energy.is_some()).then(Vec::new),
            all_sized: sc.flows.iter().all(|f| f.size.is_some() || f.stop_ns.is_some()),
            hosts: Vec::new(),
            host_due: u64::MAX,
            trace: None,
            udp: sc.udp.iter().map(|d| udp::UdpRt::new(d, sc.seed)).collect(),
            udp_in_flight: 0,
            sc,
        };
        sim.schedule_udp();
        sim.build_hosts();
        sim
    }

    /// The resolved scenario.
    pub fn scenario(&self) -> &Scenario {
        &self.sc
    }
    /// Current simulated time (ns).
    pub fn now_ns(&self) -> u64 {
        self.now
    }

    /// Runs to the scenario's end (or until every sized flow has completed). Decision points of
    /// externally scheduled flows get default answers: minRTT per packet, and the current
    /// setting kept at interval boundaries.
    pub fn run(&mut self) -> RunStats {
        while !self.run_until(u64::MAX) {}
        self.stats()
    }

    /// Runs as [`Sim::run`] up to `until_ns` (a pause that changes nothing: running in pieces
    /// gives the same results as one run); true once the run is over.
    pub fn run_until(&mut self, until_ns: u64) -> bool {
        loop {
            match self.advance(until_ns) {
                Stop::Decision { flow } => self.decide(flow as usize, Decision::Path(None)),
                Stop::Interval { .. } => {}
                Stop::Deadline => return false,
                Stop::Finished => return true,
            }
        }
    }

    /// Timeseries rows sampled and not yet taken.
    pub fn timeseries_rows(&self) -> usize {
        self.series.rows()
    }

    /// The timeseries rows sampled since the last call (or the start): a long run's caller
    /// writes them out as it goes, so memory does not grow with the run's duration. The rows
    /// not taken are in [`Sim::output`]'s timeseries.
    pub fn take_timeseries(&mut self) -> Table {
        let names: Vec<&str> = self.sc.flows.iter().map(|f| f.name.as_str()).collect();
        std::mem::take(&mut self.series).into_table(&names, self.sc.sample_ns)
    }

    /// Whether the run is over early: every flow sized and complete, or stopped (unless the
    /// scenario asks to run to its duration, e.g. to account an interface's tail energy).
    fn finished(&self) -> bool {
        self.all_sized && self.sc.stop_when_done && self.finished_flows == self.flows.len() && self.udp_stopped()
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

    /// Sets (`Some`) or clears (`None`) flow `f`'s path preference
    /// ([`Connection::set_path_preference`], MPTCP-RL's path probabilities) and re-drives its
    /// sender at the current instant.
    pub fn set_path_preference(&mut self, f: usize, pref: Option<&[f32]>) {
        if let Some(c) = self.eps[2 * f].conn.as_mut() {
            match pref {
                Some(p) => c.set_path_preference(p),
                None => c.clear_path_preference(),
            }
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

    /// Whether flow `f` has ended: completed its transfer(s), or stopped at its `stop_s`.
    pub fn flow_done(&self, f: usize) -> bool {
        self.flows[f].done_at.is_some() || self.flows[f].stopped_at.is_some()
    }

    /// Whether flow `f`'s application stopped at its `stop_s` (its connections are closed).
    pub fn flow_stopped(&self, f: usize) -> bool {
        self.flows[f].stopped_at.is_some()
    }

    /// Whether flow `f` has started (its first connection was created).
    pub fn flow_started(&self, f: usize) -> bool {
        self.flows[f].started
    }

    /// Sets up flow `f`'s algorithms before it starts (a learning env taking control of a flow
    /// that arrives later): `cc` and `scheduler` replace the scenario's when given, `decision`
    /// always. Returns false, changing nothing, once the flow has started.
    pub fn control_flow(
        &mut self,
        f: usize,
        cc: Option<CcSpec>,
        scheduler: Option<SchedSpec>,
        decision: crate::scenario::DecisionInterval,
    ) -> bool {
        if self.flows[f].started {
            return false;
        }
        // The caller's now: no host controller named by the replaced algorithm (`cc =
        // "drl-cc"` sets windows, a path policy as `scheduler` sets path preferences) acts on
        // it, and a controller left with no flow of its own is gone.
        if cc.is_some() {
            let old = self.sc.flows[f].cc.label().to_string();
            self.release_from_host(f, &old);
        }
        if scheduler.is_some() {
            let old = self.sc.flows[f].scheduler.label().to_string();
            self.release_from_host(f, &old);
        }
        let def = &mut self.sc.flows[f];
        if let Some(cc) = cc {
            def.cc = cc;
        }
        if let Some(s) = scheduler {
            def.scheduler = s;
        }
        def.decision = decision;
        true
    }

    /// Bytes the mobile device has received (`.0`: out of path `p`'s last forward link) and sent
    /// (`.1`: into its first reverse link) so far: what the energy model charges (see
    /// [`crate::energy`]).
    pub fn path_device_bytes(&self, p: usize) -> (u64, u64) {
        let path = &self.sc.paths[p];
        let down = self.links[*path.fwd.last().unwrap() as usize].stats.bytes_out;
        let up = self.links[path.rev[0] as usize].stats.bytes_out;
        (down, up)
    }

    /// Bytes waiting in the queue of path `p`'s first forward link (the bottleneck of a path
    /// given by `rate_mbps`), at the current time: what tests of queue occupancy sample.
    pub fn path_queued_bytes(&self, p: usize) -> u64 {
        self.links[self.sc.paths[p].fwd[0] as usize].queued_bytes()
    }

    /// Whether flow `f`'s subflow `i` can carry data ([`mpsched_transport::Connection::subflow_usable`]).
    pub fn subflow_usable(&self, f: usize, i: usize) -> bool {
        self.connection(f).is_some_and(|c| c.subflow_usable(i))
    }

    /// Whether path `p` is down by a path event.
    pub fn path_is_down(&self, p: usize) -> bool {
        self.path_down[p]
    }

    /// Counters of the run so far.
    pub fn stats(&self) -> RunStats {
        RunStats { events: self.ev.popped(), packets: self.packets_created, sim_ns: self.now }
    }
}
