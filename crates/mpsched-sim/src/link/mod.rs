//! One-directional links: a drop-tail byte queue, a serializer (fixed rate or mahimahi trace),
//! a loss model, and propagation delay. A link keeps its in-flight packets in a FIFO ring and
//! has at most one pending event per FIFO (the ring's next arrival; a rate link's next loss; a
//! trace link's next delivery opportunity). A rate link decides each packet's departure when
//! it queues it (serial.rs), so a packet costs one event per hop: its arrival.

use std::sync::Arc;

use mpsched_transport::ring::Ring;
use serde::{Deserialize, Serialize};

use crate::event::{EventQueue, Kind};
use crate::rng::Rng;
use serial::{Serial, Undo};

/// Index of a packet in the simulator's arena.
pub type PktId = u32;

/// Packet loss model, applied to each packet as it leaves the serializer.
#[derive(Clone, Debug, PartialEq)]
pub enum LossModel {
    /// No random loss.
    None,
    /// Each packet lost independently.
    Bernoulli {
        /// Loss probability.
        p: f64,
    },
    /// Two-state Markov chain: the packet is lost with the current state's probability, then the
    /// state moves (good→bad with `p_gb`, bad→good with `p_bg`).
    GilbertElliott {
        /// Probability of moving from good to bad after a packet.
        p_gb: f64,
        /// Probability of moving from bad to good after a packet.
        p_bg: f64,
        /// Loss probability in the good state.
        loss_good: f64,
        /// Loss probability in the bad state.
        loss_bad: f64,
    },
}

impl LossModel {
    /// Long-run loss rate.
    pub fn mean_loss(&self) -> f64 {
        match *self {
            LossModel::None => 0.0,
            LossModel::Bernoulli { p } => p,
            LossModel::GilbertElliott { p_gb, p_bg, loss_good, loss_bad } => {
                let pi_bad = if p_gb + p_bg > 0.0 { p_gb / (p_gb + p_bg) } else { 0.0 };
                (1.0 - pi_bad) * loss_good + pi_bad * loss_bad
            }
        }
    }
}

/// A change applied at a scheduled time; `None` fields stay as they are.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinkChange {
    /// When the change applies (ns).
    pub at_ns: u64,
    /// New rate (bit/s).
    pub rate_bps: Option<u64>,
    /// New one-way propagation delay (ns).
    pub delay_ns: Option<u64>,
    /// New loss model.
    pub loss: Option<LossModel>,
    /// Link down (true) or up (false).
    pub outage: Option<bool>,
}

/// A parsed mahimahi trace: delivery-opportunity times in ms, non-decreasing, within
/// `[0, period]`, and the loop's period (> 0).
#[derive(Debug, PartialEq)]
pub struct Trace {
    /// Delivery-opportunity times (ms), one per 1500-byte packet.
    pub times_ms: Vec<u64>,
    /// Period of the loop in ms (lap `k`'s opportunities are at `k·period + t`).
    period_ms: u64,
}

impl Trace {
    /// A mahimahi trace: its period is the last timestamp (mahimahi wraps at t_last, not
    /// t_last + 1). `times_ms` must be non-empty, non-decreasing, its last entry > 0.
    pub fn new(times_ms: Vec<u64>) -> Self {
        let period_ms = *times_ms.last().expect("a trace has opportunities");
        Trace { times_ms, period_ms }
    }
    /// A trace with an explicit period (a trace started at an offset, whose last opportunity
    /// before the wrap is not at the period): `times_ms` non-decreasing, all `<= period_ms`.
    pub fn with_period(times_ms: Vec<u64>, period_ms: u64) -> Self {
        debug_assert!(period_ms > 0 && times_ms.last().is_some_and(|&t| t <= period_ms));
        Trace { times_ms, period_ms }
    }
    /// Period of the loop in ms.
    pub fn period_ms(&self) -> u64 {
        self.period_ms
    }
}

/// Bytes released per trace delivery opportunity.
pub const TRACE_OPPORTUNITY_BYTES: u32 = 1500;

