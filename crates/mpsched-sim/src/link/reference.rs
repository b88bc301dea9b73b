//! Test-only reference: a rate link as it was modelled before departures were decided at
//! enqueue (until issue 22's fifteenth pass), with two events per packet — the serializer's
//! completion and the ring's arrival — run by its own tiny event loop. The property test in
//! tests.rs drives it and [`Link`](super::Link) with the same offers and changes at instants
//! that never coincide with a departure and checks that they agree on everything: arrivals,
//! drops with their times and reasons, counters and queue integrals. Only the order of events
//! at equal nanoseconds differs between the two (see serial.rs). The per-packet draws themselves
//! (the loss model's verdict, the jitter) are the link's own functions: what is restated here is
//! when they happen.

use std::collections::VecDeque;

use super::{draw_loss, Jitter, LinkChange, LinkStats, LossModel, PktId};
use crate::rng::Rng;

/// What the reference link did, in time order per kind.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Record {
    /// (time, packet) arriving at the far end.
    pub arrivals: Vec<(u64, PktId)>,
    /// (time, packet, outage?) dropped by the loss model or an outage at departure, or flushed.
    pub drops: Vec<(u64, PktId, bool)>,
}

/// The reference rate link (no trace).
pub(super) struct RefLink {
    rate_bps: u64,
    delay_ns: u64,
    pub queue_cap: u64,
    pub queue_cap_packets: u64,
    loss: LossModel,
    ge_bad: bool,
    rng: Rng,
    jitter: Option<Jitter>,
    outage: bool,
    queue: VecDeque<(PktId, u32)>,
    queued_bytes: u64,
    in_service: Option<(PktId, u32)>,
    /// When the packet in service departs.
    tx_done: Option<u64>,
    ring: VecDeque<(u64, PktId)>,
    last_arrival: u64,
    pub stats: LinkStats,
}

impl RefLink {
    pub fn new(rate_bps: u64, delay_ns: u64, queue_cap: u64, loss: LossModel, rng: Rng) -> Self {
        RefLink {
            rate_bps,
            delay_ns,
            queue_cap,
            queue_cap_packets: u64::MAX,
            loss,
            ge_bad: false,
            rng,
            jitter: None,
            outage: false,
            queue: VecDeque::new(),
            queued_bytes: 0,
            in_service: None,
            tx_done: None,
            ring: VecDeque::new(),
            last_arrival: 0,
            stats: LinkStats::default(),
        }
    }

    pub fn set_jitter(&mut self, ns: u64, rng: Rng) {
        self.jitter = Some(Jitter { ns, rng });
    }

    fn tx_time(&self, size: u32) -> u64 {
        (size as u64 * 8 * 1_000_000_000).div_ceil(self.rate_bps.max(1))
    }

    fn account_queue(&mut self, now: u64) {
        let dt = now.saturating_sub(self.stats.queue_since) as u128;
        self.stats.queue_byte_ns += self.queued_bytes as u128 * dt;
        self.stats.queue_packet_ns += self.queue.len() as u128 * dt;
        self.stats.queue_since = now;
    }

    /// Runs the link's own events (serializer completions, arrivals) up to `until` inclusive.
    pub fn run_until(&mut self, until: u64, rec: &mut Record) {
        loop {
            let arrive = self.ring.front().map(|&(at, _)| at);
            match (self.tx_done, arrive) {
                (Some(t), a) if t <= until && a.is_none_or(|a| t <= a) => self.on_tx_done(t, rec),
                (_, Some(a)) if a <= until => {
                    let (_, p) = self.ring.pop_front().unwrap();
                    rec.arrivals.push((a, p));
                }
                _ => return,
            }
        }
    }

    pub fn offer(&mut self, now: u64, pkt: PktId, size: u32, rec: &mut Record) -> bool {
        self.run_until(now, rec);
        self.stats.packets_in += 1;
        if self.outage {
            self.stats.dropped_outage += 1;
            rec.drops.push((now, pkt, true));
            return false;
        }
        if self.in_service.is_none() {
            self.in_service = Some((pkt, size));
            self.tx_done = Some(now + self.tx_time(size));
            return true;
        }
        let full =
            self.queued_bytes + size as u64 > self.queue_cap || self.queue.len() as u64 >= self.queue_cap_packets;
        if full {
            self.stats.dropped_queue += 1;
            rec.drops.push((now, pkt, false));
            return false;
        }
        self.account_queue(now);
        self.queue.push_back((pkt, size));
        self.queued_bytes += size as u64;
        self.stats.max_queue_bytes = self.stats.max_queue_bytes.max(self.queued_bytes);
        self.stats.max_queue_packets = self.stats.max_queue_packets.max(self.queue.len() as u64);
        true
    }

    fn on_tx_done(&mut self, now: u64, rec: &mut Record) {
        self.tx_done = None;
        if let Some((pkt, size)) = self.in_service.take() {
            if self.outage {
                self.stats.dropped_outage += 1;
                rec.drops.push((now, pkt, true));
            } else if draw_loss(&self.loss, &mut self.ge_bad, &mut self.rng) {
                self.stats.dropped_loss += 1;
                rec.drops.push((now, pkt, false));
            } else {
                self.stats.packets_out += 1;
                self.stats.bytes_out += size as u64;
                let delay = match self.jitter.as_mut() {
                    Some(j) => j.delay(self.delay_ns),
                    None => self.delay_ns,
                };
                let at = (now + delay).max(self.last_arrival);
                self.last_arrival = at;
                self.ring.push_back((at, pkt));
            }
        }
        if !self.queue.is_empty() {
            self.account_queue(now);
        }
        if let Some((pkt, size)) = self.queue.pop_front() {
            self.queued_bytes -= size as u64;
            self.in_service = Some((pkt, size));
            self.tx_done = Some(now + self.tx_time(size));
        }
    }

    pub fn apply_change(&mut self, now: u64, c: &LinkChange, rec: &mut Record) {
        self.run_until(now, rec);
        if let Some(r) = c.rate_bps {
            self.rate_bps = r;
        }
        if let Some(d) = c.delay_ns {
            self.delay_ns = d;
        }
        if let Some(l) = &c.loss {
            self.loss = l.clone();
            self.ge_bad = false;
        }
        if let Some(o) = c.outage {
            if o && !self.outage {
                self.account_queue(now);
                for &(pkt, _) in self.queue.iter() {
                    self.stats.dropped_outage += 1;
                    rec.drops.push((now, pkt, true));
                }
                self.queue.clear();
                self.queued_bytes = 0;
            }
            self.outage = o;
        }
    }

    /// The serializer's next completion, if a packet is in service.
    pub fn next_departure(&self) -> Option<u64> {
        self.tx_done
    }

    pub fn held_packets(&self) -> u64 {
        self.queue.len() as u64 + self.in_service.is_some() as u64
    }

    pub fn queued(&self) -> (u64, u64) {
        (self.queued_bytes, self.queue.len() as u64)
    }
}

impl RefLink {
    /// Mean queue occupancy from 0 to `now` (bytes, packets), as [`super::Link::mean_queue`].
    pub fn mean_queue(&self, now: u64) -> (f64, f64) {
        let dt = now.saturating_sub(self.stats.queue_since) as u128;
        let bytes = self.stats.queue_byte_ns + self.queued_bytes as u128 * dt;
        let packets = self.stats.queue_packet_ns + self.queue.len() as u128 * dt;
        (bytes as f64 / now as f64, packets as f64 / now as f64)
    }
}
