//! A rate link's serializer, one event per packet per hop (issue 22, fifteenth pass).
//!
//! A FIFO server of fixed rate knows a packet's departure when it accepts it: service starts
//! when the packet before it leaves (or at once on an idle link), and lasts `size / rate`. So
//! the link decides the packet's departure at enqueue — lost to the loss model or an outage, or
//! put in the propagation ring with its arrival time — instead of at a serializer-done event:
//! a packet costs one event per hop (its arrival; a lost packet its loss event), not two.
//! What the old event did at the departure instant is done lazily ([`Link::settle`]): the
//! counters of departed packets, and the queue's time integrals at each service start, with
//! their own times, whenever the link is next touched (an offer, an event, a sample).
//!
//! A decision made early holds only while the link stays as it is: a change (rate, delay,
//! loss model, outage) at `t` takes back every packet still in the serializer at `t` — their
//! ring or loss entries, and the random generators' states before their draws — and queues
//! them again after the change ([`Link::take_back`], [`Link::requeue`]): the packet in service
//! keeps its departure, the waiting ones are timed at the new rate (or flushed by an outage),
//! and every departure after `t` is decided with the link as it is then. The result equals
//! the two-event model's (property test against reference.rs, the old model) except for the
//! order of events at equal nanoseconds: a departure at `t` now happens before anything else
//! at `t` (a packet offered at the instant the serializer frees starts service at once), and
//! arrivals are scheduled earlier, so their insertion order among equal-time events changed.

use super::{Link, Offer, PktId};
use crate::event::{EventQueue, Kind};
use crate::rng::Rng;

/// How a packet leaves the serializer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum Fate {
    /// Into the propagation ring.
    #[default]
    Wire,
    /// Lost to the loss model.
    Loss,
    /// Lost to an outage.
    Outage,
}

/// A packet accepted by a rate link and not yet departed (32 bytes).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Serial {
    /// Service start and departure (ns).
    start: u64,
    done: u64,
    pkt: PktId,
    size: u32,
    fate: Fate,
    /// Whether an [`Undo`] was queued for it: it departs after the link's next announced
    /// change ([`Link::expect_change_at`]), which may take it back.
    undo: bool,
}

/// What deciding a packet's fate changed in the link: the loss model's and the jitter's
/// generators, the Gilbert-Elliott state and the last arrival, as they were before.
#[derive(Clone, Debug)]
pub(super) struct Undo {
    rng: Rng,
    jitter: Option<Rng>,
    ge_bad: bool,
    last_arrival: u64,
}

impl Link {
    /// [`Link::offer`] for a rate link that is up: drop-tail against the packets still waiting
    /// at `now`, then the departure decided. Always inlined (into `offer`).
    #[inline(always)]
    pub(super) fn offer_rate(&mut self, now: u64, pkt: PktId, size: u32, ev: &mut EventQueue) -> Offer {
        self.settle(now);
        if self.busy_until > now && self.full(size) {
            self.stats.dropped_queue += 1;
            return Offer::DroppedQueue;
        }
        let start = now.max(self.busy_until);
        let done = start + self.tx_time(size);
        self.busy_until = done;
        if start > now {
            self.commit_wait(size, start - now, true);
            self.fold_check(now);
            self.waiting += 1;
            self.note_queued(size);
        }
        let s = Serial { start, done, pkt, size, ..Serial::default() };
        self.decide(s, ev);
        Offer::Accepted
    }

    /// Decides how `s` leaves the serializer at `s.done` with the link as it is now — the old
    /// serializer event's steps in its order: an outage loses it, else the loss model draws,
    /// else the jitter draws and it enters the ring — and queues it in `serial`.
    #[inline(always)]
    fn decide(&mut self, mut s: Serial, ev: &mut EventQueue) {
        if s.done > self.next_change() {
            s.undo = true;
            self.save_undo();
        }
        if self.outage {
            s.fate = Fate::Outage;
        } else if self.lose() {
            s.fate = Fate::Loss;
        } else {
            self.put_on_wire(s.done, s.pkt, ev);
        }
        if s.fate != Fate::Wire {
            if self.lost.is_empty() {
                ev.push(s.done, Kind::Lost, self.id, self.gen);
            }
            self.lost.push_back((s.done, s.pkt, s.fate == Fate::Outage));
        }
        self.serial.push_back(s);
    }