struct TraceCursor {
    trace: Arc<Trace>,
    /// Loop number and index of the next unprocessed opportunity.
    lap: u64,
    idx: usize,
    /// Bytes of the head packet already sent in earlier opportunities.
    head_sent: u32,
    event_pending: bool,
    opportunities: u64,
}

impl TraceCursor {
    #[inline]
    fn time_ns(&self) -> u64 {
        (self.lap * self.trace.period_ms() + self.trace.times_ms[self.idx]) * 1_000_000
    }
    #[inline]
    fn advance(&mut self) {
        self.idx += 1;
        self.opportunities += 1;
        if self.idx == self.trace.times_ms.len() {
            self.idx = 0;
            self.lap += 1;
        }
    }
    /// Skips (wastes) every opportunity at or before `now`, counting them.
    fn skip_to_after(&mut self, now: u64) {
        if self.time_ns() > now {
            return;
        }
        let period_ns = self.trace.period_ms() * 1_000_000;
        let n = self.trace.times_ms.len() as u64;
        let lap = now / period_ns;
        if lap > self.lap + 1 {
            // Jump whole laps arithmetically.
            let skip_laps = lap - self.lap - 1;
            self.opportunities += skip_laps * n - self.idx as u64;
            self.lap += skip_laps;
            self.idx = 0;
        }
        while self.time_ns() <= now {
            self.advance();
        }
    }
}

/// Counters of a link.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LinkStats {
    /// Packets offered.
    pub packets_in: u64,
    /// Packets delivered to the next hop.
    pub packets_out: u64,
    /// Bytes delivered to the next hop.
    pub bytes_out: u64,
    /// Packets dropped by a full queue.
    pub dropped_queue: u64,
    /// Packets dropped by the loss model.
    pub dropped_loss: u64,
    /// Packets dropped during an outage.
    pub dropped_outage: u64,
    /// Largest queue occupancy (bytes).
    pub max_queue_bytes: u64,
    /// Largest queue occupancy (packets).
    pub max_queue_packets: u64,
    /// Queue occupancy integrated over time (byte·ns, packet·ns): a trace link's up to
    /// `queue_since`; a rate link's with each waiting packet's whole wait added when it was
    /// accepted (serial.rs). Read through [`Link::mean_queue`].
    pub queue_byte_ns: u128,
    /// See `queue_byte_ns`.
    pub queue_packet_ns: u128,
    /// Time of the last change of a trace link's queue (ns).
    pub queue_since: u64,
}

