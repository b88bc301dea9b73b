//! Packets on the network: the arena, routing hop by hop over a path's links, drops, and
//! driving an endpoint's transmissions onto its path's first link.

use mpsched_transport::{Event, Instant};

use super::{DropReason, Endpoint, Packet, Sim};
use crate::event::Kind;
use crate::link::{Offer, PktId};
use crate::scenario::PathDef;

impl Sim {
    #[inline]
    pub(super) fn route(path: &PathDef, to_server: bool) -> &[u32] {
        if to_server {
            &path.fwd
        } else {
            &path.rev
        }
    }

    /// A packet left a link: on to the next hop, or to its endpoint. The packet stays in the
    /// arena and is read in place (a `Packet` is about 130 bytes; copying it per hop showed in
    /// the profile).
    pub(super) fn forward(&mut self, p: PktId) {
        let pk = &mut self.pkts[p as usize];
        pk.hop += 1;
        let (flow, path, to_server, hop, size) = (pk.flow, pk.path, pk.to_server, pk.hop, pk.size);
        let route = Self::route(&self.sc.paths[path as usize], to_server);
        if (hop as usize) < route.len() {
            let l = route[hop as usize] as usize;
            self.offer(l, p, size);
            return;
        }
        // The packet's slot is free from here. It goes back onto the free list where nothing
        // else is sent; else it is the slot of the endpoint's first send (see `transmit`).
        if self.trace.is_some() && !self.pkts[p as usize].udp {
            self.trace_event(p, None, None);
        }
        // The packet looked up once (nothing below writes it until the endpoint's first send):
        // a look-up per field read cost a bounds check and reloads after each call in between.
        let pk = &self.pkts[p as usize];
        if pk.udp {
            let pk = *pk;
            self.free.push(p);
            self.udp_arrive(pk);
            return;
        }
        let ep = 2 * flow as usize + to_server as usize;
        let now = Instant(self.now);
        let cix = pk.conn;
        if self.flows[flow as usize].stopped_at.is_some() || cix != self.conn_index(flow as usize) {
            self.free.push(p);
            return;
        }
        let Some(conn) = self.eps[ep].conn.as_mut() else {
            self.free.push(p);
            return;
        };
        conn.handle_segment(now, path, &pk.seg);
        // The flow is running and `cix` is its connection (tested above; the segment's input
        // changes neither): `drive`'s own tests skipped.
        let mut done = false;
        if to_server {
            conn.read(u64::MAX);
            let rt = &self.flows[flow as usize];
            done = rt.size < u64::MAX && rt.done_at.is_none() && conn.info().bytes_delivered >= rt.size;
        }
        self.transmit(ep, cix, Some(p));
        if done {
            self.transfer_done(flow as usize);
        }
    }

    /// Packet `p` of `size` bytes enters link `l`; a drop is accounted at once. Always inlined:
    /// with `Link::offer` inlined into it, the hint alone left it a call (−0.2 % measured).
    #[inline(always)]
    pub(super) fn offer(&mut self, l: usize, p: PktId, size: u32) {
        match self.links[l].offer(self.now, p, size, &mut self.ev) {
            Offer::Accepted => {}
            Offer::DroppedQueue => self.dropped_by(p, l, DropReason::QueueFull),
            Offer::DroppedOutage => self.dropped_by(p, l, DropReason::Outage),
        }
    }

    /// Packet `p` dropped by link `l` for `why`: traced (when on), then accounted.
    #[inline]
    pub(super) fn dropped_by(&mut self, p: PktId, l: usize, why: DropReason) {
        if self.trace.is_some() {
            self.trace_event(p, Some(l), Some(why));
        }
        self.dropped(p);
    }

    pub(super) fn dropped(&mut self, p: PktId) {
        let pk = &self.pkts[p as usize];
        if pk.udp {
            let pk = *pk;
            self.udp_dropped(&pk);
        } else if pk.seg.len > 0 {
            self.flows[pk.flow as usize].data_drops += 1;
        }
        self.free.push(p);
    }

    /// Accounts the packets link `l` dropped as it served its queue or went down: the loss
    /// model's drops, or while the link is down an outage's (the packet trace's reason).
    pub(super) fn drop_all(&mut self, l: usize, dropped: &mut Vec<PktId>) {
        for &p in dropped.iter() {
            self.drop_one(l, p);
        }
        dropped.clear();
    }

    /// Accounts one packet link `l` dropped as it served its queue (see [`Sim::drop_all`]).
    pub(super) fn drop_one(&mut self, l: usize, p: PktId) {
        if self.trace.is_some() {
            let why = if self.links[l].is_down() { DropReason::Outage } else { DropReason::RandomLoss };
            self.trace_event(p, Some(l), Some(why));
        }
        self.dropped(p);
    }

    /// Drains an endpoint's transmissions onto the network and re-arms its wake-up, unless its
    /// flow stopped.
    #[inline]
    pub(super) fn drive(&mut self, ep: usize) {
        if self.flows[ep / 2].stopped_at.is_some() {
            return;
        }
        self.transmit_out_of_line(ep, self.conn_index(ep / 2));
    }

    /// [`Sim::transmit`] as a call, for every caller but [`Sim::forward`].
    #[inline(never)]
    fn transmit_out_of_line(&mut self, ep: usize, conn: u32) {
        self.transmit(ep, conn, None);
    }