    /// Adds (`add`) or takes back a waiting packet's share of the queue's time integrals: its
    /// `size` bytes and one packet for the `wait` ns from now to its service start. A rate
    /// link knows a packet's start when it accepts it, so the whole wait is added then
    /// (a take-back removes the part after the change, a requeue adds the new one), and
    /// [`Link::settle`] does no integral work at a start; [`Link::rate_queue_integrals`]
    /// subtracts the part still ahead of a reader's time. Sixteenth pass (perf16l): instead of
    /// a fold (two `u128` multiply-adds) at every enqueue and every service start, measured
    /// `newreno-10m` 83.30 -> 82.34 M instructions, `lia-2path` 607.03 -> 601.64 M.
    #[inline(always)]
    fn commit_wait(&mut self, size: u32, wait: u64, add: bool) {
        let (bytes, packets) = (size as u128 * wait as u128, wait as u128);
        if add {
            self.stats.queue_byte_ns += bytes;
            self.stats.queue_packet_ns += packets;
        } else {
            self.stats.queue_byte_ns -= bytes;
            self.stats.queue_packet_ns -= packets;
        }
    }

    /// A rate link's queue integrals (byte·ns, packet·ns) from 0 to `now` (at or after the
    /// last settle): the committed waits less the parts of the waiting packets' waits after
    /// `now`.
    pub(super) fn rate_queue_integrals(&self, now: u64) -> (u128, u128) {
        let (mut bytes, mut packets) = (self.stats.queue_byte_ns, self.stats.queue_packet_ns);
        for s in self.serial.iter().skip(self.serial.len() - self.waiting) {
            let ahead = s.start.saturating_sub(now) as u128;
            bytes -= s.size as u128 * ahead;
            packets -= ahead;
        }
        #[cfg(debug_assertions)]
        {
            // The integrals as they were folded at every change of the queue (`fold_check`).
            let (b, p, since) = self.queue_fold;
            let dt = now.saturating_sub(since) as u128;
            let folded = (b + self.queued_bytes as u128 * dt, p + self.waiting as u128 * dt);
            debug_assert_eq!((bytes, packets), folded, "link {}: queue integrals at {now}", self.name);
        }
        (bytes, packets)
    }

    /// Debug builds: the queue's integrals folded the long way, at each change of a rate
    /// link's queue (the waits committed at enqueue are checked against them).
    #[inline(always)]
    fn fold_check(&mut self, _at: u64) {
        #[cfg(debug_assertions)]
        {
            let (b, p, since) = &mut self.queue_fold;
            let dt = _at.saturating_sub(*since) as u128;
            *b += self.queued_bytes as u128 * dt;
            *p += self.waiting as u128 * dt;
            *since = _at;
        }
    }

    /// Brings the link to `now`: the waiting packets whose service started by `now` leave the
    /// queue (their waits were added to its integrals when they were accepted), and the
    /// packets that departed by `now` are counted. A departure at `now` counts as done.
    #[inline(always)]
    pub(super) fn settle(&mut self, now: u64) {
        // The first waiting entry; none when `waiting` is 0 (index `len`): `get`'s bound test
        // is the loop's, instead of a test of `waiting` and the index's assertion (sixteenth pass:
        // `newreno-10m` 81.71 -> 81.44 M instructions, `lia-2path` 598.63 -> 596.69 M).
        while let Some(&s) = self.serial.get(self.serial.len() - self.waiting) {
            if s.start > now {
                break;
            }
            self.fold_check(s.start);
            self.queued_bytes -= s.size as u64;
            self.waiting -= 1;
        }
        while let Some(s) = self.serial.front() {
            if s.done > now {
                break;
            }
            match s.fate {
                Fate::Wire => {
                    self.stats.packets_out += 1;
                    self.stats.bytes_out += s.size as u64;
                }
                Fate::Loss => self.stats.dropped_loss += 1,
                Fate::Outage => self.stats.dropped_outage += 1,
            }
            if s.undo {
                self.undo.pop_front();
            }
            self.serial.pop_front();
        }
    }

    /// [`Link::settle`] for readers outside the event loop (samples, outputs): a trace link
    /// has nothing to settle.
    pub fn settle_to(&mut self, now: u64) {
        if self.trace.is_none() {
            self.settle(now);
        }
    }

    /// The link's lost packets due by `now` (event `Lost` of generation `gen`; a stale one
    /// finds nothing) into `out` as (packet, lost to an outage), in order; the next one's event
    /// scheduled.
    pub fn on_lost(&mut self, now: u64, gen: u32, ev: &mut EventQueue, out: &mut Vec<(PktId, bool)>) {
        if gen != self.gen {
            return;
        }
        self.settle(now);
        while let Some(&(at, pkt, outage)) = self.lost.front() {
            if at > now {
                ev.push(at, Kind::Lost, self.id, self.gen);
                break;
            }
            self.lost.pop_front();
            out.push((pkt, outage));
        }
    }

    /// Queues the state [`Link::decide`] is about to change, for [`Link::take_back`].
    #[inline(never)]
    fn save_undo(&mut self) {
        let jitter = self.jitter.as_ref().map(|j| j.rng.clone());
        let (ge_bad, last_arrival) = (self.ge_bad, self.last_arrival);
        self.undo.push_back(Undo { rng: self.rng.clone(), jitter, ge_bad, last_arrival });
    }