/// A one-way link: drop-tail FIFO queue, serializer (fixed rate or mahimahi trace), loss model and propagation delay.
pub struct Link {
    /// Name from the scenario.
    pub name: String,
    /// Index in the simulator's links.
    pub id: u32,
    rate_bps: u64,
    /// The last packet size [`Link::tx_time`] timed at `rate_bps`, and its time (`u32::MAX`:
    /// none since the rate was set).
    tx_last: (u32, u64),
    delay_ns: u64,
    /// Queue capacity (bytes; `u64::MAX`: unlimited, mahimahi's default).
    pub queue_cap: u64,
    /// Queue capacity (packets; `u64::MAX`: no packet limit).
    pub queue_cap_packets: u64,
    loss: LossModel,
    ge_bad: bool,
    rng: Rng,
    outage: bool,
    /// A trace link's queue. Power-of-two rings rather than `VecDeque`s (an index is an add
    /// and a mask; measured in the fourteenth pass, perf14h).
    queue: Ring<(PktId, u32)>,
    /// Bytes waiting (not in service): a trace link's `queue`, a rate link's last `waiting`
    /// entries of `serial`.
    queued_bytes: u64,
    /// A rate link's packets accepted and not yet departed, in order, each with its departure
    /// decided (serial.rs); the last `waiting` of them have not started service.
    serial: Ring<Serial>,
    waiting: usize,
    /// When a rate link's serializer is free: the departure of the last packet accepted.
    busy_until: u64,
    /// What deciding each entry of `serial` marked `undo` changed (generators, Gilbert-Elliott
    /// state, last arrival), in order: the entries departing after the next announced change.
    undo: std::collections::VecDeque<Undo>,
    /// A rate link's packets lost as they leave the serializer, in order: (departure, packet,
    /// whether lost to an outage rather than the loss model).
    lost: Ring<(u64, PktId, bool)>,
    /// Generation of the link's live `Arrive` and `Lost` events (bumped when a change
    /// re-decides departures; events of older generations are stale).
    gen: u32,
    /// Times of the link's announced changes, ascending, and the first one not yet passed:
    /// packets departing after it keep an undo (serial.rs).
    change_at: Vec<u64>,
    change_next: usize,
    /// `change_at[change_next]` (`u64::MAX`: none), kept by `note_next_change`.
    next_change_at: u64,
    ring: Ring<(u64, PktId)>,
    last_arrival: u64,
    /// Per-packet delay variation (see [`Link::set_jitter`]); `None`: none, no draws.
    jitter: Option<Jitter>,
    trace: Option<TraceCursor>,
    /// Scheduled changes, in time order.
    pub changes: Vec<LinkChange>,
    /// Counters so far.
    pub stats: LinkStats,
    /// Capacity offered so far (rate links), integrated up to `cap_since`.
    cap_bits: f64,
    cap_since: u64,
    /// Debug builds: a rate link's queue integrals folded at each change, and when (serial.rs).
    #[cfg(debug_assertions)]
    queue_fold: (u128, u128, u64),
}

/// Per-packet delay variation, as netem's `delay TIME JITTER` applies it with no distribution
/// table and no correlation: each packet's propagation delay is uniform in
/// `[delay − jitter, delay + jitter)` (Linux `tabledist()` in `net/sched/sch_netem.c` returns
/// `(rnd % (2·sigma)) + mu − sigma` when no table is loaded), floored at 0.
///
/// Unlike netem's default tfifo, which sorts packets by their drawn send time and so reorders
/// them, a packet here never overtakes the one before it: its arrival is clamped to the previous
/// arrival, as netem does when it also limits the rate (`netem_enqueue` then schedules after the
/// queue's last packet). Why: the OLMS paper's set-up (tc/netem on the sender's ports) does not
/// say how its bandwidth limit and netem were stacked, our subflows use a fixed DupThresh of 3
/// with no reordering detection (Linux adapts `tp->reordering`, QUIC uses a time threshold), so
/// reordering would turn jitter into spurious fast retransmits the paper's stack would mostly
/// absorb; and the link keeps its single FIFO ring with one pending arrival event.
struct Jitter {
    /// Half-width of the uniform delay variation (ns, > 0).
    ns: u64,
    /// The link's own `link/<name>/jitter` stream: one draw per packet put on the wire.
    rng: Rng,
}

impl Jitter {
    /// One packet's propagation delay around `delay_ns`.
    #[inline]
    fn delay(&mut self, delay_ns: u64) -> u64 {
        let r = self.rng.next_u64() % (2 * self.ns);
        (delay_ns + r).saturating_sub(self.ns)
    }
}

/// `loss`'s verdict for one packet, drawn from `rng`; a Gilbert-Elliott chain's state `ge_bad`
/// moves after it. (Also the test-only reference link's, reference.rs.)
#[inline(always)]
fn draw_loss(loss: &LossModel, ge_bad: &mut bool, rng: &mut Rng) -> bool {
    match *loss {
        LossModel::None => false,
        LossModel::Bernoulli { p } => rng.chance(p),
        LossModel::GilbertElliott { p_gb, p_bg, loss_good, loss_bad } => {
            let lost = rng.chance(if *ge_bad { loss_bad } else { loss_good });
            *ge_bad = if *ge_bad { !rng.chance(p_bg) } else { rng.chance(p_gb) };
            lost
        }
    }
}

/// What happened to a packet offered to a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offer {
    /// Queued or in service.
    Accepted,
    /// Dropped: the queue was full.
    DroppedQueue,
    /// Dropped: the link is down.
    DroppedOutage,
}

