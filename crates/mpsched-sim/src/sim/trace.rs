//! The packet trace (`--trace-packets`): one row per segment event of the traced flows, taken
//! in pieces like the timeseries ([`Sim::take_packets`]) so a long run's memory stays bounded.
//!
//! Events: `send` (a segment leaves its endpoint), `retransmit` (a send of subflow sequence
//! space already sent), `drop` (a link dropped it; `drop_reason` is `queue_full`,
//! `random_loss` or `outage`) and `arrive` (it reached its endpoint). Each row carries the
//! whole segment: TCP sequence, cumulative ACK, SACK blocks, flags, window, timestamps, the DSS
//! mapping (data sequence number, subflow sequence, length) and DATA_ACK (RFC 8684 3.3), and
//! for the sender's data segments the scheduler's name and why the segment went out
//! (`reason`). Times are integer nanoseconds.
//!
//! Off (the default), the simulator pays one `Option` test per packet event: every hook is a
//! `#[cold]` function behind `if self.trace.is_some()`.

use mpsched_transport::Segment;

use super::Sim;
use crate::link::PktId;
use crate::table::{Column, Table};

/// What happened to a segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketEvent {
    /// It left its endpoint (first transmission of its sequence space, or a pure ACK).
    Send,
    /// It left its endpoint carrying subflow sequence space sent before (RFC 6675 / RTO).
    Retransmit,
    /// A link dropped it.
    Drop,
    /// It reached its endpoint.
    Arrive,
}

impl PacketEvent {
    fn name(self) -> &'static str {
        match self {
            PacketEvent::Send => "send",
            PacketEvent::Retransmit => "retransmit",
            PacketEvent::Drop => "drop",
            PacketEvent::Arrive => "arrive",
        }
    }
}

/// Why a link dropped a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// The queue was full (drop-tail).
    QueueFull,
    /// The loss model (Bernoulli or Gilbert-Elliott) dropped it.
    RandomLoss,
    /// The link was down (an outage, or a path event), or its queue was flushed by one.
    Outage,
}

impl DropReason {
    fn name(self) -> &'static str {
        match self {
            DropReason::QueueFull => "queue_full",
            DropReason::RandomLoss => "random_loss",
            DropReason::Outage => "outage",
        }
    }
}

/// The rows of one segment event, before they become a [`Table`].
#[derive(Default)]
struct Rows {
    t_ns: Vec<i64>,
    event: Vec<&'static str>,
    flow_id: Vec<i64>,
    conn: Vec<i64>,
    path: Vec<i64>,
    subflow: Vec<i64>,
    to_server: Vec<bool>,
    flags: Vec<i64>,
    seq: Vec<i64>,
    len: Vec<i64>,
    ack: Vec<i64>,
    wnd: Vec<i64>,
    sack: [Vec<i64>; 6],
    n_sack: Vec<i64>,
    dsn: Vec<i64>,
    data_ack: Vec<i64>,
    ts_val: Vec<i64>,
    ts_ecr: Vec<i64>,
    mp_key: Vec<i64>,
    size: Vec<i64>,
    link: Vec<Option<i64>>,
    drop_reason: Vec<&'static str>,
    /// Whether the row names its flow's scheduler (the client's data sends).
    scheduler: Vec<bool>,
    reason: Vec<&'static str>,
}

/// The packet trace of a run: which flows are traced, the rows not yet taken, and per subflow
/// the end of the sequence space sent so far (what tells a retransmission from a send).
pub struct PacketTrace {
    traced: Vec<bool>,
    rows: Rows,
    /// Per (flow, connection, subflow): one past the highest subflow sequence sent, and per
    /// (flow, connection): one past the highest data sequence number sent (client side).
    seq_hi: std::collections::HashMap<(u32, u32, u8), u64>,
    dsn_hi: std::collections::HashMap<(u32, u32), u64>,
}

/// One event to record: the packet's context beside its segment.
pub(super) struct At<'a> {
    pub t_ns: u64,
    pub event: PacketEvent,
    pub flow: u32,
    pub conn: u32,
    pub path: u16,
    pub to_server: bool,
    pub size: u32,
    pub seg: &'a Segment,
    pub link: Option<u32>,
    pub drop: Option<DropReason>,
}

impl PacketTrace {
    /// A trace of the flows whose entry in `traced` is true.
    pub fn new(traced: Vec<bool>) -> Self {
        PacketTrace { traced, rows: Rows::default(), seq_hi: Default::default(), dsn_hi: Default::default() }
    }

