//! Packets on the network: the arena, routing hop by hop over a path's links, drops, and
//! driving an endpoint's transmissions onto its path's first link.

use mpsched_transport::{Event, Instant};

use super::{DropReason, Packet, Sim};
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
        self.free.push(p);
        if self.pkts[p as usize].udp {
            let pk = self.pkts[p as usize];
            self.udp_arrive(pk);
            return;
        }
        if self.trace.is_some() {
            self.trace_event(p, None, None);
        }
        let ep = 2 * flow as usize + to_server as usize;
        let now = Instant(self.now);
        if self.flows[flow as usize].stopped_at.is_some()
            || self.pkts[p as usize].conn != self.conn_index(flow as usize)
        {
            return;
        }
        let Some(conn) = self.eps[ep].conn.as_mut() else { return };
        conn.handle_segment(now, path, &self.pkts[p as usize].seg);
        if to_server {
            conn.read(u64::MAX);
            let f = flow as usize;
            let rt = &self.flows[f];
            if rt.size < u64::MAX && rt.done_at.is_none() && conn.info().bytes_delivered >= rt.size {
                self.drive(ep);
                self.transfer_done(f);
                return;
            }
        }
        self.drive(ep);
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

    /// Drains an endpoint's transmissions onto the network and re-arms its wake-up.
    pub(super) fn drive(&mut self, ep: usize) {
        let flow = (ep / 2) as u32;
        if self.flows[ep / 2].stopped_at.is_some() {
            return;
        }
        let to_server = ep.is_multiple_of(2);
        let now = Instant(self.now);
        // Transmitting does not complete a transfer: the connection index holds for the loop.
        let conn = self.conn_index(ep / 2);
        loop {
            let Some(c) = self.eps[ep].conn.as_mut() else { return };
            // A receiver with nothing of its own to send is told apart by a few field tests
            // instead of a last poll that finds nothing (debug builds check the poll agrees).
            if c.nothing_to_send(now) {
                debug_assert!(c.poll_transmit(now).is_none(), "nothing_to_send, yet a poll sent");
                break;
            }
            // The connection writes the segment straight into a free arena slot, the top of
            // the free list, taken off it only when a segment was written (a slot made when the
            // list is empty goes onto it, where the next new slot would have been made): the
            // segment is not copied from the transport's return value to a packet and then
            // into the arena, and a poll that finds nothing leaves the list as it was.
            let p = match self.free.last() {
                Some(&p) => p,
                None => {
                    self.pkts.push(Packet::empty());
                    let p = (self.pkts.len() - 1) as PktId;
                    self.free.push(p);
                    p
                }
            };
            let Some(path) = c.poll_transmit_into(now, &mut self.pkts[p as usize].seg) else {
                break;
            };
            self.free.pop();
            self.packets_created += 1;
            let pk = &mut self.pkts[p as usize];
            let size = pk.seg.wire_size();
            (pk.flow, pk.path, pk.to_server, pk.hop, pk.size, pk.udp, pk.conn) =
                (flow, path, to_server, 0, size, false, conn);
            let first = Self::route(&self.sc.paths[path as usize], to_server)[0] as usize;
            if self.trace.is_some() {
                self.trace_send(p);
            }
            self.offer(first, p, size);
        }
        if ep.is_multiple_of(2) {
            if let Some(c) = self.eps[ep].conn.as_mut() {
                while let Some(ev) = c.poll_event() {
                    if ev == Event::DecisionNeeded {
                        self.pending_decisions.push_back(flow);
                    }
                }
            }
        }
        let e = &mut self.eps[ep];
        let d = e.conn.as_ref().and_then(|c| c.poll_timeout_inline()).map(|t| t.0.max(self.now));
        if let Some(t) = d {
            if e.queued_wake.is_none_or(|q| t < q) {
                e.queued_wake = Some(t);
                e.gen = e.gen.wrapping_add(1);
                self.ev.push(t, Kind::Wake, ep as u32, e.gen);
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