impl Link {
    /// A link of the given parameters; `changes` are applied by `LinkChange` events.
    #[allow(clippy::too_many_arguments)] // one per physical parameter, named at the call site
    pub fn new(
        id: u32,
        name: String,
        rate_bps: u64,
        delay_ns: u64,
        queue_cap: u64,
        loss: LossModel,
        trace: Option<Arc<Trace>>,
        rng: Rng,
        changes: Vec<LinkChange>,
    ) -> Self {
        let mut change_at: Vec<u64> = changes.iter().map(|c| c.at_ns).collect();
        change_at.sort_unstable();
        let next_change_at = change_at.first().copied().unwrap_or(u64::MAX);
        Link {
            name,
            id,
            rate_bps,
            tx_last: (u32::MAX, 0),
            delay_ns,
            queue_cap,
            queue_cap_packets: u64::MAX,
            loss,
            ge_bad: false,
            rng,
            outage: false,
            queue: Ring::default(),
            queued_bytes: 0,
            serial: Ring::default(),
            waiting: 0,
            busy_until: 0,
            undo: Default::default(),
            lost: Ring::default(),
            gen: 0,
            change_at,
            change_next: 0,
            next_change_at,
            ring: Ring::default(),
            last_arrival: 0,
            jitter: None,
            trace: trace.map(|trace| TraceCursor {
                trace,
                lap: 0,
                idx: 0,
                head_sent: 0,
                event_pending: false,
                opportunities: 0,
            }),
            changes,
            stats: LinkStats::default(),
            cap_bits: 0.0,
            cap_since: 0,
            #[cfg(debug_assertions)]
            queue_fold: (0, 0, 0),
        }
    }

    /// Adds per-packet delay variation of `jitter_ns` drawn from `rng` (the link's own
    /// `link/<name>/jitter` stream); `jitter_ns = 0` removes it. See [`Jitter`] for the
    /// distribution and why packets are never reordered.
    pub fn set_jitter(&mut self, jitter_ns: u64, rng: Rng) {
        self.jitter = (jitter_ns > 0).then_some(Jitter { ns: jitter_ns, rng });
    }

    /// The per-packet delay variation (ns; 0: none).
    pub fn jitter_ns(&self) -> u64 {
        self.jitter.as_ref().map_or(0, |j| j.ns)
    }

    /// Whether the link is down (an outage): what the packets it drops now are dropped for.
    pub fn is_down(&self) -> bool {
        self.outage
    }

    /// Whether the link is driven by a delivery trace.
    pub fn is_trace(&self) -> bool {
        self.trace.is_some()
    }
    /// Current rate (bit/s; 0 for a trace link).
    pub fn rate_bps(&self) -> u64 {
        self.rate_bps
    }
    /// Current propagation delay (ns).
    pub fn delay_ns(&self) -> u64 {
        self.delay_ns
    }
    /// Bytes waiting in the queue.
    pub fn queued_bytes(&self) -> u64 {
        self.queued_bytes
    }
    /// Packets waiting in the queue.
    pub fn queued_packets(&self) -> u64 {
        (self.queue.len() + self.waiting) as u64
    }

    /// Whether a packet of `size` bytes finds the queue full (drop-tail, in bytes or packets).
    /// (A rate link's `queue` and a trace link's `waiting` are empty.)
    #[inline]
    fn full(&self, size: u32) -> bool {
        self.queued_bytes + size as u64 > self.queue_cap || self.queued_packets() >= self.queue_cap_packets
    }

    /// Folds the queue's occupancy since its last change into the time integrals.
    #[inline]
    fn account_queue(&mut self, now: u64) {
        let dt = now.saturating_sub(self.stats.queue_since) as u128;
        self.stats.queue_byte_ns += self.queued_bytes as u128 * dt;
        self.stats.queue_packet_ns += self.queued_packets() as u128 * dt;
        self.stats.queue_since = now;
    }