    /// Whether flow `f` is traced.
    #[inline]
    pub fn traces(&self, f: u32) -> bool {
        self.traced.get(f as usize).copied().unwrap_or(false)
    }

    /// Rows recorded and not yet taken.
    pub fn rows(&self) -> usize {
        self.rows.t_ns.len()
    }

    /// Records a segment leaving its endpoint: `send` or `retransmit`, and for the client's
    /// data its reason: `new` (the scheduler placed new data), `reinjection` (data another
    /// subflow carried before: a reinjection, redundant copy or opportunistic retransmission,
    /// RFC 8684 3.3.6) or `retransmission` (the subflow's own loss recovery).
    pub(super) fn sent(&mut self, mut at: At) {
        let s = at.seg;
        let key = (at.flow, at.conn, s.sf);
        let hi = self.seq_hi.entry(key).or_insert(0);
        let retx = s.len > 0 && s.end() <= *hi;
        *hi = (*hi).max(s.end());
        let mut reason = "";
        if at.to_server && s.len > 0 {
            let dhi = self.dsn_hi.entry((at.flow, at.conn)).or_insert(0);
            let end = s.dsn + s.len as u64;
            reason = if retx {
                "retransmission"
            } else if end <= *dhi {
                "reinjection"
            } else {
                "new"
            };
            *dhi = (*dhi).max(end);
        }
        at.event = if retx { PacketEvent::Retransmit } else { PacketEvent::Send };
        self.push(&at, at.to_server && s.len > 0, reason);
    }

    /// Records a drop, an arrival, or (through [`PacketTrace::sent`]) a send.
    pub(super) fn push(&mut self, at: &At, scheduler: bool, reason: &'static str) {
        let (r, s) = (&mut self.rows, at.seg);
        r.t_ns.push(at.t_ns as i64);
        r.event.push(at.event.name());
        r.flow_id.push(at.flow as i64);
        r.conn.push(at.conn as i64);
        r.path.push(at.path as i64);
        r.subflow.push(s.sf as i64);
        r.to_server.push(at.to_server);
        r.flags.push(s.flags.0 as i64);
        r.seq.push(s.seq as i64);
        r.len.push(s.len as i64);
        r.ack.push(s.ack as i64);
        r.wnd.push(s.wnd as i64);
        for (k, b) in s.sack.iter().enumerate() {
            let valid = k < s.n_sack as usize;
            r.sack[2 * k].push(if valid { b.start as i64 } else { 0 });
            r.sack[2 * k + 1].push(if valid { b.end as i64 } else { 0 });
        }
        r.n_sack.push(s.n_sack as i64);
        r.dsn.push(s.dsn as i64);
        r.data_ack.push(s.data_ack as i64);
        r.ts_val.push(s.ts_val as i64);
        r.ts_ecr.push(s.ts_ecr as i64);
        // The key's bits as a signed integer (a u64 key above 2^63 is negative here).
        r.mp_key.push(s.mp_key as i64);
        r.size.push(at.size as i64);
        r.link.push(at.link.map(|l| l as i64));
        r.drop_reason.push(at.drop.map_or("", DropReason::name));
        r.scheduler.push(scheduler);
        r.reason.push(reason);
    }

    /// The rows recorded since the last call, as a table; `names` and `scheds` are the flows'
    /// names and scheduler labels.
    pub fn take(&mut self, names: &[&str], scheds: &[&str]) -> Table {
        let r = std::mem::take(&mut self.rows);
        let strs = |v: Vec<&str>| Column::Str(v.into_iter().map(String::from).collect());
        let flow = r.flow_id.iter().map(|&f| names[f as usize].to_string()).collect();
        let sched = r.flow_id.iter().zip(&r.scheduler).map(|(&f, &on)| if on { scheds[f as usize] } else { "" });
        let sched = sched.map(String::from).collect();
        let [s1, e1, s2, e2, s3, e3] = r.sack;
        let cols = vec![
            ("t_ns", Column::I64(r.t_ns)),
            ("event", strs(r.event)),
            ("flow", Column::Str(flow)),
            ("flow_id", Column::I64(r.flow_id)),
            ("conn", Column::I64(r.conn)),
            ("path", Column::I64(r.path)),
            ("subflow", Column::I64(r.subflow)),
            ("to_server", Column::Bool(r.to_server)),
            ("flags", Column::I64(r.flags)),
            ("seq", Column::I64(r.seq)),
            ("len", Column::I64(r.len)),
            ("ack", Column::I64(r.ack)),
            ("wnd", Column::I64(r.wnd)),
            ("n_sack", Column::I64(r.n_sack)),
            ("sack1_start", Column::I64(s1)),
            ("sack1_end", Column::I64(e1)),
            ("sack2_start", Column::I64(s2)),
            ("sack2_end", Column::I64(e2)),
            ("sack3_start", Column::I64(s3)),
            ("sack3_end", Column::I64(e3)),
            ("dsn", Column::I64(r.dsn)),
            ("data_ack", Column::I64(r.data_ack)),
            ("ts_val", Column::I64(r.ts_val)),
            ("ts_ecr", Column::I64(r.ts_ecr)),
            ("mp_key", Column::I64(r.mp_key)),
            ("size", Column::I64(r.size)),
            ("link", Column::OptI64(r.link)),
            ("drop_reason", strs(r.drop_reason)),
            ("scheduler", Column::Str(sched)),
            ("reason", strs(r.reason)),
        ];
        Table { columns: cols.into_iter().map(|(n, c)| (n.to_string(), c)).collect() }
    }
}