    /// The link's next announced change at or after the last one applied (`u64::MAX`: none).
    /// Packets departing after it keep an undo.
    #[inline(always)]
    fn next_change(&self) -> u64 {
        debug_assert_eq!(self.next_change_at, self.change_at.get(self.change_next).copied().unwrap_or(u64::MAX));
        self.next_change_at
    }

    /// Keeps [`Link::next_change`]'s time in a field: one load per decided packet instead of
    /// a bounds-checked look-up (sixteenth pass, perf16l: `newreno-10m` 81.80 -> 81.71 M
    /// instructions, `lia-2path` 599.39 -> 598.63 M).
    pub(super) fn note_next_change(&mut self) {
        self.next_change_at = self.change_at.get(self.change_next).copied().unwrap_or(u64::MAX);
    }

    /// Announces a change of the link at `at_ns` that does not come from its own scheduled
    /// `changes` (which are announced by [`Link::new`]): a path event's outage. Every change
    /// must be announced before the run starts: a packet is decided early only when no
    /// change can take it back without its undo.
    pub fn expect_change_at(&mut self, at_ns: u64) {
        let k = self.change_at.partition_point(|&t| t <= at_ns);
        self.change_at.insert(k, at_ns);
        self.note_next_change();
    }

    /// Whether an `Arrive` event of generation `gen` is the link's live one.
    #[inline(always)]
    pub fn live(&self, gen: u32) -> bool {
        gen == self.gen
    }

    /// Takes back every packet still in the serializer at `now` (before a change): their ring
    /// and loss entries removed, the generators, Gilbert-Elliott state and last arrival as
    /// before the first of them was decided. Returns them in order; they are still counted
    /// as accepted, and the waiting ones still as queued.
    pub(super) fn take_back(&mut self, now: u64) -> Vec<Serial> {
        self.settle(now);
        // This change is applied: packets departing after the next one (at `now` or later)
        // keep undos from now on.
        while self.change_at.get(self.change_next).is_some_and(|&t| t < now) {
            self.change_next += 1;
        }
        self.note_next_change();
        let held: Vec<Serial> = self.serial.iter().copied().collect();
        for s in held.iter().rev() {
            if s.start > now {
                // Waiting: its wait after `now` is queued again by `requeue` (or flushed).
                self.commit_wait(s.size, s.start - now, false);
            }
            match s.fate {
                Fate::Wire => {
                    let back = self.ring.pop_back();
                    debug_assert_eq!(back.map(|b| b.1), Some(s.pkt));
                }
                Fate::Loss | Fate::Outage => {
                    let back = self.lost.pop_back();
                    debug_assert_eq!(back.map(|b| b.1), Some(s.pkt));
                }
            }
            // Every packet still in the serializer departs after this change, so it was
            // decided after the change was announced: with an undo (`expect_change_at`).
            assert!(s.undo, "link {}: a change at {now} ns that was not announced", self.name);
            let u = self.undo.pop_back().expect("an undo per marked entry");
            self.rng = u.rng;
            if let (Some(j), Some(r)) = (self.jitter.as_mut(), u.jitter) {
                j.rng = r;
            }
            self.ge_bad = u.ge_bad;
            self.last_arrival = u.last_arrival;
        }
        self.serial.clear();
        debug_assert!(self.undo.is_empty());
        held
    }

    /// Queues again, after a change at `now`, the packets [`Link::take_back`] took: the one in
    /// service keeps its departure, the waiting ones start one after the other at the new rate,
    /// or are flushed (`flush`: the link went down; into `dropped`). Their departures are
    /// decided anew, and the ring's and the losses' next events scheduled in a new generation.
    pub(super) fn requeue(
        &mut self,
        now: u64,
        held: Vec<Serial>,
        flush: bool,
        dropped: &mut Vec<PktId>,
        ev: &mut EventQueue,
    ) {
        self.gen = self.gen.wrapping_add(1);
        // Events are scheduled once below, for the rings' heads.
        let mut quiet = EventQueue::default();
        for mut s in held {
            if s.start > now {
                if flush {
                    self.fold_check(now);
                    self.stats.dropped_outage += 1;
                    self.queued_bytes -= s.size as u64;
                    self.waiting -= 1;
                    dropped.push(s.pkt);
                    continue;
                }
                s.start = self.busy_until;
                s.done = s.start + self.tx_time(s.size);
                debug_assert!(s.start > now, "a re-timed packet waits behind the one in service");
                self.commit_wait(s.size, s.start - now, true);
            }
            self.busy_until = s.done;
            s.fate = Fate::Wire;
            s.undo = false;
            self.decide(s, &mut quiet);
        }
        if let Some(&(at, _)) = self.ring.front() {
            ev.push(at, Kind::Arrive, self.id, self.gen);
        }
        if let Some(&(at, _, _)) = self.lost.front() {
            ev.push(at, Kind::Lost, self.id, self.gen);
        }
    }
}