    /// Mean queue occupancy from 0 to `now` (bytes, packets).
    pub fn mean_queue(&self, now: u64) -> (f64, f64) {
        if now == 0 {
            return (0.0, 0.0);
        }
        let (bytes, packets) = if self.trace.is_none() {
            self.rate_queue_integrals(now)
        } else {
            let dt = now.saturating_sub(self.stats.queue_since) as u128;
            (
                self.stats.queue_byte_ns + self.queued_bytes as u128 * dt,
                self.stats.queue_packet_ns + self.queued_packets() as u128 * dt,
            )
        };
        (bytes as f64 / now as f64, packets as f64 / now as f64)
    }

    /// Serialization time of `size` bytes at the current rate, rounded up so a packet never
    /// takes zero time. The last size's is kept (most packets on a link have the size of the
    /// one before: full segments one way, ACKs the other): a compare instead of a multiply
    /// and a 64-bit division (sixteenth pass, perf16l: `newreno-10m` 82.34 -> 81.80 M
    /// instructions, `lia-2path` 601.64 -> 599.39 M).
    #[inline(always)]
    fn tx_time(&mut self, size: u32) -> u64 {
        if size != self.tx_last.0 {
            self.tx_last = (size, (size as u64 * 8 * 1_000_000_000).div_ceil(self.rate_bps.max(1)));
        }
        debug_assert_eq!(self.tx_last.1, (size as u64 * 8 * 1_000_000_000).div_ceil(self.rate_bps.max(1)));
        self.tx_last.1
    }

    /// A packet of `size` bytes enters the link at `now`. Always inlined (into the driver's
    /// send loop and the next-hop forwarding): measured −0.1 % on `newreno-10m` and `lia-2path`.
    #[inline(always)]
    pub fn offer(&mut self, now: u64, pkt: PktId, size: u32, ev: &mut EventQueue) -> Offer {
        self.stats.packets_in += 1;
        if self.outage {
            self.stats.dropped_outage += 1;
            return Offer::DroppedOutage;
        }
        if self.trace.is_some() && self.full(size) {
            self.stats.dropped_queue += 1;
            return Offer::DroppedQueue;
        }
        if let Some(tc) = self.trace.as_mut() {
            if self.queue.is_empty() {
                // Opportunities that passed while the queue was empty are wasted (mahimahi).
                tc.skip_to_after(now);
                tc.head_sent = 0;
                if !tc.event_pending {
                    tc.event_pending = true;
                    ev.push(tc.time_ns(), Kind::TraceOpportunity, self.id, 0);
                }
            }
            self.push_queue(now, pkt, size);
            return Offer::Accepted;
        }
        self.offer_rate(now, pkt, size, ev)
    }

    #[inline]
    fn push_queue(&mut self, now: u64, pkt: PktId, size: u32) {
        self.account_queue(now);
        self.queue.push_back((pkt, size));
        self.note_queued(size);
    }

    /// `size` more bytes wait: the queue's counters and maxima.
    #[inline]
    fn note_queued(&mut self, size: u32) {
        self.queued_bytes += size as u64;
        self.stats.max_queue_bytes = self.stats.max_queue_bytes.max(self.queued_bytes);
        self.stats.max_queue_packets = self.stats.max_queue_packets.max(self.queued_packets());
    }

    /// The loss model's verdict for one packet.
    #[inline]
    fn lose(&mut self) -> bool {
        draw_loss(&self.loss, &mut self.ge_bad, &mut self.rng)
    }

    /// A trace link's packet left the serializer at `now`: lost (returned), or on the wire.
    fn depart(&mut self, now: u64, pkt: PktId, size: u32, ev: &mut EventQueue) -> Option<PktId> {
        if self.outage {
            self.stats.dropped_outage += 1;
            return Some(pkt);
        }
        if self.lose() {
            self.stats.dropped_loss += 1;
            return Some(pkt);
        }
        self.stats.packets_out += 1;
        self.stats.bytes_out += size as u64;
        self.put_on_wire(now, pkt, ev);
        None
    }