impl Sim {
    /// Turns the packet trace on for the flows whose entry in `traced` is true (one per flow of
    /// the scenario; missing entries are false), before the run starts or at any pause.
    pub fn trace_packets(&mut self, traced: Vec<bool>) {
        self.trace = Some(Box::new(PacketTrace::new(traced)));
    }

    /// Turns the packet trace on for the flows named in `names` (`"all"`: every flow); an
    /// unknown name is an error naming the scenario's flows, and nothing changes.
    pub fn trace_packets_named(&mut self, names: &[String]) -> Result<(), String> {
        let flows = &self.sc.flows;
        let mut traced = vec![false; flows.len()];
        for n in names {
            if n == "all" {
                traced.iter_mut().for_each(|t| *t = true);
                continue;
            }
            match flows.iter().position(|f| &f.name == n) {
                Some(i) => traced[i] = true,
                None => {
                    let known: Vec<&str> = flows.iter().map(|f| f.name.as_str()).collect();
                    return Err(format!(
                        "trace_packets: no flow named {n:?} (flows: {}; or \"all\")",
                        known.join(", ")
                    ));
                }
            }
        }
        self.trace_packets(traced);
        Ok(())
    }

    /// Packet trace rows recorded and not yet taken (0 when tracing is off).
    pub fn packet_rows(&self) -> usize {
        self.trace.as_ref().map_or(0, |t| t.rows())
    }

    /// The packet trace rows recorded since the last call (an empty table when tracing is off).
    pub fn take_packets(&mut self) -> Table {
        let names: Vec<&str> = self.sc.flows.iter().map(|f| f.name.as_str()).collect();
        let scheds: Vec<&str> = self.sc.flows.iter().map(|f| f.scheduler.label()).collect();
        match self.trace.as_mut() {
            Some(t) => t.take(&names, &scheds),
            None => Table::default(),
        }
    }

    /// Records packet `p` leaving its endpoint (tracing on).
    #[cold]
    #[inline(never)]
    pub(super) fn trace_send(&mut self, p: PktId) {
        let pk = self.pkts[p as usize];
        if pk.udp {
            return;
        }
        let Some(tr) = self.trace.as_deref_mut() else { return };
        if !tr.traces(pk.flow) {
            return;
        }
        let at = at_of(self.now, PacketEvent::Send, &pk, pk.conn, None, None);
        tr.sent(at);
    }

    /// Records packet `p` dropped by link `l` for `why`, or arriving at its endpoint when `l`
    /// is `None` (tracing on).
    #[cold]
    #[inline(never)]
    pub(super) fn trace_event(&mut self, p: PktId, l: Option<usize>, why: Option<DropReason>) {
        let pk = self.pkts[p as usize];
        if pk.udp {
            return; // not a connection's segment: the packet trace records segments only
        }
        let Some(tr) = self.trace.as_deref_mut() else { return };
        if !tr.traces(pk.flow) {
            return;
        }
        let ev = if why.is_some() { PacketEvent::Drop } else { PacketEvent::Arrive };
        let at = at_of(self.now, ev, &pk, pk.conn, l.map(|l| l as u32), why);
        tr.push(&at, false, "");
    }
}

fn at_of(
    t_ns: u64,
    event: PacketEvent,
    pk: &super::Packet,
    conn: u32,
    link: Option<u32>,
    drop: Option<DropReason>,
) -> At<'_> {
    At {
        t_ns,
        event,
        flow: pk.flow,
        conn,
        path: pk.path,
        to_server: pk.to_server,
        size: pk.size,
        seg: &pk.seg,
        link,
        drop,
    }
}