    /// [`Sim::drive`] once its flow is known to be running with connection index `conn`
    /// ([`Sim::forward`] has tested both). Inlined into `forward`, the one call per arrival.
    ///
    /// `spare`: a free slot not on the free list (the packet `forward` just delivered), the one
    /// the first send writes into, pushed onto the list if nothing is sent: the list ends as it
    /// would have with the slot pushed first (it would have been the top, the first send's),
    /// without the push and pop per arrival.
    #[inline(always)]
    fn transmit(&mut self, ep: usize, conn: u32, mut spare: Option<PktId>) {
        debug_assert!(self.flows[ep / 2].stopped_at.is_none() && conn == self.conn_index(ep / 2));
        let flow = (ep / 2) as u32;
        let to_server = ep.is_multiple_of(2);
        let now = Instant(self.now);
        // Transmitting does not complete a transfer: the connection index holds for the loop.
        loop {
            let Endpoint { queued_wake, gen, conn: Some(c) } = &mut self.eps[ep] else {
                if let Some(p) = spare {
                    self.free.push(p);
                }
                return;
            };
            // The endpoint is looked up once for the packets it sends in a row and its wake-up:
            // the loop below borrows only the fields it writes, and leaves (to come back here)
            // only for what needs the whole simulator, a traced send or a drop.
            let slow = loop {
                // A receiver with nothing of its own to send is told apart by a few field tests
                // instead of a last poll that finds nothing (debug builds check the poll agrees).
                if c.nothing_to_send(now) {
                    debug_assert!(c.poll_transmit(now).is_none(), "nothing_to_send, yet a poll sent");
                    break None;
                }
                let p = match spare {
                    Some(p) => p,
                    None => Self::free_slot(&mut self.pkts, &mut self.free),
                };
                let pk = &mut self.pkts[p as usize];
                let Some(path) = c.poll_transmit_into(now, &mut pk.seg) else {
                    break None;
                };
                if spare.take().is_none() {
                    self.free.pop();
                }
                self.packets_created += 1;
                let size = pk.seg.wire_size();
                (pk.flow, pk.path, pk.to_server, pk.hop, pk.size, pk.udp, pk.conn) =
                    (flow, path, to_server, 0, size, false, conn);
                let first = Self::route(&self.sc.paths[path as usize], to_server)[0] as usize;
                if self.trace.is_some() {
                    break Some((p, first, size, None));
                }
                match self.links[first].offer(self.now, p, size, &mut self.ev) {
                    Offer::Accepted => {}
                    Offer::DroppedQueue => break Some((p, first, size, Some(DropReason::QueueFull))),
                    Offer::DroppedOutage => break Some((p, first, size, Some(DropReason::Outage))),
                }
            };
            match slow {
                None => {
                    if let Some(p) = spare {
                        self.free.push(p);
                    }
                    if to_server {
                        while let Some(ev) = c.poll_event() {
                            if ev == Event::DecisionNeeded {
                                self.pending_decisions.push_back(flow);
                            }
                        }
                    }
                    // A deadline at or after the wake-up already queued is not needed exactly:
                    // a later one is not queued.
                    if let Some(t) = c.poll_timeout_inline(queued_wake).map(|t| t.0.max(self.now)) {
                        if queued_wake.is_none_or(|q| t < q) {
                            *queued_wake = Some(t);
                            *gen = gen.wrapping_add(1);
                            self.ev.push(t, Kind::Wake, ep as u32, *gen);
                        }
                    }
                    return;
                }
                Some((p, first, size, None)) => {
                    self.trace_send(p);
                    self.offer(first, p, size);
                }
                Some((p, first, _, Some(why))) => self.dropped_by(p, first, why),
            }
        }
    }

    /// The arena slot the next segment is written into: the top of the free list, taken off it
    /// only when a segment was written (a slot made when the list is empty goes onto it, where
    /// the next new slot would have been made). The connection writes the segment straight
    /// into it: not copied from the transport's return value to a packet and then into the
    /// arena, and a poll that finds nothing leaves the list as it was.
    #[inline(always)]
    fn free_slot(pkts: &mut Vec<Packet>, free: &mut Vec<PktId>) -> PktId {
        match free.last() {
            Some(&p) => p,
            None => {
                pkts.push(Packet::empty());
                let p = (pkts.len() - 1) as PktId;
                free.push(p);
                p
            }
        }
    }

    /// The index of flow `f`'s current connection: one per download, the last one staying
    /// current after the flow completed. Kept in the flow's state when a transfer completes
    /// ([`Sim::transfer_done`]) rather than derived from the scenario at every packet.
    #[inline]
    pub(super) fn conn_index(&self, f: usize) -> u32 {
        debug_assert_eq!(
            self.flows[f].conn,
            (self.flows[f].transfers.len() as u32).min(self.sc.flows[f].repeat.max(1) - 1)
        );
        self.flows[f].conn
    }

    #[inline]
    pub(super) fn alloc(&mut self, pk: Packet) -> PktId {
        self.packets_created += 1;
        if let Some(p) = self.free.pop() {
            self.pkts[p as usize] = pk;
            p
        } else {
            self.pkts.push(pk);
            (self.pkts.len() - 1) as PktId
        }
    }
}