    /// Puts `pkt`, leaving the serializer at `done`, into the propagation ring (its delay drawn
    /// when the link jitters), and schedules the ring's arrival when it was empty. Always
    /// inlined: a call per packet and hop cost `newreno-10m` 1.2 % (measured when it was part
    /// of the departure at the serializer's event).
    #[inline(always)]
    fn put_on_wire(&mut self, done: u64, pkt: PktId, ev: &mut EventQueue) {
        let delay = match self.jitter.as_mut() {
            Some(j) => j.delay(self.delay_ns),
            None => self.delay_ns,
        };
        // Clamp so a delay decrease or a jitter draw never reorders the FIFO ring.
        let at = (done + delay).max(self.last_arrival);
        self.last_arrival = at;
        if self.ring.is_empty() {
            ev.push(at, Kind::Arrive, self.id, self.gen);
        }
        self.ring.push_back((at, pkt));
    }

    /// Trace opportunities at `now` (all lines with this timestamp).
    pub fn on_trace_opportunity(&mut self, now: u64, ev: &mut EventQueue, dropped: &mut Vec<PktId>) {
        self.account_queue(now);
        let mut tc = self.trace.take().expect("trace link");
        tc.event_pending = false;
        while tc.time_ns() <= now {
            let mut budget = TRACE_OPPORTUNITY_BYTES;
            while budget > 0 {
                let Some(&(pkt, size)) = self.queue.front() else { break };
                let take = budget.min(size - tc.head_sent);
                budget -= take;
                tc.head_sent += take;
                if tc.head_sent == size {
                    self.queue.pop_front();
                    self.queued_bytes -= size as u64;
                    tc.head_sent = 0;
                    if let Some(p) = self.depart(now, pkt, size, ev) {
                        dropped.push(p);
                    }
                }
            }
            tc.advance();
        }
        if !self.queue.is_empty() {
            tc.event_pending = true;
            ev.push(tc.time_ns(), Kind::TraceOpportunity, self.id, 0);
        }
        self.trace = Some(tc);
    }

    /// Propagation done: moves every packet due by `now` into `out`, schedules the next arrival.
    pub fn on_arrive(&mut self, now: u64, ev: &mut EventQueue, out: &mut Vec<PktId>) {
        while let Some(&(at, pkt)) = self.ring.front() {
            if at > now {
                ev.push(at, Kind::Arrive, self.id, self.gen);
                break;
            }
            self.ring.pop_front();
            out.push(pkt);
        }
    }

    /// Propagation done, the common case of [`Link::on_arrive`]: when the ring's head is the
    /// only packet due at `now`, removes and returns it and schedules the next arrival (as
    /// `on_arrive` does); otherwise changes nothing and returns `None`.
    #[inline]
    pub fn arrive_single(&mut self, now: u64, ev: &mut EventQueue) -> Option<PktId> {
        let &(at, pkt) = self.ring.front()?;
        if at > now {
            return None;
        }
        match self.ring.get(1) {
            Some(&(next, _)) if next <= now => return None,
            Some(&(next, _)) => ev.push(next, Kind::Arrive, self.id, self.gen),
            None => {}
        }
        self.ring.pop_front();
        Some(pkt)
    }

    /// Applies scheduled change `i`. Packets flushed by an outage go to `dropped`. A rate
    /// link's packets still in its serializer are taken back first and queued again after the
    /// change (serial.rs): their departures are decided with the link as it is at them.
    pub fn apply_change(&mut self, now: u64, i: usize, dropped: &mut Vec<PktId>, ev: &mut EventQueue) {
        let c = self.changes[i].clone();
        self.account_capacity(now);
        let held = if self.trace.is_none() { self.take_back(now) } else { Vec::new() };
        let flush = c.outage == Some(true) && !self.outage;
        if let Some(r) = c.rate_bps {
            self.rate_bps = r;
            self.tx_last = (u32::MAX, 0);
        }
        if let Some(d) = c.delay_ns {
            self.delay_ns = d;
        }
        if let Some(l) = c.loss {
            self.loss = l;
            self.ge_bad = false;
        }
        if flush {
            // The queue is flushed; the packet being serialized finishes and is lost at departure.
            // (A rate link's waiting packets are flushed by `requeue`: their waits were
            // taken back to `now` by `take_back`.)
            if self.trace.is_some() {
                self.account_queue(now);
            }
            for &(pkt, _) in self.queue.iter() {
                self.stats.dropped_outage += 1;
                dropped.push(pkt);
            }
            self.queue.clear();
            if self.trace.is_some() {
                self.queued_bytes = 0;
            }
            if let Some(tc) = self.trace.as_mut() {
                tc.head_sent = 0;
            }
        }
        if let Some(o) = c.outage {
            self.outage = o;
        }
        if self.trace.is_none() {
            self.requeue(now, held, flush, dropped, ev);
        }
    }

    fn account_capacity(&mut self, now: u64) {
        if self.trace.is_none() && !self.outage {
            self.cap_bits += self.rate_bps as f64 * (now - self.cap_since) as f64 * 1e-9;
        }
        self.cap_since = now;
    }

    /// Turns an outage on or off now (path events). Packets flushed go to `dropped`.
    pub fn set_outage(&mut self, now: u64, on: bool, dropped: &mut Vec<PktId>, ev: &mut EventQueue) {
        self.changes.push(LinkChange { at_ns: now, outage: Some(on), ..Default::default() });
        let i = self.changes.len() - 1;
        self.apply_change(now, i, dropped, ev);
        self.changes.pop();
    }

    /// Packets in the link's queue or serializer (offered, not yet sent or dropped).
    pub fn held_packets(&self) -> u64 {
        (self.queue.len() + self.serial.len()) as u64
    }

    /// [`Link::capacity_bytes`] without folding the time since the last change into the
    /// running sum (the same value up to rounding; for checks, which must not change state).
    pub fn capacity_at(&self, now: u64) -> f64 {
        if let Some(tc) = self.trace.as_ref() {
            return trace_capacity(tc, now);
        }
        let since =
            if self.outage { 0.0 } else { self.rate_bps as f64 * now.saturating_sub(self.cap_since) as f64 * 1e-9 };
        (self.cap_bits + since) / 8.0
    }

    /// Capacity offered by the link from time 0 to `now`, in bytes.
    pub fn capacity_bytes(&mut self, now: u64) -> f64 {
        if let Some(tc) = self.trace.as_ref() {
            return trace_capacity(tc, now);
        }
        self.account_capacity(now);
        self.cap_bits / 8.0
    }
}

/// Bytes of the opportunities of a trace link from time 0 to `now`: those processed plus those
/// not yet reached.
fn trace_capacity(tc: &TraceCursor, now: u64) -> f64 {
    let mut probe = TraceCursor {
        trace: tc.trace.clone(),
        lap: tc.lap,
        idx: tc.idx,
        head_sent: 0,
        event_pending: false,
        opportunities: tc.opportunities,
    };
    probe.skip_to_after(now);
    probe.opportunities as f64 * TRACE_OPPORTUNITY_BYTES as f64
}

/// A loss model as a scenario file writes it (`loss = { model = "bernoulli", p = 0.01 }`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "kebab-case", deny_unknown_fields)]
pub enum LossSpec {
    /// No loss (or: no decision points).
    None,
    /// Independent drops with probability `p`.
    Bernoulli {
        /// Drop probability per packet.
        p: f64,
    },
    /// Two-state (bursty) loss.
    GilbertElliott {
        /// Good to bad transition probability per packet.
        p_gb: f64,
        /// Bad to good transition probability per packet.
        p_bg: f64,
        /// Drop probability in the good state.
        #[serde(default)]
        loss_good: f64,
        /// Drop probability in the bad state (default 1).
        #[serde(default = "one")]
        loss_bad: f64,
    },
}

fn one() -> f64 {
    1.0
}

#[cfg(test)]
mod reference;
mod serial;
#[cfg(test)]
mod tests;
